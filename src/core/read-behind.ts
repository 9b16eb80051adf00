import { clock } from './clock';

export interface ReadBehindOptions<V> {
  /** How long a read answers calls as it is. */
  freshMs: number;
  /** How long after its read a value still answers a call while that call reads it again beside itself; older, the call waits. */
  usableMs: number;
  /** The most values kept; past it the one read longest ago goes. */
  maxEntries: number;
  /** Whether a value read is kept at all (an unknown or revoked key is not): a value not kept is read again by the next call. */
  keeps?: (value: V) => boolean;
  /** What a failed read beside a call is logged as. */
  name: string;
}

/** A second read started within this time of the last one is not started: the first may still be under way. */
const REREAD_AFTER_MS = 2_000;

/**
 * An isolate's memory of values read from D1, which a call never waits to read again once it has one: a value
 * past `freshMs` still answers the call, and that call reads it again beside itself (through `waitUntil`), one
 * read per value at a time. A call waits for D1 only for a value this isolate has not read, or has not read for
 * `usableMs`. What the memory answers must be safe to answer that late: a key's principal (who it is; its gate
 * says on every call whether it is still valid), the operator's switches and a workspace's default MCP server
 * (a change reaches other isolates a read later than before, a few milliseconds).
 *
 * The read beside a call belongs to that call's request and no other call waits on it: in workerd a request's I/O
 * is cancelled when the request ends, so a call waiting on another's read could wait for nothing.
 */
export class ReadBehind<V> {
  readonly #entries = new Map<string, { value: V; readAt: number; rereadAt?: number }>();
  /** Moved by `forget`, so a read begun before it cannot put back what it forgot. */
  #generation = 0;

  constructor(private readonly options: ReadBehindOptions<V>) {}

  async get(key: string, read: () => Promise<V>, waitUntil: (promise: Promise<unknown>) => void): Promise<V> {
    const now = clock.now();
    const entry = this.#entries.get(key);
    if (entry && now - entry.readAt < this.options.usableMs) {
      const due = now - entry.readAt >= this.options.freshMs && (entry.rereadAt === undefined || now - entry.rereadAt >= REREAD_AFTER_MS);
      if (due) {
        entry.rereadAt = now;
        waitUntil(
          this.#read(key, read).catch((reason: unknown) => {
            console.error(JSON.stringify({ level: 'error', note: `${this.options.name} not read again; the value read before still answers`, error: String(reason) }));
          }),
        );
      }
      return entry.value;
    }
    return this.#read(key, read);
  }

  /** Reads a value afresh now, and keeps it as `get` would: for a call that must not act on what the memory holds. */
  readNow(key: string, read: () => Promise<V>): Promise<V> {
    return this.#read(key, read);
  }

  /** Forgets one value, or all of them: the next call reads afresh and waits for it. */
  forget(key?: string): void {
    this.#generation += 1;
    if (key === undefined) this.#entries.clear();
    else this.#entries.delete(key);
  }

  async #read(key: string, read: () => Promise<V>): Promise<V> {
    const readAt = clock.now();
    const generation = this.#generation;
    const value = await read();
    if (generation !== this.#generation) return value;
    // Deleted first, so the map's order stays the order of reads and the first entry is the one read longest ago.
    this.#entries.delete(key);
    if (this.options.keeps?.(value) ?? true) {
      if (this.#entries.size >= this.options.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(key, { value, readAt });
    }
    return value;
  }
}
