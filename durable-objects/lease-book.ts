import type { UsageRow } from '../src/core/usage';
import type { Charge, Split, SyncMessage, SyncReply, Terms } from '../src/core/protocols/lease';

/** Money a call set aside from the lease before its upstream call; kept in memory only (see `take`). */
export interface Hold extends Split {
  id: string;
  generation: number;
  /** Clock time after which the alarm gives the money back to the lease. */
  expiresAt: number;
}

/** How the sending of the outgoing message has gone: it failed `attempts` times; it is sent again at `retryAt` and not before. */
export interface Delivery {
  attempts: number;
  /** Clock time of the next attempt. */
  retryAt: number;
  /** Refused too often: tried again only on the slow schedule, and alerted. */
  parked: boolean;
  /** What the last attempt failed with. */
  error: string;
}

interface State {
  organizationId: string | null;
  workspaceId: string | null;
  /** The lease as the wallet last acknowledged it. */
  lease: Split;
  generation: number;
  periodEnd: number | null;
  seq: number;
  /** The message sent and not yet acknowledged: sent again, unchanged, before any other. */
  outgoing: SyncMessage | null;
  /** Failed sends of `outgoing`; null while none failed. */
  delivery: Delivery | null;
  /** The wallet's plan, from its first reply or a plan change told before it; null until then. */
  terms: Terms | null;
}

/**
 * Another part of the gate's state, stored in the same row as the lease's whenever that is stored: the
 * request window and the wallet's figures. One row written a report rather than three (with a thousand
 * workspaces in rotation, each call is a report).
 */
export interface StoredPart {
  /** Its name in the stored row. */
  readonly name: string;
  /** Whether it changed since it was last stored. */
  readonly unsaved: boolean;
  /** What to store of it now (it is stored once this returns). */
  snapshot(): unknown;
}

/** How many charges one message carries at most; the rest go in the next. */
const CHARGES_PER_MESSAGE = 500;

/**
 * A message the wallet refuses this many times in a row is parked: kept, alerted, and sent again only every
 * PARKED_RETRY_MS. Before that, attempt n + 1 waits FIRST_RETRY_MS · 2^(n − 1) after attempt n (1, 2, 4, 8 s),
 * so a wallet that restarts is waited for, and a message it can never apply stops costing a wallet call
 * per draw and per alarm.
 */
export const SEND_ATTEMPTS = 5;
export const FIRST_RETRY_MS = 1_000;
export const PARKED_RETRY_MS = 60_000;

const ZERO: Split = { subscriptionUnits: 0, purchasedUnits: 0 };

/**
 * A workspace gate's side of its lease: what the wallet granted, what calls in flight hold, what
 * finished calls spent and the wallet has not yet acknowledged, and the message on its way. What a call
 * may take is derived, never stored: lease − unacknowledged charges − holds − what is being given back.
 * Charges and the message are in the object's SQLite before the call that made them is answered; the
 * acknowledged lease goes with the next write of the state (an object that restarts before it sends the
 * message again: `acknowledge`). The state is one row, which carries the gate's other parts too (the window,
 * the wallet's figures: StoredPart). Holds are in memory: an object that restarts forgets them, which gives
 * their money back to the lease, and a capture that finds its hold gone takes the money again
 * (`WorkspaceGate.settle`).
 */
export class LeaseBook {
  private state: State;
  private readonly holds = new Map<string, Hold>();
  /** Sums over open holds and unacknowledged charges; subscription parts of this generation only. */
  private held: Split = { ...ZERO };
  private pending: Split = { ...ZERO };
  private unsent = 0;
  private readonly keyUses = new Map<string, number>();
  /** A reply or a plan change was applied that storage does not have yet (see `acknowledge`, `adopt`). */
  private unstored = false;
  /** The parts as stored before this object started, by name. */
  private readonly storedParts: Record<string, unknown>;

  /** `parts` are stored with the lease state, in its row (see StoredPart). */
  constructor(
    private readonly sql: SqlStorage,
    private readonly parts: readonly StoredPart[] = [],
  ) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS lease_state (id INTEGER PRIMARY KEY CHECK (id = 1), doc TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS charges (id TEXT PRIMARY KEY, doc TEXT NOT NULL);
    `);
    const stored = sql.exec<{ doc: string }>('SELECT doc FROM lease_state').toArray()[0];
    const { parts: storedParts = {}, ...state } = stored
      ? (JSON.parse(stored.doc) as State & { parts?: Record<string, unknown> })
      : { organizationId: null, workspaceId: null, lease: { ...ZERO }, generation: 0, periodEnd: null, seq: 0, outgoing: null, delivery: null, terms: null };
    this.state = state;
    this.storedParts = storedParts;
    const waiting = sql.exec<{ doc: string }>('SELECT doc FROM charges').toArray().map((row) => JSON.parse(row.doc) as Charge);
    this.unsent = waiting.length;
    for (const charge of [...waiting, ...(this.state.outgoing?.charges ?? [])]) this.addTo(this.pending, charge, charge.generation);
  }

  /** The organization that pays and this workspace's id, once any call told them. */
  get owner(): { organizationId: string; workspaceId: string } | null {
    const { organizationId, workspaceId } = this.state;
    return organizationId && workspaceId ? { organizationId, workspaceId } : null;
  }

  get terms(): Terms | null {
    return this.state.terms;
  }

  /** What this workspace spent that the wallet has not acknowledged, in each part (read only). */
  get unacknowledged(): Readonly<Split> {
    return this.pending;
  }

  get outgoing(): SyncMessage | null {
    return this.state.outgoing;
  }

  /** How sending the outgoing message has gone; null while no attempt failed. */
  get delivery(): Delivery | null {
    return this.state.delivery;
  }

  /**
   * The wallet did not take the outgoing message: one more failed attempt, and when the next is due. The
   * message stays stored, unchanged, and goes first when it is sent again; until then nothing else is
   * composed, so the wallet still sees every message once, in order.
   */
  undelivered(error: string, now: number): Delivery {
    const attempts = (this.state.delivery?.attempts ?? 0) + 1;
    const parked = attempts >= SEND_ATTEMPTS;
    const delivery = { attempts, retryAt: now + (parked ? PARKED_RETRY_MS : FIRST_RETRY_MS * 2 ** (attempts - 1)), parked, error };
    this.state.delivery = delivery;
    this.save();
    return delivery;
  }

  /** True until the wallet has answered this gate once. */
  get neverSynced(): boolean {
    return this.state.seq === 0;
  }

  bind(owner: { organizationId: string; workspaceId: string }): void {
    if (this.state.organizationId === owner.organizationId && this.state.workspaceId === owner.workspaceId) return;
    this.state.organizationId = owner.organizationId;
    this.state.workspaceId = owner.workspaceId;
    this.save();
  }

  /** What a call may take now, in each part. Subscription units of a period that has ended count as none. */
  private free(now: number): Split {
    const giving = this.state.outgoing?.giveBack ?? ZERO;
    const subscriptionGiving = this.state.outgoing?.generation === this.state.generation ? giving.subscriptionUnits : 0;
    const subscription = this.state.lease.subscriptionUnits - this.pending.subscriptionUnits - this.held.subscriptionUnits - subscriptionGiving;
    const purchased = this.state.lease.purchasedUnits - this.pending.purchasedUnits - this.held.purchasedUnits - giving.purchasedUnits;
    return { subscriptionUnits: this.periodOver(now) ? 0 : Math.max(0, subscription), purchasedUnits: Math.max(0, purchased) };
  }

  /** What a call may take now, both parts together. */
  freeUnits(now: number): number {
    const free = this.free(now);
    return free.subscriptionUnits + free.purchasedUnits;
  }

  periodOver(now: number): boolean {
    return this.state.periodEnd !== null && now >= this.state.periodEnd;
  }

  /** Sets `amount` aside for a call, subscription first; undefined when the lease cannot cover it. */
  take(id: string, amount: number, expiresAt: number, now: number): Hold | undefined {
    // A call that took over a dead call's id (an idempotent retry) replaces that call's hold, if it is still here.
    this.release(id);
    const free = this.free(now);
    if (free.subscriptionUnits + free.purchasedUnits < amount) return undefined;
    const subscriptionUnits = Math.min(amount, free.subscriptionUnits);
    const hold: Hold = { id, subscriptionUnits, purchasedUnits: amount - subscriptionUnits, generation: this.state.generation, expiresAt };
    this.holds.set(id, hold);
    this.addTo(this.held, hold, hold.generation);
    return hold;
  }

  holdOf(id: string): Hold | undefined {
    return this.holds.get(id);
  }

  /**
   * Spends `actualUnits` of a hold (never more), subscription first, and gives the rest back to the lease;
   * answers what it spent: nothing for the twin of a success still here, waiting or in the message outgoing (a
   * retry that took over its call id), which is dropped, its hold's money back in the lease; a success takes the
   * place of a failure's row under its id. The charge is stored before this returns: on the
   * waiting list, or, given `sendNow` and with no message outgoing, in a message composed now (answered, for
   * the caller to send) with what `sendNow.ask` asks for once the charge counts. A workspace called every few
   * seconds then writes its call's charge once, in the message, instead of onto the waiting list and off it
   * again in the same turn.
   */
  capture(
    hold: Hold,
    actualUnits: number,
    usage: UsageRow,
    budgetKeyId: string = usage.keyId,
    sendNow?: { ask: () => { need: number; target: number }; now: number },
  ): { spent: number; message: SyncMessage | null } {
    this.drop(hold);
    const spent = Math.max(0, Math.min(actualUnits, hold.subscriptionUnits + hold.purchasedUnits));
    const subscriptionUnits = Math.min(spent, hold.subscriptionUnits);
    const budget = budgetKeyId === usage.keyId ? {} : { budgetKeyId };
    const charge: Charge = { id: usage.id, subscriptionUnits, purchasedUnits: spent - subscriptionUnits, generation: hold.generation, usage, ...budget };
    // The twin of a success in the message outgoing (composed and sent, not yet acknowledged) is dropped as the twin of
    // one on the waiting list is: the wallet takes that one, and the key's spend counted it already. A failure's row
    // there is no twin: the call succeeded after all, and the wallet charges its success.
    if (this.state.outgoing?.charges.some((sent) => sent.id === charge.id && sent.usage.status < 400)) return { spent: 0, message: null };
    // A message carries CHARGES_PER_MESSAGE at most: with that many waiting, this one waits behind them.
    if (!sendNow || this.state.outgoing || this.unsent >= CHARGES_PER_MESSAGE) {
      return { spent: this.addCharge(charge) ? spent : 0, message: null };
    }
    this.addTo(this.pending, charge, charge.generation);
    const { need, target } = sendNow.ask();
    const message = this.compose(need, Math.max(need, target), false, sendNow.now, charge);
    return { spent: message.charges.includes(charge) ? spent : 0, message };
  }

  release(id: string): void {
    const hold = this.holds.get(id);
    if (hold) this.drop(hold);
  }

  /** A call that spent nothing: only its usage row travels. */
  record(usage: UsageRow, keyLimit?: true): void {
    this.addCharge({ id: usage.id, subscriptionUnits: 0, purchasedUnits: 0, generation: this.state.generation, usage, ...(keyLimit ? { keyLimit } : {}) });
  }

  /** True when a charge for this usage row exists and the wallet has not yet acknowledged it. */
  hasCharge(id: string): boolean {
    if (this.state.outgoing?.charges.some((charge) => charge.id === id)) return true;
    return this.sql.exec('SELECT 1 FROM charges WHERE id = ?', id).toArray().length > 0;
  }

  /**
   * What a success under this call id that has not reached the wallet spent (on the waiting list, or in the
   * message outgoing); null when none waits here. A failure's row under the id is not one.
   */
  waitingSuccessOf(id: string): number | null {
    const stored = this.sql.exec<{ doc: string }>('SELECT doc FROM charges WHERE id = ?', id).toArray().map((row) => JSON.parse(row.doc) as Charge);
    const success = [...(this.state.outgoing?.charges ?? []), ...stored].find((charge) => charge.id === id && charge.usage.status < 400);
    return success ? success.subscriptionUnits + success.purchasedUnits : null;
  }

  /** The charges on the waiting list (stored, not yet composed into a message) that count in a key's spend. */
  waitingChargesOf(keyId: string): Charge[] {
    return this.sql
      .exec<{ doc: string }>("SELECT doc FROM charges WHERE COALESCE(json_extract(doc, '$.budgetKeyId'), json_extract(doc, '$.usage.keyId')) = ?", keyId)
      .toArray()
      .map((row) => JSON.parse(row.doc) as Charge);
  }

  /** Gives back, to the lease, every hold whose call outlived it; answers their ids. */
  expireHolds(now: number): string[] {
    const expired = [...this.holds.values()].filter((hold) => hold.expiresAt <= now);
    for (const hold of expired) this.drop(hold);
    return expired.map((hold) => hold.id);
  }

  nextHoldExpiry(): number | null {
    let earliest: number | null = null;
    for (const hold of this.holds.values()) if (earliest === null || hold.expiresAt < earliest) earliest = hold.expiresAt;
    return earliest;
  }

  noteKeyUse(keyId: string, at: number): void {
    this.keyUses.set(keyId, at);
  }

  /** Charges or key uses the wallet has not been sent. */
  hasUnsent(): boolean {
    return this.unsent > 0 || this.keyUses.size > 0;
  }

  /**
   * The next message: every charge not yet sent (up to a batch), then `also` (a charge not stored yet:
   * `capture`), the key uses, and the whole free lease when `giveBackAll`. Stored before it is sent, in the
   * same transaction that takes its charges off the waiting list, so it is sent again, unchanged, should its
   * reply be lost.
   */
  compose(needUnits: number, targetUnits: number, giveBackAll: boolean, now: number, also?: Charge): SyncMessage {
    // Taken off the waiting list and read in one statement, oldest first. The limit is part of the statement's
    // text: a bound one makes SQLite compile the statement again at every run (its plan depends on the value).
    const rows =
      this.unsent > 0
        ? this.sql.exec<{ doc: string }>(`DELETE FROM charges WHERE rowid IN (SELECT rowid FROM charges ORDER BY rowid LIMIT ${CHARGES_PER_MESSAGE}) RETURNING doc`).toArray()
        : [];
    this.unsent -= rows.length;
    const charges = rows.map((row) => JSON.parse(row.doc) as Charge);
    // A charge goes once, as the list's unique id has it: one waiting with the same id (a retry took over its
    // call's id) keeps its place, and `also` counts no more, unless that one is a failure's row and `also` a success,
    // which takes its place.
    const twin = also ? charges.findIndex((charge) => charge.id === also.id) : -1;
    if (also && twin >= 0 && isSuccessOverFailure(also, charges[twin]!)) charges[twin] = also;
    else if (also && twin >= 0) this.addTo(this.pending, also, also.generation, -1);
    else if (also) charges.push(also);
    const message: SyncMessage = {
      seq: this.state.seq + 1,
      generation: this.state.generation,
      charges,
      giveBack: giveBackAll ? this.free(now) : { ...ZERO },
      needUnits,
      targetUnits,
      keyUses: [...this.keyUses],
    };
    this.keyUses.clear();
    this.state.outgoing = message;
    this.state.delivery = null;
    this.save();
    return message;
  }

  /**
   * Applies the wallet's reply: its lease is authoritative, and the message's charges are no longer
   * pending. Answers whether the reply is of the current allowance generation (its balance is then current too).
   *
   * Not stored here: the state goes to storage with its next write (the next message, a plan change) or
   * at the alarm (`persist`). An object that restarts before then finds the message still outgoing, as if
   * the reply had been lost, and sends it again; the wallet answers a message it has applied with the reply
   * it stored, so nothing is applied twice. With a thousand workspaces in rotation every call is a message of
   * its own, and storing each reply was a second commit per call.
   */
  acknowledge(message: SyncMessage, reply: SyncReply): boolean {
    if (reply.generation > this.state.generation) this.newGeneration(reply.generation);
    for (const charge of message.charges) this.addTo(this.pending, charge, charge.generation, -1);
    const current = reply.generation === this.state.generation;
    this.state.lease = { subscriptionUnits: current ? reply.lease.subscriptionUnits : 0, purchasedUnits: reply.lease.purchasedUnits };
    if (current) this.state.periodEnd = reply.periodEnd;
    this.adoptTerms(reply.terms);
    this.state.seq = reply.seq;
    this.state.outgoing = null;
    this.state.delivery = null;
    this.unstored = true;
    return current;
  }

  /**
   * Stores what no write has stored yet: an acknowledgement, a part that changed. The alarm's, so a quiet
   * gate keeps its window and does not send its last message again when it starts; a report's message
   * stores them with it.
   */
  persist(): void {
    if (this.unstored || this.parts.some((part) => part.unsaved)) this.save();
  }

  /** What was stored for a part before this object started; undefined when nothing was (it was kept elsewhere then). */
  storedPart(name: string): unknown {
    return this.storedParts[name];
  }

  /** The wallet's plan read outside a message (`OrgWallet.summary`): adopted, and stored, when it is newer. */
  learnTerms(terms: Terms): void {
    if (this.adoptTerms(terms)) this.save();
  }

  /**
   * A plan change told by the wallet's caller: newer terms win, and a new generation voids subscription
   * units held. Answers whether the generation is new: the balance told with it is then the current one.
   * Stored by the caller's `persist`, in one write with the figures told with it.
   */
  adopt(terms: Terms, generation: number, periodEnd: number | null): boolean {
    const newer = generation > this.state.generation;
    if (newer) {
      this.newGeneration(generation);
      this.state.lease = { ...this.state.lease, subscriptionUnits: 0 };
      this.state.periodEnd = periodEnd;
    }
    this.adoptTerms(terms);
    this.unstored = true;
    return newer;
  }

  /** Keeps `terms` when they are newer than the ones known; answers whether they were. */
  private adoptTerms(terms: Terms): boolean {
    if (this.state.terms && terms.version <= this.state.terms.version) return false;
    this.state.terms = terms;
    return true;
  }

  /** Subscription units of earlier generations no longer count: holds and charges keep only their purchased part. */
  private newGeneration(generation: number): void {
    this.state.generation = generation;
    this.held.subscriptionUnits = 0;
    this.pending.subscriptionUnits = 0;
  }

  /**
   * Stores a charge on the waiting list; false for the twin of one waiting there, which is dropped. A success takes the
   * place of a failure's row waiting under its id (the call's settle went unanswered and it was released as failed,
   * then a retry that took over its id succeeded): the call succeeded after all, and is charged.
   */
  private addCharge(charge: Charge): boolean {
    // RETURNING, not rowsWritten: SQLite's count of rows written is not whether this insert took place.
    if (this.sql.exec('INSERT OR IGNORE INTO charges (id, doc) VALUES (?, ?) RETURNING id', charge.id, JSON.stringify(charge)).toArray().length === 0) {
      if (charge.usage.status >= 400) return false;
      const replaced = this.sql.exec("UPDATE charges SET doc = ? WHERE id = ? AND json_extract(doc, '$.usage.status') >= 400 RETURNING id", JSON.stringify(charge), charge.id).toArray();
      if (replaced.length === 0) return false;
      // The failure's row spent nothing and counted nothing: only the success's money is added.
      this.addTo(this.pending, charge, charge.generation);
      return true;
    }
    this.unsent += 1;
    this.addTo(this.pending, charge, charge.generation);
    return true;
  }

  private drop(hold: Hold): void {
    this.holds.delete(hold.id);
    this.addTo(this.held, hold, hold.generation, -1);
  }

  private addTo(sum: Split, amount: Split, generation: number, sign = 1): void {
    if (generation === this.state.generation) sum.subscriptionUnits += sign * amount.subscriptionUnits;
    sum.purchasedUnits += sign * amount.purchasedUnits;
  }

  private save(): void {
    this.unstored = false;
    const parts = Object.fromEntries(this.parts.map((part) => [part.name, part.snapshot()]));
    this.sql.exec('INSERT OR REPLACE INTO lease_state (id, doc) VALUES (1, ?)', JSON.stringify({ ...this.state, parts }));
  }
}

/** A success under a call id whose row so far is a failure's: it replaces that row rather than count as its twin. */
function isSuccessOverFailure(charge: Charge, waiting: Charge): boolean {
  return charge.usage.status < 400 && waiting.usage.status >= 400;
}
