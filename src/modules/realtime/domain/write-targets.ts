import type { ChangeDraft, DocumentRecord } from '../../documents/domain/document.records.js';
import { diffFields } from '../../documents/domain/metadata-diff.js';
import type { LockTarget } from './lock-targets.js';
import { assertNever } from '../../../common/assert-never.js';

/**
 * What a recorded change touches, for the lock check on writes: cells of a row (`fields` null = the whole row:
 * create without values, delete), a field's definition, a field's cells in every row (deleting it, or retyping it
 * so that its stored values are converted or dropped), or only document-level state (properties, settings,
 * relations), which only a document lock covers.
 */
export type WriteTarget =
  | { kind: 'cells'; rowId: string; fields: string[] | null }
  | { kind: 'field-definition'; fieldId: string }
  | { kind: 'field-cells'; fieldId: string }
  | { kind: 'document-level' };

/** A metadata change as the merge applies it (MetadataMergeService): the same diff, so the same fields. */
function metadataTargets(
  document: DocumentRecord,
  next: ChangeDraft & { type: 'metadata-update' },
): WriteTarget[] {
  const diff = diffFields(document.metadata.fields, next.data.fields);
  const definitions = [
    ...diff.created.map((field) => field.id),
    ...diff.updated.map((update) => update.after.id),
    ...diff.deleted.map((field) => field.id),
  ];
  const cells = [
    ...diff.deleted.map((field) => field.id),
    ...diff.updated.filter((update) => update.convert).map((update) => update.after.id),
  ];
  return [
    ...definitions.map((fieldId) => ({ kind: 'field-definition' as const, fieldId })),
    ...cells.map((fieldId) => ({ kind: 'field-cells' as const, fieldId })),
  ];
}

export function writeTargetsOf(document: DocumentRecord, drafts: ChangeDraft[]): WriteTarget[] {
  return drafts.flatMap((draft): WriteTarget[] => {
    switch (draft.type) {
      case 'row-create':
      case 'row-update':
        return [{ kind: 'cells', rowId: draft.targetId, fields: Object.keys(draft.data.values) }];
      case 'row-delete':
        return [{ kind: 'cells', rowId: draft.targetId, fields: null }];
      case 'metadata-update':
        return metadataTargets(document, draft);
      case 'property-update':
      case 'property-delete':
      case 'settings-update':
      case 'relation-create':
      case 'relation-delete':
        return [{ kind: 'document-level' }];
      default:
        return assertNever(draft);
    }
  });
}

/** True when a lock on `lock` covers (part of) the write. */
export function lockCoversWrite(lock: LockTarget, write: WriteTarget): boolean {
  if (lock.type === 'document') {
    return true;
  }
  switch (write.kind) {
    case 'document-level':
      return false;
    case 'field-definition':
      return lock.type === 'field' && lock.fieldId === write.fieldId;
    case 'field-cells':
      // Every row has a cell of the field: a row lock (all its cells) is in the way, as is a cell or field lock on
      // that field. Which rows hold a value is not known here; an empty locked cell blocks too.
      return lock.type === 'row' || lock.fieldId === write.fieldId;
    case 'cells': {
      const touchesField = (fieldId: string | null): boolean =>
        write.fields === null || (fieldId !== null && write.fields.includes(fieldId));
      if (lock.type === 'row') {
        return lock.rowId === write.rowId;
      }
      if (lock.type === 'cell') {
        return lock.rowId === write.rowId && touchesField(lock.fieldId);
      }
      return touchesField(lock.fieldId);
    }
    default:
      return assertNever(write);
  }
}
