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

/** An hour's count per client address (the rule every throttle of Sluice keys on: see clientAddress): past it, why, and how long to wait. */
async function overHourlyLimit(db: D1Database, request: Request, bucket: string, rule: { limit: number; windowMs: number }, what: string): Promise<AuthorizationProblem | null> {
  const over = await overLimitBy(db, `${bucket}:${clientAddress(request)}`, rule);
  if (!over) return null;
  return {
    error: 'temporarily_unavailable',
    description: `Too many ${what} from this address (${rule.limit} an hour). Try again in ${Math.ceil(over.retryAfter / 60)} min.`,
    retryAfter: over.retryAfter,
  };
}

/** The same, refused with 429 and Retry-After at an endpoint that answers JSON. */
async function refuseOverHourlyLimit(...args: Parameters<typeof overHourlyLimit>): Promise<void> {
  const problem = await overHourlyLimit(...args);
  if (problem) throw new OAuthError(problem.error, problem.description, 429, problem.retryAfter);
}

/** Counts one registration that adds a client, refused past REGISTRATIONS_PER_ADDRESS. */
export function countRegistration(db: D1Database, request: Request): Promise<void> {
  return refuseOverHourlyLimit(db, request, 'oauth-register', REGISTRATIONS_PER_ADDRESS, 'client registrations');
}

/** Counts one registration request of any kind, refused past the generous REGISTRATION_REQUESTS_PER_ADDRESS. */
export function countRegistrationRequest(db: D1Database, request: Request): Promise<void> {
  return refuseOverHourlyLimit(db, request, 'oauth-register-any', REGISTRATION_REQUESTS_PER_ADDRESS, 'registration requests');
}

/** Counts one authorization request from the request's address: past the limit, the problem the page shows (429). */
export function countAuthorization(db: D1Database, request: Request): Promise<AuthorizationProblem | null> {
  return overHourlyLimit(db, request, 'oauth-authorize', AUTHORIZATIONS_PER_ADDRESS, 'authorization requests');
}
