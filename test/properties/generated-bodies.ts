import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/core/operation';
import { call, json, ops, provision } from '../support/api';

/**
 * Generated bodies, valid and invalid, sent to every endpoint of the registry: never a 500, every
 * invalid field named in `details`, never a charge for a refusal. Two files register it and together cover
 * the registry (tool-endpoints.test.ts, data-sources.test.ts): as one file of nearly two minutes it was the
 * last to run on a clean clone, one core busy and the other idle.
 */

const RUNS = 30;
/**
 * Operations declared as vendor table rows have flat schemas of scalar fields (GET query strings, or a few
 * body fields), all validated by the same few field builders; fewer bodies each cover them, and keep the
 * suite's time in bounds as the catalog grows.
 */
const RUNS_PER_VENDOR_ROW = 10;

/** Values that are often right for some field and often wrong for another. */
const plausible = fc.oneof(
  fc.constantFrom('example.com', 'https://example.com/page', 'seo tools', '', 'x'.repeat(800), 'en', 'US', '%shoes%', 'desktop', 'include', 'markdown'),
  fc.constantFrom(0, 1, 10, 15, 100, 2840, 1000, 1001, -1, 1.5, 1e12),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(['example.com'], ['markdown', 'links'], [], [['rank', '>', 10]], [['rank', '>', 10], 'and', ['keyword', 'like', '%a%']], ['rank,desc'], ['1.rank,desc']),
  fc.jsonValue({ maxDepth: 2 }),
);

function bodies(operation: Operation) {
  const known = Object.keys(operation.input.shape);
  const unknown = fc.constantFrom('unknownField', 'colour', '__proto__x');
  // An operation that takes no input (a vendor's status) can only be sent fields it does not know.
  const field = known.length === 0 ? unknown : fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: unknown });
  return fc.dictionary(field, plausible, { maxKeys: Math.min(6, known.length + 1) });
}

/** The top-level fields a body gets wrong on their own: unknown, or a value its field's schema refuses. */
function fieldsWrongOnTheirOwn(operation: Operation, body: Record<string, unknown>): string[] {
  const shape = operation.input.shape as Record<string, { safeParse(value: unknown): { success: boolean } }>;
  return Object.entries(body)
    .filter(([name, value]) => !(name in shape) || !shape[name]!.safeParse(value).success)
    .map(([name]) => name);
}

function send(operation: Operation, key: string, body: Record<string, unknown>) {
  const path = operation.paths[0];
  if (operation.method === 'GET') {
    const query = new URLSearchParams(Object.entries(body).map(([name, value]): [string, string] => [name, typeof value === 'string' ? value : JSON.stringify(value)]));
    return call(`${path}?${query}`, { headers: { authorization: `Bearer ${key}` } });
  }
  return call(path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** What the organization has left: purchased balance plus allowance, net of holds. */
async function available(key: string): Promise<number> {
  return (await json(await call('/v1/credits', { headers: { authorization: `Bearer ${key}` } }))).data.availableCents;
}

/** Registers the property for `operations`, under a title that says which they are. */
export function generatedBodiesAgainst(which: string, operations: readonly Operation[]): void {
  describe(`generated bodies against ${which}`, () => {
    // One account for the file: the operations run one after another, each measuring the balance around its
    // own bodies (an account each cost five operator calls per operation, a fifth of the file's calls).
    let account: Awaited<ReturnType<typeof provision>>;
    beforeAll(async () => {
      account = await provision({ plan: 'business' });
      // A ceiling the property runs cannot reach: this test is about validation, not the window.
      await ops('PUT', `/organizations/${account.organizationId}/plan`, { plan: 'business', rpm: 1_000_000 });
      await ops('POST', `/organizations/${account.organizationId}/wallet/credit`, { purchasedCents: 10_000_000 });
    });

    it.each(operations.map((operation) => [`${operation.method} ${operation.paths[0]}`, operation] as const))('%s', { timeout: 60_000 }, async (_, operation) => {
      // The balance is read once before and once after, not around every body: what it moved by must be
      // exactly what the successes said they cost, so a refusal that charged anything shows as a difference.
      const before = await available(account.key);
      let charged = 0;
      const refused: unknown[] = [];
      await fc.assert(
        fc.asyncProperty(bodies(operation), async (body) => {
          const response = await send(operation, account.key, body);
          expect(response.status, JSON.stringify(body)).not.toBe(500);
          const answer = await json(response);
          expect(answer.success).toBe(response.status === 200);
          if (response.status === 200) charged += answer.meta.costCents;
          if (response.status !== 400) return;

          refused.push(body);
          expect(answer.error.code).toBe('VALIDATION_ERROR');
          const named = answer.error.details.map((detail: { field: string; location: string; message: string }) => {
            expect(detail.location).toBe(operation.method === 'GET' ? 'query' : 'body');
            expect(detail.message.length).toBeGreaterThan(0);
            return detail.field.split(/[.[]/)[0];
          });
          // GET queries carry strings only, so a field's own verdict is only known for POST bodies.
          if (operation.method === 'POST') for (const field of fieldsWrongOnTheirOwn(operation, body)) expect(named, JSON.stringify(body)).toContain(field);
        }),
        { numRuns: operation.upstream ? RUNS_PER_VENDOR_ROW : RUNS },
      );
      const spent = before - (await available(account.key));
      expect(spent.toFixed(6), `refused without charge: ${JSON.stringify(refused)}`).toBe(charged.toFixed(6));
    });
  });
}
