import { clientAddress, overLimitBy } from '../../core/throttle';
import type { AuthorizationProblem } from '../../services/oauth/authorization';
import { OAuthError } from '../../services/oauth/errors';

/**
 * Dynamic client registration is open (RFC 7591: MCP clients register themselves), so it is counted per
 * client address: twenty registrations an hour, like sign-ups. A client registers once per install; a
 * script registering clients by the thousand (each a redirect URI of its choosing) waits out the hour.
 */
export const REGISTRATIONS_PER_ADDRESS = { limit: 20, windowMs: 60 * 60_000 } as const;

/**
 * Registration requests of any kind per address, counted before the body is read: one that finds its client
 * registered already writes only that client's renewal, but anyone may send them, so they are bounded too, well
 * above what a hosted client's people connecting in an hour make.
 */
export const REGISTRATION_REQUESTS_PER_ADDRESS = { limit: 1_000, windowMs: 60 * 60_000 } as const;

/**
 * `/oauth/authorize` answers anyone, and each request it accepts is a row in D1 for its ten minutes and a day
 * after (a metadata-document client's first one a client row too), so it is counted per address as well: sixty
 * an hour, far above a person connecting a few clients, even a team behind one address.
 */
export const AUTHORIZATIONS_PER_ADDRESS = { limit: 60, windowMs: 60 * 60_000 } as const;

/**
 * Counts one registration from the request's address (the rule every throttle of Sluice keys on: see
 * clientAddress) and refuses it with 429 and Retry-After past the limit.
 */
export async function countRegistration(db: D1Database, request: Request): Promise<void> {
  const over = await overLimitBy(db, `oauth-register:${clientAddress(request)}`, REGISTRATIONS_PER_ADDRESS);
  if (!over) return;
  const { limit } = REGISTRATIONS_PER_ADDRESS;
  throw new OAuthError(
    'temporarily_unavailable',
    `Too many client registrations from this address (${limit} an hour). Try again in ${Math.ceil(over.retryAfter / 60)} min.`,
    429,
    over.retryAfter,
  );
}

/** Counts one registration request of any kind from the request's address, refused with 429 past the generous limit. */
export async function countRegistrationRequest(db: D1Database, request: Request): Promise<void> {
  const over = await overLimitBy(db, `oauth-register-any:${clientAddress(request)}`, REGISTRATION_REQUESTS_PER_ADDRESS);
  if (!over) return;
  throw new OAuthError(
    'temporarily_unavailable',
    `Too many registration requests from this address (${REGISTRATION_REQUESTS_PER_ADDRESS.limit} an hour). Try again in ${Math.ceil(over.retryAfter / 60)} min.`,
    429,
    over.retryAfter,
  );
}

/** Counts one authorization request from the request's address: past the limit, the problem the page shows (429). */
export async function countAuthorization(db: D1Database, request: Request): Promise<AuthorizationProblem | null> {
  const over = await overLimitBy(db, `oauth-authorize:${clientAddress(request)}`, AUTHORIZATIONS_PER_ADDRESS);
  if (!over) return null;
  const { limit } = AUTHORIZATIONS_PER_ADDRESS;
  return {
    error: 'temporarily_unavailable',
    description: `Too many authorization requests from this address (${limit} an hour). Try again in ${Math.ceil(over.retryAfter / 60)} min.`,
    retryAfter: over.retryAfter,
  };
}
