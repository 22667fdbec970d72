/** Runtime values and coercions of the formula evaluator. */
export type RuntimeValue = number | string | boolean | Date | null | RuntimeValue[];

/** Thrown inside the evaluator for a cell-level error (division by zero, bad date); the cell becomes empty. */
export class FormulaCellError extends Error {}

export const DATE_UNITS = [
  'milliseconds',
  'seconds',
  'minutes',
  'hours',
  'days',
  'weeks',
  'months',
  'years',
] as const;
export type DateUnit = (typeof DATE_UNITS)[number];

const UNIT_ALIASES: Record<string, DateUnit> = {
  ms: 'milliseconds',
  millisecond: 'milliseconds',
  milliseconds: 'milliseconds',
  s: 'seconds',
  second: 'seconds',
  seconds: 'seconds',
  m: 'minutes',
  minute: 'minutes',
  minutes: 'minutes',
  h: 'hours',
  hour: 'hours',
  hours: 'hours',
  d: 'days',
  day: 'days',
  days: 'days',
  w: 'weeks',
  week: 'weeks',
  weeks: 'weeks',
  month: 'months',
  months: 'months',
  y: 'years',
  year: 'years',
  years: 'years',
};

export function dateUnit(value: string): DateUnit | null {
  return UNIT_ALIASES[value.trim().toLowerCase()] ?? null;
}

const UNIT_MS: Record<string, number> = {
  milliseconds: 1,
  seconds: 1000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 604_800_000,
};

export function isBlank(value: unknown): boolean {
  return (
    value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0)
  );
}

/** Turns what a resolver returns (stored JSON) into a runtime value. */
export function fromResolved(value: unknown): RuntimeValue {
  if (value === undefined || value === null) {
    return null;
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? value : null;
  }
  if (typeof value === 'string' || typeof value === 'boolean' || value instanceof Date) {
    return value;
  }
  if (Array.isArray(value)) {
    return value.map(fromResolved);
  }
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of ['number', 'text', 'boolean', 'date', 'label', 'id']) {
      if (key in record) {
        return fromResolved(record[key]);
      }
    }
    if (record.name && typeof record.name === 'object') {
      const names = Object.values(record.name as Record<string, unknown>);
      return typeof names[0] === 'string' ? names[0] : null;
    }
  }
  return JSON.stringify(value);
}

export function flatten(values: RuntimeValue[]): RuntimeValue[] {
  return values.flatMap((value) => (Array.isArray(value) ? flatten(value) : [value]));
}

export function toNumber(value: RuntimeValue): number | null {
  if (value === null || value === '') {
    return null;
  }
  if (typeof value === 'number') {
    return value;
  }
  if (typeof value === 'boolean') {
    return value ? 1 : 0;
  }
  if (value instanceof Date) {
    return value.getTime();
  }
  if (Array.isArray(value)) {
    const numbers = flatten(value)
      .map(toNumber)
      .filter((n): n is number => n !== null);
    return numbers.length === 1 ? numbers[0] : numbers.length === 0 ? null : fail();
  }
  const parsed = Number(value.trim());
  return Number.isFinite(parsed) ? parsed : fail();
}

export function toText(value: RuntimeValue): string {
  if (value === null) {
    return '';
  }
  if (value instanceof Date) {
    return value.toISOString();
  }
  if (Array.isArray(value)) {
    return flatten(value)
      .filter((item) => !isBlank(item))
      .map(toText)
      .join(', ');
  }
  return String(value);
}

export function toDate(value: RuntimeValue): Date | null {
  if (value === null || value === '') {
    return null;
  }
  if (value instanceof Date) {
    return value;
  }
  if (Array.isArray(value)) {
    const items = flatten(value).filter((item) => !isBlank(item));
    return items.length === 1 ? toDate(items[0]) : items.length === 0 ? null : fail();
  }
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value)) {
    const date = new Date(value.length === 10 ? `${value}T00:00:00.000Z` : value);
    return Number.isNaN(date.getTime()) ? fail() : date;
  }
  return fail();
}

export function truthy(value: RuntimeValue): boolean {
  if (Array.isArray(value)) {
    return flatten(value).some(truthy);
  }
  return !(value === null || value === '' || value === 0 || value === false);
}

export function fail(): never {
  throw new FormulaCellError();
}

export function finite(value: number): number {
  return Number.isFinite(value) ? value : fail();
}

export function addToDate(date: Date, amount: number, unit: DateUnit): Date {
  if (unit === 'months' || unit === 'years') {
    const result = new Date(date.getTime());
    const months = Math.trunc(amount) * (unit === 'years' ? 12 : 1);
    const day = result.getUTCDate();
    result.setUTCDate(1);
    result.setUTCMonth(result.getUTCMonth() + months);
    const lastDay = new Date(Date.UTC(result.getUTCFullYear(), result.getUTCMonth() + 1, 0)).getUTCDate();
    result.setUTCDate(Math.min(day, lastDay));
    return result;
  }
  return new Date(date.getTime() + amount * UNIT_MS[unit]);
}

export function diffDates(start: Date, end: Date, unit: DateUnit): number {
  if (unit === 'months' || unit === 'years') {
    let months =
      (end.getUTCFullYear() - start.getUTCFullYear()) * 12 + (end.getUTCMonth() - start.getUTCMonth());
    const shifted = addToDate(start, months, 'months');
    if (months > 0 && shifted.getTime() > end.getTime()) {
      months--;
    } else if (months < 0 && shifted.getTime() < end.getTime()) {
      months++;
    }
    return unit === 'years' ? Math.trunc(months / 12) : months;
  }
  return Math.trunc((end.getTime() - start.getTime()) / UNIT_MS[unit]);
}

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/**
 * The tokens of DATETIME_FORMAT, longest first where one starts another; anything else in a format is copied. The
 * SQL compiler of NOW()/TODAY() formulas splits a format with the same list, so both write the same text.
 */
export const DATE_FORMAT_TOKENS = /YYYY|YY|MM|M|DD|D|HH|H|mm|ss|SSS/g;

/** Formats a date in UTC with the tokens YYYY YY MM M DD D HH H mm ss SSS (anything else is copied). */
export function formatDate(date: Date, format: string): string {
  const parts: Record<string, string> = {
    YYYY: pad(date.getUTCFullYear(), 4),
    YY: pad(date.getUTCFullYear() % 100),
    MM: pad(date.getUTCMonth() + 1),
    M: String(date.getUTCMonth() + 1),
    DD: pad(date.getUTCDate()),
    D: String(date.getUTCDate()),
    HH: pad(date.getUTCHours()),
    H: String(date.getUTCHours()),
    mm: pad(date.getUTCMinutes()),
    ss: pad(date.getUTCSeconds()),
    SSS: pad(date.getUTCMilliseconds(), 3),
  };
  return format.replace(DATE_FORMAT_TOKENS, (token) => parts[token]);
}
