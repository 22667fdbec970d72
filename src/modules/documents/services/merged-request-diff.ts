import { assertNever } from '../../../common/assert-never.js';
import type { FieldDefinition, StoredRowValues, StoredValue } from '../fields/field.types.js';
import type { DocumentMetadata, OperationRecord, RequestRecord } from '../domain/document.records.js';
import type { RequestDiffDto } from '../dtos/request.dto.js';
import { renderValue, toRowDto } from '../mappers/document.mapper.js';

type Json = { [key: string]: StoredValue };

function obj(value: StoredValue | null | undefined): Json {
  return value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

function valuesOf(value: StoredValue | null | undefined): StoredRowValues {
  return obj(obj(value).values) as StoredRowValues;
}

function numberOr(value: StoredValue | undefined, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

/** The definition a value is rendered with: the one the document has now, else the one the operation recorded. */
function definitionOf(list: readonly FieldDefinition[], id: string, recorded?: StoredValue | null): FieldDefinition | undefined {
  const current = list.find((field) => field.id === id);
  if (current) {
    return current;
  }
  const field = obj(recorded).field;
  return field && typeof field === 'object' && !Array.isArray(field) ? (field as unknown as FieldDefinition) : undefined;
}

/**
 * The diff of a merged request: what it changed at its merge, read from the operations of the revision it
 * generated (old → new as they were then), never from today's document, which later revisions may have changed.
 * Rows come as the revision left them (added) or found them (deleted); fields and properties as `GET
 * /revisions/{revId}/diff` reports them for that one revision.
 */
export function mergedRequestDiff(request: RequestRecord, ops: readonly OperationRecord[], metadata: DocumentMetadata): RequestDiffDto {
  const diff: RequestDiffDto = { addedRows: [], updatedCells: [], deletedRows: [], changedProperties: [], fields: null, settingsChanged: false };
  const at = request.mergedAt ?? request.updatedAt;
  const by = request.mergedBy ?? request.author;
  // First and last operation per field definition: created then deleted within the revision is no change.
  const fieldOps = new Map<string, { first: string; last: string }>();
  for (const op of ops) {
    const rowId = op.target.rowId;
    const fieldId = op.target.fieldId;
    switch (op.type) {
      case 'row-create':
        if (rowId) {
          const values = valuesOf(op.newValue);
          const version = numberOr(obj(op.newValue).version, 1);
          diff.addedRows.push(toRowDto({ id: rowId, seq: '0', values, version, createdAt: at, createdBy: by, updatedAt: at, updatedBy: by }, metadata.fields));
        }
        break;
      case 'row-update':
        if (rowId) {
          const before = valuesOf(op.oldValue);
          const after = valuesOf(op.newValue);
          for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
            if (JSON.stringify(before[key] ?? null) !== JSON.stringify(after[key] ?? null)) {
              const field = definitionOf(metadata.fields, key);
              diff.updatedCells.push({ rowId, fieldId: key, oldValue: renderValue(before[key], field), newValue: renderValue(after[key], field) });
            }
          }
        }
        break;
      case 'row-delete':
        if (rowId) {
          const old = obj(op.oldValue);
          const createdAt = typeof old.createdAt === 'string' ? new Date(old.createdAt) : at;
          const createdBy = typeof old.createdBy === 'string' ? old.createdBy : null;
          // Operations recorded before updatedAt/By were kept carry only the creation: the best the record knows.
          const updatedAt = typeof old.updatedAt === 'string' ? new Date(old.updatedAt) : createdAt;
          const updatedBy = typeof old.updatedAt === 'string' ? (typeof old.updatedBy === 'string' ? old.updatedBy : null) : createdBy;
          const version = numberOr(old.version, 1);
          diff.deletedRows.push(toRowDto({ id: rowId, seq: '0', values: valuesOf(op.oldValue), version, createdAt, createdBy, updatedAt, updatedBy }, metadata.fields));
        }
        break;
      case 'field-create':
      case 'field-update':
      case 'field-delete':
        if (fieldId) {
          const seen = fieldOps.get(fieldId);
          fieldOps.set(fieldId, { first: seen?.first ?? op.type, last: op.type });
        }
        break;
      case 'metadata-update':
        diff.fields ??= { created: [], updated: [], deleted: [] };
        break;
      case 'settings-update':
        diff.settingsChanged = true;
        break;
      case 'property-update':
        if (fieldId) {
          const oldValue = obj(op.oldValue).value ?? null;
          const newValue = obj(op.newValue).value ?? null;
          if (JSON.stringify(oldValue) !== JSON.stringify(newValue)) {
            const field = definitionOf(metadata.properties, fieldId);
            diff.changedProperties.push({ fieldId, oldValue: renderValue(oldValue, field), newValue: renderValue(newValue, field) });
          }
        }
        break;
      case 'property-delete':
        for (const [key, value] of Object.entries(valuesOf(op.oldValue))) {
          diff.changedProperties.push({ fieldId: key, oldValue: renderValue(value, definitionOf(metadata.properties, key)), newValue: null });
        }
        break;
      case 'relation-create':
      case 'relation-delete':
        // Edges are not part of a request diff (nor of an open request's).
        break;
      default:
        assertNever(op.type);
    }
  }
  if (fieldOps.size > 0) {
    diff.fields ??= { created: [], updated: [], deleted: [] };
    for (const [fieldId, { first, last }] of fieldOps) {
      const created = first === 'field-create';
      const deleted = last === 'field-delete';
      if (created && !deleted) {
        diff.fields.created.push(fieldId);
      } else if (!created && deleted) {
        diff.fields.deleted.push(fieldId);
      } else if (!created) {
        diff.fields.updated.push(fieldId);
      }
    }
  }
  return diff;
}
