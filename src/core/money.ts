/** Money is integers only: one unit is 1/10,000 of a cent, so sub-cent prices stay exact. */
export const UNITS_PER_CENT = 10_000;

export function unitsFromCents(cents: number): number {
  return Math.round(cents * UNITS_PER_CENT);
}

export function centsFromUnits(units: number): number {
  return units / UNITS_PER_CENT;
}
