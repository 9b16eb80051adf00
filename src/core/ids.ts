import { clock } from './clock';
import { toHex } from './digest';

/** Resource ids: a readable prefix and 96 random bits, e.g. `org_3f9a...`. A call's id is `newCallId`'s. */
export type IdPrefix = 'org' | 'ws' | 'key' | 'req' | 'usr' | 'inv' | 'msg' | 'oac' | 'grant' | 'mcps' | 'we' | 'evt' | 'onb' | 'db' | 'agt' | 'job' | 'con';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomHex(12)}`;
}

/**
 * A call's id, which its usage row in D1, its hold in the gate and its capture in the wallet's ledger are
 * keyed by: `use_`, the time in ms (12 hex digits), then 96 random bits. Ids made later sort later, so those
 * rows join their indexes at the end, where a commit of fifty calls dirties a page or two; a random key
 * lands on a different page of the index for each call, and SQLite writes every page a commit touched
 * (performance.md, "2026-11-29 (evening)"). Calls in the same millisecond differ by their random part.
 */
export function newCallId(): string {
  return `use_${Math.trunc(clock.now()).toString(16).padStart(12, '0')}${randomHex(12)}`;
}

export function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  return toHex(buffer);
}
