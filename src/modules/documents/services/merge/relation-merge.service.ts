import { Injectable } from '@nestjs/common';
import { AppException, type ErrorDetail } from '../../../../common/errors/app.exception.js';
import type { FoldedChanges } from '../../domain/change-fold.js';
import type { DocumentRecord, RowRecord } from '../../domain/document.records.js';
import type { FieldDefinition, RelationRef, StoredValue } from '../../fields/field.types.js';
import { isPlainObject } from '../../fields/field-value.utils.js';
import { DocumentRepository } from '../../repositories/document.repository.js';
import { type NewRelation, type RelationRecord, RelationRepository } from '../../repositories/relation.repository.js';
import type { NewOperation } from '../../repositories/revision.repository.js';
import type { MetadataPlan } from './metadata-merge.service.js';
import type { RowMergePlan, RowMergeResult } from './row-merge.service.js';

export interface RelationMergeInput {
  plan: RowMergePlan;
  rows: RowMergeResult;
  fields: readonly FieldDefinition[];
  metadata: MetadataPlan | null;
  relations: FoldedChanges['relations'];
}

/** The stored form of an edge in a ChangeOperation (enough to re-create it on a revert). */
export function edgeValue(edge: RelationRecord): StoredValue {
  return {
    id: edge.id,
    type: edge.type,
    direction: edge.direction,
    fieldId: edge.fieldId,
    source: { ...edge.source },
    target: { ...edge.target },
    metadata: edge.metadata as StoredValue,
    createdAt: edge.createdAt.toISOString(),
    createdBy: edge.createdBy,
  };
}

function refsOf(value: StoredValue | undefined): RelationRef[] {
  return (Array.isArray(value) ? value : []).filter((item): item is { [key: string]: StoredValue } => isPlainObject(item) && typeof item.rowId === 'string') as unknown as RelationRef[];
}

/**
 * The relation part of a merge (docs/documents.md, "Relations"), run after the rows are written, in the merge's
 * transaction: (1) edges of relation fields deleted or converted go; (2) the edges of each relation field value
 * that changed are made equal to the value (every reference must name an existing row, else VALIDATION_ERROR);
 * (3) free-standing edges of `relation-create` changes are inserted; (4) edges from and to deleted rows go, and a
 * reference to a deleted row is taken out of the relation field value that held it. Every edge created or removed
 * is a ChangeOperation of the revision.
 */
@Injectable()
export class RelationMergeService {
  constructor(
    private readonly relations: RelationRepository,
    private readonly documents: DocumentRepository,
  ) {}

  async apply(document: DocumentRecord, input: RelationMergeInput, userId: string): Promise<NewOperation[]> {
    const ops: NewOperation[] = [];
    const retired = input.metadata
      ? [...input.metadata.fields.deleted.map((field) => field.id), ...input.metadata.fields.updated.filter((update) => update.convert).map((update) => update.after.id)]
      : [];
    for (const edge of await this.relations.deleteForFields(document.uuid, retired)) {
      ops.push(deleteOp(edge, edge.source.rowId, 'relation field removed'));
    }
    ops.push(...(await this.mirrorFieldValues(document, input, userId)));
    ops.push(...(await this.createEdges(document, input.relations, userId)));
    ops.push(...(await this.removeRowEdges(document, input.rows.deleted, userId)));
    return ops;
  }

  private async mirrorFieldValues(document: DocumentRecord, input: RelationMergeInput, userId: string): Promise<NewOperation[]> {
    const relationFields = input.fields.filter((field) => field.type === 'relation').map((field) => field.id);
    if (relationFields.length === 0) {
      return [];
    }
    const oldValues = new Map(input.plan.updates.map((item) => [item.id, item.old.values]));
    const changed: { row: RowRecord; fieldId: string }[] = [];
    for (const row of [...input.rows.created, ...input.rows.updated]) {
      for (const fieldId of relationFields) {
        const before = oldValues.get(row.id)?.[fieldId] ?? null;
        if (JSON.stringify(before) !== JSON.stringify(row.values[fieldId] ?? null)) {
          changed.push({ row, fieldId });
        }
      }
    }
    if (changed.length === 0) {
      return [];
    }
    const existing = await this.relations.fieldEdges(
      document.uuid,
      changed.map((item) => item.row.id),
    );
    const remove: RelationRecord[] = [];
    const add: NewRelation[] = [];
    const details: ErrorDetail[] = [];
    for (const { row, fieldId } of changed) {
      const wanted = new Map<string, { documentUuid: string; rowId: string }>();
      for (const ref of refsOf(row.values[fieldId])) {
        const target = await this.resolve(document, ref);
        if (!target) {
          details.push({ field: fieldId, fieldId, reason: `row ${row.id}: document ${ref.docType ?? document.docType}/${ref.docId ?? document.docId} not found` });
          continue;
        }
        wanted.set(`${target.uuid}|${ref.rowId}`, { documentUuid: target.uuid, rowId: ref.rowId });
      }
      const have = existing.filter((edge) => edge.source.rowId === row.id && edge.fieldId === fieldId);
      remove.push(...have.filter((edge) => !wanted.has(`${edge.target.documentUuid}|${edge.target.rowId}`)));
      const haveKeys = new Set(have.map((edge) => `${edge.target.documentUuid}|${edge.target.rowId}`));
      for (const [key, target] of wanted) {
        if (!haveKeys.has(key)) {
          add.push({
            organizationId: document.organizationId,
            sourceDocumentUuid: document.uuid,
            sourceRowId: row.id,
            fieldId,
            type: fieldId,
            direction: 'outgoing',
            targetDocumentUuid: target.documentUuid,
            targetRowId: target.rowId,
            metadata: {},
            createdBy: userId,
          });
        }
      }
    }
    details.push(...(await this.missingRows(add.map((edge) => ({ documentUuid: edge.targetDocumentUuid, rowId: edge.targetRowId, field: edge.fieldId as string })))));
    if (details.length > 0) {
      throw AppException.validation(details);
    }
    const ops: NewOperation[] = [];
    for (const edge of await this.relations.deleteByIds(remove.map((edge) => edge.id))) {
      ops.push(deleteOp(edge, edge.source.rowId));
    }
    for (const edge of await this.relations.insertMany(add)) {
      ops.push(createOp(edge));
    }
    return ops;
  }

  private async createEdges(document: DocumentRecord, relations: FoldedChanges['relations'], userId: string): Promise<NewOperation[]> {
    if (relations.length === 0) {
      return [];
    }
    const details: ErrorDetail[] = [
      ...(await this.missingRows(relations.map((item) => ({ documentUuid: document.uuid, rowId: item.data.sourceRowId, field: 'source.rowId' })))),
      ...(await this.missingRows(relations.map((item) => ({ documentUuid: item.data.target.documentUuid, rowId: item.data.target.rowId, field: 'target.rowId' })))),
    ];
    if (details.length > 0) {
      throw AppException.validation(details);
    }
    const created = await this.relations.insertMany(
      relations.map((item) => ({
        id: item.id,
        organizationId: document.organizationId,
        sourceDocumentUuid: document.uuid,
        sourceRowId: item.data.sourceRowId,
        fieldId: null,
        type: item.data.type,
        direction: item.data.direction,
        targetDocumentUuid: item.data.target.documentUuid,
        targetRowId: item.data.target.rowId,
        metadata: item.data.metadata,
        createdBy: userId,
      })),
    );
    return created.map(createOp);
  }

  /** Edges from and to deleted rows go; a relation field elsewhere that referenced a deleted row loses the reference. */
  private async removeRowEdges(document: DocumentRecord, deleted: readonly RowRecord[], userId: string): Promise<NewOperation[]> {
    const deletedIds = new Set(deleted.map((row) => row.id));
    const removed = await this.relations.deleteForRows(document.uuid, [...deletedIds]);
    const ops: NewOperation[] = [];
    for (const edge of removed) {
      const fromDeleted = edge.source.documentUuid === document.uuid && deletedIds.has(edge.source.rowId);
      ops.push(deleteOp(edge, fromDeleted ? edge.source.rowId : edge.target.rowId, fromDeleted ? 'source row deleted' : 'target row deleted'));
      if (!fromDeleted && edge.fieldId !== null) {
        await this.dropReference(edge, document, userId);
      }
    }
    return ops;
  }

  /** Takes the reference to a deleted row out of the relation field value on the edge's source row. */
  private async dropReference(edge: RelationRecord, target: DocumentRecord, userId: string): Promise<void> {
    const fieldId = edge.fieldId as string;
    const values = await this.relations.lockRowValues(edge.source.documentUuid, edge.source.rowId);
    if (!values) {
      return;
    }
    const refs = refsOf(values[fieldId]);
    const kept = refs.filter((ref) => {
      const sameDocument = edge.source.documentUuid === target.uuid;
      const namesTarget = (ref.docType ?? (sameDocument ? target.docType : edge.source.docType)) === target.docType && (ref.docId ?? (sameDocument ? target.docId : edge.source.docId)) === target.docId;
      return !(namesTarget && ref.rowId === edge.target.rowId);
    });
    if (kept.length !== refs.length) {
      await this.relations.setRowField(edge.source.documentUuid, edge.source.rowId, fieldId, kept.length === 0 ? null : (kept as unknown as StoredValue), userId);
    }
  }

  /** A reference's document: the same one without docType/docId, else one of the same workspace or organization level. */
  private async resolve(document: DocumentRecord, ref: RelationRef): Promise<DocumentRecord | null> {
    const docType = ref.docType ?? document.docType;
    const docId = ref.docId ?? document.docId;
    if (docType === document.docType && docId === document.docId) {
      return document;
    }
    const inWorkspace = document.workspaceId ? await this.documents.findInWorkspace(document.workspaceId, docType, docId) : null;
    return inWorkspace ?? (await this.documents.findOrganizationLevel(document.organizationId, docType, docId));
  }

  private async missingRows(ends: readonly { documentUuid: string; rowId: string; field: string }[]): Promise<ErrorDetail[]> {
    const byDocument = new Map<string, string[]>();
    for (const end of ends) {
      byDocument.set(end.documentUuid, [...(byDocument.get(end.documentUuid) ?? []), end.rowId]);
    }
    const found = new Map<string, Set<string>>();
    for (const [documentUuid, rowIds] of byDocument) {
      found.set(documentUuid, await this.relations.existingRows(documentUuid, rowIds));
    }
    return ends
      .filter((end) => !found.get(end.documentUuid)?.has(end.rowId))
      .map((end) => ({ field: end.field, reason: `row ${end.rowId} does not exist` }));
  }
}

function createOp(edge: RelationRecord): NewOperation {
  return {
    type: 'relation-create',
    target: { kind: 'relation', rowId: edge.source.rowId, ...(edge.fieldId ? { fieldId: edge.fieldId } : {}) },
    oldValue: null,
    newValue: edgeValue(edge),
  };
}

function deleteOp(edge: RelationRecord, rowId: string, note?: string): NewOperation {
  return {
    type: 'relation-delete',
    target: { kind: 'relation', rowId, ...(edge.fieldId ? { fieldId: edge.fieldId } : {}) },
    oldValue: edgeValue(edge),
    newValue: null,
    ...(note ? { note } : {}),
  };
}
