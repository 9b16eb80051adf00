import type { Env } from '../core/config';
import type { McpGatewayProtocol } from '../core/protocols/mcp-gateway';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  /** When they confirmed their email address by the link sent to it, or null: the free trial waits for it. */
  emailVerifiedAt: string | null;
  /** When the password was last changed or reset, or null: it is the one set at sign-up. */
  passwordChangedAt: string | null;
}

export interface Session {
  idHash: string;
  expiresAt: string;
  user: SessionUser;
}

/** The Hono environment of the dashboard: the installation's bindings and the signed-in session. */
export interface DashboardEnv {
  /** `API`: the api worker, which holds the vendors' secrets, asked which operations this installation can run (operation-settings.ts). */
  Bindings: Env & { API?: Service<McpGatewayProtocol> };
  Variables: {
    requestId: string;
    session: Session;
    /** Set by a handler whose 2xx changed nothing (a key revoked already): the activity records nothing. */
    unchanged?: true;
  };
}
