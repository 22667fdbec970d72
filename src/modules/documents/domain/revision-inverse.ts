import type { FieldDefinition, StoredRowValues, StoredValue } from '../fields/field.types.js';
import { isComputedFieldType } from '../fields/field-type.registry.js';
import type { ChangeDraft, DocumentMetadata, DocumentSettings, OperationRecord, RelationDirection, RelationEnd, SettingsRevertEntry } from './document.records.js';
import { METADATA_TARGET, PROPERTIES_TARGET, SETTINGS_TARGET } from './document.records.js';
import { applySettingsRevert, combineSettingsChanges, settingsChanges } from './settings-revert.js';

/** What the inverse needs to know about the document now. */
export interface InverseContext {
  documentUuid: string;
  metadata: DocumentMetadata;
  metadataVersion: number;
  propertiesVersion: number;
  settings: DocumentSettings;
  /** Rows that exist now, among those whose field values a revert restores. */
  existingRowIds: ReadonlySet<string>;
}

export interface InverseResult {
  drafts: ChangeDraft[];
  /**
   * Operations that have no inverse change: a free-standing edge created, an edge whose source is another document
   * (a reference a relation field of another document held: that document recorded its removal in a revision of
   * its own), an edge of a relation field whose value the revision did not record.
   */
  skipped: { ordinal: number; type: string; reason: string }[];
}

type Json = { [key: string]: StoredValue };

function obj(value: StoredValue | null | undefined): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

function valuesOf(value: StoredValue | null | undefined): StoredRowValues {
  return obj(obj(value).values) as StoredRowValues;
}

function versionOf(value: StoredValue | null | undefined): number | null {
  const version = obj(value).version;
  return typeof version === 'number' ? version : null;
}

function fieldOf(value: StoredValue | null | undefined): FieldDefinition | null {
  const field = obj(value).field;
  return field && typeof field === 'object' && !Array.isArray(field) && typeof (field as Json).id === 'string' ? (field as unknown as FieldDefinition) : null;
}

function upsert(list: FieldDefinition[], field: FieldDefinition): FieldDefinition[] {
  return list.some((item) => item.id === field.id) ? list.map((item) => (item.id === field.id ? field : item)) : [...list, field];
}

function reorder(list: FieldDefinition[], ids: StoredValue | undefined): FieldDefinition[] {
  if (!Array.isArray(ids)) {
    return list;
  }
  const order = new Map(ids.map((id, index) => [String(id), index]));
  return [...list].sort((a, b) => (order.get(a.id) ?? Number.MAX_SAFE_INTEGER) - (order.get(b.id) ?? Number.MAX_SAFE_INTEGER));
}

/**
 * Whether the inverse of the revision gives a row's relation field its old value back: the revision updated that
 * field of the row, deleted the row (it comes back with its values), or deleted or converted the field (its values
 * come back). Revisions recorded before row deletions recorded the references they took out of other rows lack that.
 */
function fieldValuesRestored(ops: readonly OperationRecord[]): (rowId: string, fieldId: string) => boolean {
  const restored = new Set<string>();
  const rowsBack = new Set<string>();
  for (const op of ops) {
    if (op.type === 'row-update' && op.target.rowId) {
      for (const fieldId of Object.keys(valuesOf(op.oldValue))) {
        restored.add(`${op.target.rowId}|${fieldId}`);
      }
    } else if (op.type === 'row-delete' && op.target.rowId) {
      rowsBack.add(op.target.rowId);
    } else if ((op.type === 'field-delete' || op.type === 'field-update') && op.target.kind !== 'property') {
      const definition = fieldOf(op.oldValue);
      for (const rowId of Object.keys(obj(obj(op.oldValue).values))) {
        restored.add(`${rowId}|${definition?.id ?? op.target.fieldId}`);
      }
    }
  }
  return (rowId, fieldId) => rowsBack.has(rowId) || restored.has(`${rowId}|${fieldId}`);
}

/**
 * The changes that undo a revision (pure logic, unit-tested): its operations taken in reverse order and inverted —
 * a created row is deleted (base version: the version the revision left, so a row changed since is a `row-changed`
 * conflict), an updated row gets its old cells back (same base), a deleted row is created again with its id and
 * values (`row-exists` if the id was taken since), created fields go, deleted and changed fields come back with
 * their definition and their values (for rows that still exist), properties and settings get their old values
 * (only the properties and settings entries the revision changed, expected as it left them: changed since is a
 * `properties-changed` / `settings-changed` conflict),
 * free-standing edges removed from this document's rows are created again. Edges of relation fields follow the
 * restored values in the merge (a removed edge whose field value the revision did not record is `skipped`). Values of computed fields (formulas, lookups, rollups, auto numbers) are not
 * restored, as no write may set them: the merge computes them again for the restored rows and fields (an auto
 * number is drawn anew).
 */
export function inverseOf(ops: readonly OperationRecord[], ctx: InverseContext): InverseResult {
  const rowDrafts: ChangeDraft[] = [];
  const cellRestores = new Map<string, StoredRowValues>();
  const relationDrafts: ChangeDraft[] = [];
  const skipped: InverseResult['skipped'] = [];
  let fields = [...ctx.metadata.fields];
  let properties = [...ctx.metadata.properties];
  let metadataChanged = false;
  const propertySet: StoredRowValues = {};
  // What the revision left in the properties it changed: the merge refuses those changed since (first seen = last left).
  const propertyExpected: StoredRowValues = {};
  const expectProperty = (fieldId: string, value: StoredValue | undefined): void => {
    if (!(fieldId in propertyExpected)) {
      propertyExpected[fieldId] = value ?? null;
    }
  };
  let settingsEntries: SettingsRevertEntry[] = [];

  const restoresField = fieldValuesRestored(ops);

  const restoreCells = (fieldId: string, snapshot: StoredValue | undefined): void => {
    for (const [rowId, value] of Object.entries(obj(snapshot))) {
      if (ctx.existingRowIds.has(rowId)) {
        cellRestores.set(rowId, { ...(cellRestores.get(rowId) ?? {}), [fieldId]: value });
      }
    }
  };

  for (const op of [...ops].reverse()) {
    const rowId = op.target.rowId;
    const fieldId = op.target.fieldId;
    switch (op.type) {
      case 'row-create':
        if (rowId) {
          rowDrafts.push({ type: 'row-delete', operation: 'delete', targetId: rowId, data: { baseVersion: versionOf(op.newValue) } });
        }
        break;
      case 'row-update':
        if (rowId) {
          rowDrafts.push({ type: 'row-update', operation: 'update', targetId: rowId, data: { values: valuesOf(op.oldValue), baseVersion: versionOf(op.newValue) } });
        }
        break;
      case 'row-delete':
        if (rowId) {
          rowDrafts.push({ type: 'row-create', operation: 'create', targetId: rowId, data: { values: valuesOf(op.oldValue) } });
        }
        break;
      case 'field-create':
        if (fieldId) {
          metadataChanged = true;
          if (op.target.kind === 'property') {
            properties = properties.filter((item) => item.id !== fieldId);
          } else {
            fields = fields.filter((item) => item.id !== fieldId);
          }
        }
        break;
      case 'field-update':
      case 'field-delete': {
        // Row fields keep `{field, values}` (values keyed by row id, for deleted or converted fields; a converted
        // field's snapshot operation stores the definition itself as `field`); properties `{field, value}`.
        const old = obj(op.oldValue);
        const definition = fieldOf(op.oldValue) ?? (typeof old.id === 'string' ? (old as unknown as FieldDefinition) : null);
        if (!definition) {
          break;
        }
        metadataChanged = true;
        if (op.target.kind === 'property') {
          properties = upsert(properties, definition);
          if ('value' in old) {
            propertySet[definition.id] = old.value ?? null;
          }
        } else {
          fields = upsert(fields, definition);
          if ('values' in old) {
            restoreCells(definition.id, old.values);
          }
        }
        break;
      }
      case 'metadata-update': {
        const old = obj(op.oldValue);
        fields = reorder(fields, old.fields);
        properties = reorder(properties, old.properties);
        metadataChanged = true;
        break;
      }
      case 'settings-update':
        // Only the entries this operation changed, not the whole settings as they were (later changes stay).
        settingsEntries = combineSettingsChanges(settingsEntries, settingsChanges(op.oldValue, op.newValue));
        break;
      case 'property-update':
        if (fieldId) {
          expectProperty(fieldId, obj(op.newValue).value);
          propertySet[fieldId] = obj(op.oldValue).value ?? null;
        }
        break;
      case 'property-delete':
        for (const id of Object.keys(valuesOf(op.oldValue))) {
          expectProperty(id, null);
        }
        Object.assign(propertySet, valuesOf(op.oldValue));
        break;
      case 'relation-delete': {
        const edge = obj(op.oldValue);
        const source = obj(edge.source) as unknown as RelationEnd;
        if (edge.fieldId !== null && edge.fieldId !== undefined) {
          // A relation field's edges follow its restored value, when the revision recorded the value.
          if (source.documentUuid !== ctx.documentUuid) {
            skipped.push({
              ordinal: op.ordinal,
              type: op.type,
              reason: `the reference was held by row ${source.rowId} of ${source.docType}/${source.docId}: that document recorded its removal in a revision of its own`,
            });
          } else if (!restoresField(source.rowId, String(edge.fieldId))) {
            skipped.push({ ordinal: op.ordinal, type: op.type, reason: `the revision did not record the value of field ${String(edge.fieldId)} of row ${source.rowId} that held the reference` });
          }
          break;
        }
        if (source.documentUuid !== ctx.documentUuid) {
          skipped.push({ ordinal: op.ordinal, type: op.type, reason: 'the edge belongs to another document' });
          break;
        }
        relationDrafts.push({
          type: 'relation-create',
          operation: 'create',
          targetId: typeof edge.id === 'string' ? edge.id : `${source.rowId}`,
          data: {
            type: String(edge.type),
            direction: edge.direction as RelationDirection,
            sourceRowId: source.rowId,
            target: obj(edge.target) as unknown as RelationEnd,
            metadata: obj(edge.metadata),
          },
        });
        break;
      }
      case 'relation-create': {
        // A relation field's edge follows the field's restored value (row operations above).
        if (op.target.fieldId) {
          break;
        }
        const edge = obj(op.newValue);
        const source = obj(edge.source) as unknown as RelationEnd;
        if (source.documentUuid !== ctx.documentUuid || typeof edge.id !== 'string') {
          skipped.push({ ordinal: op.ordinal, type: op.type, reason: 'the edge belongs to another document' });
          break;
        }
        relationDrafts.push({ type: 'relation-delete', operation: 'delete', targetId: edge.id, data: { sourceRowId: source.rowId } });
        break;
      }
      default:
        skipped.push({ ordinal: op.ordinal, type: op.type, reason: 'no inverse' });
    }
  }

  // The fields as the revert leaves them decide which restored values are computed.
  const computed = new Set(fields.filter((field) => isComputedFieldType(field.type)).map((field) => field.id));
  const writable = (values: StoredRowValues): StoredRowValues =>
    computed.size === 0 ? values : Object.fromEntries(Object.entries(values).filter(([fieldId]) => !computed.has(fieldId)));
  const restoredRows = rowDrafts.flatMap((draft): ChangeDraft[] => {
    if (draft.type === 'row-create') {
      return [{ ...draft, data: { ...draft.data, values: writable(draft.data.values) } }];
    }
    if (draft.type === 'row-update') {
      const values = writable(draft.data.values);
      return Object.keys(values).length > 0 ? [{ ...draft, data: { ...draft.data, values } }] : [];
    }
    return [draft];
  });
  for (const [rowId, values] of cellRestores) {
    const kept = writable(values);
    if (Object.keys(kept).length === 0) {
      cellRestores.delete(rowId);
    } else {
      cellRestores.set(rowId, kept);
    }
  }

  const drafts: ChangeDraft[] = [];
  if (metadataChanged) {
    drafts.push({ type: 'metadata-update', operation: 'update', targetId: METADATA_TARGET, data: { fields, properties, baseMetadataVersion: ctx.metadataVersion } });
  }
  if (settingsEntries.length > 0) {
    drafts.push({
      type: 'settings-update',
      operation: 'update',
      targetId: SETTINGS_TARGET,
      data: { settings: applySettingsRevert(ctx.settings, settingsEntries), revert: settingsEntries },
    });
  }
  if (Object.keys(propertySet).length > 0) {
    const expected = Object.keys(propertyExpected).length > 0 ? { expected: propertyExpected } : {};
    drafts.push({ type: 'property-update', operation: 'update', targetId: PROPERTIES_TARGET, data: { values: propertySet, replace: false, baseVersion: ctx.propertiesVersion, ...expected } });
  }
  drafts.push(...restoredRows);
  for (const [rowId, values] of cellRestores) {
    drafts.push({ type: 'row-update', operation: 'update', targetId: rowId, data: { values, baseVersion: null } });
  }
  drafts.push(...relationDrafts);
  return { drafts, skipped };
}
