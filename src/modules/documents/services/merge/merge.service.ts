import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import { TransactionHost } from '../../../../database/transaction-host.js';
import type { FieldDefinition, StoredRowValues } from '../../fields/field.types.js';
import { parseRowValues } from '../../fields/field-type.registry.js';
import { validationDetailsOf } from '../../fields/field-value.utils.js';
import { applyPropertiesEffect, type FoldedChanges, foldChanges, type PropertiesEffect } from '../../domain/change-fold.js';
import type { ChangeDraft, ChangeRecord, DocumentMetadata, DocumentRecord, RequestRecord, RevisionRecord, RevisionStats, RowRecord } from '../../domain/document.records.js';
import type { ConversionReport, MergeConflict } from '../../domain/merge.types.js';
import { applySettingsRevert, propertyRevertConflicts, settingsRevertConflicts } from '../../domain/settings-revert.js';
import { DocumentRepository } from '../../repositories/document.repository.js';
import { PropertiesRepository } from '../../repositories/properties.repository.js';
import { type MergedAtOnceInsert, RequestRepository } from '../../repositories/request.repository.js';
import { type NewOperation, RevisionRepository } from '../../repositories/revision.repository.js';
import { RowRepository } from '../../repositories/row.repository.js';
import type { NewDomainEvent } from '../../../events/domain-event.js';
import { ComputedFieldsService } from '../computed/computed-fields.service.js';
import { DocumentEventsService } from '../document-events.service.js';
import { DocumentIndexService } from '../document-index.service.js';
import { MetadataChangeListeners } from '../metadata-change-listeners.js';
import { RequestHooks } from '../request-hooks.js';
import { MetadataMergeService, type MetadataPlan } from './metadata-merge.service.js';
import { OperationWriter } from './operation-writer.js';
import { type DanglingReference, RelationMergeService, withoutReferences } from './relation-merge.service.js';
import { RowMergeService, type RowMergePlan, type RowMergeResult } from './row-merge.service.js';
import { canonicalJson } from '../../domain/metadata-diff.js';

export interface MergeResult {
  request: RequestRecord;
  revision: RevisionRecord;
  rows: RowMergeResult;
  conversions: ConversionReport[];
  changesApplied: number;
}

/** What the write that built a merge's changes already did in its transaction. */
export interface MergeWritten {
  /** Rows it read and locked (null: no such row): not read again. */
  lockedRows?: ReadonlyMap<string, RowRecord | null>;
  /**
   * The changes' row values were parsed against the document's fields in this transaction (a write merged at
   * once): without a metadata change in the request they are not parsed again.
   */
  valuesValidated?: boolean;
  /** The request is not written yet (RequestRepository.mergedAtOnceDraft): the revision's statement inserts it. */
  openedRequest?: MergedAtOnceInsert;
}

interface PropertiesPlan {
  effect: PropertiesEffect;
  values: StoredRowValues;
  current: StoredRowValues;
}

interface MergePlan {
  folded: FoldedChanges;
  metadata: MetadataPlan | null;
  fields: FieldDefinition[];
  rows: RowMergePlan;
  properties: PropertiesPlan | null;
  conflicts: MergeConflict[];
}

/**
 * Applies a request to its document: the one path through which any document content changes. Runs inside the
 * caller's transaction after the document row has been locked (`DocumentRepository.lock`), so merges of one
 * document serialize. Folds the changes, detects conflicts (refusing with CONFLICT and the list), re-validates,
 * enforces `unique`, writes the immutable revision with its ChangeOperations, applies the changes, marks the
 * request merged and records the domain events — all in that one transaction.
 */
@Injectable()
export class MergeService {
  constructor(
    private readonly documents: DocumentRepository,
    private readonly requests: RequestRepository,
    private readonly revisions: RevisionRepository,
    private readonly properties: PropertiesRepository,
    private readonly rowMerge: RowMergeService,
    private readonly metadataMerge: MetadataMergeService,
    private readonly events: DocumentEventsService,
    private readonly indexes: DocumentIndexService,
    private readonly tx: TransactionHost,
    private readonly metadataListeners: MetadataChangeListeners,
    private readonly relationMerge: RelationMergeService,
    private readonly requestHooks: RequestHooks,
    private readonly computed: ComputedFieldsService,
    private readonly storedRows: RowRepository,
  ) {}

  /**
   * Before a write locks rows of the document to delete them (DraftScope): the write locks of the documents naming
   * those rows, shared (RelationMergeService.shareHolderLocks).
   */
  shareHolderLocks(documentUuid: string, rowIds: readonly string[]): Promise<void> {
    return this.relationMerge.shareHolderLocks(documentUuid, rowIds);
  }

  /** The conflicts a merge would meet now, without applying anything. */
  async conflicts(document: DocumentRecord, changes: readonly ChangeRecord[]): Promise<MergeConflict[]> {
    return (await this.plan(document, changes, false)).conflicts;
  }

  /**
   * `prelude`: events of the same write to record first, in the same insert as the merge's (request_created).
   * `written`: what the write that built the changes already did in this transaction (see MergeWritten).
   */
  async merge(
    document: DocumentRecord,
    request: RequestRecord,
    changes: readonly ChangeRecord[],
    mergedBy: string,
    prelude: readonly NewDomainEvent[] = [],
    written: MergeWritten = {},
  ): Promise<MergeResult> {
    const plan = await this.plan(document, changes, true, written);
    if (plan.conflicts.length > 0) {
      throw new AppException(ErrorCode.CONFLICT, {
        payload: { requestId: request.id, conflicts: plan.conflicts },
        details: plan.conflicts.map((conflict) => ({ field: conflict.targetId, fieldId: conflict.fieldId, reason: `${conflict.type}: ${conflict.reason}` })),
      });
    }

    const revisionId = randomUUID();
    // Operations are collected while the changes are applied and written with the revision row, last, so its
    // operation count is exact (snapshot operations go in earlier, under the revision id drawn here).
    const ops = new OperationWriter(this.revisions, revisionId, document.uuid, mergedBy);

    let rowSeq = document.rowSeq;
    let conversions: ConversionReport[] = [];
    // Properties are read only by merges that can change them (metadata conversions, property writes).
    const touchesProperties = plan.metadata !== null || plan.properties !== null;
    const storedProperties = plan.properties?.current ?? (touchesProperties ? ((await this.properties.find(document.uuid))?.properties ?? {}) : {});
    let properties = storedProperties;
    if (plan.metadata) {
      const applied = await this.metadataMerge.apply(document, plan.metadata, storedProperties, ops);
      conversions = applied.conversions;
      rowSeq = applied.rowSeq;
      properties = applied.properties ?? properties;
      const retired = [...plan.metadata.fields.deleted.map((field) => field.id), ...plan.metadata.fields.updated.filter((update) => update.convert).map((update) => update.after.id)];
      this.tx.afterCommit(() => this.indexes.forget(document.uuid, retired));
      // Modules holding references to fields (views) follow the change in this transaction.
      await this.metadataListeners.notify({
        document,
        before: document.metadata,
        after: plan.metadata.metadata,
        deletedFieldIds: plan.metadata.fields.deleted.map((field) => field.id),
        updatedFieldIds: plan.metadata.fields.updated.map((update) => update.after.id),
        revisionId,
        mergedBy,
      });
    }
    if (plan.folded.settings) {
      ops.write([{ type: 'settings-update', target: { kind: 'settings' }, oldValue: document.settings as never, newValue: plan.folded.settings as never }]);
    }
    if (plan.properties) {
      const after = applyPropertiesEffect(properties, { ...plan.properties.effect, set: plan.properties.values });
      ops.write(propertyOperations(properties, after));
      properties = after;
    }
    if (touchesProperties && canonicalJson(properties) !== canonicalJson(storedProperties)) {
      await this.properties.update(document.uuid, properties, mergedBy);
    }
    // The row operations are written to `ops` by apply while PostgreSQL runs its statements; so are the inline
    // changes of a request merged at once.
    const rows = await this.rowMerge.apply({ ...document, rowSeq }, plan.rows, plan.fields, mergedBy, ops, () => written.openedRequest?.inlineChanges());
    const relation = await this.relationMerge.apply(document, { plan: plan.rows, rows, fields: plan.fields, metadata: plan.metadata, relations: plan.folded.relations, relationDeletes: plan.folded.relationDeletes }, mergedBy);
    ops.write(relation.operations);
    if (plan.properties) {
      // As a row's relation field is checked when merged: a row the request's property names may have been deleted
      // since the change was written into the request (references the properties already held are not checked).
      const definitions = plan.metadata?.metadata.properties ?? document.metadata.properties;
      await this.relationMerge.checkPropertyReferences(document, definitions, storedProperties, plan.properties.values, mergedBy);
    }
    // Rows of this document that lost a reference to a deleted row are rows this merge updated: their events and
    // computed values follow (the row as last written replaces the one the row merge wrote).
    for (const row of relation.referencing) {
      const at = rows.updated.findIndex((item) => item.id === row.id);
      if (at >= 0) {
        rows.updated[at] = row;
      } else {
        rows.updated.push(row);
      }
    }
    // Formulas, lookups and rollups of this document and of the documents linking to it (docs/formulas.md).
    await this.computed.afterMerge(document, { metadata: plan.metadata, fields: plan.fields, rows, relationOps: relation.operations, mergedElsewhere: relation.elsewhere.map((reference) => reference.holder), mergedBy });

    // The revision is numbered last, in one statement that takes the document row lock until commit and records
    // the merge's events: everything before ran under row locks only (or under the document lock the caller took
    // for writes that need it).
    const stats = statsOf(plan, relation.referencing);
    const events = this.events.mergedStatementEvents(
      document,
      { request, revisionId, mergedBy, stats, rows, conversions, changesApplied: changes.length },
      plan.metadata,
      plan.fields,
      plan.folded,
      prelude,
    );
    const committed = await this.revisions.commit({
      id: revisionId,
      documentUuid: document.uuid,
      organizationId: document.organizationId,
      workspaceId: document.workspaceId,
      requestId: request.id,
      title: request.title,
      description: request.description,
      contributors: request.contributors,
      mergedBy,
      stats,
      operationCount: ops.count,
      operationsJson: ops.pendingJson,
      expectedMetadataVersion: document.metadataVersion,
      rowSeq: rows.rowSeq,
      rowsCreated: rows.created.length,
      rowCountDelta: rows.created.length - rows.deleted.length,
      metadata: plan.metadata?.metadata,
      settings: plan.folded.settings ?? undefined,
      openedRequest: written.openedRequest,
      events,
    });
    if (!committed) {
      throw new AppException(ErrorCode.CONFLICT, {
        payload: { requestId: request.id, conflicts: [{ type: 'metadata-changed', targetId: 'metadata', reason: 'the metadata changed while the write was applied; retry' }] },
        details: [{ field: 'metadata', reason: 'metadata-changed: the metadata changed while the write was applied; retry' }],
      });
    }
    const { revision } = committed;
    const merged: RequestRecord = {
      ...request,
      status: 'merged',
      generatedRevisionId: revisionId,
      mergedAt: committed.requestMergedAt,
      mergedBy,
      createdAt: committed.requestCreatedAt,
      updatedAt: committed.requestUpdatedAt,
    };
    const result: MergeResult = { request: merged, revision, rows, conversions, changesApplied: changes.length };
    if (!request.implicit) {
      // Explicit requests may carry state of other modules (a revert marker, an approval instance).
      await this.requestHooks.notifyMerged({ document, request: merged, revision, mergedBy });
    }
    await this.dropReferencesElsewhere(document, revision, relation.elsewhere, mergedBy);
    return result;
  }

  /**
   * References to rows this merge deleted, held by relation fields of rows of other documents (their edges went
   * with the rows): each such document records taking them out in a revision of its own, in this transaction —
   * a request merged at once, authored by the merger, titled after the revision that deleted the rows, one
   * `row-update` per row (docs/documents.md, "Relations"). It is merged whatever that document's workflow says: a
   * reference to a row that no longer exists cannot wait for an approval. Documents are taken in id order, each as a
   * rows-only write takes its document.
   */
  private async dropReferencesElsewhere(document: DocumentRecord, revision: RevisionRecord, references: readonly DanglingReference[], mergedBy: string): Promise<void> {
    const byDocument = new Map<string, DanglingReference[]>();
    for (const reference of references) {
      const uuid = reference.holder.documentUuid;
      byDocument.set(uuid, [...(byDocument.get(uuid) ?? []), reference]);
    }
    for (const uuid of [...byDocument.keys()].sort()) {
      const held = byDocument.get(uuid) ?? [];
      // A rows-only write of that document (docs/documents.md, "Locking"): its write lock shared, its rows, its row
      // last when the revision is numbered. Its exclusive lock would wait for that document's rows-only writes, one
      // of which may be waiting for a row this transaction deletes (a link to it, held FOR KEY SHARE): a deadlock.
      // Under the shared lock neither its metadata nor its deletion can change before this commits. Usually taken
      // already, before the deleted rows were locked (shareHolderLocks); here only for a document that linked one
      // of them meanwhile.
      await this.documents.shareWriteLock(uuid);
      const holder = await this.documents.findByUuid(uuid);
      if (!holder) {
        await this.relationMerge.dropInDeletedDocument(held, mergedBy);
        continue;
      }
      const current = await this.storedRows.findMany(
        uuid,
        held.map((reference) => reference.holder.rowId),
        true,
      );
      // Several rows: one data_bulk_operation, as a bulk write raises.
      const origin = current.size > 1 ? { origin: { bulkId: randomUUID() } } : {};
      const drafts: ChangeDraft[] = [];
      for (const [rowId, row] of current) {
        const values = withoutReferences(
          row.values,
          held.filter((reference) => reference.holder.rowId === rowId),
        );
        if (Object.keys(values).length > 0) {
          drafts.push({ type: 'row-update', operation: 'update', targetId: rowId, data: { values, baseVersion: row.version, ...origin } });
        }
      }
      if (drafts.length === 0) {
        continue;
      }
      const draft = this.requests.mergedAtOnceDraft(
        {
          documentUuid: uuid,
          organizationId: holder.organizationId,
          workspaceId: holder.workspaceId,
          title: `References to rows deleted by ${document.docType}/${document.docId} revision ${revision.version}`,
          description: null,
          author: mergedBy,
        },
        drafts,
      );
      const created = this.events.requestEvent(holder, 'request_created', draft.request, mergedBy);
      // The values are the rows' own references less the deleted ones: nothing to validate again (a required
      // relation field left empty stays so, as a field made required does not check existing rows).
      await this.merge(holder, draft.request, draft.changes, mergedBy, [created], { lockedRows: current, valuesValidated: true, openedRequest: draft.insert });
    }
  }

  private async plan(
    document: DocumentRecord,
    changes: readonly ChangeRecord[],
    lock: boolean,
    written: MergeWritten = {},
  ): Promise<MergePlan> {
    let folded = foldChanges(changes);
    const conflicts: MergeConflict[] = [];
    if (folded.settingsRevert) {
      // A revert's settings: its entries undone on the settings as they are now, unless changed since.
      conflicts.push(...settingsRevertConflicts(document.settings, folded.settingsRevert));
      folded = { ...folded, settings: applySettingsRevert(document.settings, folded.settingsRevert) };
    }
    const metadata = folded.metadata ? await this.metadataMerge.plan(document, folded.metadata, conflicts) : null;
    const effective: DocumentMetadata = metadata?.metadata ?? document.metadata;
    if (lock) {
      // Rows to delete that the row merge locks now: the documents naming them first (docs/documents.md, "Locking").
      const deleting = [...folded.rows.values()].filter((effect) => effect.kind === 'delete' && !written.lockedRows?.has(effect.rowId)).map((effect) => effect.rowId);
      await this.relationMerge.shareHolderLocks(document.uuid, deleting);
    }
    const rows = await this.rowMerge.plan(document, [...folded.rows.values()], effective.fields, lock, conflicts, {
      lockedRows: written.lockedRows,
      revalidate: !(written.valuesValidated === true && metadata === null),
    });
    let properties: PropertiesPlan | null = null;
    if (folded.properties) {
      const record = await this.properties.find(document.uuid);
      const current = record?.properties ?? {};
      if ((record?.version ?? 0) !== folded.properties.baseVersion) {
        conflicts.push({
          type: 'properties-changed',
          targetId: 'properties',
          baseVersion: folded.properties.baseVersion,
          currentVersion: record?.version ?? 0,
          reason: `the properties were changed since the change was recorded; append a change of the properties with version ${record?.version ?? 0} to re-base them`,
        });
      }
      if (folded.properties.expected) {
        conflicts.push(...propertyRevertConflicts(current, folded.properties.expected));
      }
      try {
        const partial = !folded.properties.replace || folded.properties.cleared === true;
        const values = parseRowValues(folded.properties.set, effective.properties, { partial, applyDefaults: false });
        properties = { effect: folded.properties, values, current };
      } catch (error) {
        const details = validationDetailsOf(error);
        if (!details) {
          throw error;
        }
        conflicts.push({ type: 'invalid-value', targetId: 'properties', reason: 'the property values no longer fit the metadata', details });
      }
    }
    return { folded, metadata, fields: effective.fields, rows, properties, conflicts };
  }
}

/** `referencing`: rows of the document that lost a reference to a deleted row, updated by the merge too. */
function statsOf(plan: MergePlan, referencing: readonly RowRecord[]): RevisionStats {
  const fieldsCreated = (plan.metadata?.fields.created.length ?? 0) + (plan.metadata?.properties.created.length ?? 0);
  const fieldsUpdated = (plan.metadata?.fields.updated.length ?? 0) + (plan.metadata?.properties.updated.length ?? 0);
  const fieldsDeleted = (plan.metadata?.fields.deleted.length ?? 0) + (plan.metadata?.properties.deleted.length ?? 0);
  return {
    rowsCreated: plan.rows.creates.length,
    rowsUpdated: plan.rows.updates.length + referencing.filter((row) => !plan.rows.updates.some((item) => item.id === row.id)).length,
    rowsDeleted: plan.rows.deletes.length,
    fieldsCreated,
    fieldsUpdated,
    fieldsDeleted,
  };
}

/** One `property-update` per property whose value changed (`property-delete` when all are cleared). */
function propertyOperations(before: StoredRowValues, after: StoredRowValues): NewOperation[] {
  const ops: NewOperation[] = [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  if (Object.keys(after).length === 0 && Object.keys(before).length > 1) {
    return [{ type: 'property-delete', target: { kind: 'property' }, oldValue: { values: before }, newValue: null }];
  }
  for (const key of keys) {
    const oldValue = before[key] ?? null;
    const newValue = after[key] ?? null;
    // By content with sorted keys: `jsonb` reorders an object's keys, so a value read back and written again is no change.
    if (canonicalJson(oldValue) !== canonicalJson(newValue)) {
      ops.push({ type: 'property-update', target: { kind: 'property', fieldId: key }, oldValue: { value: oldValue }, newValue: { value: newValue } });
    }
  }
  return ops;
}
