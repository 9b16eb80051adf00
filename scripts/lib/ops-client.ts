/** A small client of the operator API (/ops/v1), used by `npm start` to seed and by `npm run ops`. */

export class OpsError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'OpsError';
  }
}

/** The stack is not there at all (connection refused, bad URL): a different problem from an API error. */
export class OpsUnreachable extends Error {
  override name = 'OpsUnreachable';
}

type Envelope<T> = { success: true; data: T } | { success: false; error: { code: string; message: string; details?: unknown } };

export interface OpsClient {
  url: string;
  call<T = unknown>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

export function opsClient(url: string, token: string): OpsClient {
  const base = url.replace(/\/+$/, '');
  return {
    url: base,
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      const send = () =>
        fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(30_000),
        });
      let response: Response;
      try {
        response = await send().catch((error: unknown) => {
          // A kept-alive connection the server closed while idle fails before any answer: an idempotent
          // request (RFC 9110 §9.2.2) is sent again once, on a new connection; a POST never is.
          if (method !== 'POST' && socketClosed(error)) return send();
          throw error;
        });
      } catch (error) {
        const reason = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
        throw new OpsUnreachable(`Cannot reach ${base} (${reason}). Is the stack running (npm start)?`);
      }
      const text = await response.text();
      let envelope: Envelope<T>;
      try {
        envelope = JSON.parse(text) as Envelope<T>;
      } catch {
        throw new OpsError(response.status, 'BAD_RESPONSE', `${method} ${path} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
      }
      if (!envelope.success) {
        const error = envelope.error ?? { code: 'UNKNOWN', message: text.slice(0, 200) };
        throw new OpsError(response.status, error.code, error.message, error.details);
      }
      if (!response.ok) throw new OpsError(response.status, 'BAD_RESPONSE', `${method} ${path} answered ${response.status}.`);
      return envelope.data;
    },
  };
}

function socketClosed(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } }).cause?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

/** What the operator API answers for a key (create and reveal). */
export interface KeyWithSecret {
  id: string;
  workspaceId: string;
  scope: string;
  name: string;
  key: string;
  [field: string]: unknown;
}
