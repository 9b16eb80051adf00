import { utcMonthOf } from '../src/core/clock';
import { budgetKeyOf, type Charge } from '../src/core/protocols/lease';
import type { KeyBudget, KeyLimit, KeyLimitRefusal } from '../src/core/protocols/key-limits';

const NO_LIMIT: KeyLimit = { limitUnits: null, version: 0 };
/** Remembered rows are dropped when this many keys are in memory; SQLite keeps them all. */
const MAX_REMEMBERED = 10_000;

/**
 * A workspace gate's per-key spending: each key's limit, what it captured this UTC calendar month, and
 * what its calls in flight hold. A call reserves its hold against its key before the lease is asked, in
 * the same synchronous step as the check, so concurrent calls cannot pass one limit together; a capture
 * turns the reservation into spend in the same turn as the charge is stored. Limits are in the gate's
 * SQLite. A key's spend is stored as the charges themselves until they are sent to the wallet, and as a
 * sum per key (`key_spend`) from then on: the message that takes charges off the waiting list adds them to
 * the sums in the same turn, so the stored spend is always `key_spend` plus the key's waiting charges, and
 * a capture costs no write of its own. Reservations are in memory, like the holds they mirror (an object
 * that restarts forgets both, and a late capture checks the limit again).
 */
export class KeyBudgets {
  private readonly limits = new Map<string, KeyLimit>();
  private readonly spent = new Map<string, { monthStart: number; units: number }>();
  private readonly heldByKey = new Map<string, number>();
  private readonly reservations = new Map<string, { keyId: string; units: number }>();

  /** `waitingCharges` answers a key's charges not yet sent to the wallet (still in the gate's waiting list). */
  constructor(
    private readonly sql: SqlStorage,
    private readonly waitingCharges: (keyId: string) => Charge[],
  ) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS key_limits (key_id TEXT PRIMARY KEY, limit_units INTEGER, version INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS key_spend (key_id TEXT PRIMARY KEY, month_start INTEGER NOT NULL, spent_units INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS key_spend_by_month ON key_spend (month_start);
    `);
  }

  /** Keeps `limit` when it is newer than the one known; an older one (a remembered principal) changes nothing. */
  adopt(keyId: string, limit: KeyLimit): void {
    if (limit.version <= this.limitOf(keyId).version) return;
    this.sql.exec('INSERT OR REPLACE INTO key_limits (key_id, limit_units, version) VALUES (?, ?, ?)', keyId, limit.limitUnits, limit.version);
    this.remember(this.limits, keyId, limit);
  }

  /**
   * Sets `units` aside against the key for a call (`holdId`), or says why not: its captured spend this
   * month, plus what its calls in flight hold, plus this call would pass its limit.
   */
  reserve(holdId: string, keyId: string, units: number, now: number): KeyLimitRefusal | null {
    // An idempotent retry that took over a dead call's id replaces that call's reservation, if it is still here.
    this.release(holdId);
    const { limitUnits } = this.limitOf(keyId);
    const spentUnits = this.spentThisMonth(keyId, now);
    const heldUnits = this.heldByKey.get(keyId) ?? 0;
    if (limitUnits !== null && spentUnits + heldUnits + units > limitUnits) {
      return { limitUnits, spentUnits, heldUnits, requiredUnits: units, resetsAt: utcMonthOf(now).end };
    }
    this.reservations.set(holdId, { keyId, units });
    this.heldByKey.set(keyId, heldUnits + units);
    return null;
  }

  /** The key a call's reservation counts against, while it has one. */
  keyOf(holdId: string): string | undefined {
    return this.reservations.get(holdId)?.keyId;
  }

  /** The call spent nothing (it failed, was refused after all, or its hold expired): its reservation goes. */
  release(holdId: string): void {
    const reservation = this.reservations.get(holdId);
    if (!reservation) return;
    this.reservations.delete(holdId);
    const left = (this.heldByKey.get(reservation.keyId) ?? 0) - reservation.units;
    if (left > 0) this.heldByKey.set(reservation.keyId, left);
    else this.heldByKey.delete(reservation.keyId);
  }

  /**
   * The call spent `spentUnits` (never more than it reserved): that much counts in the month of `at`, its
   * usage row's time. Stored by the charge the caller has stored, before this (on the waiting list or, in a
   * message, in the sums): a key whose spend is not in memory is read back with it when next asked.
   */
  capture(holdId: string, spentUnits: number, at: number): void {
    const reservation = this.reservations.get(holdId);
    if (!reservation) return;
    this.release(holdId);
    const known = this.spent.get(reservation.keyId);
    if (spentUnits <= 0 || !known) return;
    this.spent.set(reservation.keyId, addSpend(known, utcMonthOf(at).start, spentUnits));
  }

  /**
   * Charges leaving the waiting list for the wallet: their spend moves into the per-key sums, in the same
   * turn as they leave it, so no charge is ever counted twice or lost. One statement per key and month.
   */
  moveToSums(charges: readonly Charge[]): void {
    const sums = new Map<string, { keyId: string; monthStart: number; units: number }>();
    for (const charge of charges) {
      const { monthStart, units } = spendOf(charge);
      if (units <= 0) continue;
      const keyId = budgetKeyOf(charge);
      const key = `${keyId} ${monthStart}`;
      const sum = sums.get(key) ?? { keyId, monthStart, units: 0 };
      sum.units += units;
      sums.set(key, sum);
    }
    // Earlier months first: a later month's sum replaces an earlier one's.
    for (const { keyId, monthStart, units } of [...sums.values()].sort((a, b) => a.monthStart - b.monthStart)) {
      this.sql.exec(
        `INSERT INTO key_spend (key_id, month_start, spent_units) VALUES (?, ?, ?)
         ON CONFLICT (key_id) DO UPDATE SET
           spent_units = CASE WHEN month_start = excluded.month_start THEN spent_units + excluded.spent_units
                              WHEN month_start < excluded.month_start THEN excluded.spent_units
                              ELSE spent_units END,
           month_start = MAX(month_start, excluded.month_start)`,
        keyId, monthStart, units,
      );
    }
  }

  /**
   * Charges the wallet had applied before (`SyncReply.alreadyCharged`: a retry took over a call id it had
   * charged): their spend, added to the sums when they left the waiting list, comes out of the sums and of
   * memory again. The caller stores the reply's acknowledgement in the same turn, so it is taken out once.
   */
  unspend(charges: readonly Charge[]): void {
    for (const charge of charges) {
      const { monthStart, units } = spendOf(charge);
      if (units <= 0) continue;
      const keyId = budgetKeyOf(charge);
      this.sql.exec('UPDATE key_spend SET spent_units = MAX(0, spent_units - ?) WHERE key_id = ? AND month_start = ?', units, keyId, monthStart);
      const known = this.spent.get(keyId);
      if (known?.monthStart === monthStart) this.spent.set(keyId, { monthStart, units: Math.max(0, known.units - units) });
    }
  }

  /**
   * Lets go of the sums of months before `now`'s, which count as none (`spentThisMonth`): a key that spent once
   * and never again (every data job's) would otherwise keep its row for good. A charge of such a month that
   * comes late writes its row again, read as none all the same.
   */
  forgetPastMonths(now: number): void {
    this.sql.exec('DELETE FROM key_spend WHERE month_start < ?', utcMonthOf(now).start);
  }

  /** Each key's limit, spend this month and what it holds now. */
  budgets(keyIds: string[], now: number): KeyBudget[] {
    const resetsAt = utcMonthOf(now).end;
    return keyIds.map((keyId) => ({
      keyId,
      limitUnits: this.limitOf(keyId).limitUnits,
      spentUnits: this.spentThisMonth(keyId, now),
      heldUnits: this.heldByKey.get(keyId) ?? 0,
      resetsAt,
    }));
  }

  private limitOf(keyId: string): KeyLimit {
    const known = this.limits.get(keyId);
    if (known) return known;
    const row = this.sql.exec<{ limit_units: number | null; version: number }>('SELECT limit_units, version FROM key_limits WHERE key_id = ?', keyId).toArray()[0];
    const limit = row ? { limitUnits: row.limit_units, version: row.version } : NO_LIMIT;
    this.remember(this.limits, keyId, limit);
    return limit;
  }

  /** Spend of an earlier month counts as none: a month's spend starts from zero at its first instant, UTC. */
  private spentThisMonth(keyId: string, now: number): number {
    const known = this.storedSpend(keyId);
    return known.monthStart === utcMonthOf(now).start ? known.units : 0;
  }

  /** A key's latest month of spend: remembered, or read back as its sum plus its charges still waiting. */
  private storedSpend(keyId: string): { monthStart: number; units: number } {
    let known = this.spent.get(keyId);
    if (!known) {
      const row = this.sql.exec<{ month_start: number; spent_units: number }>('SELECT month_start, spent_units FROM key_spend WHERE key_id = ?', keyId).toArray()[0];
      known = row ? { monthStart: row.month_start, units: row.spent_units } : { monthStart: 0, units: 0 };
      for (const charge of this.waitingCharges(keyId)) {
        const { monthStart, units } = spendOf(charge);
        known = addSpend(known, monthStart, units);
      }
      this.remember(this.spent, keyId, known);
    }
    return known;
  }

  private remember<T>(map: Map<string, T>, keyId: string, value: T): void {
    if (map.size >= MAX_REMEMBERED && !map.has(keyId)) map.clear();
    map.set(keyId, value);
  }
}

/** Spend in `monthStart` added to a key's latest month: a later month starts from zero, an earlier one no longer counts. */
function addSpend(known: { monthStart: number; units: number }, monthStart: number, units: number): { monthStart: number; units: number } {
  if (units <= 0 || monthStart < known.monthStart) return known;
  return { monthStart, units: (monthStart === known.monthStart ? known.units : 0) + units };
}

/** What a charge adds to its key's spend, and in which month: that of its usage row. */
function spendOf(charge: Charge): { monthStart: number; units: number } {
  return { monthStart: utcMonthOf(Date.parse(charge.usage.createdAt)).start, units: charge.subscriptionUnits + charge.purchasedUnits };
}
