import type { ChangeDraft, DocumentRecord } from '../../documents/domain/document.records.js';
import type { LockTarget } from './lock-targets.js';
import { assertNever } from '../../../common/assert-never.js';

/**
 * What a recorded change touches, for the lock check on writes: cells of a row (`fields` null = the whole row:
 * create without values, delete), a field's definition, or only document-level state (properties, settings,
 * relations), which only a document lock covers.
 */
export type WriteTarget =
  | { kind: 'cells'; rowId: string; fields: string[] | null }
  | { kind: 'field-definition'; fieldId: string }
  | { kind: 'document-level' };

function changedFields(document: DocumentRecord, next: { id: string }[]): string[] {
  const before = new Map(document.metadata.fields.map((field) => [field.id, JSON.stringify(field)]));
  const after = new Map(next.map((field) => [field.id, JSON.stringify(field)]));
  const ids = new Set([...before.keys(), ...after.keys()]);
  return [...ids].filter((id) => before.get(id) !== after.get(id));
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
        return changedFields(document, draft.data.fields).map((fieldId) => ({
          kind: 'field-definition' as const,
          fieldId,
        }));
      case 'property-update':
      case 'property-delete':
      case 'settings-update':
      case 'relation-create':
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
