import { FormulaError } from '../../../common/formula/index.js';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { volatileFormulaIds } from '../fields/computed-definitions.js';
import { TypedComputedFieldHandler } from '../fields/computed.field.js';
import {
  jsonSql,
  type FieldRef,
  type FieldTypeHandler,
  type SqlCast,
  type TypedSql,
} from '../fields/field-type-handler.js';
import { handlerForField } from '../fields/field-type.registry.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { compileVolatileFormula, type SqlType } from './formula-sql.js';
import type { ResolvedField } from './query.types.js';

/*
 * Volatile formulas (NOW(), TODAY(), or reading such a formula) in the query engine: the handler that puts a
 * formula's compiled SQL where a stored field's value would be read, and the check that refuses, when the metadata
 * is written, a volatile formula SQL cannot evaluate. The compiler itself is formula-sql.ts.
 */

const CASTS: Record<SqlType, SqlCast> = {
  number: 'double precision',
  text: 'text',
  boolean: 'boolean',
  date: 'text',
  blank: 'text',
};

/** A volatile formula in queries: its compiled SQL instead of a stored value; operators of its result type. */
class VolatileFormulaHandler extends TypedComputedFieldHandler {
  constructor(
    inner: FieldTypeHandler,
    private readonly compiled: TypedSql,
  ) {
    super(inner);
  }

  /** The bound field-id parameter is referenced (typed) although the expression does not need it. */
  override sqlExpr(ref: FieldRef): TypedSql {
    return ref.kind === 'json'
      ? {
          sql: `(CASE WHEN ${ref.key}::text IS NULL THEN NULL ELSE ${this.compiled.sql} END)`,
          cast: this.compiled.cast,
        }
      : this.compiled;
  }

  override sortExpr(ref: FieldRef): TypedSql {
    return this.sqlExpr(ref);
  }

  /** The value as JSON, as it would be stored (a number, a string, a boolean; NULL when empty). */
  jsonExpr(ref: FieldRef): string {
    return `to_jsonb(${this.sqlExpr(ref).sql})`;
  }
}

/**
 * A field's value as JSON in SQL, for what reads the value rather than a typed expression (group keys, emptiness,
 * JSON comparisons): a volatile formula's computed value, else the stored JSON (or the column as JSON).
 */
export function valueJsonSql(field: Pick<ResolvedField, 'handler' | 'ref'>): string {
  return field.handler instanceof VolatileFormulaHandler
    ? field.handler.jsonExpr(field.ref)
    : jsonSql(field.ref);
}

/**
 * The query handler of a field: a volatile formula's compiled SQL, else the field's own handler. `volatile` is
 * `volatileFormulaIds(fields)`, passed by callers resolving several fields of one list; `now` (`nowSqlAt`) pins
 * what NOW()/TODAY() read, else the statement's time.
 */
export function queryHandlerFor(
  field: FieldDefinition,
  fields: readonly FieldDefinition[],
  volatile: ReadonlySet<string> = volatileFormulaIds(fields),
  now?: string,
): FieldTypeHandler {
  if (!volatile.has(field.id)) {
    return handlerForField(field);
  }
  try {
    const compiled = compileVolatileFormula(field, fields, volatile, now);
    const sql = compiled.type === 'boolean' ? `COALESCE(${compiled.sql}, FALSE)` : compiled.sql;
    return new VolatileFormulaHandler(handlerForField(field), { sql, cast: CASTS[compiled.type] });
  } catch {
    return handlerForField(field);
  }
}

/**
 * Refuses (VALIDATION_ERROR, field and position) a volatile formula — NOW()/TODAY(), or reading such a formula —
 * using what SQL cannot evaluate.
 */
export function checkVolatileFormulas(fields: readonly FieldDefinition[], path = 'fields'): void {
  const errors: ErrorDetail[] = [];
  const volatile = volatileFormulaIds(fields);
  fields.forEach((field, index) => {
    if (!volatile.has(field.id)) {
      return;
    }
    try {
      compileVolatileFormula(field, fields, volatile);
    } catch (error) {
      if (!(error instanceof FormulaError)) {
        throw error;
      }
      errors.push({
        field: `${path}[${index}].formula`,
        fieldId: field.id,
        position: error.position,
        reason: `${error.message} (at position ${error.position})`,
      });
    }
  });
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
}
