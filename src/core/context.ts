import type { KeyPrincipal } from './records';
import type { Env } from './config';

/** The Hono environment of the api worker: its bindings and what middleware puts on the context. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    principal: KeyPrincipal;
    /** What a metered call cost, for the request's log line (core/security-headers.ts). */
    costCents?: number;
  };
}
