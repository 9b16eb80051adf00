import { env } from 'cloudflare:workers';

/**
 * The tests' D1 with some statements taken over: each statement whose SQL `matches` is bound as usual, then
 * `wrap` may replace how it runs (`run`, `first`, `all`), to put another request's work just before or after
 * it, or to hold it until others arrive. Every other statement, and everything else of D1, is the real one.
 */
export function interceptedDb(
  matches: (query: string) => boolean,
  wrap: (bound: D1PreparedStatement, values: unknown[]) => { run?: () => Promise<unknown>; first?: () => Promise<unknown>; all?: () => Promise<unknown> },
): D1Database {
  return new Proxy(env.DB, {
    get(target, property) {
      if (property !== 'prepare') {
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (query: string) => {
        const statement = target.prepare(query);
        if (!matches(query)) return statement;
        return Object.assign(Object.create(statement) as D1PreparedStatement, {
          bind: (...values: unknown[]) => {
            const bound = statement.bind(...values);
            return Object.assign(Object.create(bound) as D1PreparedStatement, wrap(bound, values));
          },
        });
      };
    },
  });
}

/** A meeting point for `count` arrivals: each arrival waits until the `count`th has come; `reached(n)` resolves once `n` have. */
export function meetingOf(count: number): { arrive: () => Promise<void>; reached: (n: number) => Promise<void> } {
  let arrived = 0;
  const waiters = new Map<number, () => void>();
  const reached = new Map<number, Promise<void>>();
  const when = (n: number) => reached.get(n) ?? reached.set(n, new Promise<void>((resolve) => waiters.set(n, resolve))).get(n)!;
  return {
    arrive: async () => {
      arrived += 1;
      when(arrived);
      waiters.get(arrived)?.();
      await when(count);
    },
    reached: when,
  };
}
