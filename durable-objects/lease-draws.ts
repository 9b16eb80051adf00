import { clock } from '../src/core/clock';
import { HOLD_GRACE_MS, type Shortfall } from '../src/core/protocols/gate';
import type { SyncReply } from '../src/core/protocols/lease';
import type { CreditView } from './credit-view';
import type { LeaseBook } from './lease-book';
import { type Need, Undelivered, type WalletLink } from './wallet-link';

/**
 * A draw asks for enough for this many calls like the one that needed it, or for what this workspace
 * set aside over the last second if that is more, so a busy workspace draws about once a second
 * (the wallet may grant less).
 */
const CALLS_PER_DRAW = 20;
const RATE_BUCKET_MS = 1_000;
/** How often a call that found the lease short asks the wallet again before giving up. */
const DRAW_ATTEMPTS = 3;
/** Seconds a caller is told to wait when money exists but calls in flight hold it. */
export const BUSY_RETRY_AFTER_S = 1;

/**
 * How a call's money is set aside in its workspace's gate. From the lease when it covers the call, checked
 * and held in one synchronous step, so concurrent calls cannot take the same unit; else by drawing more
 * from the wallet, sized to the workspace's rate of spending, and checking the lease again after each
 * draw (calls running meanwhile may have taken what came). A refusal says why: the balance itself is
 * short (402), or the money exists but calls in flight hold it or the wallet has not taken this gate's
 * last message (409, with when to come back).
 */
export class LeaseDraws {
  /** Units set aside in the current second and the one before, to size draws to the rate of spending. */
  private setAside = { bucket: 0, current: 0, previous: 0 };
  /** What the last call held here set aside: a top-up is sized for calls like it. */
  private lastAmount = 0;

  /**
   * `alarmNoLaterThan` is told when a hold taken here expires (real time), so its money goes back then;
   * `recall` asks other workspaces' gates to give their idle leases back.
   */
  constructor(
    private readonly book: LeaseBook,
    private readonly view: CreditView,
    private readonly link: WalletLink,
    private readonly alarmNoLaterThan: (at: number) => void,
    private readonly recall: (workspaceIds: string[]) => Promise<void>,
  ) {}

  /** Sets `amount` aside for the call `id` for `ttlMs` (and HOLD_GRACE_MS after), drawing from the wallet when the lease is short. */
  async take(id: string, amount: number, ttlMs: number): Promise<{ kind: 'held' } | Shortfall> {
    let recalled = false;
    for (let attempt = 0; attempt < DRAW_ATTEMPTS; attempt++) {
      if (this.takeFromLease(id, amount, ttlMs)) return { kind: 'held' };
      let reply: SyncReply | undefined;
      try {
        reply = await this.link.exchange(() => {
          return { need: Math.max(0, amount - this.book.freeUnits(clock.now())), target: this.drawSize(amount) };
        }, false);
      } catch (error) {
        if (!(error instanceof Undelivered)) throw error;
        // No draw can pass the message the wallet has not taken: the lease still serves what fits in it,
        // and the caller is told to come back when that message is next sent (not 402: the money may be there).
        if (this.takeFromLease(id, amount, ttlMs)) return { kind: 'held' };
        return { kind: 'busy', retryAfter: Math.max(BUSY_RETRY_AFTER_S, Math.ceil((error.retryAt - clock.now()) / 1_000)) };
      }
      if (reply && reply.grantedUnits === 0 && reply.unleasedUnits < amount) {
        // The money may sit in siblings' idle leases: they are asked once to give it back, then the wallet again.
        if (recalled || !reply.holders?.length) break;
        recalled = true;
        await this.recall(reply.holders);
      }
    }
    if (this.takeFromLease(id, amount, ttlMs)) return { kind: 'held' };
    const unspent = this.view.unspentUnits(this.book.unacknowledged);
    if (unspent < amount) return { kind: 'insufficient', requiredUnits: amount, availableUnits: unspent };
    return { kind: 'busy', retryAfter: BUSY_RETRY_AFTER_S };
  }

  /**
   * The ask of a report the gate sends anyway (its calls' charges): once the free lease is under half of
   * what a draw would ask, a top-up of that much. Its reply lands before the calls run the lease down, so a
   * busy workspace's calls do not wait for the wallet; deployed, that wait is a hop to wherever the
   * organization's wallet lives.
   */
  readonly topUp: Need = () => {
    const size = this.drawSize(this.lastAmount);
    return { need: 0, target: this.book.freeUnits(clock.now()) < size / 2 ? size : 0 };
  };

  /** Enough for CALLS_PER_DRAW calls of `amount`, or for what was set aside over the last second or two if that is more. */
  private drawSize(amount: number): number {
    return Math.max(amount * CALLS_PER_DRAW, this.setAside.current + this.setAside.previous);
  }

  private takeFromLease(id: string, amount: number, ttlMs: number): boolean {
    const now = clock.now();
    if (!this.book.take(id, amount, now + ttlMs + HOLD_GRACE_MS, now)) return false;
    this.alarmNoLaterThan(Date.now() + ttlMs + HOLD_GRACE_MS);
    this.lastAmount = amount;
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
}
