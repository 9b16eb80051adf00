import { DurableObject } from 'cloudflare:workers';
import { clock } from '../src/core/clock';
import type { ObjectBindings } from '../src/core/object-bindings';
import { requestsPerMinute, SMALLEST_PLAN } from '../src/core/plans';
import type { UsageRow } from '../src/core/usage';
import { KeyBudgets } from './key-budgets';
import type { KeyBudget, KeyLimit } from '../src/core/protocols/key-limits';
import type { FreeAnswer, FreeAsk, MeterAnswer, MeterAsk, SettleAnswer, UsageOutcome, WorkspaceGateProtocol } from '../src/core/protocols/gate';
import { LeaseBook } from './lease-book';
import { LeaseDraws } from './lease-draws';
import { type Balance, planInForce, type Terms } from '../src/core/protocols/lease';
import type { OrgWalletProtocol } from '../src/core/protocols/wallet';
import { CreditView } from './credit-view';
import { RateWindow, WINDOW_KEY, type StoredWindow } from './rate-window';
import { RevokedKeys } from './revoked-keys';
import { reached, REPORT_ONLY, Undelivered, WalletLink } from './wallet-link';

/** A gate reads the database, like every object, and reaches its organization's wallet and its siblings' gates. */
type Env = ObjectBindings & { ORG_WALLET: DurableObjectNamespace<OrgWalletProtocol>; WORKSPACE_GATE: DurableObjectNamespace<WorkspaceGateProtocol> };

/** Finished calls are reported to the wallet within this long, batched with their neighbours. */
export const REPORT_MS = 100;
/** The longest a key's use waits to be reported when nothing else is: `last_used_at` lands within this. */
export const KEY_USE_REPORT_MS = 1_000;
/**
 * A lease not drawn on for this long goes back to the wallet by itself. Long enough that a workspace called
 * every few seconds keeps its lease instead of returning and drawing it again on every call (three wallet
 * syncs a call with a thousand workspaces in rotation at 1 s); a sibling that is short does not wait for it,
 * it recalls leases idle for RECALL_IDLE_MS.
 */
export const IDLE_LEASE_MS = 30_000;
/** A lease not drawn on for this long goes back at once when a sibling workspace is short and recalls it. */
export const RECALL_IDLE_MS = 1_000;

/**
 * One per workspace, and the only object a metered call talks to. It composes what a call needs and
 * decides the order of the checks (revocation, plan, window, the key's limit, money):
 * - revoked keys, kept here a day (RevokedKeys);
 * - the request window shared by all the workspace's keys (RateWindow);
 * - the money for calls, spent from a lease the organization's wallet grants (LeaseBook), set aside for
 *   each call (LeaseDraws) within its key's monthly limit (KeyBudgets);
 * - the wallet's figures for `/v1/credits` and each call's `meta` (CreditView);
 * - the line to the wallet, which hears from the gate in batches, one message at a time (WalletLink);
 * - when the alarm runs: reports, expired holds, an idle lease's return.
 * A call costs two messages to this object, `meter` before the upstream call and `settle` after it. The
 * window, key-limit and lease checks each run with no `await` between check and write, so concurrent
 * calls cannot take the same slot or the same unit.
 */
export class WorkspaceGate extends DurableObject<Env> implements WorkspaceGateProtocol {
  private readonly revoked: RevokedKeys;
  private readonly window: RateWindow;
  private readonly book: LeaseBook;
  private readonly budgets: KeyBudgets;
  private readonly view: CreditView;
  private readonly link: WalletLink;
  private readonly draws: LeaseDraws;
  /** When a call last asked for money here (injectable clock): a lease unused for IDLE_LEASE_MS goes back. */
  private lastMeter = 0;
  /** When the alarm is set for, or null when this instance has set none. */
  private alarmAt: number | null = null;
  /** When (injectable clock) the last report was begun: reports are at least REPORT_MS apart. */
  private reportedAt = 0;
  /**
   * The usage row `meter` brought for each call it holds money for, by hold: `settle` then carries only how
   * the call ended. Kept in memory like the holds, and dropped with them.
   */
  private readonly rows = new Map<string, UsageRow>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // The window and the wallet's figures are stored in the lease state's row, with it.
    this.revoked = new RevokedKeys(ctx.storage.sql);
    this.window = new RateWindow();
    this.view = new CreditView();
    this.book = new LeaseBook(ctx.storage.sql, [this.window, this.view]);
    this.view.restore(this.book.storedPart(this.view.name) as Balance | null | undefined, ctx.storage.sql);
    this.budgets = new KeyBudgets(ctx.storage.sql, (keyId) => this.book.waitingChargesOf(keyId));
    this.link = new WalletLink(this.book, this.budgets, this.view, env.ORG_WALLET);
    this.draws = new LeaseDraws(this.book, this.view, this.link, (at) => this.alarmNoLaterThan(at), (workspaceIds) => this.recallFrom(workspaceIds));
    // An evicted object forgets neither a revocation nor the requests counted in this window (kept under
    // its own key by gates from before it went into the state row).
    void ctx.blockConcurrencyWhile(async () => {
      const [stored, alarm] = await Promise.all([ctx.storage.get<StoredWindow | string[]>([WINDOW_KEY, 'revoked']), ctx.storage.getAlarm()]);
      this.window.restore((this.book.storedPart(this.window.name) ?? stored.get(WINDOW_KEY)) as StoredWindow | undefined);
      const storedRevoked = stored.get('revoked') as string[] | undefined;
      if (storedRevoked) {
        this.revoked.adoptStored(storedRevoked);
        await ctx.storage.delete('revoked');
      }
      // The alarm an earlier instance set still stands, unless this one has set its own since it started
      // (a test's direct call is not held back by this read): it only ever moves it earlier.
      this.alarmAt ??= alarm;
      // A message the wallet refused goes again at its next attempt, before anything else; charges stored
      // and never sent go at once. A message sent whose reply was not stored (this gate was out of memory
      // before its next write) goes again first in the next report, which the call that woke it sends; were
      // none to come, the alarm already set (an idle lease's return, a hold's expiry) sends it, or this one
      // within IDLE_LEASE_MS. Sending it from an alarm of its own cost every call to a workspace quiet for
      // 10 s an alarm more.
      if (this.book.delivery) this.alarmAtClock(this.book.delivery.retryAt);
      else if (this.book.hasUnsent()) this.alarmNoLaterThan(Date.now() + REPORT_MS);
      else if (this.book.outgoing) this.alarmNoLaterThan(Date.now() + IDLE_LEASE_MS);
    });
  }

  /**
   * Records a revoked key of this workspace, durably, before the revocation is answered. Every request
   * with a workspace key asks this object before it is served, so no isolate's memory can accept it.
   */
  async revoke(keyId: string): Promise<void> {
    // Stored before the answer leaves (the output gate holds it until the write is durable).
    this.revoked.add(keyId);
    // Revocations come with keys that pile up (a data job's, an agent's): their spend of past months goes too.
    this.budgets.forgetPastMonths(clock.now());
  }

  /** The workspace was deleted: from this answer on no key of it is served (RevokedKeys.revokeAll). */
  async revokeAll(): Promise<void> {
    this.revoked.revokeAll();
  }

  /**
   * Whether a key may be served; a use of it is noted for `last_used_at`. A metered call's use rides on the
   * report its settling sends (`reportUse` false); any other use is reported within KEY_USE_REPORT_MS.
   */
  verify(keyId: string, reportUse = true): boolean {
    if (this.revoked.has(keyId)) return false;
    this.book.noteKeyUse(keyId, clock.now());
    if (reportUse) this.alarmNoLaterThan(Date.now() + KEY_USE_REPORT_MS);
    return true;
  }

  /**
   * The organization's balances: the wallet's figures less what this workspace spent since they were read,
   * as a call's `meta` shows them. The wallet is asked again only when its figures here are older than
   * VIEW_FRESH_MS (or were forgotten: a top-up or plan change tells every gate that reads it), so a
   * steady stream of `/v1/credits` costs one object call per request, not two.
   */
  async credits(keyId: string, owner: { organizationId: string; workspaceId: string }): Promise<{ revoked: true } | { revoked: false; balance: Balance; terms: Terms }> {
    if (!this.verify(keyId)) return { revoked: true };
    this.book.bind(owner);
    const now = clock.now();
    if (!this.view.fresh(now, this.book.periodOver(now))) {
      const report = this.book.hasUnsent() || this.book.outgoing !== null;
      // A message the wallet does not take leaves the figures to be read beside it.
      if (!report || !(await reached(this.link.exchange(REPORT_ONLY, false)))) await this.link.read();
    }
    // Read or reported just now, so the wallet's figures and plan are here.
    return { revoked: false, balance: this.view.balance(this.book.unacknowledged)!, terms: this.book.terms! };
  }

  /** The wallet changed by other means than a gate's message (a top-up): the next `/v1/credits` reads it again. */
  forgetBalance(): void {
    this.view.forget();
  }

  /**
   * Records a key's new monthly limit before the change is answered, so the very next call with it
   * follows the limit (a limit an isolate remembers is older and cannot replace it).
   */
  setKeyLimit(keyId: string, limit: KeyLimit): void {
    this.budgets.adopt(keyId, limit);
  }

  /** Each key's limit, its spend this month and what its calls in flight hold, for the dashboard. */
  keyBudgets(keyIds: string[]): KeyBudget[] {
    return this.budgets.budgets(keyIds, clock.now());
  }

  /** Revocation, plan, window, the key's own monthly limit and money for one call, in that order; a 429 wins over a 402. */
  async meter(ask: MeterAsk): Promise<MeterAnswer> {
    // Every admitted call ends in a report (its settling, or its refusal's row) that carries the key's use
    // and the window; only a call the window refuses leaves neither, so it arms the alarm itself.
    if (!this.verify(ask.keyId, false)) return { kind: 'revoked' };
    this.book.bind(ask.usage);
    this.lastMeter = clock.now();
    // A gate that never heard from its wallet learns the plan before it applies one.
    if (this.book.neverSynced) await reached(this.link.exchange(REPORT_ONLY, false));
    const terms = this.book.terms;
    if (!terms) {
      // The wallet has not taken this gate's first message: no plan is known, and no money could be drawn.
      this.refuse(ask.usage, 500, 'INTERNAL_ERROR');
      throw new Error(`The wallet of organization ${ask.usage.organizationId} has not answered workspace ${ask.usage.workspaceId}'s gate yet.`);
    }
    // A plan given for a time (the free trial) lapses here, at the very call after its end.
    const plan = planInForce(terms, clock.now());
    if (!plan) {
      this.refuse(ask.usage, 402, 'SUBSCRIPTION_REQUIRED');
      return { kind: 'no_plan' };
    }
    const admission = this.window.admit(requestsPerMinute(plan, terms.rpmOverride), clock.now());
    if (!admission.allowed) {
      this.alarmNoLaterThan(Date.now() + KEY_USE_REPORT_MS);
      return { kind: 'limited', admission };
    }

    // The key's limit counts what its calls in flight hold: reserved here, before any await, so
    // concurrent calls cannot pass one limit together. A data job's items count in the submitting key's.
    const budgetKey = ask.budgetKeyId ?? ask.keyId;
    if (ask.keyLimit) this.budgets.adopt(budgetKey, ask.keyLimit);
    const capped = this.budgets.reserve(ask.usage.id, budgetKey, ask.amountUnits, clock.now());
    if (capped) {
      this.refuse(ask.usage, 402, 'INSUFFICIENT_CREDITS', true);
      return { kind: 'key_limit', ...capped, admission };
    }
    const taken = await this.draws.take(ask.usage.id, ask.amountUnits, ask.ttlMs).catch((error: unknown) => {
      // The wallet could not be reached for a draw: the call fails unbilled, and its row says so.
      this.budgets.release(ask.usage.id);
      this.refuse(ask.usage, 500, 'INTERNAL_ERROR');
      throw error;
    });
    if (taken.kind !== 'held') {
      this.budgets.release(ask.usage.id);
      this.refuse(ask.usage, taken.kind === 'busy' ? 409 : 402, taken.kind === 'busy' ? 'CONFLICT' : 'INSUFFICIENT_CREDITS');
      return { ...taken, admission };
    }
    this.rows.set(ask.usage.id, ask.usage);
    return { kind: 'held', holdId: ask.usage.id, admission };
  }

  /**
   * Revocation and window for a call that costs nothing (workspace databases): the same window as metered
   * calls (the smallest plan's for an organization without one), no money set aside, no usage row.
   */
  async admitFree(ask: FreeAsk): Promise<FreeAnswer> {
    if (!this.verify(ask.keyId)) return { kind: 'revoked' };
    this.book.bind(ask);
    if (this.book.neverSynced) await reached(this.link.exchange(REPORT_ONLY, false));
    const terms = this.book.terms;
    // Free calls need no plan: without one (or while the wallet has not answered), the smallest plan's window applies.
    const plan = (terms && planInForce(terms, clock.now())) ?? SMALLEST_PLAN;
    const admission = this.window.admit(requestsPerMinute(plan, terms?.rpmOverride ?? null), clock.now());
    // A free call leaves no row to report: the alarm stores the window it counted in.
    if (admission.allowed) this.alarmNoLaterThan(Date.now() + REPORT_MS);
    return admission.allowed ? { kind: 'admitted', admission } : { kind: 'limited', admission };
  }

  /**
   * Ends a call: a success spends up to what was held and gives the rest back, anything else gives it
   * all back; either way its usage row is stored here before this answers: the row `meter` brought,
   * completed with how the call `ended`, or `ended` itself when it is a whole row. Given only an outcome for
   * a row this object no longer has (it restarted, or the hold expired), it answers `row_needed` and changes
   * nothing. A success whose hold is gone takes the money again, so it is billed exactly once; when the money
   * is no longer there it is refused and billed nothing. `budgetKeyId` is the key whose monthly limit a late
   * capture counts in (a data job's item: the key that submitted the job).
   */
  async settle(holdId: string, actualUnits: number, ended: UsageOutcome | UsageRow, budgetKeyId?: string): Promise<SettleAnswer> {
    const brought = this.rows.get(holdId);
    this.rows.delete(holdId);
    const usage = 'id' in ended ? ended : brought && { ...brought, ...ended };
    if (!usage) return { kind: 'row_needed' };
    budgetKeyId ??= usage.keyId;
    this.book.bind(usage);
    if (usage.status >= 400) {
      this.book.release(holdId);
      this.budgets.release(holdId);
      this.book.record(usage);
      this.reportSoon();
      return { kind: 'released' };
    }
    let hold = this.book.holdOf(holdId);
    const late = !hold;
    if (!hold) {
      // Settled already (a repeated message): nothing changes.
      if (this.book.hasCharge(usage.id)) return { kind: 'captured', balance: this.view.balance(this.book.unacknowledged) };
      const lateId = `${holdId}:late`;
      // The key's limit applies to a late capture too: the room its hold kept went back when the hold did.
      const capped = this.budgets.reserve(lateId, budgetKeyId, actualUnits, clock.now());
      if (capped) {
        this.refuse(usage, 402, 'INSUFFICIENT_CREDITS', true);
        return { kind: 'key_limit', ...capped };
      }
      const taken = await this.draws.take(lateId, actualUnits, 0).catch((error: unknown) => {
        this.budgets.release(lateId);
        throw error;
      });
      if (taken.kind !== 'held') {
        this.budgets.release(lateId);
        this.refuse(usage, taken.kind === 'busy' ? 409 : 402, taken.kind === 'busy' ? 'CONFLICT' : 'INSUFFICIENT_CREDITS');
        return taken;
      }
      hold = this.book.holdOf(lateId)!;
    }
    // The charge stored is the key's spend stored: a key's spend is its sum plus its waiting charges.
    const spentBy = this.budgets.keyOf(hold.id) ?? budgetKeyId;
    // When a report is due now, the charge goes in it, composed at once (`reportSoon`).
    const { spent, sending } = this.link.capture(hold, actualUnits, usage, spentBy, this.reportDue() ? this.draws.topUp : undefined);
    this.budgets.capture(hold.id, spent, Date.parse(usage.createdAt));
    // A late capture may be a charge the wallet has already (a settle asked again after its answer was lost, once the
    // charge had left), which the figures here would count twice until the wallet answers. So it is reported before
    // the answer: the wallet takes it once and says so, and the balance answered counts it once. A rare path.
    if (late) await this.report(false, sending ?? undefined);
    else if (sending) void this.report(false, sending);
    else this.reportSoon();
    return { kind: 'captured', balance: this.view.balance(this.book.unacknowledged) };
  }

  /**
   * Records the usage row of a call refused before it reached `meter` (validation), and answers whether
   * its key may be served: a revoked key is told so rather than how to fix its input, and not recorded.
   * The key's use is noted (the spec stamps `last_used_at` on every authenticated request); the row's report carries it.
   */
  record(usage: UsageRow): boolean {
    if (this.revoked.has(usage.keyId)) return false;
    this.book.noteKeyUse(usage.keyId, clock.now());
    this.book.bind(usage);
    this.book.record(usage);
    this.reportSoon();
    return true;
  }

  /**
   * What a success under `callId` that this gate has not yet handed to the wallet spent; null when none waits
   * here. The first place to look for a call's charge, in the order a charge moves: gate, wallet, D1.
   */
  waitingChargeOf(callId: string): number | null {
    return this.book.waitingSuccessOf(callId);
  }

  /**
   * Reports everything and gives the whole free lease back; after it the wallet's statement is exact for
   * this workspace, unless the wallet does not take this gate's message: then the statement goes on
   * without this workspace's unreported charges (alerted already) rather than fail for every reader.
   */
  async flush(): Promise<void> {
    if (!this.book.owner) return;
    await reached(this.link.exchange(REPORT_ONLY, true));
  }

  /**
   * A sibling workspace is short of money this gate's lease may hold: an idle lease (no call asked for money
   * for RECALL_IDLE_MS) goes back now rather than at IDLE_LEASE_MS. A busy one stays: it would draw again.
   */
  async recall(): Promise<void> {
    const now = clock.now();
    if (!this.book.owner || now - this.lastMeter < RECALL_IDLE_MS || this.book.freeUnits(now) <= 0) return;
    await reached(this.link.exchange(REPORT_ONLY, true));
  }

  /** Asks the gates of `workspaceIds` to give back their idle leases; a gate that cannot is passed over. */
  private async recallFrom(workspaceIds: string[]): Promise<void> {
    const gates = this.env.WORKSPACE_GATE;
    await Promise.all(
      workspaceIds.map((workspaceId) =>
        gates
          .get(gates.idFromName(workspaceId))
          .recall()
          .catch((error: unknown) => console.error(JSON.stringify({ level: 'warn', note: 'lease recall failed', workspaceId, error: String(error) }))),
      ),
    );
  }

  /** A plan change, told by whoever changed it, so the very next call here follows it. */
  adoptTerms(terms: Terms, generation: number, balance: Balance): void {
    if (this.book.adopt(terms, generation, balance.periodEnd)) this.view.replace(balance);
    this.book.persist();
    this.view.forget();
  }

  /** Gives back the money of calls that outlived their holds, reports finished calls, and returns an idle lease. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    for (const holdId of this.book.expireHolds(clock.now())) {
      this.budgets.release(holdId);
      this.rows.delete(holdId);
    }
    const idle = clock.now() - this.lastMeter >= IDLE_LEASE_MS;
    await this.report(idle);
    // What no message has stored since (the last reply, the window's count): a quiet gate that restarts
    // keeps its count and does not send its last message again.
    this.book.persist();
  }

  /**
   * Sends the wallet what it has not heard (charges, key uses, the free lease when `giveBackAll`), then
   * sets the alarm for whatever is due next. A report the wallet does not take stays stored and is sent
   * again on its schedule.
   */
  private async report(giveBackAll: boolean, sending?: Promise<unknown>): Promise<void> {
    this.reportedAt = clock.now();
    try {
      // The message stores the window with it; without one, the alarm stores it (`persist`). One composed
      // with a call's charge as it settled is on its way already (`sending`).
      if (sending) await sending;
      else if (this.book.owner && (this.book.hasUnsent() || this.book.outgoing || (giveBackAll && this.book.freeUnits(clock.now()) > 0))) {
        // A lease running low is topped up by the report, not by a call that finds it short (a message that
        // gives the lease back asks for nothing: WalletLink).
        await this.link.exchange(this.draws.topUp, giveBackAll);
      }
    } catch (error) {
      // An undelivered message was alerted where it failed, and its next attempt sets the alarm.
      if (!(error instanceof Undelivered)) {
        console.error(JSON.stringify({ level: 'error', note: 'gate report kept for retry', error: String(error) }));
        this.alarmNoLaterThan(Date.now() + 1_000);
      }
    }
    this.scheduleAlarm();
  }

  /** A refused call's usage row, stored like any other; `keyLimit`: refused by the key's own monthly limit, not the balance. */
  private refuse(usage: UsageRow, status: number, errorCode: string, keyLimit?: true): void {
    this.book.record({ ...usage, status, errorCode, costUnits: 0 }, keyLimit);
    this.reportSoon();
  }

  /**
   * A finished call's row (and the key use and window it carries) reaches the wallet within REPORT_MS. The
   * first after a quiet spell goes at once, in the turn that stored it: a workspace called every few
   * seconds then costs no alarm per call, only the message. Those that follow within REPORT_MS of a report
   * wait for the alarm and go together, so a busy workspace sends one message per REPORT_MS.
   */
  private reportSoon(): void {
    const delivery = this.book.delivery;
    // A message the wallet has not taken goes first, when its next attempt is due.
    if (delivery) this.alarmAtClock(delivery.retryAt);
    else if (this.reportDue()) void this.report(false);
    // Never further off than REPORT_MS, whatever the clock did since the last report.
    else this.alarmNoLaterThan(Date.now() + Math.min(REPORT_MS, Math.max(0, this.reportedAt + REPORT_MS - clock.now())));
  }

  /** Whether a finished call's report goes at once: the wallet has taken every message, and none was begun within REPORT_MS. */
  private reportDue(): boolean {
    return !this.book.delivery && clock.now() - this.reportedAt >= REPORT_MS;
  }

  /** The earliest of: a report due, a hold's expiry, the idle lease's return. */
  private scheduleAlarm(): void {
    const delivery = this.book.delivery;
    // Nothing reaches the wallet before the message it has not taken: no report or return is due before its next attempt.
    if (delivery) this.alarmAtClock(delivery.retryAt);
    else {
      if (this.book.hasUnsent() || this.book.outgoing) this.alarmNoLaterThan(Date.now() + REPORT_MS);
      if (this.book.freeUnits(clock.now()) > 0) this.alarmAtClock(this.lastMeter + IDLE_LEASE_MS);
    }
    const expiry = this.book.nextHoldExpiry();
    if (expiry !== null) this.alarmAtClock(expiry);
  }

  /** Moves the alarm earlier, to when the injectable clock reads `at` (the alarm itself keeps real time). */
  private alarmAtClock(at: number): void {
    this.alarmNoLaterThan(Date.now() + Math.max(0, at - clock.now()));
  }

  /**
   * Moves the alarm earlier when `at` comes before it; an alarm that fires early finds nothing due and
   * sets itself again. Storage writes are ordered and the output gate holds the reply until they are
   * durable, so no await is needed.
   */
  private alarmNoLaterThan(at: number): void {
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }
}
