import type { ErrorDetail } from '../../../common/errors/app.exception.js';
import type { StoredValue } from '../fields/field.types.js';

export const CONFLICT_TYPES = [
  'row-changed',
  'row-deleted',
  'row-exists',
  'unique-taken',
  'unique-duplicate',
  'invalid-value',
  'properties-changed',
  'metadata-changed',
  'settings-changed',
  'existing-duplicates',
  'field-read-elsewhere',
] as const;
export type ConflictType = (typeof CONFLICT_TYPES)[number];

/** Why a request cannot be merged as recorded. */
export interface MergeConflict {
  type: ConflictType;
  /** Row id, `properties`, `metadata` or a field id. */
  targetId: string;
  rowId?: string;
  fieldId?: string;
  baseVersion?: number | null;
  currentVersion?: number;
  value?: StoredValue;
  reason: string;
  details?: ErrorDetail[];
}

/** What a type change or option removal did to a field's stored values. */
export interface ConversionReport {
  fieldId: string;
  scope: 'fields' | 'properties';
  fromType: string;
  toType: string;
  converted: number;
  /** Values that could not be carried over and were removed (kept in the revision). */
  failed: number;
  failedRowIds: string[];
}
