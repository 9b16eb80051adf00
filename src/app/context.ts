import type { Env } from '../core/config';

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
  Bindings: Env;
  Variables: {
    requestId: string;
    session: Session;
  };
}
