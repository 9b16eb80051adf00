import { clock } from '../src/core/clock';
import type { SyncMessage, SyncReply } from '../src/core/protocols/lease';
import type { OrgWalletProtocol } from '../src/core/protocols/wallet';
import type { UsageRow } from '../src/core/usage';
import type { CreditView } from './credit-view';
import type { KeyBudgets } from './key-budgets';
import { type Hold, type LeaseBook, PARKED_RETRY_MS } from './lease-book';

/** The wallet has not taken the outgoing message (this attempt failed, or the next is not due): nothing else can be sent before it. */
export class Undelivered extends Error {
  constructor(
    readonly seq: number,
    readonly retryAt: number,
  ) {
    super(`The wallet has not taken message ${seq} of this gate; it is sent again at ${new Date(retryAt).toISOString()}.`);
  }
}

/** Whether a turn's message reached the wallet: false when it is undelivered (stored, alerted, sent again on its schedule). */
export function reached(turn: Promise<unknown>): Promise<boolean> {
  return turn.then(
    () => true,
    (error: unknown) => {
      if (error instanceof Undelivered) return false;
      throw error;
    },
  );
}

/**
 * What a turn asks the wallet for: the least needed now, and what the gate would like added to its lease. A
 * target with no need (a report's top-up) is granted whole from plenty or not at all (`OrgWallet.grant`).
 */
export type Need = () => { need: number; target: number };

/** A turn that only reports (charges, key uses, money given back) and asks for nothing. */
export const REPORT_ONLY: Need = () => ({ need: 0, target: 0 });

/**
 * A workspace gate's line to its organization's wallet. Every exchange is a turn of one queue: one
 * message at a time, each reply applied (to the lease book, the key budgets' sums, the credit view)
 * before the next message is made, so the wallet applies every message once and in order. A message the
 * wallet does not take stays stored, goes first when it is sent again on its schedule, and until then
 * no other is sent: a turn meanwhile fails with `Undelivered`.
 */
export class WalletLink {
  /** Every exchange with the wallet, one after another. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Turns queued or running: none, and the line is free for a message composed at once (`capture`). */
  private turns = 0;
  private walletId: { organizationId: string; id: DurableObjectId } | undefined;

  constructor(
    private readonly book: LeaseBook,
    private readonly budgets: KeyBudgets,
    private readonly view: CreditView,
    private readonly wallets: DurableObjectNamespace<OrgWalletProtocol>,
  ) {}

  /**
   * One turn of the queue: resends the message whose reply was lost, then, when there is anything to
   * say (charges, key uses, money to give back, or a need still unmet when this turn comes), sends one.
   * The need is worked out when the turn comes, not when it was queued: an earlier turn may have met it.
   */
  exchange(ask: Need, giveBackAll: boolean): Promise<SyncReply | undefined> {
    return this.enqueue(async () => {
      let reply: SyncReply | undefined;
      if (this.book.outgoing) reply = await this.deliver(this.book.outgoing);
      const { need, target } = ask();
      const givesBack = () => giveBackAll && this.book.freeUnits(clock.now()) > 0;
      if (need > 0 || givesBack() || this.book.hasUnsent() || this.book.neverSynced) {
        // A message that gives the lease back asks for nothing: a report's top-up waits for the next call.
        reply = await this.send(need, giveBackAll ? 0 : Math.max(need, target), giveBackAll);
        // A charge the wallet had applied before (a retry took over its call id) was not spent from the lease:
        // the money it counted is free again, and goes back with the rest.
        while (reply.alreadyCharged && givesBack()) reply = await this.send(0, 0, true);
      }
      return reply;
    });
  }

  /** Composes the next message and delivers it. */
  private send(need: number, target: number, giveBackAll: boolean): Promise<SyncReply> {
    const message = this.book.compose(need, target, giveBackAll, clock.now());
    // In the same turn as the charges leave the waiting list, so a key's stored spend stays exact.
    this.budgets.moveToSums(message.charges);
    return this.deliver(message);
  }

  /**
   * A finished call's charge (`LeaseBook.capture`), stored before this returns. Given `ask` while the line is
   * free (no turn queued or running, no message outgoing), it goes at once, in a message composed now with what
   * `ask` asks for, and the turn that sends it is answered; else it waits on the list for the next message.
   */
  capture(hold: Hold, actualUnits: number, usage: UsageRow, budgetKeyId: string, ask?: Need): { spent: number; sending: Promise<SyncReply> | null } {
    const sendNow = ask && this.turns === 0 ? { ask, now: clock.now() } : undefined;
    const { spent, message } = this.book.capture(hold, actualUnits, usage, budgetKeyId, sendNow);
    if (!message) return { spent, sending: null };
    // In the same turn as the charges leave the waiting list (`exchange`).
    this.budgets.moveToSums(message.charges);
    return { spent, sending: this.enqueue(() => this.deliver(message)) };
  }

  /**
   * Reads the wallet's figures and plan (`OrgWallet.summary`) in a turn of the queue, so no message's
   * reply lands in between. With a message outstanding (its reply was lost), the figures could already
   * count charges still pending here: that message is sent again instead, and its reply brings them.
   * One the wallet refused was not applied (a refused `sync` rolls its whole transaction back): the
   * figures are read beside it, and include every charge the wallet acknowledged and none still pending
   * here. Were that failure a lost reply instead, the figures shown count its charges twice until it is
   * delivered: what is shown, never what is charged.
   */
  read(): Promise<void> {
    return this.enqueue(async () => {
      if (this.book.outgoing) {
        if (await reached(this.deliver(this.book.outgoing))) return;
      }
      const { balance, terms } = await this.wallet().summary(this.book.owner!.workspaceId);
      this.book.learnTerms(terms);
      this.view.read(balance, clock.now());
    });
  }

  /** Runs `work` as the queue's next turn, once every turn before it has ended, and counts it while it waits or runs. */
  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    this.turns += 1;
    const turn = this.queue.then(work).finally(() => {
      this.turns -= 1;
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
    // The reply's balance is current only in the current allowance generation.
    if (this.book.acknowledge(message, reply)) this.view.read(reply.balance, clock.now());
    if (reply.alreadyCharged) {
      const ids = new Set(reply.alreadyCharged);
      this.budgets.unspend(message.charges.filter((charge) => ids.has(charge.id)));
      // Stored with the spend taken out, so a restart cannot send the message again and take it out twice.
      this.book.persist();
    }
    if (before?.parked) console.log(JSON.stringify({ level: 'info', note: 'parked gate message delivered', organizationId, workspaceId, seq: message.seq, attempts: before.attempts + 1 }));
    return reply;
  }

  private wallet() {
    const { organizationId } = this.book.owner!;
    // The id is worked out once: `/v1/credits` asks the wallet on every request.
    if (this.walletId?.organizationId !== organizationId) this.walletId = { organizationId, id: this.wallets.idFromName(organizationId) };
    return this.wallets.get(this.walletId.id);
  }
}
