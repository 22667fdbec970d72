import {
  dateUnit,
  FormulaError,
  MAX_FORMULA_DEPTH,
  parseFormula,
  type FormulaNode,
} from '../../../common/formula/index.js';
import { formulaTypeOfField, volatileFormulaIds } from '../fields/computed-definitions.js';
import { FIELD_ID_PATTERN } from '../fields/field-definition.validator.js';
import type { FieldDefinition } from '../fields/field.types.js';
import {
  bind,
  dateAdd,
  literal,
  numberText,
  scaled,
  toCharPattern,
  UNIT_SECONDS,
} from './formula-sql-runtime.js';

/**
 * Compiles a formula that reads the clock (NOW(), TODAY()) — or reads such a formula, directly or through others
 * (`volatileFormulaIds`) — into one SQL expression over `r."values"`, evaluated by PostgreSQL at read time, so such a
 * formula filters, sorts and groups in SQL like a stored field (it is never materialised: its value would go stale).
 * Supports the functions listed in docs/formulas.md ("NOW() / TODAY() formulas"); others are refused when the
 * metadata is written. Field ids (validated by FIELD_ID_PATTERN) and text literals (quotes doubled) are inlined as
 * literals, so the expression is self-contained. An operand needed more than once is bound once in a sub-select (see
 * `bind`), so the SQL grows linearly with the formula.
 */
export type SqlType = 'number' | 'text' | 'boolean' | 'date' | 'blank';

interface Compiled {
  sql: string;
  type: SqlType;
  /** Never NULL (literals, NOW(), arithmetic with such an operand): no blank check needed. */
  notNull?: boolean;
}

/** Compiled SQL longer than this is refused when the field is defined ("formula too complex"). */
export const MAX_FORMULA_SQL_LENGTH = 100_000;
/**
 * A text read as a date like the evaluator's toDate: `YYYY-MM-DD` (UTC midnight) or an ISO date-time (UTC unless
 * it has an offset); a day past the month's end rolls over as in JavaScript. Anything else is NULL, never an error.
 */
const DATE_PATTERN = `'^(\\d{4})-(\\d{2})-(\\d{2})(?:[T ](\\d{2}):(\\d{2})(?::(\\d{2}(?:\\.\\d+)?))?(Z|[+-]\\d{2}:?\\d{2})?)?$'`;
const DATE_FROM_MATCH = `CASE WHEN m[1]::int > 0 AND m[2]::int BETWEEN 1 AND 12 AND m[3]::int BETWEEN 1 AND 31 AND COALESCE(m[4]::int, 0) < 24 AND COALESCE(m[5]::int, 0) < 60 AND COALESCE(m[6]::numeric, 0) < 60 THEN make_timestamptz(m[1]::int, m[2]::int, 1, COALESCE(m[4]::int, 0), COALESCE(m[5]::int, 0), COALESCE(m[6]::double precision, 0), 'UTC') + (m[3]::int - 1) * interval '1 day' - CASE WHEN m[7] IS NULL OR m[7] = 'Z' THEN interval '0' ELSE (substr(m[7], 1, 1) || '1')::int * (substr(m[7], 2, 2)::int * 60 + right(m[7], 2)::int) * interval '1 minute' END END`;

/** to_char format of a timestamp as JavaScript's toISOString writes it (UTC, milliseconds). */
export const ISO_FORMAT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
function unsupported(what: string, pos: number): never {
  throw new FormulaError(`${what} is not supported in a formula using NOW() or TODAY()`, pos);
}

function asText(value: Compiled): string {
  switch (value.type) {
    case 'text':
      return value.sql;
    case 'number':
      return numberText(value);
    case 'boolean':
      return `(${value.sql})::text`;
    case 'date':
      // to_char writes PostgreSQL's 1 BC as year 0001 (the BC lives in another pattern): ISO 8601 and date fields
      // (docs/values.md) call it 0000, and filters and sorts compare this text, so 0000-06-01 sorted after
      // 0001-03-01. Earlier years as toISOString writes them (-000001 is 2 BC), for date arithmetic that gets there.
      return bind([value], ([date]) => {
        const utc = `(${date}) AT TIME ZONE 'UTC'`;
        const year = `extract(year FROM ${utc})`;
        return `(CASE WHEN ${year} < 0 THEN (CASE WHEN ${year} = -1 THEN '0000' ELSE '-' || lpad((-1 - ${year})::int::text, 6, '0') END)
          || substr(to_char(${utc}, ${ISO_FORMAT}), 5) ELSE to_char(${utc}, ${ISO_FORMAT}) END)`;
      });
    case 'blank':
      return 'NULL::text';
  }
}

function truthy(value: Compiled): string {
  switch (value.type) {
    case 'number':
      return `COALESCE((${value.sql}) <> 0, FALSE)`;
    case 'text':
      return `COALESCE((${value.sql}) <> '', FALSE)`;
    case 'boolean':
      return `COALESCE(${value.sql}, FALSE)`;
    case 'date':
      return `((${value.sql}) IS NOT NULL)`;
    case 'blank':
      return 'FALSE';
  }
}

/** A date operand as timestamptz: text is parsed safely (DATE_PATTERN); a number or boolean is no date. */
function asDate(value: Compiled): Compiled {
  switch (value.type) {
    case 'date':
      return value;
    case 'text':
      return {
        sql: `(SELECT ${DATE_FROM_MATCH} FROM regexp_match(${value.sql}, ${DATE_PATTERN}) AS m)`,
        type: 'date',
      };
    case 'number':
    case 'boolean':
    case 'blank':
      return { sql: 'NULL::timestamptz', type: 'date' };
  }
}

function blank(value: Compiled): string {
  return value.type === 'text' ? `COALESCE((${value.sql}) = '', TRUE)` : `((${value.sql}) IS NULL)`;
}

/**
 * An error inside a volatile formula another one reads: its position is the inner formula's, so it is reported at
 * the reference (in the formula being compiled), naming the formula and position it comes from.
 */
class InlinedFormulaError extends FormulaError {
  static at(error: FormulaError, fieldId: string, pos: number): InlinedFormulaError {
    return error instanceof InlinedFormulaError
      ? new InlinedFormulaError(error.message, pos)
      : new InlinedFormulaError(
          `{${fieldId}}: ${error.message} (at position ${error.position} of {${fieldId}})`,
          pos,
        );
  }
}

/** What NOW() reads unless a query pins its instant (`nowSqlAt`). */
const STATEMENT_NOW = 'statement_timestamp()';

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** True for an ISO UTC instant as `toISOString` writes it (what `nowSqlAt` takes). */
export function isInstant(text: string): boolean {
  return INSTANT.test(text) && !Number.isNaN(Date.parse(text));
}

/**
 * NOW() pinned to `instant` (an ISO UTC instant as `toISOString` writes it): a cursor walk evaluates every page at
 * the instant of its first one, or a sort by a NOW() formula would move under the cursor between pages.
 */
export function nowSqlAt(instant: string): string {
  if (!isInstant(instant)) {
    throw new Error(`not an ISO instant: ${instant}`);
  }
  return `(${literal(instant)}::timestamptz)`;
}

class FormulaSqlCompiler {
  private readonly byId: Map<string, FieldDefinition>;
  private readonly stack: string[] = [];
  private depth = 0;

  constructor(
    fields: readonly FieldDefinition[],
    private readonly volatile: ReadonlySet<string>,
    private readonly now: string = STATEMENT_NOW,
  ) {
    this.byId = new Map(fields.map((field) => [field.id, field]));
  }

  field(id: string, pos: number): Compiled {
    const field = this.byId.get(id);
    if (!field || !FIELD_ID_PATTERN.test(id)) {
      throw new FormulaError(`unknown field {${id}}`, pos);
    }
    const json = `(r."values" -> ${literal(id)})`;
    const text = `(r."values" ->> ${literal(id)})`;
    if (field.type === 'created_time' || field.type === 'updated_time') {
      return { sql: field.type === 'created_time' ? 'r.created_at' : 'r.updated_at', type: 'date' };
    }
    if (field.type === 'created_by' || field.type === 'updated_by') {
      return { sql: field.type === 'created_by' ? 'r.created_by' : 'r.updated_by', type: 'text' };
    }
    // A volatile formula is never stored: its SQL is inlined (a stored formula is read like a stored field).
    if (field.type === 'formula' && this.volatile.has(id)) {
      if (this.stack.includes(id)) {
        throw new FormulaError(`circular reference through {${id}}`, pos);
      }
      this.stack.push(id);
      let inner: Compiled;
      try {
        inner = this.compile(parseFormula(field.formula ?? ''));
      } catch (error) {
        throw error instanceof FormulaError ? InlinedFormulaError.at(error, id, pos) : error;
      }
      this.stack.pop();
      return inner;
    }
    switch (formulaTypeOfField(field)) {
      case 'number':
        return {
          sql: `(CASE WHEN jsonb_typeof(${json}) = 'number' THEN (${json})::double precision END)`,
          type: 'number',
        };
      case 'boolean':
        return {
          sql: `(CASE WHEN jsonb_typeof(${json}) = 'boolean' THEN (${json})::boolean END)`,
          type: 'boolean',
        };
      case 'date': {
        // Date fields hold years 0000–9999 (docs/values.md). ISO year 0000 is PostgreSQL's 1 BC, whose input syntax is
        // "0001-… BC": a plain cast failed, and with it every query filtering, sorting or grouping on the formula.
        const year0 = `left(${text}, 4) = '0000'`;
        const bc = (suffix: string): string => `'0001' || substr(${text}, 5) || '${suffix} BC'`;
        return {
          sql: `(CASE WHEN ${text} ~ '^\\d{4}-\\d{2}-\\d{2}$' THEN (CASE WHEN ${year0} THEN ${bc('T00:00:00Z')} ELSE ${text} || 'T00:00:00Z' END)::timestamptz WHEN ${text} ~ '^\\d{4}-\\d{2}-\\d{2}T' THEN (CASE WHEN ${year0} THEN ${bc('')} ELSE ${text} END)::timestamptz END)`,
          type: 'date',
        };
      }
      case 'text':
        return { sql: `NULLIF(${text}, '')`, type: 'text' };
      case 'blank':
      case 'list':
        return unsupported(`the list field {${id}}`, pos);
    }
  }

  /** Compiles a node; refuses what nests too deeply (through other volatile formulas) or grows too long. */
  compile(node: FormulaNode): Compiled {
    if (++this.depth > MAX_FORMULA_DEPTH) {
      throw new FormulaError(`formula is nested too deeply (at most ${MAX_FORMULA_DEPTH} levels)`, node.pos);
    }
    const compiled = this.compileNode(node);
    this.depth--;
    if (compiled.sql.length > MAX_FORMULA_SQL_LENGTH) {
      throw new FormulaError('formula too complex', node.pos);
    }
    return compiled;
  }

  private compileNode(node: FormulaNode): Compiled {
    switch (node.kind) {
      case 'number':
        return { sql: `(${node.value})::double precision`, type: 'number', notNull: true };
      case 'text':
        // "" is blank, as in the evaluator: `{t} = ""` holds for an empty t, `"" < "b"` is false.
        return { sql: node.value === '' ? 'NULL::text' : `${literal(node.value)}::text`, type: 'text' };
      case 'boolean':
        return { sql: node.value ? 'TRUE' : 'FALSE', type: 'boolean', notNull: true };
      case 'field':
        return this.field(node.fieldId, node.pos);
      case 'star':
        return unsupported('"*"', node.pos);
      case 'unary': {
        const operand = this.compile(node.operand);
        return { sql: `(-(${operand.sql}))`, type: 'number', notNull: operand.notNull };
      }
      case 'binary':
        return this.binary(node.op, this.compile(node.left), this.compile(node.right));
      case 'call':
        return this.call(node);
    }
  }

  private binary(op: string, left: Compiled, right: Compiled): Compiled {
    if (op === '&') {
      return {
        sql: `NULLIF(COALESCE(${asText(left)}, '') || COALESCE(${asText(right)}, ''), '')`,
        type: 'text',
      };
    }
    if (['+', '-', '*', '/', '%'].includes(op)) {
      // Blank counts as 0 unless both operands are blank; an operand that is never NULL spares that check.
      const notNull = left.notNull === true || right.notNull === true;
      const sql = bind([left, right], ([l, r]) => {
        const a = `COALESCE(${l}, 0)`;
        const b = `COALESCE(${r}, 0)`;
        const value = op === '*' || op === '/' || op === '%' ? scaled(op, a, b) : `${a} ${op} ${b}`;
        return notNull
          ? `(${value})`
          : `(CASE WHEN (${l}) IS NULL AND (${r}) IS NULL THEN NULL ELSE ${value} END)`;
      });
      return { sql, type: 'number', notNull: notNull && op !== '/' && op !== '%' };
    }
    // Comparisons: a date against text compares as dates; blank only equals blank.
    const [a, b] =
      left.type === 'date' && right.type === 'text'
        ? [left.sql, asDate(right).sql]
        : right.type === 'date' && left.type === 'text'
          ? [asDate(left).sql, right.sql]
          : [left.sql, right.sql];
    if (op === '=' || op === '!=') {
      const equal =
        left.type === 'blank'
          ? blank(right)
          : right.type === 'blank'
            ? blank(left)
            : `((${a}) IS NOT DISTINCT FROM (${b}))`;
      return { sql: op === '=' ? equal : `(NOT ${equal})`, type: 'boolean' };
    }
    return { sql: `COALESCE((${a}) ${op} (${b}), FALSE)`, type: 'boolean' };
  }

  private unit(node: FormulaNode | undefined): string {
    if (!node) {
      return 'days';
    }
    const unit = node.kind === 'text' ? dateUnit(node.value) : null;
    return unit ?? unsupported('a computed date unit', node.pos);
  }

  private call(node: Extract<FormulaNode, { kind: 'call' }>): Compiled {
    const args = (): Compiled[] => node.args.map((arg) => this.compile(arg));
    const number = (sql: string): Compiled => ({ sql, type: 'number' });
    switch (node.name) {
      case 'NOW':
        return { sql: this.now, type: 'date', notNull: true };
      case 'TODAY':
        return {
          sql: `(date_trunc('day', ${this.now} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`,
          type: 'date',
          notNull: true,
        };
      case 'BLANK':
        return { sql: 'NULL', type: 'blank' };
      case 'YEAR':
      case 'MONTH':
      case 'DAY': {
        const date = asDate(args()[0]);
        return {
          ...number(
            `(extract(${node.name.toLowerCase()} FROM (${date.sql}) AT TIME ZONE 'UTC'))::double precision`,
          ),
          notNull: date.notNull,
        };
      }
      case 'DATEDIFF': {
        const [start, end] = args().map(asDate);
        const unit = this.unit(node.args[2]);
        if (unit === 'months' || unit === 'years') {
          // As the evaluator's diffDates (not age(), which counts 2024-01-31 → 2024-02-29 as 0 months): the
          // calendar months between, less one when start moved by them (clamped to the month's end) passes end.
          return number(
            bind([start, end], ([s, e]) => {
              const [su, eu] = [`((${s}) AT TIME ZONE 'UTC')`, `((${e}) AT TIME ZONE 'UTC')`];
              const raw = `((extract(year FROM ${eu}) - extract(year FROM ${su})) * 12 + extract(month FROM ${eu}) - extract(month FROM ${su}))::integer`;
              const shifted = `(${su} + ${raw} * interval '1 month')`;
              const months = `(${raw} - CASE WHEN ${raw} > 0 AND ${shifted} > ${eu} THEN 1 WHEN ${raw} < 0 AND ${shifted} < ${eu} THEN -1 ELSE 0 END)`;
              return `(${unit === 'years' ? `trunc(${months} / 12.0)` : months})::double precision`;
            }),
          );
        }
        return number(
          `trunc(extract(epoch FROM (${end.sql}) - (${start.sql})) / ${UNIT_SECONDS[unit]})::double precision`,
        );
      }
      case 'DATEADD': {
        const [value, amount] = args();
        const date = asDate(value);
        const unit = this.unit(node.args[2]);
        return { sql: bind([date, amount], ([d, n]) => dateAdd(d, n, unit)), type: 'date' };
      }
      case 'IF': {
        const [condition, then, otherwise] = args();
        const type = then.type === 'blank' ? (otherwise?.type ?? 'blank') : then.type;
        return {
          sql: `(CASE WHEN ${truthy(condition)} THEN ${then.sql} ELSE ${otherwise?.sql ?? 'NULL'} END)`,
          type,
        };
      }
      case 'AND':
      case 'OR':
        return {
          sql: `(${args()
            .map(truthy)
            .join(node.name === 'AND' ? ' AND ' : ' OR ')})`,
          type: 'boolean',
        };
      case 'NOT':
        return { sql: `(NOT ${truthy(args()[0])})`, type: 'boolean' };
      case 'ISBLANK':
        return { sql: blank(args()[0]), type: 'boolean' };
      case 'ROUND': {
        // As the evaluator's roundTo: the digits truncated (1.6 → 1); a value with no stored digit below that place
        // (|x|·10^p ≥ 2^52) comes back unchanged. Past ±400 places the answer no longer changes (the value, or 0),
        // so the digits are clamped there and never overflow an integer (1e10 digits failed the whole query).
        const [value, digits] = args();
        const places = `LEAST(GREATEST(trunc(COALESCE(${digits?.sql ?? '0'}, 0)), -400), 400)::integer`;
        return number(
          `(SELECT CASE WHEN abs(r.x) * power(10::numeric, r.p) >= 4503599627370496 THEN r.x ELSE round(r.x, r.p) END
              FROM (SELECT ((${value.sql})::double precision)::numeric AS x, ${places} AS p) r)::double precision`,
        );
      }
      case 'ABS':
      case 'FLOOR':
      case 'CEIL':
        return number(`${node.name.toLowerCase()}(${args()[0].sql})`);
      case 'CONCAT':
        return { sql: `NULLIF(concat(${args().map(asText).join(', ')}), '')`, type: 'text' };
      case 'TEXT':
        return { sql: asText(args()[0]), type: 'text' };
      case 'DATETIME_FORMAT': {
        const date = asDate(args()[0]);
        const format = node.args[1];
        if (format && format.kind !== 'text') {
          return unsupported('a computed date format', format.pos);
        }
        const pattern = toCharPattern(format?.value ?? 'YYYY-MM-DD');
        return {
          sql: `NULLIF(to_char((${date.sql}) AT TIME ZONE 'UTC', ${literal(pattern)}), '')`,
          type: 'text',
        };
      }
      default:
        return unsupported(node.name, node.pos);
    }
  }
}

/**
 * The SQL of a volatile formula over `r` (throws FormulaError for what it cannot compile). `volatile` is
 * `volatileFormulaIds(fields)`, passed by callers that compile several fields of one list.
 */
export function compileVolatileFormula(
  field: FieldDefinition,
  fields: readonly FieldDefinition[],
  volatile: ReadonlySet<string> = volatileFormulaIds(fields),
  now: string = STATEMENT_NOW,
): { sql: string; type: SqlType } {
  const compiled = new FormulaSqlCompiler(fields, volatile, now).compile(parseFormula(field.formula ?? ''));
  // Dates are queried like datetime fields: ISO UTC text, whose text order is time order.
  return compiled.type === 'date' ? { sql: asText(compiled), type: 'date' } : compiled;
}

/**
 * The SQL over `r` of the row fields among `fieldIds` that are NOW()/TODAY() formulas, by id: never stored, so a
 * property formula aggregating one (`SUM({late})`) reads this expression rather than a stored value (there is none;
 * the sum used to be 0). Other fields are left out: their stored values are what rows show.
 */
export function volatileFieldSql(
  fields: readonly FieldDefinition[],
  fieldIds: readonly string[],
): Map<string, string> {
  const volatile = volatileFormulaIds(fields);
  const byId = new Map(fields.map((field) => [field.id, field]));
  const result = new Map<string, string>();
  for (const id of fieldIds) {
    const field = byId.get(id);
    if (field && volatile.has(id) && !result.has(id)) {
      result.set(id, compileVolatileFormula(field, fields, volatile).sql);
    }
  }
  return result;
}
