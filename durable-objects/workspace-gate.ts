import { DurableObject } from 'cloudflare:workers';
import { clock } from '../src/core/clock';
import type { ObjectBindings } from '../src/core/object-bindings';
import { requestsPerMinute, SMALLEST_PLAN } from '../src/core/plans';
import type { UsageRow } from '../src/core/usage';
import { KeyBudgets } from './key-budgets';
import type { KeyBudget, KeyLimit } from '../src/core/protocols/key-limits';
import { HOLD_GRACE_MS, type Admission, type FreeAnswer, type FreeAsk, type MeterAnswer, type MeterAsk, type SettleAnswer, type Shortfall, type WorkspaceGateProtocol } from '../src/core/protocols/gate';
import { LeaseBook, PARKED_RETRY_MS } from './lease-book';
import { type Balance, planInForce, type SyncMessage, type SyncReply, type Terms } from '../src/core/protocols/lease';
import type { OrgWalletProtocol } from '../src/core/protocols/wallet';

/** A gate reads the database, like every object, and reaches its organization's wallet. */
type Env = ObjectBindings & { ORG_WALLET: DurableObjectNamespace<OrgWalletProtocol> };

export const WINDOW_MS = 60_000;
/** Finished calls are reported to the wallet within this long, batched with their neighbours. */
export const REPORT_MS = 100;
/** The longest a key's use waits to be reported when nothing else is: `last_used_at` lands within this. */
export const KEY_USE_REPORT_MS = 1_000;
/** A lease not drawn on for this long goes back to the wallet, so sibling workspaces can spend it. */
export const IDLE_LEASE_MS = 1_000;
/**
 * A draw asks for enough for this many calls like the one that needed it, or for what this workspace
 * set aside over the last second if that is more, so a busy workspace draws about once a second
 * (the wallet may grant less).
 */
const CALLS_PER_DRAW = 20;
const RATE_BUCKET_MS = 1_000;
/** How often a call that found the lease short asks the wallet again before giving up. */
const DRAW_ATTEMPTS = 3;
/**
 * How long `/v1/credits` answers from the wallet's figures this gate holds before reading them again: a
 * sibling workspace's spending shows within its report interval plus this. Top-ups and plan changes show
 * at once (they tell the gates).
 */
export const VIEW_FRESH_MS = 100;
/** Seconds a caller is told to wait when money exists but calls in flight hold it. */
export const BUSY_RETRY_AFTER_S = 1;
/** The wallet has not taken the outgoing message (this attempt failed, or the next is not due): nothing else can be sent before it. */
class Undelivered extends Error {
  constructor(
    readonly seq: number,
    readonly retryAt: number,
  ) {
    super(`The wallet has not taken message ${seq} of this gate; it is sent again at ${new Date(retryAt).toISOString()}.`);
  }
}

/** Whether a turn's message reached the wallet: false when it is undelivered (stored, alerted, sent again on its schedule). */
function reached(turn: Promise<unknown>): Promise<boolean> {
  return turn.then(
    () => true,
    (error: unknown) => {
      if (error instanceof Undelivered) return false;
      throw error;
    },
  );
}

interface Window {
  start: number;
  count: number;
}

/**
 * One per workspace, and the only object a metered call talks to: revoked keys, the fixed 60-second
 * request window shared by all the workspace's keys, and the money for calls, spent from a lease its
 * organization's wallet grants it. A call costs two messages to this object, `meter` before the upstream
 * call and `settle` after it; the wallet hears from the gate in batches, one message at a time.
 * Window and lease checks run with no `await` between check and write, so concurrent calls cannot take
 * the same slot or the same unit.
 */
export class WorkspaceGate extends DurableObject<Env> implements WorkspaceGateProtocol {
  private window: Window = { start: 0, count: 0 };
  /** Calls were counted since the window was last stored. */
  private windowUnsaved = false;
  private revoked = new Set<string>();
  private readonly book: LeaseBook;
  private readonly budgets: KeyBudgets;
  /** Every exchange with the wallet, one after another: a reply is applied before the next message is made. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Units set aside in the current second and the one before, to size draws to the rate of spending. */
  private setAside = { bucket: 0, current: 0, previous: 0 };
  /** When a call last asked for money here (injectable clock): a lease unused for IDLE_LEASE_MS goes back. */
  private lastMeter = 0;
  /** When the alarm is set for, or null when this instance has set none. */
  private alarmAt: number | null = null;
  private walletId: { organizationId: string; id: DurableObjectId } | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.book = new LeaseBook(ctx.storage.sql);
    this.budgets = new KeyBudgets(ctx.storage.sql, (keyId) => this.book.waitingChargesOf(keyId));
    // Persisted so an evicted object does not forget the requests already counted in this window.
    void ctx.blockConcurrencyWhile(async () => {
      const stored = await ctx.storage.get<Window | string[]>(['window', 'revoked']);
      this.window = (stored.get('window') as Window | undefined) ?? this.window;
      this.revoked = new Set((stored.get('revoked') as string[] | undefined) ?? []);
    });
    if (this.book.hasUnsent() || this.book.outgoing) this.alarmNoLaterThan(Date.now() + REPORT_MS);
  }

  /**
   * Records a revoked key of this workspace, durably, before the revocation is answered. Every request
   * with a workspace key asks this object before it is served, so no isolate's memory can accept it.
   */
  async revoke(keyId: string): Promise<void> {
    if (this.revoked.has(keyId)) return;
    this.revoked.add(keyId);
    await this.ctx.storage.put('revoked', [...this.revoked]);
  }

  /** Whether a key may be served; a use of it is noted for `last_used_at`. */
  verify(keyId: string): boolean {
    if (this.revoked.has(keyId)) return false;
    this.noteUse(keyId);
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
    if (!this.book.viewFresh(VIEW_FRESH_MS, clock.now())) {
      const report = this.book.hasUnsent() || this.book.outgoing !== null;
      // A message the wallet does not take leaves the figures to be read beside it.
      if (!report || !(await reached(this.exchange(() => ({ need: 0, target: 0 }), false)))) await this.readWallet();
    }
    // Read or reported just now, so the wallet's figures and plan are here.
    return { revoked: false, balance: this.book.balance()!, terms: this.book.terms! };
  }

  /** The wallet changed by other means than a gate's message (a top-up): the next `/v1/credits` reads it again. */
  forgetBalance(): void {
    this.book.forgetView();
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
    if (!this.verify(ask.keyId)) return { kind: 'revoked' };
    this.book.bind(ask.usage);
    this.lastMeter = clock.now();
    // A gate that never heard from its wallet learns the plan before it applies one.
    if (this.book.neverSynced) await reached(this.exchange(() => ({ need: 0, target: 0 }), false));
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
    const admission = this.admit(requestsPerMinute(plan, terms.rpmOverride));
    if (!admission.allowed) return { kind: 'limited', admission };

    // The key's limit counts what its calls in flight hold: reserved here, before any await, so
    // concurrent calls cannot pass one limit together.
    if (ask.keyLimit) this.budgets.adopt(ask.keyId, ask.keyLimit);
    const capped = this.budgets.reserve(ask.usage.id, ask.keyId, ask.amountUnits, clock.now());
    if (capped) {
      this.refuse(ask.usage, 402, 'INSUFFICIENT_CREDITS');
      return { kind: 'key_limit', ...capped, admission };
    }
    const taken = await this.take(ask.usage.id, ask.amountUnits, ask.ttlMs).catch((error: unknown) => {
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
    return { kind: 'held', holdId: ask.usage.id, admission };
  }

  /**
   * Revocation and window for a call that costs nothing (workspace databases): the same window as metered
   * calls (the smallest plan's for an organization without one), no money set aside, no usage row.
   */
  async admitFree(ask: FreeAsk): Promise<FreeAnswer> {
    if (!this.verify(ask.keyId)) return { kind: 'revoked' };
    this.book.bind(ask);
    if (this.book.neverSynced) await reached(this.exchange(() => ({ need: 0, target: 0 }), false));
    const terms = this.book.terms;
    // Free calls need no plan: without one (or while the wallet has not answered), the smallest plan's window applies.
    const plan = (terms && planInForce(terms, clock.now())) ?? SMALLEST_PLAN;
    const admission = this.admit(requestsPerMinute(plan, terms?.rpmOverride ?? null));
    return admission.allowed ? { kind: 'admitted', admission } : { kind: 'limited', admission };
  }

  /**
   * Ends a call: a success spends up to what was held and gives the rest back, anything else gives it
   * all back; either way its usage row is stored here before this answers. A success whose hold is gone
   * (it outlived it, or this object restarted) takes the money again, so it is billed exactly once; when
   * the money is no longer there it is refused and billed nothing.
   */
  async settle(holdId: string, actualUnits: number, usage: UsageRow): Promise<SettleAnswer> {
    this.book.bind(usage);
    if (usage.status >= 400) {
      this.book.release(holdId);
      this.budgets.release(holdId);
      this.book.record(usage);
      this.reportSoon();
      return { kind: 'released' };
    }
    let hold = this.book.holdOf(holdId);
    if (!hold) {
      // Settled already (a repeated message): nothing changes.
      if (this.book.hasCharge(usage.id)) return { kind: 'captured', balance: this.book.balance() };
      const lateId = `${holdId}:late`;
      // The key's limit applies to a late capture too: the room its hold kept went back when the hold did.
      const capped = this.budgets.reserve(lateId, usage.keyId, actualUnits, clock.now());
      if (capped) {
        this.refuse(usage, 402, 'INSUFFICIENT_CREDITS');
        return { kind: 'key_limit', ...capped };
      }
      const taken = await this.take(lateId, actualUnits, 0).catch((error: unknown) => {
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
    this.budgets.capture(hold.id, this.book.capture(hold, actualUnits, usage), Date.parse(usage.createdAt));
    this.reportSoon();
    return { kind: 'captured', balance: this.book.balance() };
  }

  /**
   * Records the usage row of a call refused before it reached `meter` (validation), and answers whether
   * its key may be served: a revoked key is told so rather than how to fix its input, and not recorded.
   */
  record(usage: UsageRow): boolean {
    if (this.revoked.has(usage.keyId)) return false;
    this.book.bind(usage);
    this.book.record(usage);
    this.reportSoon();
    return true;
  }

  /**
   * Reports everything and gives the whole free lease back; after it the wallet's statement is exact for
   * this workspace, unless the wallet does not take this gate's message: then the statement goes on
   * without this workspace's unreported charges (alerted already) rather than fail for every reader.
   */
  async flush(): Promise<void> {
    if (!this.book.owner) return;
    await reached(this.exchange(() => ({ need: 0, target: 0 }), true));
  }

  /** A plan change, told by whoever changed it, so the very next call here follows it. */
  adoptTerms(terms: Terms, generation: number, balance: Balance): void {
    this.book.adopt(terms, generation, balance);
  }

  /** Gives back the money of calls that outlived their holds, reports finished calls, and returns an idle lease. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    if (this.windowUnsaved) {
      this.windowUnsaved = false;
      void this.ctx.storage.put('window', this.window, { allowUnconfirmed: true });
    }
    for (const holdId of this.book.expireHolds(clock.now())) this.budgets.release(holdId);
    const idle = clock.now() - this.lastMeter >= IDLE_LEASE_MS;
    const free = this.book.free(clock.now());
    try {
      if (this.book.owner && (this.book.hasUnsent() || this.book.outgoing || (idle && free.subscriptionUnits + free.purchasedUnits > 0))) {
        await this.exchange(() => ({ need: 0, target: 0 }), idle);
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

  private admit(limit: number): Admission {
    const now = clock.now();
    const start = now - (now % WINDOW_MS);
    if (start !== this.window.start) this.window = { start, count: 0 };
    const resetAt = start + WINDOW_MS;
    if (this.window.count >= limit) return { allowed: false, limit, remaining: 0, resetAt };
    this.window.count += 1;
    // The count is decided in memory and stored by the alarm within REPORT_MS, not by each call (a
    // storage write per call was 3 % of a metered call's CPU). Were the process killed before it, the
    // window would forget at most that interval's requests: a limiter fails open, it does not stall calls.
    this.windowUnsaved = true;
    this.alarmNoLaterThan(Date.now() + REPORT_MS);
    return { allowed: true, limit, remaining: limit - this.window.count, resetAt };
  }

  /**
   * Sets `amount` aside from the lease, drawing more from the wallet when it is short. Draws go through
   * the one queue; after each, the lease is checked again, since calls running meanwhile may have taken
   * what came. A refusal says whether the balance itself is short (402) or calls in flight hold the money (409).
   */
  private async take(id: string, amount: number, ttlMs: number): Promise<{ kind: 'held' } | Shortfall> {
    for (let attempt = 0; attempt < DRAW_ATTEMPTS; attempt++) {
      if (this.takeFromLease(id, amount, ttlMs)) return { kind: 'held' };
      let reply: SyncReply | undefined;
      try {
        reply = await this.exchange(() => {
          const free = this.book.free(clock.now());
          const recent = this.setAside.current + this.setAside.previous;
          return { need: Math.max(0, amount - free.subscriptionUnits - free.purchasedUnits), target: Math.max(amount * CALLS_PER_DRAW, recent) };
        }, false);
      } catch (error) {
        if (!(error instanceof Undelivered)) throw error;
        // No draw can pass the message the wallet has not taken: the lease still serves what fits in it,
        // and the caller is told to come back when that message is next sent (not 402: the money may be there).
        if (this.takeFromLease(id, amount, ttlMs)) return { kind: 'held' };
        return { kind: 'busy', retryAfter: Math.max(BUSY_RETRY_AFTER_S, Math.ceil((error.retryAt - clock.now()) / 1_000)) };
      }
      if (reply && reply.grantedUnits === 0 && reply.unleasedUnits < amount) break;
    }
    if (this.takeFromLease(id, amount, ttlMs)) return { kind: 'held' };
    const unspent = this.book.unspentUnits();
    if (unspent < amount) return { kind: 'insufficient', requiredUnits: amount, availableUnits: unspent };
    return { kind: 'busy', retryAfter: BUSY_RETRY_AFTER_S };
  }

  /**
   * One turn of the queue: resends the message whose reply was lost, then, when there is anything to
   * say (charges, key uses, money to give back, or a need still unmet when this turn comes), sends one.
   * The need is worked out when the turn comes, not when it was queued: an earlier turn may have met it.
   */
  private exchange(ask: () => { need: number; target: number }, giveBackAll: boolean): Promise<SyncReply | undefined> {
    const turn = this.queue.then(async () => {
      let reply: SyncReply | undefined;
      if (this.book.outgoing) reply = await this.deliver(this.book.outgoing);
      const { need, target } = ask();
      const free = this.book.free(clock.now());
      const givesBack = giveBackAll && free.subscriptionUnits + free.purchasedUnits > 0;
      if (need > 0 || givesBack || this.book.hasUnsent() || this.book.neverSynced) {
        const message = this.book.compose(need, need > 0 ? Math.max(need, target) : 0, giveBackAll, clock.now());
        // In the same turn as the charges leave the waiting list, so a key's stored spend stays exact.
        this.budgets.moveToSums(message.charges);
        reply = await this.deliver(message);
      }
      return reply;
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Sends the outgoing message, unless an earlier attempt failed and the next is not due yet, and applies
   * the reply. A failure is stored with the message (how many attempts, when the next), logged with the
   * ids an operator needs, and thrown as `Undelivered`.
   */
  private async deliver(message: SyncMessage): Promise<SyncReply> {
    const { organizationId, workspaceId } = this.book.owner!;
    const before = this.book.delivery;
    if (before && before.retryAt > clock.now()) throw new Undelivered(message.seq, before.retryAt);
    let reply: SyncReply;
    try {
      reply = await this.wallet().sync(workspaceId, message);
    } catch (error) {
      const delivery = this.book.undelivered(String(error), clock.now());
      const level = delivery.parked ? 'error' : 'warn';
      const note = delivery.parked
        ? `gate message parked: the wallet refused it ${delivery.attempts} times; it stays stored and is sent again every ${PARKED_RETRY_MS / 1_000} s, and draws in this workspace wait for it`
        : 'gate message refused by the wallet; sent again later';
      const chargeIds = message.charges.map((charge) => charge.id);
      const record = { level, note, organizationId, workspaceId, seq: message.seq, chargeIds, attempts: delivery.attempts, retryAt: new Date(delivery.retryAt).toISOString(), error: String(error) };
      (delivery.parked ? console.error : console.warn)(JSON.stringify(record));
      throw new Undelivered(message.seq, delivery.retryAt);
    }
    this.book.acknowledge(message, reply);
    if (before?.parked) console.log(JSON.stringify({ level: 'info', note: 'parked gate message delivered', organizationId, workspaceId, seq: message.seq, attempts: before.attempts + 1 }));
    return reply;
  }

  /**
   * Reads the wallet's figures in a turn of the queue, so no message's reply lands in between. With a
   * message outstanding (its reply was lost), the figures could already count charges still pending
   * here: that message is sent again instead, and its reply brings them. One the wallet refuses was not
   * applied (the refusal rolled it back): the figures are read beside it.
   */
  private readWallet(): Promise<void> {
    const turn = this.queue.then(async () => {
      if (this.book.outgoing) {
        if (await reached(this.deliver(this.book.outgoing))) return;
      }
      const { balance, terms } = await this.wallet().summary(this.book.owner!.workspaceId);
      this.book.refreshView(balance, terms);
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private takeFromLease(id: string, amount: number, ttlMs: number): boolean {
    const now = clock.now();
    if (!this.book.take(id, amount, now + ttlMs + HOLD_GRACE_MS, now)) return false;
    this.alarmNoLaterThan(Date.now() + ttlMs + HOLD_GRACE_MS);
    this.countSetAside(amount);
    return true;
  }

  private countSetAside(amount: number): void {
    const bucket = Math.floor(Date.now() / RATE_BUCKET_MS);
    if (bucket !== this.setAside.bucket) {
      this.setAside = { bucket, current: 0, previous: bucket === this.setAside.bucket + 1 ? this.setAside.current : 0 };
    }
    this.setAside.current += amount;
  }

  private wallet() {
    const { organizationId } = this.book.owner!;
    // The id is worked out once: `/v1/credits` asks the wallet on every request.
    if (this.walletId?.organizationId !== organizationId) this.walletId = { organizationId, id: this.env.ORG_WALLET.idFromName(organizationId) };
    return this.env.ORG_WALLET.get(this.walletId.id);
  }

  /** A refused call's usage row, stored like any other. */
  private refuse(usage: UsageRow, status: number, errorCode: string): void {
    this.book.record({ ...usage, status, errorCode, costUnits: 0 });
    this.reportSoon();
  }

  /**
   * Every use is noted (one map entry per key, the latest time wins), so `last_used_at` is exact. It rides
   * on the next report; uses alone (`/v1/credits`, free calls) wait up to KEY_USE_REPORT_MS for one of their
   * own, so such traffic costs the wallet one message a second, not one per REPORT_MS.
   */
  private noteUse(keyId: string): void {
    this.book.noteKeyUse(keyId, clock.now());
    this.alarmNoLaterThan(Date.now() + KEY_USE_REPORT_MS);
  }

  private reportSoon(): void {
    this.alarmNoLaterThan(Date.now() + REPORT_MS);
  }

  /** The earliest of: a report due, a hold's expiry, the idle lease's return. */
  private scheduleAlarm(): void {
    const delivery = this.book.delivery;
    // Nothing reaches the wallet before the message it has not taken: no report or return is due before its next attempt.
    if (delivery) this.alarmNoLaterThan(Date.now() + Math.max(0, delivery.retryAt - clock.now()));
    else {
      if (this.book.hasUnsent() || this.book.outgoing) this.alarmNoLaterThan(Date.now() + REPORT_MS);
      const free = this.book.free(clock.now());
      if (free.subscriptionUnits + free.purchasedUnits > 0) this.alarmNoLaterThan(Date.now() + Math.max(0, this.lastMeter + IDLE_LEASE_MS - clock.now()));
    }
    const expiry = this.book.nextHoldExpiry();
    if (expiry !== null) this.alarmNoLaterThan(Date.now() + Math.max(0, expiry - clock.now()));
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
