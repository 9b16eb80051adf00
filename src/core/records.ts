import { clock } from './clock';
import type { KeyScope } from './keys';
import type { Plan } from './plans';
import type { KeyLimit } from './protocols/key-limits';

/* What D1 holds about organizations, workspaces and keys, and whom a key stands for. */

export interface Organization {
  id: string;
  name: string;
  plan: Plan | null;
  rpmOverride: number | null;
  createdAt: string;
}

export interface Workspace {
  id: string;
  organizationId: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  scope: KeyScope;
  name: string;
  hint: string;
  createdAt: string;
  /** The dashboard user who made it; null when the operator API did. */
  createdBy: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** The most the key may spend in a UTC calendar month, in cents; null: no limit of its own. */
  monthlyLimitCents: number | null;
  /** When the key stops working by itself (ISO 8601); null: never. */
  expiresAt: string | null;
}

/** The plan an organization row is on now: its plan, unless its trial has ended (`now`: a bound parameter, or SQL). */
export function planInForceSql(table: string, now = '?'): string {
  return `CASE WHEN ${table}.trial_ends_at IS NOT NULL AND ${table}.trial_ends_at <= ${now} THEN NULL ELSE ${table}.plan END`;
}

/**
 * SQL: whether the person in `userColumn` signs in with a second factor (app/two-factor.ts); and whether they lack the
 * second factor the organization aliased `organizationAlias` requires of its members.
 */
export const secondFactorOnSql = (userColumn: string) => `EXISTS (SELECT 1 FROM two_factor f WHERE f.user_id = ${userColumn} AND f.enabled_at IS NOT NULL)`;
export const lacksRequiredSecondFactorSql = (organizationAlias: string, userColumn: string) =>
  `(${organizationAlias}.two_factor_required_at IS NOT NULL AND NOT ${secondFactorOnSql(userColumn)})`;

/** What authentication resolves a key to: the key, its workspace and the organization that pays. */
export interface KeyPrincipal {
  keyId: string;
  scope: KeyScope;
  revoked: boolean;
  workspaceId: string;
  organizationId: string;
  /** The key's monthly spend limit as D1 has it; absent for an OAuth grant, which has none. */
  monthlyLimit?: KeyLimit;
  /**
   * The key whose monthly limit and spend this key's calls count in instead of its own, with that key's limit
   * as D1 has it: a data job's key spends the key that submitted the job.
   */
  budgetKey?: { keyId: string; monthlyLimit: KeyLimit };
  /** The deployed agent a key of scope `agent` was minted for; null for every other key. */
  agentId?: string | null;
  /** When the key stops working by itself (a sandbox key after 7 days, an API key made to expire); null: never. */
  expiresAt?: string | null;
  /**
   * A person's own credential (an MCP token, a sandbox key) whose maker lacks the two-factor sign-in their organization
   * requires: refused, as the OAuth clients they connected are, until they turn it on. Absent otherwise.
   */
  makerLacksTwoFactor?: true;
  /** The key id is an OAuth grant's (an MCP client connected by a person), not an API key's. */
  grant?: true;
}

/** What a credential whose maker lacks a required second factor is told. */
export const MAKER_LACKS_TWO_FACTOR = "This organization requires two-factor sign-in of its members, and the person who made this credential has not turned it on; it works again once they do (the dashboard's Settings).";

/** Whether the key's own expiry has come. */
export function hasExpired(principal: Pick<KeyPrincipal, 'expiresAt'>): boolean {
  return typeof principal.expiresAt === 'string' && Date.parse(principal.expiresAt) <= clock.now();
}
