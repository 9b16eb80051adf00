import { DurableObject } from 'cloudflare:workers';
import { clock } from '../src/core/clock';
import type { ObjectBindings } from '../src/core/object-bindings';
import type { Plan } from '../src/core/plans';
import { announceCredits } from '../src/services/webhooks/announce';
import type { WebhookBindings } from '../src/services/webhooks/bindings';
import { creditAudience } from '../src/services/webhooks/endpoints';
import { CreditWatch } from './credit-watch';
import type { Balance, Charge, Split, SyncMessage, SyncReply, Terms } from '../src/core/protocols/lease';
import type { LedgerEntry, OrgWalletProtocol, RenderQueue, RenderSlotAnswer, WalletConfiguration } from '../src/core/protocols/wallet';
import { LedgerSummaries } from './ledger-summaries';
import { RenderSlots } from './render-slots';
import { USAGE_FLUSH_MS, UsageOutbox } from './usage-outbox';


/** A wallet writes usage rows to the database and tells webhook endpoints how its balance moves. */
type Env = ObjectBindings & WebhookBindings;


interface AccountRow extends Record<string, SqlStorageValue> {
  subscription_units: number;
  purchased_units: number;
  allowance_units: number;
  period_end: number | null;
}

interface TermsRow extends Record<string, SqlStorageValue> {
  plan: string | null;
  rpm_override: number | null;
  plan_ends_at: number | null;
  version: number;
  generation: number;
}

/** The account, the plan and the leases' running totals: what a gate's message and a summary read first. */
interface Figures extends AccountRow, TermsRow {
  leased_subscription: number;
  leased_purchased: number;
}

/** A workspace's lease as a message reads it: null parts before the wallet has heard from that workspace. */
interface LeaseFigures extends Figures {
  lease_subscription: number | null;
  lease_purchased: number | null;
  last_seq: number | null;
  /** The reply stored for the last message applied, read only when the message is not newer than it. */
  last_reply: string | null;
}

/** When D1 refuses a batch of usage rows, the outbox tries again this much later. */
const FLUSH_RETRY_MS = 5_000;

/** A lease never takes more than this share of what no lease holds, so sibling workspaces find money too. */
const LEASE_SHARE = 4;
/** How many leaseholders a short gate is told to ask for their idle leases, largest first. */
const HOLDERS_TOLD = 8;

/**
 * One per organization: the subscription allowance and purchased balance, the ledger, and the leases
 * its workspaces' gates spend from. Balances are the money not yet spent; a lease earmarks part of it
 * for one workspace, and a capture (reported by the gate in its batches) is what spends it. Every
 * method is synchronous: each read-check-write runs with no `await` in between, so no two leases can
 * earmark the same unit.
 */
export class OrgWallet extends DurableObject<Env> implements OrgWalletProtocol {
  private readonly sql: SqlStorage;
  private readonly outbox: UsageOutbox;
  private readonly summaries: LedgerSummaries;
  private readonly creditWatch: CreditWatch;
  /** The pages the organization renders at once in a browser, across all its workspaces and isolates. */
  private readonly renders = new RenderSlots();
  /** When the alarm is set for, or null when this instance has set none. */
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS account (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        subscription_units INTEGER NOT NULL CHECK (subscription_units >= 0),
        purchased_units INTEGER NOT NULL CHECK (purchased_units >= 0),
        allowance_units INTEGER NOT NULL,
        period_end INTEGER
      );
      INSERT OR IGNORE INTO account VALUES (1, 0, 0, 0, NULL);
      CREATE TABLE IF NOT EXISTS terms (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        plan TEXT,
        rpm_override INTEGER,
        plan_ends_at INTEGER,
        version INTEGER NOT NULL,
        generation INTEGER NOT NULL
      );
      INSERT OR IGNORE INTO terms (id, plan, rpm_override, plan_ends_at, version, generation) VALUES (1, NULL, NULL, NULL, 0, 0);
      CREATE TABLE IF NOT EXISTS leases (
        workspace_id TEXT PRIMARY KEY,
        subscription_units INTEGER NOT NULL CHECK (subscription_units >= 0),
        purchased_units INTEGER NOT NULL CHECK (purchased_units >= 0),
        last_seq INTEGER NOT NULL,
        last_reply TEXT
      );
      CREATE TABLE IF NOT EXISTS ledger (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        hold_id TEXT,
        subscription_delta INTEGER NOT NULL,
        purchased_delta INTEGER NOT NULL,
        subscription_after INTEGER NOT NULL,
        purchased_after INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX IF NOT EXISTS ledger_once_per_call ON ledger (kind, hold_id);
      -- When the organization closed with its last member's account: no credit is taken from then on.
      CREATE TABLE IF NOT EXISTS closure (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        closed_at INTEGER NOT NULL
      );
      -- What Stripe took back of each payment that bought credit, as asked of this wallet: its refunds' running total
      -- (the most Stripe has said, and the part of it asked, within what the payment's disputes left) and what its
      -- disputes withdrew, each dispute once. What could be taken of it is in
      -- the ledger (kind 'withdrawal'); what was spent could not be.
      CREATE TABLE IF NOT EXISTS payment_returns (
        payment TEXT PRIMARY KEY,
        refund_told_units INTEGER NOT NULL DEFAULT 0,
        refunded_units INTEGER NOT NULL DEFAULT 0,
        disputed_units INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE IF NOT EXISTS dispute_returns (
        dispute TEXT PRIMARY KEY,
        payment TEXT NOT NULL,
        asked_units INTEGER NOT NULL,
        taken_units INTEGER NOT NULL,
        reinstated INTEGER NOT NULL DEFAULT 0
      );
      -- What a period spent of its allowance beyond what the allowance now in force can show (a plan changed with
      -- keepUsage to a smaller one): counted by the next such change, gone at the period's end.
      CREATE TABLE IF NOT EXISTS period_carry (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        units INTEGER NOT NULL
      );
      -- What all leases hold, kept by triggers as leases change, so no call sums the leases: a wallet with a
      -- thousand workspaces syncs as fast as one with a single workspace. Seeded from the leases once.
      CREATE TABLE IF NOT EXISTS lease_totals (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        subscription_units INTEGER NOT NULL,
        purchased_units INTEGER NOT NULL
      );
      INSERT OR IGNORE INTO lease_totals
        SELECT 1, COALESCE(SUM(subscription_units), 0), COALESCE(SUM(purchased_units), 0) FROM leases;
      CREATE TRIGGER IF NOT EXISTS lease_totals_insert AFTER INSERT ON leases BEGIN
        UPDATE lease_totals SET subscription_units = subscription_units + NEW.subscription_units, purchased_units = purchased_units + NEW.purchased_units;
      END;
      CREATE TRIGGER IF NOT EXISTS lease_totals_update AFTER UPDATE OF subscription_units, purchased_units ON leases BEGIN
        UPDATE lease_totals
           SET subscription_units = subscription_units + NEW.subscription_units - OLD.subscription_units,
               purchased_units = purchased_units + NEW.purchased_units - OLD.purchased_units;
      END;
      CREATE TRIGGER IF NOT EXISTS lease_totals_delete AFTER DELETE ON leases BEGIN
        UPDATE lease_totals SET subscription_units = subscription_units - OLD.subscription_units, purchased_units = purchased_units - OLD.purchased_units;
      END;
      -- A capture's entry carries the balances after it: the account follows each, inside the statement that
      -- writes the captures (applyCharges), so a gate's message costs no statement of its own for the account.
      CREATE TRIGGER IF NOT EXISTS account_after_capture AFTER INSERT ON ledger WHEN NEW.kind = 'capture' BEGIN
        UPDATE account SET subscription_units = NEW.subscription_after, purchased_units = NEW.purchased_after;
      END;
    `);
    this.outbox = new UsageOutbox(this.sql);
    this.summaries = new LedgerSummaries(this.sql);
    this.creditWatch = new CreditWatch(this.sql);
    this.scheduleAlarm();
  }

  /**
   * Sets the plan, its monthly allowance and custom ceiling, and starts a new period with the allowance in
   * full (or, with `keepUsage`, less what the period ending had spent of its own). Subscription units held in
   * leases belong to the period that ended: they expire with it.
   * Answers the workspaces that hold or held a lease, so the caller can tell their gates at once.
   */
  configure(input: WalletConfiguration): {
    balance: Balance;
    terms: Terms;
    generation: number;
    workspaces: string[];
    /** False when a configuration with this dedupe id was applied before: nothing changed. */
    applied: boolean;
    /** Whether the wallet's terms are (still) the ones this configuration set: no later one replaced them. */
    current: boolean;
  } {
    const workspaces = () => this.sql.exec<{ id: string }>('SELECT workspace_id AS id FROM leases').toArray().map((row) => row.id);
    if (input.dedupeId && this.applied('plan', input.dedupeId)) {
      const latest = this.sql.exec<{ id: string | null }>("SELECT hold_id AS id FROM ledger WHERE kind = 'plan' ORDER BY seq DESC LIMIT 1").one().id;
      return { balance: this.balance(), terms: this.terms(), generation: this.generation(), workspaces: workspaces(), applied: false, current: latest === input.dedupeId };
    }
    if (input.ifNoPlan && this.terms().plan !== null) {
      return { balance: this.balance(), terms: this.terms(), generation: this.generation(), workspaces: workspaces(), applied: false, current: false };
    }
    // What was spent is of the period in force: one that ended has refilled first.
    const account = input.keepUsage ? this.rollPeriod() : this.account();
    const periodEnd = nextPeriodEnd(clock.now());
    const spent = input.keepUsage ? Math.max(0, account.allowance_units - account.subscription_units) + this.carried() : 0;
    this.sql.exec('UPDATE account SET allowance_units = ?, period_end = ?', input.allowanceUnits, periodEnd);
    this.carry(Math.max(0, spent - input.allowanceUnits));
    this.change('plan', input.dedupeId ?? null, Math.max(0, input.allowanceUnits - spent) - account.subscription_units, 0);
    this.sql.exec('UPDATE terms SET plan = ?, rpm_override = ?, plan_ends_at = ?, version = version + 1', input.plan, input.rpmOverride, input.planEndsAt ?? null);
    this.newGeneration();
    return { balance: this.balance(), terms: this.terms(), generation: this.generation(), workspaces: workspaces(), applied: true, current: true };
  }

  /**
   * Adds to the balances. A credit given with a dedupe id (a payment's event id) is applied once however
   * often it is given, so whoever pays can credit first and record the payment after: a crash in
   * between is repaired by giving the credit again.
   */
  credit(amounts: { subscriptionUnits?: number; purchasedUnits?: number }, dedupeId: string | null = null): Balance & { applied: boolean; closed?: true } {
    this.rollPeriod();
    if (dedupeId && this.applied('credit', dedupeId)) return { ...this.balance(), applied: false };
    // Nothing can spend it any more: the payer gets it back instead (billing.ts refunds a top-up so refused).
    if (this.closedAt() !== null) return { ...this.balance(), applied: false, closed: true };
    this.change('credit', dedupeId, amounts.subscriptionUnits ?? 0, amounts.purchasedUnits ?? 0);
    return { ...this.balance(), applied: true };
  }

  /**
   * A payment that bought credit was refunded up to `totalUnits` (Stripe's running total of its refunds): takes back
   * what the total adds to the totals asked before (so deliveries again, at once or late, take nothing), within what
   * the payment bought less what its disputes withdrew. Answers what was asked now and what could be taken of it.
   */
  refunded(payment: string, paidUnits: number, totalUnits: number): Balance & { askedUnits: number; takenUnits: number; givenBackUnits: number } {
    this.sql.exec(
      'INSERT INTO payment_returns (payment, refund_told_units) VALUES (?, ?) ON CONFLICT (payment) DO UPDATE SET refund_told_units = MAX(refund_told_units, excluded.refund_told_units)',
      payment,
      totalUnits,
    );
    const { asked, taken } = this.applyRefund(payment, paidUnits);
    return { ...this.balance(), askedUnits: asked, takenUnits: taken, givenBackUnits: 0 };
  }

  /**
   * Asks what the refunds told leave to take: the highest total, within what the payment bought less what its disputes
   * withdrew (a dispute won later leaves room for the refund again).
   */
  private applyRefund(payment: string, paidUnits: number): { asked: number; taken: number } {
    const returns = this.returnsOf(payment);
    const upTo = Math.max(returns.refunded_units, Math.min(returns.refund_told_units, paidUnits - returns.disputed_units));
    const asked = upTo - returns.refunded_units;
    if (asked <= 0) return { asked: 0, taken: 0 };
    this.sql.exec('UPDATE payment_returns SET refunded_units = ? WHERE payment = ?', upTo, payment);
    return { asked, taken: this.takeBack(asked, `refund:${payment}:${upTo}`) };
  }

  /**
   * A dispute of a payment that bought credit withdrew `units` (Stripe took the money back), or, `reinstated`, gave
   * them back (the dispute was won). Each once per dispute: a withdrawal takes what the payment bought less what was
   * refunded or withdrawn before; a reinstatement credits again what its withdrawal took, and one that comes first
   * leaves the withdrawal nothing to take.
   */
  disputed(dispute: string, payment: string, paidUnits: number, units: number, reinstated: boolean): Balance & { askedUnits: number; takenUnits: number; givenBackUnits: number } {
    const known = this.sql.exec<{ asked: number; taken: number; reinstated: number }>('SELECT asked_units AS asked, taken_units AS taken, reinstated FROM dispute_returns WHERE dispute = ?', dispute).toArray()[0];
    if (reinstated) {
      if (known?.reinstated) return { ...this.balance(), askedUnits: 0, takenUnits: 0, givenBackUnits: 0 };
      if (!known) this.sql.exec('INSERT INTO dispute_returns (dispute, payment, asked_units, taken_units, reinstated) VALUES (?, ?, 0, 0, 1)', dispute, payment);
      else {
        this.sql.exec('UPDATE dispute_returns SET reinstated = 1 WHERE dispute = ?', dispute);
        this.sql.exec('UPDATE payment_returns SET disputed_units = disputed_units - ? WHERE payment = ?', known.asked, payment);
        if (known.taken > 0) this.change('credit', `dispute-reinstated:${dispute}`, 0, known.taken);
      }
      // A refund told while the dispute held the payment now has the room the dispute leaves.
      const refund = this.applyRefund(payment, paidUnits);
      return { ...this.balance(), askedUnits: refund.asked, takenUnits: refund.taken, givenBackUnits: known?.taken ?? 0 };
    }
    if (known) return { ...this.balance(), askedUnits: 0, takenUnits: 0, givenBackUnits: 0 };
    const returns = this.returnsOf(payment);
    const asked = Math.max(0, Math.min(units, paidUnits - returns.refunded_units - returns.disputed_units));
    const taken = asked > 0 ? this.takeBack(asked, `dispute:${dispute}`) : 0;
    this.sql.exec('INSERT INTO dispute_returns (dispute, payment, asked_units, taken_units) VALUES (?, ?, ?, ?)', dispute, payment, asked, taken);
    this.sql.exec('UPDATE payment_returns SET disputed_units = disputed_units + ? WHERE payment = ?', asked, payment);
    return { ...this.balance(), askedUnits: asked, takenUnits: taken, givenBackUnits: 0 };
  }

  private returnsOf(payment: string): { refund_told_units: number; refunded_units: number; disputed_units: number } {
    this.sql.exec('INSERT OR IGNORE INTO payment_returns (payment) VALUES (?)', payment);
    return this.sql
      .exec<{ refund_told_units: number; refunded_units: number; disputed_units: number }>('SELECT refund_told_units, refunded_units, disputed_units FROM payment_returns WHERE payment = ?', payment)
      .one();
  }

  /**
   * Takes back up to `units` of purchased credit, no more than no lease holds (a gate spends its lease without asking,
   * and the balance never goes below zero): answers what it took. What was spent, or is leased, stays.
   */
  private takeBack(units: number, holdId: string): number {
    const leased = this.sql.exec<{ units: number }>('SELECT purchased_units AS units FROM lease_totals').one().units;
    const taken = Math.max(0, Math.min(units, this.account().purchased_units - leased));
    this.change('withdrawal', holdId, 0, -taken);
    return taken;
  }

  private carried(): number {
    return this.sql.exec<{ units: number }>('SELECT units FROM period_carry').toArray()[0]?.units ?? 0;
  }

  private carry(units: number): void {
    if (units > 0) this.sql.exec('INSERT INTO period_carry (id, units) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET units = excluded.units', units);
    else this.sql.exec('DELETE FROM period_carry');
  }

  /** Whether a credit given with this dedupe id (a payment's event id) was applied. */
  hasCredit(dedupeId: string): boolean {
    return this.applied('credit', dedupeId);
  }

  /**
   * The organization is closing: from now on a credit changes nothing and says so, so a payment that arrives during or
   * after the close (checked in D1 before it reached here) is refunded rather than kept where nothing can spend it.
   * The first moment stays. `closed` false takes it back, for a close refused after the wallet was closed.
   */
  close(closed = true): void {
    if (closed) this.sql.exec('INSERT OR IGNORE INTO closure (id, closed_at) VALUES (1, ?)', clock.now());
    else this.sql.exec('DELETE FROM closure');
  }

  private closedAt(): number | null {
    return this.sql.exec<{ at: number }>('SELECT closed_at AS at FROM closure').toArray()[0]?.at ?? null;
  }

  /**
   * One message of a workspace's gate, applied in one transaction: its charges become ledger captures
   * and queued usage rows, what it gives back leaves its lease, and then it may be granted more. A
   * message already applied answers its stored reply, so a gate that lost a reply can send it again.
   */
  sync(workspaceId: string, message: SyncMessage): SyncReply {
    return this.ctx.storage.transactionSync(() => {
      // First, so a period that ended has already voided the subscription units leased in it.
      const figures = this.figures({ workspaceId, seq: message.seq });
      if (figures.last_seq === null) this.newLease(workspaceId);
      if (figures.last_reply) return JSON.parse(figures.last_reply) as SyncReply;

      const { generation } = figures;
      const lease: Split = { subscriptionUnits: figures.lease_subscription ?? 0, purchasedUnits: figures.lease_purchased ?? 0 };
      const held: Split = { ...lease };
      const { alreadyCharged, ...account } = this.applyCharges(message.charges, generation, held, figures);
      // Subscription units of an earlier generation are already gone from the lease (and the account).
      if (message.generation === generation) held.subscriptionUnits -= message.giveBack.subscriptionUnits;
      held.purchasedUnits -= message.giveBack.purchasedUnits;
      // What the other leases hold, then what no lease holds once this one is as the message left it.
      const others: Split = { subscriptionUnits: figures.leased_subscription - lease.subscriptionUnits, purchasedUnits: figures.leased_purchased - lease.purchasedUnits };
      const unleasedNow = () => ({ subscriptionUnits: account.subscriptionUnits - others.subscriptionUnits - held.subscriptionUnits, purchasedUnits: account.purchasedUnits - others.purchasedUnits - held.purchasedUnits });
      const granted = this.grant(held, message.needUnits, message.targetUnits, unleasedNow());
      const unleased = unleasedTotal(unleasedNow());
      for (const [keyId, at] of message.keyUses) this.outbox.useKey(keyId, at);
      if (message.charges.length > 0 || message.keyUses.length > 0) this.alarmNoLaterThan(Date.now() + USAGE_FLUSH_MS);

      const balance: Balance = {
        ...account,
        heldUnits: others.subscriptionUnits + others.purchasedUnits + held.subscriptionUnits + held.purchasedUnits,
        allowanceUnits: figures.allowance_units,
        periodEnd: figures.period_end,
      };
      const reply: SyncReply = {
        seq: message.seq,
        lease: held,
        generation,
        periodEnd: balance.periodEnd,
        grantedUnits: granted,
        unleasedUnits: unleased,
        ...(granted === 0 && message.needUnits > unleased ? { holders: this.holdersBesides(workspaceId) } : {}),
        ...(alreadyCharged.length > 0 ? { alreadyCharged } : {}),
        balance,
        terms: termsOf(figures),
      };
      // One write: the lease (the totals' triggers follow it) and the reply a resent message is answered with.
      this.sql.exec(
        'UPDATE leases SET subscription_units = ?, purchased_units = ?, last_seq = ?, last_reply = ? WHERE workspace_id = ?',
        held.subscriptionUnits, held.purchasedUnits, message.seq, JSON.stringify(reply), workspaceId,
      );
      return reply;
    });
  }

  /** Queues a usage row for D1; it lands within USAGE_FLUSH_MS, batched with its neighbours. */
  recordUsage(usage: Charge['usage']): void {
    this.outbox.add([usage]);
    this.alarmNoLaterThan(Date.now() + USAGE_FLUSH_MS);
  }

  balance(): Balance {
    const account = this.rollPeriod();
    const leased = this.leased();
    return {
      subscriptionUnits: account.subscription_units,
      purchasedUnits: account.purchased_units,
      heldUnits: leased.subscriptionUnits + leased.purchasedUnits,
      allowanceUnits: account.allowance_units,
      periodEnd: account.period_end,
    };
  }

  /**
   * Balances and plan together: what `/v1/credits` shows, read by a gate whose own figures are older than
   * VIEW_FRESH_MS. One statement reads account, leases and terms (`figures`, which rolls a period that
   * has ended first).
   */
  summary(workspaceId?: string): { balance: Balance; terms: Terms } {
    // A gate that reads the figures keeps them a moment: it is listed with the leaseholders, so a top-up tells it.
    if (workspaceId !== undefined) this.sql.exec('INSERT OR IGNORE INTO leases VALUES (?, 0, 0, 0, NULL)', workspaceId);
    const figures = this.figures();
    return {
      balance: {
        subscriptionUnits: figures.subscription_units,
        purchasedUnits: figures.purchased_units,
        heldUnits: figures.leased_subscription + figures.leased_purchased,
        allowanceUnits: figures.allowance_units,
        periodEnd: figures.period_end,
      },
      terms: termsOf(figures),
    };
  }

  /** The plan this wallet was configured with: none (version 0) until it is configured. */
  terms(): Terms {
    return termsOf(this.sql.exec<TermsRow>('SELECT * FROM terms').one());
  }

  statement(limit = 50): { balance: Balance; ledger: LedgerEntry[]; storageBytes: number } {
    const ledger = this.sql
      .exec<LedgerEntry & Record<string, SqlStorageValue>>(
        `SELECT seq, at, kind, hold_id AS holdId, subscription_delta AS subscriptionDelta, purchased_delta AS purchasedDelta,
                subscription_after AS subscriptionAfter, purchased_after AS purchasedAfter
           FROM ledger ORDER BY seq DESC LIMIT ?`,
        limit,
      )
      .toArray();
    return { balance: this.balance(), ledger, storageBytes: this.sql.databaseSize };
  }

  /** Workspaces with a lease, so an exact statement can ask their gates to report first. */
  leaseholders(): string[] {
    return this.sql.exec<{ id: string }>('SELECT workspace_id AS id FROM leases').toArray().map((row) => row.id);
  }

  /**
   * What the ledger's capture of a call took, while it keeps it in detail; null without one. A capture folded
   * into its day's row (LedgerSummaries) is no longer known here: its usage row reached D1 before the fold.
   */
  captureOf(callId: string): number | null {
    const capture = this.sql.exec<{ units: number }>("SELECT -(subscription_delta + purchased_delta) AS units FROM ledger WHERE kind = 'capture' AND hold_id = ?", callId).toArray()[0];
    return capture?.units ?? null;
  }

  /** Takes one of the organization's `limit` render slots for at most `ttlMs`, or a place among those waiting for one (RenderSlots). */
  takeRenderSlot(id: string, ttlMs: number, limit: number, queue: RenderQueue): RenderSlotAnswer {
    return this.renders.take(id, ttlMs, limit, queue);
  }

  /** A webhook endpoint of the organization was added, changed or removed (`OrgWalletProtocol`). */
  forgetCreditAudience(): void {
    this.creditWatch.forgetAudience();
  }

  /** A render ended: its slot is free for the organization's next. */
  freeRenderSlot(id: string): void {
    this.renders.free(id);
  }

  /** Sends queued usage rows and key uses to D1, folds old captures into day rows, and announces how the balance moved. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    try {
      await this.outbox.flush(this.env.DB);
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', note: 'usage rows kept for retry', error: String(error) }));
      this.alarmNoLaterThan(Date.now() + FLUSH_RETRY_MS);
    }
    // Only captures whose usage rows have reached D1 are folded: a retry's check reads D1 once the capture is gone.
    const landedThrough = this.outbox.landedThrough();
    if (this.ctx.storage.transactionSync(() => this.summaries.fold(clock.now(), landedThrough))) this.alarmNoLaterThan(Date.now() + USAGE_FLUSH_MS);
    try {
      await this.announceCredits();
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', note: 'credit events kept for retry', error: String(error) }));
      this.alarmNoLaterThan(Date.now() + FLUSH_RETRY_MS);
    }
    this.scheduleAlarm();
  }

  /** credits.low and credits.exhausted, when the balance fell or ran out since the last alarm; off every call's path. */
  private async announceCredits(): Promise<void> {
    const account = this.account();
    const balance = { subscriptionUnits: account.subscription_units, purchasedUnits: account.purchased_units };
    const movement = this.creditWatch.movement(balance);
    if (movement && (await this.creditWatch.anyoneToTell(movement, () => creditAudience(this.env.DB, movement.organizationId)))) await announceCredits(this.env, movement);
    this.creditWatch.reported(balance.subscriptionUnits + balance.purchasedUnits, movement);
  }

  /**
   * Charges spend from the account and from the lease that earmarked them, each with its ledger capture
   * and queued usage row. A charge already in the ledger (its unique index) is not spent again; its id is
   * answered (`alreadyCharged`), for the gate to take it back out of its key's spend. A message costs the
   * same few statements whatever its size: its usage rows queued in one, its captures written in one (those
   * already there left out), the account written once.
   */
  private applyCharges(charges: Charge[], generation: number, lease: Split, account: AccountRow): Split & { alreadyCharged: string[] } {
    let subscription = account.subscription_units;
    let purchased = account.purchased_units;
    const alreadyCharged: string[] = [];
    if (charges.length === 0) return { subscriptionUnits: subscription, purchasedUnits: purchased, alreadyCharged };
    this.creditWatch.beforeCharges(charges[0]!.usage.organizationId, subscription + purchased);
    this.outbox.add(charges.map((charge) => charge.usage));
    // Every success has its capture, a free one too (a zero-row answer), so the ledger counts successes.
    // One entry per call: a twin within the message counts once, as the unique index would have it.
    const successes = new Map<string, [holdId: string, subscriptionUnits: number, purchasedUnits: number]>();
    for (const charge of charges) {
      if (charge.usage.status >= 400) continue;
      // Taken from an allowance that has since been replaced: that allowance expired, and with it this part.
      successes.set(charge.id, [charge.id, charge.generation === generation ? charge.subscriptionUnits : 0, charge.purchasedUnits]);
    }
    if (successes.size > 0) {
      // In the message's order, each capture with the balances after it; one already in the ledger (sent
      // again) is left out before the running sums, so it is neither spent nor counted twice.
      const written = this.sql
        .exec<{ id: string; subscription: number; purchased: number }>(
          `INSERT INTO ledger (at, kind, hold_id, subscription_delta, purchased_delta, subscription_after, purchased_after)
           SELECT ?, 'capture', charge.id, -charge.subscription, -charge.purchased,
                  ? - SUM(charge.subscription) OVER spent, ? - SUM(charge.purchased) OVER spent
             FROM (SELECT key AS n, value ->> '$[0]' AS id, value ->> '$[1]' AS subscription, value ->> '$[2]' AS purchased FROM json_each(?)) AS charge
            WHERE NOT EXISTS (SELECT 1 FROM ledger WHERE kind = 'capture' AND hold_id = charge.id)
           WINDOW spent AS (ORDER BY charge.n ROWS UNBOUNDED PRECEDING)
           ORDER BY charge.n
           RETURNING hold_id AS id, -subscription_delta AS subscription, -purchased_delta AS purchased`,
          clock.now(), subscription, purchased, JSON.stringify([...successes.values()]),
        )
        .toArray();
      for (const capture of written) {
        subscription -= capture.subscription;
        purchased -= capture.purchased;
        lease.subscriptionUnits -= capture.subscription;
        lease.purchasedUnits -= capture.purchased;
        successes.delete(capture.id);
      }
      alreadyCharged.push(...successes.keys());
    }
    if (this.refusedUncharged(charges)) this.creditWatch.refusedForCredits();
    // The account was written with the captures (the trigger account_after_capture).
    return { subscriptionUnits: subscription, purchasedUnits: purchased, alreadyCharged };
  }

  /**
   * Whether a call of these was refused for want of credit, which credits.exhausted says. A refusal by a key's own
   * monthly limit is not one (the organization's balance did not stop it), and neither is a refusal under a call
   * id the ledger has a capture of: it is a success's settle asked for again after its first answer was
   * lost, the charge already handed on, and no money left to take it twice (services/pipeline.ts, `settle`). The
   * call answered 200; its 402 row lands nowhere (D1 keeps the first row under an id). Read after this message's
   * captures are written, and only for a refusal (a read of the ledger's unique index), so never for a success.
   */
  private refusedUncharged(charges: Charge[]): boolean {
    return charges.some((charge) => charge.usage.errorCode === 'INSUFFICIENT_CREDITS' && !charge.keyLimit && this.captureOf(charge.id) === null);
  }

  /**
   * Adds to a lease, subscription first: nothing when what no lease holds cannot cover `need`, else at
   * least `need` and at most `target` or a share of what is free, whichever is less. A top-up (a target
   * with no need) is granted whole from plenty and not at all otherwise: while money is short it stays
   * where any workspace's call can draw it, as before top-ups.
   */
  private grant(lease: Split, need: number, target: number, free: Split): number {
    const available = unleasedTotal(free);
    if (available < need) return 0;
    if (need <= 0 && (target <= 0 || available < target * LEASE_SHARE)) return 0;
    const amount = Math.max(need, Math.min(target, Math.floor(available / LEASE_SHARE)));
    const fromSubscription = Math.min(amount, free.subscriptionUnits);
    lease.subscriptionUnits += fromSubscription;
    lease.purchasedUnits += amount - fromSubscription;
    return amount;
  }

  /** The other leases that hold money, largest first: read only when a gate is short (a scan of the leases). */
  private holdersBesides(workspaceId: string): string[] {
    return this.sql
      .exec<{ id: string }>(
        `SELECT workspace_id AS id FROM leases WHERE workspace_id <> ? AND subscription_units + purchased_units > 0
          ORDER BY subscription_units + purchased_units DESC LIMIT ${HOLDERS_TOLD}`,
        workspaceId,
      )
      .toArray()
      .map((row) => row.id);
  }

  /** What all leases hold, in each part (the running totals, not a sum over the leases). */
  private leased(): Split {
    return this.sql
      .exec<{ subscriptionUnits: number; purchasedUnits: number }>('SELECT subscription_units AS subscriptionUnits, purchased_units AS purchasedUnits FROM lease_totals')
      .one();
  }

  /** Whether a ledger entry of this kind carries this dedupe id already. */
  private applied(kind: 'credit' | 'plan', dedupeId: string): boolean {
    return this.sql.exec('SELECT 1 FROM ledger WHERE kind = ? AND hold_id = ?', kind, dedupeId).toArray().length > 0;
  }

  private generation(): number {
    return this.sql.exec<{ generation: number }>('SELECT generation FROM terms').one().generation;
  }

  /** A new allowance replaces the old: subscription units earmarked in leases expire with the one they came from. */
  private newGeneration(): void {
    this.sql.exec('UPDATE terms SET generation = generation + 1');
    this.sql.exec('UPDATE leases SET subscription_units = 0');
  }

  private change(kind: LedgerEntry['kind'], holdId: string | null, subscriptionDelta: number, purchasedDelta: number): void {
    this.sql.exec(
      'UPDATE account SET subscription_units = subscription_units + ?, purchased_units = purchased_units + ?',
      subscriptionDelta,
      purchasedDelta,
    );
    const after = this.account();
    this.sql.exec(
      `INSERT INTO ledger (at, kind, hold_id, subscription_delta, purchased_delta, subscription_after, purchased_after)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      clock.now(), kind, holdId, subscriptionDelta, purchasedDelta, after.subscription_units, after.purchased_units,
    );
  }

  /** At the end of a period, unused allowance expires and the plan's allowance is granted afresh. */
  private rollPeriod(): AccountRow {
    const account = this.account();
    const now = clock.now();
    if (account.period_end === null || now < account.period_end) return account;
    this.sql.exec('UPDATE account SET period_end = ?', nextPeriodEnd(now));
    this.carry(0);
    this.change('period_reset', null, account.allowance_units - account.subscription_units, 0);
    this.newGeneration();
    return this.account();
  }

  private account(): AccountRow {
    return this.sql.exec<AccountRow>('SELECT subscription_units, purchased_units, allowance_units, period_end FROM account').one();
  }

  /** A lease for a workspace the wallet has not heard from: empty, no message applied yet. */
  private newLease(workspaceId: string): void {
    this.sql.exec('INSERT INTO leases VALUES (?, 0, 0, 0, NULL)', workspaceId);
  }

  /**
   * The account, the plan and what all leases hold, in one read; a period that has ended is rolled first
   * (which voids the subscription units leased in it). With `lease`, the same read brings that workspace's
   * lease, and the reply stored for its last message when `lease.seq` is not newer (a message sent again):
   * a gate's message costs one read, not two.
   */
  private figures(): Figures;
  private figures(lease: { workspaceId: string; seq: number }): LeaseFigures;
  private figures(lease?: { workspaceId: string; seq: number }): Figures | LeaseFigures {
    const columns = `a.subscription_units, a.purchased_units, a.allowance_units, a.period_end,
                     l.subscription_units AS leased_subscription, l.purchased_units AS leased_purchased,
                     t.plan, t.rpm_override, t.plan_ends_at, t.version, t.generation`;
    const read = () =>
      lease
        ? this.sql
            .exec<LeaseFigures>(
              `SELECT ${columns}, w.subscription_units AS lease_subscription, w.purchased_units AS lease_purchased, w.last_seq,
                      CASE WHEN ? <= w.last_seq THEN w.last_reply END AS last_reply
                 FROM account a, terms t, lease_totals l LEFT JOIN leases w ON w.workspace_id = ?`,
              lease.seq, lease.workspaceId,
            )
            .one()
        : this.sql.exec<Figures>(`SELECT ${columns} FROM account a, terms t, lease_totals l`).one();
    const figures = read();
    if (figures.period_end === null || clock.now() < figures.period_end) return figures;
    this.rollPeriod();
    return read();
  }

  /** Sets the alarm for the oldest queued row's flush. */
  private scheduleAlarm(): void {
    const due = this.outbox.dueAt();
    if (due !== null) this.alarmNoLaterThan(due);
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

/** Billing periods are calendar months, UTC: the period ends at the start of the next month. */
export function nextPeriodEnd(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

function unleasedTotal(split: Split): number {
  return split.subscriptionUnits + split.purchasedUnits;
}

function termsOf(row: TermsRow): Terms {
  return { plan: row.plan as Plan | null, rpmOverride: row.rpm_override, planEndsAt: row.plan_ends_at, version: row.version };
}
