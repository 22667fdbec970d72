import type { FieldDefinition, StoredRowValues, StoredValue } from '../fields/field.types.js';

/** Metadata as stored in `documents.metadata`. */
export interface DocumentMetadata {
  fields: FieldDefinition[];
  properties: FieldDefinition[];
}

/** Document settings (spec 2.11); unknown keys are kept as given. */
export interface DocumentSettings {
  permissions?: Record<string, unknown>;
  notifications?: Record<string, unknown>;
  workflow?: { requiresApproval?: boolean; approvers?: string[]; autoMerge?: boolean; [key: string]: unknown };
  [key: string]: unknown;
}

/** One `documents` row. */
export interface DocumentRecord {
  uuid: string;
  organizationId: string;
  workspaceId: string | null;
  docType: string;
  docId: string;
  title: string | null;
  metadata: DocumentMetadata;
  metadataVersion: number;
  settings: DocumentSettings;
  version: number;
  rowSeq: number;
  rowCount: number;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
  updatedBy: string | null;
}

/** One `document_rows` row. */
export interface RowRecord {
  id: string;
  seq: string;
  values: StoredRowValues;
  version: number;
  createdAt: Date;
  createdBy: string | null;
  updatedAt: Date;
  updatedBy: string | null;
}

export interface PropertiesRecord {
  id: string;
  documentUuid: string;
  organizationId: string;
  workspaceId: string | null;
  properties: StoredRowValues;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  updatedBy: string | null;
}

export const REQUEST_STATUSES = ['open', 'merged', 'closed'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export interface RequestRecord {
  id: string;
  documentUuid: string;
  organizationId: string;
  workspaceId: string | null;
  title: string;
  description: string | null;
  status: RequestStatus;
  author: string;
  reviewers: string[];
  contributors: string[];
  /** Created by a write without `requestId` (merged at once unless approval is required). */
  implicit: boolean;
  changeCount: number;
  generatedRevisionId: string | null;
  createdAt: Date;
  updatedAt: Date;
  mergedAt: Date | null;
  mergedBy: string | null;
  closedAt: Date | null;
  closedBy: string | null;
}

export const CHANGE_TYPES = [
  'row-create',
  'row-update',
  'row-delete',
  'property-update',
  'property-delete',
  'metadata-update',
  'settings-update',
  'relation-create',
  'relation-delete',
] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];
export const CHANGE_OPERATIONS = ['create', 'update', 'delete'] as const;
export type ChangeOperationKind = (typeof CHANGE_OPERATIONS)[number];

/** Which write produced a change; bulk writes share one id so their merge raises one `data_bulk_operation`. */
export interface ChangeOrigin {
  bulkId?: string;
}

/** `row-create`: the validated stored values of the new row. */
export interface RowCreateData {
  values: StoredRowValues;
  origin?: ChangeOrigin;
}

/**
 * `row-update`: the fields to set (stored values; `null` clears) and the row version the document had when the
 * change was recorded (`null` when the row was created by the same request) — the merge's conflict check.
 */
export interface RowUpdateData {
  values: StoredRowValues;
  baseVersion: number | null;
  /**
   * The change was sent with the row's committed version while the request held it on an older one: the request's
   * base version for the row becomes `baseVersion` (docs/documents.md, "Merge"). Otherwise the first change's stays.
   */
  rebase?: true;
  origin?: ChangeOrigin;
}

export interface RowDeleteData {
  baseVersion: number | null;
  /** As on RowUpdateData. */
  rebase?: true;
  origin?: ChangeOrigin;
}

/** `property-update`: property values to set (`null` clears); `replace` clears the properties not named. */
export interface PropertyUpdateData {
  values: StoredRowValues;
  replace: boolean;
  baseVersion: number;
  /**
   * Sent with the properties' committed version while the request's properties are in conflict (docs/documents.md,
   * "Re-basing"): the request's base becomes `baseVersion`.
   */
  rebase?: true;
  origin?: ChangeOrigin;
  /**
   * A revert's: the values the reverted revision left (`null`: none). The merge refuses a property whose value is
   * another one now (`properties-changed`), as a row changed since is `row-changed`. A later change of the property
   * in the request drops its expectation (the author decided what it becomes).
   */
  expected?: StoredRowValues;
}

export interface PropertyDeleteData {
  baseVersion: number;
  /** As on PropertyUpdateData. */
  rebase?: true;
}

/** `metadata-update`: the complete new metadata and the metadata version it was written against. */
export interface MetadataUpdateData {
  fields: FieldDefinition[];
  properties: FieldDefinition[];
  baseMetadataVersion: number;
  /** Sent with the committed metadata version while the request's metadata is in conflict: the base becomes it. */
  rebase?: true;
}

export interface SettingsUpdateData {
  settings: DocumentSettings;
  /**
   * A revert's: only these entries change, on the settings the merge finds (`settings` is the result on the settings
   * the revert found, for reading the request), and only while each still holds what the reverted revision left
   * (`settings-changed` otherwise). A later settings change in the request replaces the whole as usual.
   */
  revert?: SettingsRevertEntry[];
}

/** One settings entry a revert undoes: `path` (`['permissions', 'view']`) gets `restore` back; absent values are left out. */
export interface SettingsRevertEntry {
  path: string[];
  restore?: unknown;
  /** What the reverted revision left there. */
  expected?: unknown;
}

/** One end of a relation edge: a row of a document (ids as resolved when the change was recorded). */
export interface RelationEnd {
  documentUuid: string;
  docType: string;
  docId: string;
  workspaceId: string | null;
  rowId: string;
}

/** `relation-create` (docs/documents.md, "Relations"): a free-standing edge from a row of this document. */
export interface RelationCreateData {
  type: string;
  direction: RelationDirection;
  sourceRowId: string;
  target: RelationEnd;
  metadata: Record<string, unknown>;
}

/**
 * `relation-delete`: a free-standing edge of this document removed, by id (`targetId`). Only a revert records one
 * (the inverse of a `relation-create`); `sourceRowId` is the row the edge starts at.
 */
export interface RelationDeleteData {
  sourceRowId: string;
}

export const RELATION_DIRECTIONS = ['outgoing', 'bidirectional'] as const;
export type RelationDirection = (typeof RELATION_DIRECTIONS)[number];

export type ChangeData =
  | RowCreateData
  | RowUpdateData
  | RowDeleteData
  | PropertyUpdateData
  | PropertyDeleteData
  | MetadataUpdateData
  | SettingsUpdateData
  | RelationCreateData
  | RelationDeleteData;

/** A change before it is stored. */
export type ChangeDraft =
  | { type: 'row-create'; operation: 'create'; targetId: string; data: RowCreateData }
  | { type: 'row-update'; operation: 'update'; targetId: string; data: RowUpdateData }
  | { type: 'row-delete'; operation: 'delete'; targetId: string; data: RowDeleteData }
  | { type: 'property-update'; operation: 'update'; targetId: string; data: PropertyUpdateData }
  | { type: 'property-delete'; operation: 'delete'; targetId: string; data: PropertyDeleteData }
  | { type: 'metadata-update'; operation: 'update'; targetId: string; data: MetadataUpdateData }
  | { type: 'settings-update'; operation: 'update'; targetId: string; data: SettingsUpdateData }
  | { type: 'relation-create'; operation: 'create'; targetId: string; data: RelationCreateData }
  | { type: 'relation-delete'; operation: 'delete'; targetId: string; data: RelationDeleteData };

/** A stored change (`request_changes` row). */
export type ChangeRecord = ChangeDraft & {
  id: string;
  seq: string;
  changedAt: Date;
  changedBy: string;
};

export const PROPERTIES_TARGET = 'properties';
export const METADATA_TARGET = 'metadata';
export const SETTINGS_TARGET = 'settings';

export const REVISION_OPERATION_TYPES = [
  'row-create',
  'row-update',
  'row-delete',
  'field-create',
  'field-update',
  'field-delete',
  'metadata-update',
  'settings-update',
  'property-update',
  'property-delete',
  'relation-create',
  'relation-delete',
] as const;
export type RevisionOperationType = (typeof REVISION_OPERATION_TYPES)[number];
/**
 * The kinds an operation is stored under. `relation` marks a relation edge's operation, so the history can follow
 * edges on their own (`?targetKind=relation`); answers show it as spec 2.9's `row` (the edge belongs to a row of
 * this document, its `rowId`), see ANSWERED_TARGET_KINDS.
 */
export const TARGET_KINDS = ['row', 'field', 'metadata', 'settings', 'property', 'relation'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];
/** Spec 2.9's target kinds: the only ones an answer shows. */
export const ANSWERED_TARGET_KINDS = ['row', 'field', 'metadata', 'settings', 'property'] as const;

/** An operation's target as answers show it: a relation edge's operation targets its row (spec 2.9's kinds). */
export function answeredTarget(target: OperationTarget): OperationTarget {
  return target.kind === 'relation' ? { ...target, kind: 'row' } : target;
}

/** The stored kinds a history filter by `kind` reads: a row's history includes the edges of that row. */
export function storedKindsOf(kind: string): string[] {
  return kind === 'row' ? ['row', 'relation'] : [kind];
}

export interface OperationTarget {
  kind: TargetKind;
  rowId?: string;
  fieldId?: string;
}

export interface RevisionStats {
  rowsCreated: number;
  rowsUpdated: number;
  rowsDeleted: number;
  fieldsCreated: number;
  fieldsUpdated: number;
  fieldsDeleted: number;
}

export interface RevisionRecord {
  id: string;
  documentUuid: string;
  version: number;
  requestId: string | null;
  title: string | null;
  description: string | null;
  contributors: string[];
  mergedBy: string | null;
  stats: RevisionStats;
  operationCount: number;
  previousRevisionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * One ChangeOperation. `oldValue`/`newValue` hold stored forms: rows `{values, version?, ...}`, fields
 * `{field, values?}` (the snapshot of a deleted or converted field's values, keyed by row id), properties
 * `{value}`, settings and metadata their whole JSON.
 */
export interface OperationRecord {
  id: string;
  revisionId: string;
  ordinal: number;
  type: RevisionOperationType;
  target: OperationTarget;
  oldValue: StoredValue | null;
  newValue: StoredValue | null;
  operator: string | null;
  timestamp: Date;
  note: string | null;
}
