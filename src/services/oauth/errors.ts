/**
 * An OAuth error as RFC 6749 answers it: `{error, error_description}` with its status. The token,
 * registration and revocation endpoints speak this, not the REST envelope, because OAuth clients read it.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status: 400 | 401 | 403 | 404 | 429 = 400,
    /** Seconds to wait before trying again, sent as Retry-After (429 only). */
    readonly retryAfter?: number,
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  toResponse(): Response {
    const headers = this.retryAfter === undefined ? NO_STORE : { ...NO_STORE, 'retry-after': String(this.retryAfter) };
    return Response.json({ error: this.error, error_description: this.description }, { status: this.status, headers });
  }
}

/** Token answers and OAuth errors are never cached (RFC 6749 section 5.1). */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
