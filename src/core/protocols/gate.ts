import type { UsageRow } from '../usage';
import type { KeyBudget, KeyLimit, KeyLimitRefusal } from './key-limits';
import type { Balance, Terms } from './lease';

/**
 * What the rest of Sluice may ask a workspace's gate (durable-objects/workspace-gate.ts): the one object a
 * metered call talks to, holding the workspace's revoked keys, its 60-second request window and the
 * money its calls spend from a lease on the organization's wallet.
 */
export interface WorkspaceGateProtocol extends Rpc.DurableObjectBranded {
  /** Refuses the key from the very next request on. */
  revoke(keyId: string): Promise<void>;
  /** Revokes every key of the workspace, for good, before the answer: the workspace was deleted. */
  revokeAll(): Promise<void>;
  /** Whether the key is still good (not revoked here). */
  verify(keyId: string): boolean;
  /** The wallet's figures for `/v1/credits`, unless the key is revoked. */
  credits(keyId: string, owner: { organizationId: string; workspaceId: string }): Promise<{ revoked: true } | { revoked: false; balance: Balance; terms: Terms }>;
  /** Drops the wallet's figures this gate holds, so the next read asks the wallet. */
  forgetBalance(): void;
  setKeyLimit(keyId: string, limit: KeyLimit): void;
  keyBudgets(keyIds: string[]): KeyBudget[];
  /** Before an upstream call: revocation, the window and the money for the call, in one step. */
  meter(ask: MeterAsk): Promise<MeterAnswer>;
  /** Before a free call: revocation and the window only. */
  admitFree(ask: FreeAsk): Promise<FreeAnswer>;
  /**
   * After the upstream call: captures `actualUnits` of the hold (0 releases it) and records the usage row:
   * the one `meter` brought, completed with how the call ended, or a whole row when the gate asks for one.
   */
  settle(holdId: string, actualUnits: number, ended: UsageOutcome | UsageRow, budgetKeyId?: string): Promise<SettleAnswer>;
  /** Records a usage row of a call that spent nothing. */
  record(usage: UsageRow): boolean;
  /** What a success under `callId` waiting here for the wallet spent; null when none waits (services/idempotency.ts). */
  waitingChargeOf(callId: string): number | null;
  /** Sends what waits for the wallet now. */
  flush(): Promise<void>;
  /** A sibling workspace is short: gives the free lease back if no call has asked for money here for a moment. */
  recall(): Promise<void>;
  /** The wallet's new plan and balance, told by whoever changed them. */
  adoptTerms(terms: Terms, generation: number, balance: Balance): void;
}

/** A hold left open this long after its call's own time limit gives its money back to the lease. */
export const HOLD_GRACE_MS = 60_000;

export interface Admission {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds at which the current window ends. */
  resetAt: number;
}

/** What the pipeline asks before an upstream call. `usage` is the call's row, recorded here if the call is refused. */
export interface MeterAsk {
  keyId: string;
  amountUnits: number;
  ttlMs: number;
  usage: UsageRow;
  /** The monthly limit of the key the call spends (`budgetKeyId`'s) as D1 has it; the gate keeps whichever version is newer. */
  keyLimit?: KeyLimit | null;
  /** The key whose monthly limit and spend the call counts in, when not `keyId` (a data job's item: the key that submitted the job). */
  budgetKeyId?: string;
}

/** Why the money for a call could not be set aside: the balance itself cannot cover it, or calls in flight hold it. */
export type Shortfall =
  | { kind: 'insufficient'; requiredUnits: number; availableUnits: number }
  | { kind: 'busy'; retryAfter: number }
  | ({ kind: 'key_limit' } & KeyLimitRefusal);

export type MeterAnswer =
  | { kind: 'revoked' }
  | { kind: 'no_plan' }
  | { kind: 'limited'; admission: Admission }
  | (Shortfall & { admission: Admission })
  | { kind: 'held'; holdId: string; admission: Admission };

/** What a free call (a database statement) asks: the key, and who owns the workspace. */
export interface FreeAsk {
  keyId: string;
  organizationId: string;
  workspaceId: string;
}

export type FreeAnswer = { kind: 'revoked' } | { kind: 'limited'; admission: Admission } | { kind: 'admitted'; admission: Admission };

/**
 * How a metered call ended, which completes the usage row `meter` brought: all `settle` needs to carry while
 * the gate still holds that row (the row is sent once, not twice).
 */
export type UsageOutcome = Pick<UsageRow, 'status' | 'errorCode' | 'costUnits' | 'cached' | 'latencyMs' | 'createdAt'>;

/**
 * `row_needed`: the gate no longer has the row `meter` brought (it restarted, or the hold expired), so it
 * was sent only an outcome it cannot complete; settled again with the whole row, the call is billed as usual.
 */
export type SettleAnswer = { kind: 'captured'; balance: Balance | null } | { kind: 'released' } | { kind: 'row_needed' } | Shortfall;
