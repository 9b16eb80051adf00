/** Money is integers only: one unit is 1/10,000 of a cent, so sub-cent prices stay exact. */
export const UNITS_PER_CENT = 10_000;

export function unitsFromCents(cents: number): number {
  return Math.round(cents * UNITS_PER_CENT);
}

export function centsFromUnits(units: number): number {
  return units / UNITS_PER_CENT;
}

/** An amount of units as a sentence says it: "1 cent", "0.5 cents", "12 cents". */
export function centsInWords(units: number): string {
  const cents = centsFromUnits(units);
  return `${cents} ${cents === 1 ? 'cent' : 'cents'}`;
}
