/**
 * A key's monthly spend limit as last written to D1: `version` grows with every change, so a gate that
 * hears of limits from two places (the change itself, and a principal remembered by an isolate) keeps
 * the newer one whichever arrives last. `limitUnits` null: no limit.
 */
export interface KeyLimit {
  limitUnits: number | null;
  version: number;
}

/** A key's limit and what it spent this month (captured) and holds now (calls in flight), in units. */
export interface KeyBudget {
  keyId: string;
  limitUnits: number | null;
  spentUnits: number;
  heldUnits: number;
  /** Epoch ms at which this month's spend starts again from zero. */
  resetsAt: number;
}

/** Why a call was refused by its key's own limit, with the figures the message shows. */
export interface KeyLimitRefusal {
  limitUnits: number;
  spentUnits: number;
  heldUnits: number;
  requiredUnits: number;
  resetsAt: number;
}
