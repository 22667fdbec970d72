/**
 * ISO 8601 parsing for date and datetime fields. Accepted: `YYYY-MM-DD`, `YYYY-MM-DDTHH:mm`,
 * `YYYY-MM-DDTHH:mm:ss`, with fractional seconds, with `Z` or `±HH:mm` / `±HHmm` / `±HH`; a space may replace `T`.
 * A date-time without an offset is read as UTC. Years 0000–9999 only, so stored strings keep a fixed width
 * and their text order is their time order.
 */
const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const STORED_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface IsoParts {
  date: string;
  /** Milliseconds since the epoch (UTC), or null when the input was a date only. */
  epochMs: number | null;
}

function daysInMonth(year: number, month: number): number {
  // setUTCFullYear, unlike Date.UTC, does not map years 0–99 to 1900–1999.
  const lastDay = new Date(0);
  lastDay.setUTCFullYear(year, month, 0);
  return lastDay.getUTCDate();
}

function parseIso(input: string): IsoParts | null {
  const match = ISO_PATTERN.exec(input.trim());
  if (!match) {
    return null;
  }
  const [, y, mo, d, h, mi, s, frac, offset] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return null;
  }
  const date = `${y}-${mo}-${d}`;
  if (h === undefined) {
    return { date, epochMs: null };
  }
  const hour = Number(h);
  const minute = Number(mi);
  const second = s === undefined ? 0 : Number(s);
  if (hour > 23 || minute > 59 || second > 59) {
    return null;
  }
  const millis = frac === undefined ? 0 : Math.floor(Number(`0.${frac}`) * 1000);
  let offsetMinutes = 0;
  if (offset !== undefined && offset.toUpperCase() !== 'Z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const offH = Number(digits.slice(0, 2));
    const offM = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (offH > 23 || offM > 59) {
      return null;
    }
    offsetMinutes = sign * (offH * 60 + offM);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millis);
  return { date, epochMs: utc.getTime() - offsetMinutes * 60_000 };
}

/**
 * `YYYY-MM-DD`, or null when not ISO 8601. A date-time input keeps the calendar date as written
 * (`2024-01-02T23:00:00-05:00` → `2024-01-02`), the day the writer meant.
 */
export function normalizeDate(input: string): string | null {
  return parseIso(input)?.date ?? null;
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ` in UTC, or null when not ISO 8601. A date alone means its midnight UTC. */
export function normalizeDateTime(input: string): string | null {
  const parts = parseIso(input);
  if (!parts) {
    return null;
  }
  const iso = new Date(parts.epochMs ?? Date.parse(`${parts.date}T00:00:00.000Z`)).toISOString();
  return STORED_DATETIME.test(iso) ? iso : null;
}

/** A stored datetime (or a Date / timestamp text from a column) as ISO UTC; null when unreadable. */
export function toIsoDateTime(input: unknown): string | null {
  if (input instanceof Date) {
    return Number.isNaN(input.getTime()) ? null : input.toISOString();
  }
  if (typeof input !== 'string') {
    return null;
  }
  const normalized = normalizeDateTime(input);
  if (normalized) {
    return normalized;
  }
  const parsed = Date.parse(input);
  return Number.isNaN(parsed) ? null : new Date(parsed).toISOString();
}
