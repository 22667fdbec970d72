import { DATE_FORMAT_TOKENS } from '../../../common/formula/index.js';

/**
 * The SQL pieces of NOW()/TODAY() formulas (formula-sql.ts) that must write what the Node evaluator writes, and
 * must never raise where the evaluator empties a cell: number text, DATETIME_FORMAT patterns, DATEADD and the
 * range-checked `*`, `/`, `%` (docs/formulas.md, "NOW() / TODAY() formulas"). A raised SQL error would fail every
 * query sorting or filtering by the field, where the evaluator empties one cell.
 */

/** Compiled SQL of an operand. */
export interface SqlOperand {
  sql: string;
}

/** An operand SQL up to this length may be repeated in its parent; a longer one is bound once. */
const INLINE_LENGTH = 120;

/** Seconds per fixed-length date unit (months and years are calendar arithmetic). */
export const UNIT_SECONDS: Record<string, number> = {
  milliseconds: 0.001,
  seconds: 1,
  minutes: 60,
  hours: 3600,
  days: 86400,
  weeks: 604800,
};

/** A SQL text literal (quotes doubled). */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * Builds SQL that may name each operand several times: a short operand is repeated, a longer one is computed once
 * in a sub-select (`o.f1`, `o.f2`…), so nested operators do not multiply the SQL.
 */
export function bind(operands: readonly SqlOperand[], build: (sql: string[]) => string): string {
  const bound: string[] = [];
  const refs = operands.map((operand) => {
    if (operand.sql.length <= INLINE_LENGTH) {
      return operand.sql;
    }
    bound.push(operand.sql);
    return `o.f${bound.length}`;
  });
  if (bound.length === 0) {
    return build(refs);
  }
  const columns = bound.map((_, index) => `f${index + 1}`).join(', ');
  return `(SELECT ${build(refs)} FROM (SELECT ${bound.join(', ')} OFFSET 0) AS o(${columns}))`;
}

/**
 * A number as JavaScript's String(n) writes it, as the evaluator does: positional from 1e-6 up to 1e21, else
 * `1e-7` / `1e+21`. PostgreSQL writes exponents from 1e-5 and 1e15 on (`1e-05`, `1e+16`); its shortest digits are
 * JavaScript's, so the positional form is those digits read back as numeric.
 */
export function numberText(value: SqlOperand): string {
  return bind(
    [value],
    ([x]) =>
      `(CASE WHEN (${x}) = 0 THEN '0' WHEN abs(${x}) >= 1e21 OR abs(${x}) < 1e-6 THEN regexp_replace((${x})::text, 'e([+-])0*(\\d)', 'e\\1\\2') ELSE ((${x})::text)::numeric::text END)`,
  );
}

/** A DATETIME_FORMAT format as a to_char pattern: the evaluator's tokens mapped, everything else quoted literally. */
export function toCharPattern(format: string): string {
  const TOKENS: Record<string, string> = {
    YYYY: 'YYYY',
    YY: 'YY',
    MM: 'MM',
    M: 'FMMM',
    DD: 'DD',
    D: 'FMDD',
    HH: 'HH24',
    H: 'FMHH24',
    mm: 'MI',
    ss: 'SS',
    SSS: 'MS',
  };
  const quote = (text: string): string => (text ? `"${text.replace(/["\\]/g, '\\$&')}"` : '');
  let pattern = '';
  let last = 0;
  for (const match of format.matchAll(DATE_FORMAT_TOKENS)) {
    // `""` after each pattern keeps neighbours apart (SS then SS would read as SSSS, seconds past midnight).
    pattern += `${quote(format.slice(last, match.index))}${TOKENS[match[0]]}""`;
    last = match.index + match[0].length;
  }
  return pattern + quote(format.slice(last));
}

/**
 * `*`, `/` and `%` in double precision where no overflow or underflow can happen (both operands zero or within
 * 1e±150), else in numeric and back to double precision: PostgreSQL raises "value out of range" where JavaScript
 * gives Infinity or 0, and a raised error would fail every query reading the field instead of emptying one cell. Past
 * the double range the value is empty, as the evaluator's non-finite result is.
 */
export function scaled(op: '*' | '/' | '%', a: string, b: string): string {
  const fast =
    op === '/'
      ? `${a} / NULLIF(${b}, 0)`
      : op === '%'
        ? `${a} - ${b} * trunc(${a} / NULLIF(${b}, 0))`
        : `${a} * ${b}`;
  const exact =
    op === '/'
      ? `(${a})::numeric / NULLIF((${b})::numeric, 0)`
      : op === '%'
        ? `mod((${a})::numeric, NULLIF((${b})::numeric, 0))`
        : `(${a})::numeric * (${b})::numeric`;
  const inRange = (x: string): string => `abs(${x}) BETWEEN 1e-150 AND 1e150`;
  const zero = op === '*' ? `(${a}) = 0 OR (${b}) = 0` : `(${a}) = 0`;
  return `(CASE WHEN ${zero} OR (${inRange(a)} AND ${inRange(b)}) THEN ${fast} ELSE (SELECT CASE WHEN abs(e.x) > 1.7976931348623157e308 THEN NULL WHEN abs(e.x) < 2.2250738585072014e-308 THEN 0 ELSE e.x::double precision END FROM (SELECT ${exact}) AS e(x)) END)`;
}

/** Seconds since 1970 of PostgreSQL's earliest timestamp (4714-11-24 BC) and of JavaScript's last date (+275760). */
const MIN_EPOCH = -210866803200;
const MAX_EPOCH = 8.64e12;

/**
 * DATEADD in UTC, empty where the evaluator's Date would be invalid or PostgreSQL has no timestamp (a runtime
 * error empties the cell, never the query: `DATEADD({due}, {ms}, "days")` with a duration in milliseconds used to
 * fail every query reading the field with "timestamp out of range"). The range check comes first and sits inside
 * the amount, so an amount out of range is never multiplied into an interval, not even when constant-folded.
 */
export function dateAdd(d: string, n: string, unit: string): string {
  if (unit === 'months' || unit === 'years') {
    const months = `(trunc(${n}) * ${unit === 'years' ? 12 : 1})`;
    const safe = `(CASE WHEN abs(${n}) >= 1e7 THEN NULL WHEN extract(year FROM (${d}) AT TIME ZONE 'UTC') + ${months} / 12.0 NOT BETWEEN -4712 AND 275759 THEN NULL ELSE ${months}::integer END)`;
    return `((((${d}) AT TIME ZONE 'UTC') + ${safe} * interval '1 month') AT TIME ZONE 'UTC')`;
  }
  const seconds = `((${n}) * ${UNIT_SECONDS[unit]})`;
  const safe = `(CASE WHEN abs(${n}) >= 1e13 THEN NULL WHEN extract(epoch FROM ${d}) + ${seconds} NOT BETWEEN ${MIN_EPOCH} AND ${MAX_EPOCH} THEN NULL ELSE ${seconds} END)`;
  return `((${d}) + ${safe} * interval '1 second')`;
}
