import { AppException } from '../../../common/errors/app.exception.js';
import type { FieldDefinition, SystemColumn } from '../fields/field.types.js';
import { handlerFor } from '../fields/field-type.registry.js';
import { volatileFormulaIds } from '../fields/computed-definitions.js';
import { queryHandlerFor } from './volatile-formula-fields.js';
import type { SqlParams } from './sql-params.js';
import type { ResolvedField } from './query.types.js';

/**
 * Pseudo field ids for the row's system columns. A document field with the same id takes precedence
 * (it is the one the client defined). `version` compares numerically, the times as timestamps.
 */
export const SYSTEM_QUERY_FIELDS: Record<string, { definition: FieldDefinition; column: SystemColumn }> = {
  id: { definition: { id: 'id', name: 'id', type: 'text' }, column: 'r.id' },
  createdAt: {
    definition: { id: 'createdAt', name: 'createdAt', type: 'created_time' },
    column: 'r.created_at',
  },
  updatedAt: {
    definition: { id: 'updatedAt', name: 'updatedAt', type: 'updated_time' },
    column: 'r.updated_at',
  },
  createdBy: {
    definition: { id: 'createdBy', name: 'createdBy', type: 'created_by' },
    column: 'r.created_by',
  },
  updatedBy: {
    definition: { id: 'updatedBy', name: 'updatedBy', type: 'updated_by' },
    column: 'r.updated_by',
  },
  version: { definition: { id: 'version', name: 'version', type: 'auto_number' }, column: 'r.version' },
};

/** Resolves field ids against the document's fields (then the pseudo ids) and binds their keys. */
export class FieldResolver {
  private readonly byId: Map<string, FieldDefinition>;
  /** `volatileFormulaIds(fields)`, worked out once, when the first document field is resolved. */
  private volatile: ReadonlySet<string> | undefined;

  /** `now`: SQL of the instant NOW()/TODAY() formulas read (`nowSqlAt`), else the statement's time. */
  constructor(
    private readonly fields: readonly FieldDefinition[],
    private readonly now?: string,
  ) {
    this.byId = new Map(fields.map((field) => [field.id, field]));
  }

  /** Throws VALIDATION_ERROR at `path` for an unknown field. The field id is bound as a parameter. */
  resolve(fieldId: string, path: string, params: SqlParams): ResolvedField {
    const definition = this.byId.get(fieldId);
    if (definition) {
      this.volatile ??= volatileFormulaIds(this.fields);
      const handler = queryHandlerFor(definition, this.fields, this.volatile, this.now);
      const ref = handler.systemColumn
        ? { kind: 'column' as const, column: handler.systemColumn }
        : { kind: 'json' as const, key: params.fieldKey(fieldId) };
      return { definition, handler, ref };
    }
    const system = Object.prototype.hasOwnProperty.call(SYSTEM_QUERY_FIELDS, fieldId)
      ? SYSTEM_QUERY_FIELDS[fieldId]
      : undefined;
    if (system) {
      return {
        definition: system.definition,
        handler: handlerFor(system.definition.type),
        ref: { kind: 'column', column: system.column },
      };
    }
    throw AppException.validation([{ field: path, reason: `unknown field ${JSON.stringify(fieldId)}` }]);
  }
}
