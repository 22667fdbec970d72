/**
 * Built-in units for `unit_convert` (docs/supply-chain.md, "Propagation"). Each unit is given by its factor to the
 * base unit of its dimension (gram, metre). Currencies are not built in: they come from the organization's rate
 * table (currency-rates), never from the network.
 */
export const WEIGHT_UNITS: Readonly<Record<string, number>> = {
  mg: 0.001,
  g: 1,
  kg: 1000,
  t: 1_000_000,
  lb: 453.59237,
  oz: 28.349523125,
};

export const LENGTH_UNITS: Readonly<Record<string, number>> = {
  mm: 0.001,
  cm: 0.01,
  m: 1,
  km: 1000,
  in: 0.0254,
  ft: 0.3048,
  yd: 0.9144,
  mi: 1609.344,
};

const ALIASES: Readonly<Record<string, string>> = {
  gram: 'g',
  grams: 'g',
  kilogram: 'kg',
  kilograms: 'kg',
  milligram: 'mg',
  tonne: 't',
  ton: 't',
  lbs: 'lb',
  pound: 'lb',
  pounds: 'lb',
  ounce: 'oz',
  ounces: 'oz',
  meter: 'm',
  metre: 'm',
  meters: 'm',
  metres: 'm',
  millimeter: 'mm',
  centimeter: 'cm',
  kilometer: 'km',
  inch: 'in',
  inches: 'in',
  foot: 'ft',
  feet: 'ft',
  yard: 'yd',
  mile: 'mi',
  miles: 'mi',
};

export type Dimension = 'weight' | 'length';

export function normalizeUnit(unit: string): string {
  const lower = unit.trim().toLowerCase();
  return ALIASES[lower] ?? lower;
}

export function dimensionOf(unit: string): Dimension | null {
  const key = normalizeUnit(unit);
  if (key in WEIGHT_UNITS) {
    return 'weight';
  }
  if (key in LENGTH_UNITS) {
    return 'length';
  }
  return null;
}

/** The factor from `from` to `to` for built-in units of one dimension; null when they are not both known or differ. */
export function physicalFactor(from: string, to: string): number | null {
  const a = normalizeUnit(from);
  const b = normalizeUnit(to);
  const dimension = dimensionOf(a);
  if (!dimension || dimension !== dimensionOf(b)) {
    return null;
  }
  const table = dimension === 'weight' ? WEIGHT_UNITS : LENGTH_UNITS;
  return (table[a] as number) / (table[b] as number);
}

/** One entry of an organization's rate table: 1 `base` = `rate` `quote`, valid from `effectiveDate` (a day). */
export interface CurrencyRate {
  base: string;
  quote: string;
  rate: number;
  effectiveDate: string;
}

/**
 * The rate from `from` to `to` in a rate table: the newest entry effective on or before `day` (`daily`), or the newest
 * entry at all (`realtime`: the table's latest figure stands for "now"; no network is asked). The inverse of a
 * `to → from` entry is used when no direct one exists. Null when the table has neither.
 */
export function lookupRate(
  table: readonly CurrencyRate[],
  from: string,
  to: string,
  source: 'daily' | 'realtime',
  day: string,
): number | null {
  const a = from.trim().toUpperCase();
  const b = to.trim().toUpperCase();
  if (a === b) {
    return 1;
  }
  let best: { rate: number; date: string } | null = null;
  for (const entry of table) {
    if (source === 'daily' && entry.effectiveDate > day) {
      continue;
    }
    const base = entry.base.toUpperCase();
    const quote = entry.quote.toUpperCase();
    let rate: number | null = null;
    if (base === a && quote === b) {
      rate = entry.rate;
    } else if (base === b && quote === a && entry.rate !== 0) {
      rate = 1 / entry.rate;
    }
    if (
      rate !== null &&
      (!best || entry.effectiveDate > best.date || (entry.effectiveDate === best.date && base === a))
    ) {
      best = { rate, date: entry.effectiveDate };
    }
  }
  return best?.rate ?? null;
}
