import { clock } from '../core/clock';
import { sha256Hex } from '../core/digest';
import { randomHex } from '../core/ids';

/**
 * A link sent by email that works once: an address's confirmation, a password reset, an email change. Its token goes
 * in the email alone; what is kept is the token's SHA-256 and when the link stops working.
 */
export async function newEmailLink(lifetimeMs: number): Promise<{ token: string; tokenHash: string; expiresAt: string }> {
  const token = randomHex(32);
  return { token, tokenHash: await sha256Hex(token), expiresAt: new Date(clock.now() + lifetimeMs).toISOString() };
}

/** Whether a link still works: within its lifetime, and its account still has the address it was sent for (`current`). */
export function linkWorks(link: { expiresAt: string }, sentFor: string, current: string | null): boolean {
  return Date.parse(link.expiresAt) > clock.now() && current === sentFor;
}
