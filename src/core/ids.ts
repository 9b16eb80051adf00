import { toHex } from './digest';

/** Resource ids: a readable prefix and 96 random bits, e.g. `org_3f9a...`. */
export type IdPrefix = 'org' | 'ws' | 'key' | 'req' | 'use' | 'usr' | 'inv' | 'msg' | 'oac' | 'grant' | 'mcps' | 'we' | 'evt' | 'onb' | 'db' | 'agt' | 'job' | 'con';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomHex(12)}`;
}

export function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  return toHex(buffer);
}
