import { dynamicValue } from '../fields/computed.field.js';
import type { FieldDefinition, StoredRowValues, StoredValue, Value, ValueEntry } from '../fields/field.types.js';
import { rowToValueEntries, storedToValue } from '../fields/field-type.registry.js';
import { isPlainObject } from '../fields/field-value.utils.js';
import {
  answeredTarget,
  type ChangeRecord,
  type DocumentMetadata,
  type DocumentRecord,
  type DocumentSettings,
  type OperationRecord,
  type PropertiesRecord,
  type RequestRecord,
  type RevisionRecord,
  type RowRecord,
} from '../domain/document.records.js';
import type { DocumentResponseDto, FieldDto, MetadataResponseDto, SettingsResponseDto } from '../dtos/document.dto.js';
import type { DocumentPropertiesDto } from '../dtos/properties.dto.js';
import type { ChangeDto, RequestResponseDto } from '../dtos/request.dto.js';
import type { ChangeOperationDto, RevisionResponseDto } from '../dtos/revision.dto.js';
import type { RowResponseDto, WriteResultDto } from '../dtos/row.dto.js';
import type { WriteOutcome } from '../services/change-engine.service.js';

function iso(date: Date | string | null | undefined): string | null {
  return date === null || date === undefined ? null : new Date(date).toISOString();
}

/** A stored value as a Value; decoded as its field's type when possible, else by its runtime JSON type. */
export function renderValue(stored: StoredValue | undefined, field: FieldDefinition | undefined): Value | null {
  if (stored === undefined || stored === null) {
    return null;
  }
  if (field) {
    try {
      return storedToValue(stored, field);
    } catch {
      // A value recorded under another definition (history): fall through to the generic form.
    }
  }
  return dynamicValue(stored);
}

/** Stored values keyed by field id as ValueEntry[] (field order first, then unknown ids); null entries kept as null. */
export function renderValues(values: StoredRowValues, fields: readonly FieldDefinition[]): { fieldId: string; value: Value | null }[] {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const known = fields.filter((field) => field.id in values).map((field) => field.id);
  const unknown = Object.keys(values).filter((key) => !byId.has(key));
  return [...known, ...unknown].map((fieldId) => ({ fieldId, value: renderValue(values[fieldId], byId.get(fieldId)) }));
}

export function toDocumentDto(document: DocumentRecord, readOnly: boolean): DocumentResponseDto {
  return {
    id: document.docId,
    docType: document.docType,
    organizationId: document.organizationId,
    workspaceId: document.workspaceId,
    title: document.title,
    version: document.version,
    rowCount: document.rowCount,
    readOnly,
    createdAt: iso(document.createdAt) as string,
    createdBy: document.createdBy,
    updatedAt: iso(document.updatedAt) as string,
    updatedBy: document.updatedBy,
  };
}

/**
 * A field as the API shows it: `required`, `unique` and `defaultValue` always present (spec 2.5 lists them for every
 * field; stored definitions leave them out when false or null).
 */
function toFieldDto(field: FieldDefinition): FieldDto {
  return { ...field, required: field.required === true, unique: field.unique === true, defaultValue: field.defaultValue ?? null } as FieldDto;
}

export function toMetadataDto(metadata: DocumentMetadata, version: number): MetadataResponseDto {
  return { fields: metadata.fields.map(toFieldDto), properties: metadata.properties.map(toFieldDto), version };
}

/**
 * The three sections of spec 2.11 and nothing else: keys outside them, stored before every write path refused them,
 * are not answered, so what GET answers can always be written back.
 */
export function toSettingsDto(settings: DocumentSettings): SettingsResponseDto {
  return { permissions: settings.permissions ?? {}, notifications: settings.notifications ?? {}, workflow: settings.workflow ?? {} };
}

export function toRowDto(row: RowRecord, fields: readonly FieldDefinition[]): RowResponseDto {
  const values: ValueEntry[] = rowToValueEntries(row.values, [...fields], row);
  return {
    id: row.id,
    values,
    version: row.version,
    createdAt: iso(row.createdAt) as string,
    createdBy: row.createdBy,
    updatedAt: iso(row.updatedAt) as string,
    updatedBy: row.updatedBy,
  };
}

export function toWriteResult(outcome: WriteOutcome): WriteResultDto {
  const request = outcome.request;
  return {
    requestId: request?.id ?? null,
    requestStatus: request?.status ?? null,
    revisionId: outcome.merge?.revision.id ?? null,
    merged: outcome.merge !== null,
    pendingApproval: outcome.pendingApproval,
  };
}

export function toPropertiesDto(
  document: DocumentRecord,
  record: PropertiesRecord | null,
  values: StoredRowValues,
  version: number,
  fields: readonly FieldDefinition[],
): DocumentPropertiesDto {
  return {
    id: record?.id ?? document.uuid,
    docId: document.docId,
    docType: document.docType,
    organizationId: document.organizationId,
    workspaceId: document.workspaceId,
    properties: rowToValueEntries(values, [...fields]),
    version,
    createdAt: iso(record?.createdAt ?? document.createdAt) as string,
    updatedAt: iso(record?.updatedAt ?? document.updatedAt) as string,
    updatedBy: record?.updatedBy ?? null,
  };
}

/** Change data for clients: stored values rendered as ValueEntry arrays. */
function renderChangeData(change: ChangeRecord, metadata: DocumentMetadata): Record<string, unknown> {
  const data = change.data as unknown as Record<string, unknown>;
  const fields = change.type.startsWith('property-') ? metadata.properties : metadata.fields;
  if (isPlainObject(data.values) && (change.type.startsWith('row-') || change.type.startsWith('property-'))) {
    const expected = isPlainObject(data.expected) ? { expected: renderValues(data.expected as StoredRowValues, fields) } : {};
    return { ...data, values: renderValues(data.values as StoredRowValues, fields), ...expected };
  }
  return data;
}

export function toChangeDto(change: ChangeRecord, metadata: DocumentMetadata): ChangeDto {
  return {
    id: change.id,
    type: change.type,
    operation: change.operation,
    targetId: change.targetId,
    data: renderChangeData(change, metadata),
    changedAt: iso(change.changedAt) as string,
    changedBy: change.changedBy,
  };
}

/**
 * How many changes (of a request) or operations (of a revision) a representation carries inline, in order: spec 2.9
 * lists `changes` as a field of both, and a request of a 1000-row bulk write holds 1000 of them. One request or
 * revision: the first 1000; each item of a list (and the revisions of a bundle): the first 100. `changeCount` /
 * `operationCount` give the total; GET /revisions/{id}/operations pages through all operations.
 */
export const INLINE_CHANGES = { single: 1000, listed: 100 } as const;

export function toRequestDto(request: RequestRecord, document: DocumentRecord, changes: readonly ChangeRecord[]): RequestResponseDto {
  const dto: RequestResponseDto = {
    id: request.id,
    docType: document.docType,
    docId: document.docId,
    title: request.title,
    description: request.description,
    status: request.status,
    author: request.author,
    reviewers: request.reviewers,
    contributors: request.contributors,
    changes: changes.map((change) => toChangeDto(change, document.metadata)),
    changeCount: request.changeCount,
    generatedRevisionId: request.generatedRevisionId,
    createdAt: iso(request.createdAt) as string,
    updatedAt: iso(request.updatedAt) as string,
    mergedAt: iso(request.mergedAt),
    mergedBy: request.mergedBy,
  };
  return dto;
}

/** Renders the `values` maps inside an operation's old/new value as ValueEntry arrays. */
function renderOperationValue(value: StoredValue | null, op: OperationRecord, metadata: DocumentMetadata): unknown {
  if (!isPlainObject(value)) {
    return value;
  }
  if (op.target.kind === 'row' && isPlainObject(value.values)) {
    return { ...value, values: renderValues(value.values as StoredRowValues, metadata.fields) };
  }
  if (op.target.kind === 'property' && 'value' in value && op.target.fieldId) {
    const field = metadata.properties.find((item) => item.id === op.target.fieldId);
    return { ...value, value: renderValue(value.value as StoredValue, field) };
  }
  if (op.target.kind === 'property' && isPlainObject(value.values)) {
    return { ...value, values: renderValues(value.values as StoredRowValues, metadata.properties) };
  }
  return value;
}

export function toOperationDto(op: OperationRecord, metadata: DocumentMetadata): ChangeOperationDto {
  return {
    id: op.id,
    type: op.type,
    target: answeredTarget(op.target),
    oldValue: renderOperationValue(op.oldValue, op, metadata),
    newValue: renderOperationValue(op.newValue, op, metadata),
    operator: op.operator,
    timestamp: iso(op.timestamp) as string,
    note: op.note,
  };
}

export function toRevisionDto(revision: RevisionRecord, metadata: DocumentMetadata, operations: readonly OperationRecord[]): RevisionResponseDto {
  const dto: RevisionResponseDto = {
    id: revision.id,
    version: revision.version,
    requestId: revision.requestId,
    title: revision.title,
    description: revision.description,
    contributors: revision.contributors,
    mergedBy: revision.mergedBy,
    changes: operations.map((op) => toOperationDto(op, metadata)),
    operationCount: revision.operationCount,
    stats: revision.stats,
    previousRevisionId: revision.previousRevisionId,
    createdAt: iso(revision.createdAt) as string,
    updatedAt: iso(revision.updatedAt) as string,
  };
  return dto;
}
