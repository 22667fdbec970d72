import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../../database/transaction-host.js';
import type { FieldDefinition, StoredRowValues, StoredValue } from '../../fields/field.types.js';
import type { DocumentRecord, RowRecord } from '../../domain/document.records.js';
import { isPlainObject } from '../../fields/field-value.utils.js';
import {
  type ComputedPatch,
  ComputedValuesRepository,
  type LinkedValues,
} from '../../repositories/computed-values.repository.js';
import { DocumentRepository } from '../../repositories/document.repository.js';
import type { NewOperation } from '../../repositories/revision.repository.js';
import type { MetadataPlan } from '../merge/metadata-merge.service.js';
import type { RowMergeResult } from '../merge/row-merge.service.js';
import { computedPlan, computeRow, type ComputedPlan } from '../../fields/computed-row.evaluator.js';
import { type Cause, ComputedEventsRecorder } from './computed-events.recorder.js';

const BATCH = 2000;

/** Documents a change may ripple through (lookups of lookups); a longer chain is cut (docs/formulas.md). */
const MAX_DEPTH = 8;

export interface ComputedMergeInput {
  metadata: MetadataPlan | null;
  fields: readonly FieldDefinition[];
  rows: RowMergeResult;
  /** The relation ChangeOperations of the merge: their source rows' lookups follow. */
  relationOps: readonly NewOperation[];
  /**
   * Rows of other documents that lose a reference to a row this merge deleted and record that in a revision of
   * their own, after this one (`MergeService.dropReferencesElsewhere`): that merge recomputes and announces them
   * as committed, so they are left out here (else they were announced twice, first with their lookups recomputed
   * while their relation value still named the deleted row — a state never committed).
   */
  mergedElsewhere?: readonly { documentUuid: string; rowId: string }[];
  mergedBy: string;
}

/**
 * Materialises formulas, lookups and rollups into the rows' stored values (docs/formulas.md), called by the merge
 * in its transaction after rows and relation edges are written:
 * 1. the merged document: the rows the merge wrote (or all rows, in keyset batches, when its metadata changed);
 * 2. every row of any document of the organization whose relation values link to a row whose values changed,
 *    then the rows linking to those, and so on (each row at most once per level, announced once).
 * Only rows whose computed values change are written, in place: no version bump, no request, no revision.
 */
@Injectable()
export class ComputedFieldsService {
  /** Lookup sources known to be in computed_field_sources (this process). */
  private readonly recorded = new Set<string>();

  constructor(
    private readonly values: ComputedValuesRepository,
    private readonly documents: DocumentRepository,
    private readonly tx: TransactionHost,
    private readonly events: ComputedEventsRecorder,
  ) {}

  /** Whether lookups or rollups of any document (this one included) read this document's rows. */
  async isRead(document: DocumentRecord): Promise<boolean> {
    return (await this.values.readers(document.organizationId, document.uuid)).length > 0;
  }

  async afterMerge(document: DocumentRecord, input: ComputedMergeInput): Promise<void> {
    const now = new Date();
    const plan = computedPlan(input.fields);
    const ripple = newRipple();
    const changed: string[] = [...input.rows.created, ...input.rows.updated, ...input.rows.deleted].map(
      (row) => row.id,
    );
    // The fields whose values changed (null: any), so dependents whose lookups read none of them are skipped.
    const changedFields = changedFieldsOf(input);
    ripple.merging = { documentUuid: document.uuid, plan };
    if (
      input.metadata !== null &&
      plan.materialised.length + plan.volatile.length > 0 &&
      needsFullRecompute(input.metadata)
    ) {
      // A loop, not push(...ids): spreading a million ids overflows the call stack.
      for (const id of await this.recomputeAll(document.uuid, plan, now, changedFields)) {
        changed.push(id);
      }
      // The merge's own rows again, on the records its events are built from (recomputeAll worked on copies read
      // from the table): their events carry the new fields' values, and a lookup reaching them again uses these.
      const written = [...input.rows.created, ...input.rows.updated];
      written.forEach((row) => ripple.own.set(`${document.uuid}|${row.id}`, row));
      await this.recompute(document.uuid, plan, written, now, true, changedFields);
    } else if (plan.materialised.length > 0) {
      const written = [...input.rows.created, ...input.rows.updated];
      const selfLinked = sourcesOf(input.relationOps)
        .filter(
          (source) =>
            source.documentUuid === document.uuid && !written.some((row) => row.id === source.rowId),
        )
        .map((source) => source.rowId);
      const extra = await this.values.rowsByIds(document.uuid, selfLinked, true);
      const own = [...written, ...extra];
      own.forEach((row) => ripple.own.set(`${document.uuid}|${row.id}`, row));
      const recomputed = await this.recompute(document.uuid, plan, own, now, false, changedFields);
      for (const row of recomputed) {
        changed.push(row.id);
      }
    }
    for (const id of changed) {
      ripple.merged.add(`${document.uuid}|${id}`);
    }
    // Rows of other documents whose edge to this document was removed (deleted rows) follow as well, unless their
    // own revision takes the reference out (and recomputes them) right after this merge.
    const cause: Cause = { by: input.mergedBy, documentUuid: document.uuid };
    const mergedElsewhere = new Set((input.mergedElsewhere ?? []).map((row) => `${row.documentUuid}|${row.rowId}`));
    const orphaned = new Map<string, Set<string>>();
    for (const source of sourcesOf(input.relationOps)) {
      if (source.documentUuid !== document.uuid && !mergedElsewhere.has(`${source.documentUuid}|${source.rowId}`)) {
        orphaned.set(source.documentUuid, (orphaned.get(source.documentUuid) ?? new Set()).add(source.rowId));
      }
    }
    const frontier: Frontier[] = [
      { documentUuid: document.uuid, rowIds: [...new Set(changed)], fields: changedFields },
    ];
    for (const [documentUuid, rowIds] of orphaned) {
      frontier.push(...(await this.recomputeDependents(documentUuid, [...rowIds], ripple, now, cause, null)));
    }
    await this.followDependents(document.organizationId, frontier, ripple, now, cause);
  }

  /**
   * A document was deleted (in the deleting transaction): lookups and rollups of other documents that read its rows
   * no longer see them (`linkedValues` skips deleted documents), so the linking rows are recomputed now, and what
   * depends on those in turn.
   */
  async afterDocumentDeleted(document: DocumentRecord, deletedBy: string): Promise<void> {
    const now = new Date();
    const ripple = newRipple();
    const frontier: Frontier[] = [];
    const cause: Cause = { by: deletedBy, documentUuid: document.uuid };
    for (const dependent of await this.values.dependentsOfDocument(document.uuid)) {
      if (dependent.documentUuid !== document.uuid) {
        frontier.push(
          ...(await this.recomputeDependents(dependent.documentUuid, dependent.rowIds, ripple, now, cause, {
            relationFieldId: dependent.fieldId,
            fields: null,
          })),
        );
      }
    }
    await this.followDependents(document.organizationId, frontier, ripple, now, cause);
  }

  /**
   * Recomputes, level by level, the rows of other documents whose lookups read the rows of `frontier`, then records
   * the events of every row recomputed (once per row, with its final values).
   */
  private async followDependents(
    organizationId: string,
    start: Frontier[],
    ripple: Ripple,
    now: Date,
    cause: Cause,
  ): Promise<void> {
    let frontier = start;
    const readerDocs = new Map<string, DocumentRecord | null>();
    for (let depth = 0; depth < MAX_DEPTH && frontier.length > 0; depth++) {
      // A row is recomputed at most once per level, but again at a later level: a row reached by two paths of
      // different lengths (x rolls up w and z, z rolls up y, y rolls up w) read z's old value the first time.
      ripple.level.clear();
      const next: Frontier[] = [];
      for (const item of frontier) {
        // Only documents some lookup has read from can have dependents, and only when one of those lookups reads a
        // changed field (one indexed probe, usually empty).
        if (item.rowIds.length === 0 || !(await this.readByAny(organizationId, item, readerDocs))) {
          continue;
        }
        for (const dependent of await this.values.dependents(item.documentUuid, item.rowIds)) {
          next.push(
            ...(await this.recomputeDependents(dependent.documentUuid, dependent.rowIds, ripple, now, cause, {
              relationFieldId: dependent.fieldId,
              fields: item.fields,
            })),
          );
        }
      }
      frontier = next;
    }
    // No lock on the other documents' rows: the realtime stream orders events by their writing transaction and
    // serves them once every older transaction has ended (docs/realtime.md, "Order and resume"), so these events,
    // numbered long before this commits, are never skipped. A share lock on such a row (taken to keep a document's
    // events in id order before the stream was commit-ordered) deadlocked with a write of that document holding one
    // of the rows this transaction then locked (dropping references to deleted rows), and made the row a multixact.
    for (const { document, rows } of ripple.events.values()) {
      await this.events.record(document, [...rows.values()], cause);
    }
  }

  /** Whether a lookup or rollup of some document reads one of the changed fields of `item`'s document. */
  private async readByAny(
    organizationId: string,
    item: Frontier,
    cache: Map<string, DocumentRecord | null>,
  ): Promise<boolean> {
    const readers = await this.values.readers(organizationId, item.documentUuid);
    if (readers.length === 0 || item.fields === null) {
      return readers.length > 0;
    }
    for (const reader of readers) {
      if (!cache.has(reader.documentUuid)) {
        cache.set(reader.documentUuid, await this.documents.findByUuid(reader.documentUuid));
      }
      const reads = (cache.get(reader.documentUuid)?.metadata.fields ?? []).some((field) => {
        const ref =
          field.type === 'lookup' ? field.lookup : field.type === 'rollup' ? field.rollup : undefined;
        return (
          ref?.relationFieldId === reader.relationFieldId && item.fields?.has(ref.targetFieldId) === true
        );
      });
      if (reads) {
        return true;
      }
    }
    return false;
  }

  /**
   * Recomputes rows of another document that link to changed rows; returns the rows whose values changed. Their
   * events wait in `ripple.events` until the ripple ends (followDependents).
   */
  private async recomputeDependents(
    documentUuid: string,
    rowIds: readonly string[],
    ripple: Ripple,
    now: Date,
    cause: Cause,
    via: { relationFieldId: string; fields: Set<string> | null } | null,
  ): Promise<Frontier[]> {
    const fresh = rowIds.filter((id) => !ripple.level.has(`${documentUuid}|${id}`));
    if (fresh.length === 0) {
      return [];
    }
    const target = await this.documents.findByUuid(documentUuid);
    if (!target) {
      return [];
    }
    const plan =
      ripple.merging?.documentUuid === documentUuid
        ? ripple.merging.plan
        : computedPlan(target.metadata.fields);
    // Only lookups and rollups over this relation that read one of the changed fields need the rows.
    const follows =
      via === null ||
      plan.materialised.some((field) => {
        const ref =
          field.type === 'lookup' ? field.lookup : field.type === 'rollup' ? field.rollup : undefined;
        return (
          ref?.relationFieldId === via.relationFieldId &&
          (via.fields === null || via.fields.has(ref.targetFieldId))
        );
      });
    if (plan.materialised.length === 0 || !follows) {
      return [];
    }
    fresh.forEach((id) => ripple.level.add(`${documentUuid}|${id}`));
    if (target.uuid !== cause.documentUuid) {
      // Another document's rows are changed as a rows-only write of it changes them (docs/documents.md, "Locking"):
      // its write lock shared, then its rows; its row is not locked (followDependents). Its write lock taken
      // exclusively, or its row share-locked, this waited for its rows-only writes while they waited for it: they
      // hold rows this recomputes, and take the document row last. Not for the merged
      // document itself (lookups between its own rows): its write holds its locks already.
      if (!ripple.writeLocked.has(documentUuid)) {
        await this.documents.shareWriteLock(documentUuid);
        ripple.writeLocked.add(documentUuid);
      }
    }
    const changed: RowRecord[] = [];
    const fields = new Set<string>();
    for (let i = 0; i < fresh.length; i += BATCH) {
      // The merge's own rows are recomputed in the records its events are built from (a lookup of o1 reading p1's
      // rollup of o1.qty: o1 is reached again through p1); those events announce them, not a computed event.
      const rows = (await this.values.rowsByIds(documentUuid, fresh.slice(i, i + BATCH), true)).map(
        (row) => ripple.own.get(`${documentUuid}|${row.id}`) ?? row,
      );
      changed.push(...(await this.recompute(documentUuid, plan, rows, now, false, fields)));
    }
    const recorded = ripple.events.get(documentUuid) ?? {
      document: target,
      rows: new Map<string, RowRecord>(),
    };
    changed
      .filter((row) => !ripple.merged.has(`${documentUuid}|${row.id}`))
      .forEach((row) => recorded.rows.set(row.id, row));
    ripple.events.set(documentUuid, recorded);
    return changed.length > 0 ? [{ documentUuid, rowIds: changed.map((row) => row.id), fields }] : [];
  }

  private async recomputeAll(
    documentUuid: string,
    plan: ComputedPlan,
    now: Date,
    fields: Set<string> | null,
  ): Promise<string[]> {
    const changed: string[] = [];
    let after = '0';
    for (;;) {
      const rows = await this.values.rowsAfter(documentUuid, after, BATCH);
      if (rows.length === 0) {
        return changed;
      }
      changed.push(
        ...(await this.recompute(documentUuid, plan, rows, now, true, fields)).map((row) => row.id),
      );
      after = rows[rows.length - 1].seq;
    }
  }

  /** The linked rows' values per row and relation field, in reference order, and the documents they came from. */
  private async gatherLinks(
    documentUuid: string,
    plan: ComputedPlan,
    rows: readonly RowRecord[],
  ): Promise<{
    links: Map<string, Map<string, StoredRowValues[]>>;
    sources: Map<string, { relationFieldId: string; targetDocumentUuid: string }>;
  }> {
    const links = new Map<string, Map<string, StoredRowValues[]>>();
    const sources = new Map<string, { relationFieldId: string; targetDocumentUuid: string }>();
    for (let i = 0; i < rows.length; i += BATCH) {
      const linked = await this.values.linkedValues(
        documentUuid,
        rows.slice(i, i + BATCH).map((row) => row.id),
        plan.relationFieldIds,
        plan.targetFieldIds,
      );
      const rowsById = new Map(rows.map((row) => [row.id, row]));
      // Lookups list the linked values in the order of the relation field's references.
      const position = (link: LinkedValues): number => {
        const refs = rowsById.get(link.rowId)?.values[link.fieldId];
        const index = Array.isArray(refs)
          ? refs.findIndex((ref) => isPlainObject(ref) && ref.rowId === link.targetRowId)
          : -1;
        return index < 0 ? Number.MAX_SAFE_INTEGER : index;
      };
      for (const link of [...linked].sort((a, b) => position(a) - position(b))) {
        const key = `${documentUuid}|${link.fieldId}|${link.targetDocumentUuid}`;
        if (!this.recorded.has(key)) {
          sources.set(key, { relationFieldId: link.fieldId, targetDocumentUuid: link.targetDocumentUuid });
        }
        const byField = links.get(link.rowId) ?? new Map<string, StoredRowValues[]>();
        byField.set(link.fieldId, [...(byField.get(link.fieldId) ?? []), link.values]);
        links.set(link.rowId, byField);
      }
    }
    return { links, sources };
  }

  /**
   * Computes the rows' materialised values and writes those that differ; the RowRecords are updated in memory
   * (so the merge's events carry the new values). Returns the rows whose values changed.
   */
  private async recompute(
    documentUuid: string,
    plan: ComputedPlan,
    rows: readonly RowRecord[],
    now: Date,
    dropVolatile = false,
    changedFields: Set<string> | null = null,
  ): Promise<RowRecord[]> {
    if (rows.length === 0 || (plan.materialised.length === 0 && !dropVolatile)) {
      return [];
    }
    const { links, sources } = await this.gatherLinks(documentUuid, plan, rows);
    if (sources.size > 0) {
      await this.values.recordSources(documentUuid, [...sources.values()]);
      // Remembered once committed (a rolled-back merge records nothing).
      this.tx.afterCommit(() => {
        if (this.recorded.size > 100_000) {
          this.recorded.clear();
        }
        sources.forEach((_source, key) => this.recorded.add(key));
      });
    }
    const patches: ComputedPatch[] = [];
    for (const row of rows) {
      const computed = computeRow(plan, row, links.get(row.id) ?? new Map(), now);
      const patch: ComputedPatch = { id: row.id, set: {}, unset: [] };
      for (const [fieldId, value] of Object.entries(computed)) {
        if (!sameValue(row.values[fieldId], value)) {
          if (value === null) {
            patch.unset.push(fieldId);
          } else {
            patch.set[fieldId] = value;
          }
        }
      }
      if (dropVolatile) {
        patch.unset.push(
          ...plan.volatile.map((field) => field.id).filter((id) => row.values[id] !== undefined),
        );
      }
      if (Object.keys(patch.set).length > 0 || patch.unset.length > 0) {
        patches.push(patch);
        [...Object.keys(patch.set), ...patch.unset].forEach((id) => changedFields?.add(id));
        const values = { ...row.values, ...patch.set };
        patch.unset.forEach((id) => delete values[id]);
        row.values = values;
      }
    }
    await this.values.write(documentUuid, patches);
    const changed = new Set(patches.map((patch) => patch.id));
    return rows.filter((row) => changed.has(row.id));
  }
}

const COMPUTED = new Set(['formula', 'lookup', 'rollup']);

/**
 * A metadata change recomputes every row only when it creates or changes a computed field or converts a field's
 * values (a rename or a new plain field leaves computed values as they are).
 */
function needsFullRecompute(metadata: MetadataPlan): boolean {
  return (
    metadata.fields.created.some((field) => COMPUTED.has(field.type)) ||
    metadata.fields.updated.some(
      (update) => update.convert || COMPUTED.has(update.after.type) || COMPUTED.has(update.before.type),
    )
  );
}

/** What one merge's (or document deletion's) recomputation of dependents has visited and must announce. */
interface Ripple {
  /** The merged document and its fields as the merge leaves them (its metadata is written when it commits). */
  merging?: { documentUuid: string; plan: ComputedPlan };
  /** Rows the merge itself wrote or recomputed (`documentUuid|rowId`): the merge's events announce them. */
  merged: Set<string>;
  /** The merge's row records (`documentUuid|rowId`), which its events are built from. */
  own: Map<string, RowRecord>;
  /** Rows recomputed in the current level of followDependents. */
  level: Set<string>;
  /** Recomputed rows per document, their last values, announced once when the ripple ends. */
  events: Map<string, { document: DocumentRecord; rows: Map<string, RowRecord> }>;
  /** Other documents whose write lock this transaction took shared (recomputeDependents). */
  writeLocked: Set<string>;
}

function newRipple(): Ripple {
  return { merged: new Set(), own: new Map(), level: new Set(), events: new Map(), writeLocked: new Set() };
}

interface Frontier {
  documentUuid: string;
  rowIds: string[];
  /** Field ids whose values changed in these rows; null: any (rows created or deleted). */
  fields: Set<string> | null;
}

/** The fields a merge changed in its rows (null when it created or deleted rows: any field). */
function changedFieldsOf(input: ComputedMergeInput): Set<string> | null {
  if (input.rows.created.length > 0 || input.rows.deleted.length > 0 || input.metadata !== null) {
    return null;
  }
  const fields = new Set<string>();
  for (const op of input.rows.operations) {
    for (const side of [op.oldValue, op.newValue]) {
      const values = isPlainObject(side) && isPlainObject(side.values) ? side.values : {};
      Object.keys(values).forEach((id) => fields.add(id));
    }
  }
  return fields;
}

function sameValue(stored: StoredValue | undefined, value: StoredValue): boolean {
  return JSON.stringify(stored ?? null) === JSON.stringify(value);
}

/** Source rows of the edges a merge created or removed. */
function sourcesOf(ops: readonly NewOperation[]): { documentUuid: string; rowId: string }[] {
  const sources: { documentUuid: string; rowId: string }[] = [];
  for (const op of ops) {
    const edge = (
      op.type === 'relation-delete' ? op.oldValue : op.type === 'relation-create' ? op.newValue : null
    ) as {
      fieldId?: string | null;
      source?: { documentUuid?: string; rowId?: string };
    } | null;
    if (edge?.fieldId && edge.source?.documentUuid && edge.source.rowId) {
      sources.push({ documentUuid: edge.source.documentUuid, rowId: edge.source.rowId });
    }
  }
  return sources;
}
