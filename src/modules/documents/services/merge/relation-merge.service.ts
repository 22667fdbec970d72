import { Injectable } from '@nestjs/common';
import { AppException, type ErrorDetail } from '../../../../common/errors/app.exception.js';
import { applySet, type FoldedChanges } from '../../domain/change-fold.js';
import type { ChangeDraft, DocumentRecord, RelationEnd, RowRecord } from '../../domain/document.records.js';
import type { FieldDefinition, RelationRef, StoredRowValues, StoredValue } from '../../fields/field.types.js';
import { isPlainObject } from '../../fields/field-value.utils.js';
import { DocumentRepository } from '../../repositories/document.repository.js';
import { type NewRelation, type RelationRecord, RelationRepository } from '../../repositories/relation.repository.js';
import type { NewOperation } from '../../repositories/revision.repository.js';
import { RowRepository } from '../../repositories/row.repository.js';
import { DocumentAccessService } from '../document-access.service.js';
import type { DraftScope } from '../draft-scope.js';
import type { MetadataPlan } from './metadata-merge.service.js';
import type { RowMergePlan, RowMergeResult } from './row-merge.service.js';

export interface RelationMergeInput {
  plan: RowMergePlan;
  rows: RowMergeResult;
  fields: readonly FieldDefinition[];
  metadata: MetadataPlan | null;
  relations: FoldedChanges['relations'];
  /** Free-standing edges of this document to remove, by id (a revert's `relation-delete` changes). */
  relationDeletes: FoldedChanges['relationDeletes'];
}

/** A relation field's reference to a row deleted by the merge (its edge is removed already). */
export interface DanglingReference {
  /** The row whose relation field holds the reference. */
  holder: RelationEnd;
  fieldId: string;
  /** The deleted row. */
  target: RelationEnd;
}

export interface RelationMergeResult {
  /** The revision's operations: edges created and removed, and the `row-update` of each row of this document whose relation field lost a reference to a deleted row. */
  operations: NewOperation[];
  /** Those rows of this document, as written (new version). */
  referencing: RowRecord[];
  /** References held by rows of other documents: their documents record the change in a revision of their own (MergeService). */
  elsewhere: DanglingReference[];
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
 * The relation field values of a row without the references to deleted rows: only the fields that change (`null`
 * when no reference is left), as a `row-update` sets them. A reference without docType/docId names a row of the
 * holder's own document.
 */
export function withoutReferences(values: StoredRowValues, references: readonly DanglingReference[]): StoredRowValues {
  const set: StoredRowValues = {};
  for (const fieldId of new Set(references.map((reference) => reference.fieldId))) {
    const gone = references.filter((reference) => reference.fieldId === fieldId);
    const refs = refsOf(values[fieldId]);
    const kept = refs.filter(
      (ref) =>
        !gone.some(
          ({ holder, target }) =>
            (ref.docType ?? holder.docType) === target.docType && (ref.docId ?? holder.docId) === target.docId && ref.rowId === target.rowId,
        ),
    );
    if (kept.length !== refs.length) {
      set[fieldId] = kept.length === 0 ? null : (kept as unknown as StoredValue);
    }
  }
  return set;
}

/**
 * The relation part of a merge (docs/documents.md, "Relations"), run after the rows are written, in the merge's
 * transaction: (1) edges of relation fields deleted or converted go; (2) the edges of each relation field value
 * that changed are made equal to the value (every reference must name an existing row, else VALIDATION_ERROR);
 * (3) free-standing edges of `relation-create` changes are inserted, those of `relation-delete` changes removed; (4) edges from and to deleted rows go, and a
 * reference to a deleted row is taken out of the relation field value that held it: a row of this document as a
 * `row-update` of this revision, a row of another document by a revision of that document (MergeService). Every
 * edge created or removed is a ChangeOperation of the revision.
 */
@Injectable()
export class RelationMergeService {
  constructor(
    private readonly relations: RelationRepository,
    private readonly documents: DocumentRepository,
    private readonly rows: RowRepository,
    private readonly access: DocumentAccessService,
  ) {}

  /**
   * Before rows of `documentUuid` are locked to be deleted: the write locks, shared and in id order, of the other
   * documents whose relation fields name them — taken again, as a rows-only write of theirs, when the references are
   * dropped (MergeService.dropReferencesElsewhere). Taken after the rows, a writer of such a document that locks it
   * first (DocumentRepository.lock) and then points a row at one of them (FOR KEY SHARE) would wait for the rows
   * while the deletion waits for its lock: a deadlock (docs/documents.md, "Locking").
   */
  async shareHolderLocks(documentUuid: string, rowIds: readonly string[]): Promise<void> {
    for (const uuid of await this.relations.referencingDocuments(documentUuid, rowIds)) {
      await this.documents.shareWriteLock(uuid);
    }
  }

  async apply(document: DocumentRecord, input: RelationMergeInput, userId: string): Promise<RelationMergeResult> {
    const ops: NewOperation[] = [];
    const retired = input.metadata
      ? [...input.metadata.fields.deleted.map((field) => field.id), ...input.metadata.fields.updated.filter((update) => update.convert).map((update) => update.after.id)]
      : [];
    for (const edge of await this.relations.deleteForFields(document.uuid, retired)) {
      ops.push(deleteOp(edge, edge.source.rowId, 'relation field removed'));
    }
    ops.push(...(await this.mirrorFieldValues(document, input, userId)));
    ops.push(...(await this.createEdges(document, input.relations, userId)));
    // An edge removed meanwhile (its row deleted) is simply not there: nothing to record.
    for (const edge of await this.relations.deleteFree(document.uuid, input.relationDeletes)) {
      ops.push(deleteOp(edge, edge.source.rowId));
    }
    const removal = await this.removeRowEdges(document, input.rows.deleted, userId);
    ops.push(...removal.operations);
    return { ...removal, operations: ops };
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
    const targets = new Map<string, DocumentRecord>();
    for (const { row, fieldId } of changed) {
      const wanted = new Map<string, { documentUuid: string; rowId: string }>();
      for (const ref of refsOf(row.values[fieldId])) {
        const target = await this.resolve(document, ref);
        if (!target) {
          details.push({ field: fieldId, fieldId, reason: `row ${row.id}: document ${ref.docType ?? document.docType}/${ref.docId ?? document.docId} not found` });
          continue;
        }
        targets.set(target.uuid, target);
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
    // Rows of another document are linked only by a merger who may read it (lookups would show its values), refused
    // as POST /relations refuses its target, and before any of its rows is looked up: whether a row exists there is
    // not told to someone who cannot read it. References the row holds already are not asked again.
    for (const documentUuid of new Set(add.map((edge) => edge.targetDocumentUuid))) {
      const target = targets.get(documentUuid);
      if (target && documentUuid !== document.uuid) {
        await this.access.assertMayRead(target, userId);
      }
    }
    details.push(
      ...(await this.missingRows(
        add.map((edge) => ({
          documentUuid: edge.targetDocumentUuid,
          rowId: edge.targetRowId,
          field: edge.fieldId as string,
          // a value failure names its field and the row holding the reference, as every value failure does
          holder: { fieldId: edge.fieldId as string, rowId: edge.sourceRowId },
        })),
      )),
    );
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
      (await this.unlinked(document, relations)).map((item) => ({
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

  /**
   * The free-standing edges whose rows are not linked yet. An edge that exists already — the same one, or (either
   * being bidirectional) the one from the other end, merged since the request was drafted — is skipped, as the
   * unique index skips an exact duplicate: the link the request asks for is there. The pairs are locked first (in
   * sorted order), so merges of the two documents cannot both create the link.
   */
  private async unlinked(document: DocumentRecord, relations: FoldedChanges['relations']): Promise<FoldedChanges['relations']> {
    const links = relations.map((item) => ({
      item,
      type: item.data.type,
      direction: item.data.direction,
      ends: [`${document.uuid}/${item.data.sourceRowId}`, `${item.data.target.documentUuid}/${item.data.target.rowId}`] as const,
    }));
    const lockKeys = [...new Set(links.map((link) => JSON.stringify([link.type, ...[...link.ends].sort()])))].sort();
    for (const key of lockKeys) {
      const [type, first, second] = JSON.parse(key) as [string, string, string];
      await this.relations.lockPair(document.organizationId, type, [first, second]);
    }
    type Link = (typeof links)[number];
    const sameLink = (a: Link, b: Link): boolean =>
      a.type === b.type &&
      ((a.ends[0] === b.ends[0] && a.ends[1] === b.ends[1]) ||
        (a.ends[0] === b.ends[1] && a.ends[1] === b.ends[0] && (a.direction === 'bidirectional' || b.direction === 'bidirectional')));
    const kept: Link[] = [];
    for (const link of links) {
      const { sourceRowId, target } = link.item.data;
      if (kept.some((other) => sameLink(other, link)) || (await this.relations.findFree(document.uuid, sourceRowId, link.type, target.documentUuid, target.rowId, link.direction))) {
        continue;
      }
      kept.push(link);
    }
    return kept.map((link) => link.item);
  }

  /**
   * Edges from and to deleted rows go. A relation field of another row of this document that named a deleted row
   * loses the reference here, recorded as a `row-update` of that row; references held in other documents are
   * handed back (`elsewhere`).
   */
  private async removeRowEdges(document: DocumentRecord, deleted: readonly RowRecord[], userId: string): Promise<RelationMergeResult> {
    const deletedIds = new Set(deleted.map((row) => row.id));
    const removed = await this.relations.deleteForRows(document.uuid, [...deletedIds]);
    const operations: NewOperation[] = [];
    const here: DanglingReference[] = [];
    const elsewhere: DanglingReference[] = [];
    for (const edge of removed) {
      const fromDeleted = edge.source.documentUuid === document.uuid && deletedIds.has(edge.source.rowId);
      operations.push(deleteOp(edge, fromDeleted ? edge.source.rowId : edge.target.rowId, fromDeleted ? 'source row deleted' : 'target row deleted'));
      if (!fromDeleted && edge.fieldId !== null) {
        const reference = { holder: edge.source, fieldId: edge.fieldId, target: edge.target };
        (edge.source.documentUuid === document.uuid ? here : elsewhere).push(reference);
      }
    }
    const referencing = await this.dropReferencesHere(document, here, userId, operations);
    return { operations, referencing, elsewhere };
  }

  /**
   * Takes the references to deleted rows out of the relation fields of rows of this document that hold them: one
   * new version and one `row-update` operation (old → new value of the fields) per row.
   */
  private async dropReferencesHere(document: DocumentRecord, references: readonly DanglingReference[], userId: string, operations: NewOperation[]): Promise<RowRecord[]> {
    if (references.length === 0) {
      return [];
    }
    const current = await this.rows.findMany(
      document.uuid,
      references.map((reference) => reference.holder.rowId),
      true,
    );
    const updates: { id: string; values: StoredRowValues; old: RowRecord; set: StoredRowValues }[] = [];
    for (const [rowId, row] of current) {
      const set = withoutReferences(
        row.values,
        references.filter((reference) => reference.holder.rowId === rowId),
      );
      if (Object.keys(set).length > 0) {
        updates.push({ id: rowId, values: applySet(row.values, set), old: row, set });
      }
    }
    const written = await this.rows.updateMany(document.uuid, updates, userId);
    const versions = new Map(written.map((row) => [row.id, row.version]));
    for (const { id, old, set } of updates) {
      const oldValues = Object.fromEntries(Object.keys(set).map((fieldId) => [fieldId, old.values[fieldId] ?? null]));
      operations.push({
        type: 'row-update',
        target: { kind: 'row', rowId: id },
        oldValue: { values: oldValues, version: old.version },
        newValue: { values: set, version: versions.get(id) ?? old.version + 1 },
        note: 'reference to a deleted row removed',
      });
    }
    return written;
  }

  /**
   * Takes references to deleted rows out of rows of a deleted document, in place (such a document takes no
   * revision and is never read again; value and edges stay equal all the same).
   */
  async dropInDeletedDocument(references: readonly DanglingReference[], userId: string): Promise<void> {
    for (const reference of references) {
      const values = await this.relations.lockRowValues(reference.holder.documentUuid, reference.holder.rowId);
      const set = values ? withoutReferences(values, [reference]) : {};
      if (reference.fieldId in set) {
        await this.relations.setRowField(reference.holder.documentUuid, reference.holder.rowId, reference.fieldId, set[reference.fieldId] ?? null, userId);
      }
    }
  }

  /**
   * The references a write of relation properties adds (`set`, over the values `before`) must name existing rows,
   * as a relation field's must (docs/documents.md, "Relations"): a missing document or row is VALIDATION_ERROR naming
   * the property as `field` and `fieldId`, and rows of another document are linked only by a user who may read it
   * (403 first, as for a row). References the properties hold already are not asked again. A property has no row, so
   * it has no edges: only the check is shared. `rowsHere` answers which rows of this document exist as the write sees
   * them (a request's draft: a row it creates counts); without it, the committed rows.
   */
  async checkPropertyReferences(
    document: DocumentRecord,
    properties: readonly FieldDefinition[],
    before: StoredRowValues,
    set: StoredRowValues,
    userId: string,
    rowsHere?: (rowIds: string[]) => Promise<Set<string>>,
  ): Promise<void> {
    const details: ErrorDetail[] = [];
    const targets = new Map<string, DocumentRecord>();
    const ends: { documentUuid: string; rowId: string; field: string }[] = [];
    for (const field of properties) {
      if (field.type !== 'relation' || !(field.id in set)) {
        continue;
      }
      const held = new Set(refsOf(before[field.id]).map((ref) => JSON.stringify([ref.docType ?? document.docType, ref.docId ?? document.docId, ref.rowId])));
      for (const ref of refsOf(set[field.id] ?? undefined)) {
        if (held.has(JSON.stringify([ref.docType ?? document.docType, ref.docId ?? document.docId, ref.rowId]))) {
          continue;
        }
        const target = await this.resolve(document, ref);
        if (!target) {
          details.push({ field: field.id, fieldId: field.id, reason: `document ${ref.docType ?? document.docType}/${ref.docId ?? document.docId} not found` });
          continue;
        }
        targets.set(target.uuid, target);
        ends.push({ documentUuid: target.uuid, rowId: ref.rowId, field: field.id });
      }
    }
    for (const target of targets.values()) {
      if (target.uuid !== document.uuid) {
        await this.access.assertMayRead(target, userId);
      }
    }
    const here = ends.filter((end) => end.documentUuid === document.uuid);
    const found = rowsHere && here.length > 0 ? await rowsHere([...new Set(here.map((end) => end.rowId))]) : null;
    const missing = [
      ...(found ? here.filter((end) => !found.has(end.rowId)).map((end) => ({ field: end.field, reason: `row ${end.rowId} does not exist` })) : []),
      ...(await this.missingRows(found ? ends.filter((end) => end.documentUuid !== document.uuid) : ends)),
    ];
    details.push(...missing.map((detail) => ({ ...detail, fieldId: detail.field })));
    if (details.length > 0) {
      throw AppException.validation(details);
    }
  }

  /**
   * `checkPropertyReferences` for a property write being recorded on `scope` (a write merged at once, a bulk write
   * with a property target, a request's change): `before` are the properties as the draft had them before it.
   */
  async checkPropertyChange(scope: DraftScope, before: StoredRowValues, change: ChangeDraft, userId: string): Promise<void> {
    if (change.type !== 'property-update') {
      return;
    }
    const { properties } = await scope.metadata();
    await this.checkPropertyReferences(scope.document, properties, before, change.data.values, userId, async (rowIds) => {
      const states = await scope.rows(rowIds);
      return new Set(rowIds.filter((rowId) => states.get(rowId)?.exists === true));
    });
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

  private async missingRows(
    ends: readonly { documentUuid: string; rowId: string; field: string; holder?: { fieldId: string; rowId: string } }[],
  ): Promise<ErrorDetail[]> {
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
      .map((end) => ({ field: end.field, ...(end.holder ?? {}), reason: `row ${end.rowId} does not exist` }));
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
