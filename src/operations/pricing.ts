import { unitsFromCents } from '../core/money';
import { rowsOf } from './row-query';
import type { Price } from '../core/operation';

/** A flat price per successful request. */
export function perRequest<Input>(cents: number, note?: string): Price<Input> {
  const units = unitsFromCents(cents);
  return { display: { cents, per: 'request', ...(note ? { note } : {}) }, quote: () => units, settle: () => units };
}

/**
 * A base price per request plus a price per row returned: quoted on `limit`, settled on the rows the
 * upstream actually returned (`result[0].items`).
 */
export function perRow<Input extends { limit: number }>(baseCents: number, rowCents: number, note?: string): Price<Input> {
  const base = unitsFromCents(baseCents);
  const row = unitsFromCents(rowCents);
  return {
    display: { cents: rowCents, per: 'row', note: `${note ? `${note}; ` : ''}plus ${baseCents} ${baseCents === 1 ? 'cent' : 'cents'} per request; quoted on limit, charged on rows returned` },
    quote: (input) => base + row * input.limit,
    settle: (input, result) => base + row * Math.min(rowsOf(result.data), input.limit),
  };
}
