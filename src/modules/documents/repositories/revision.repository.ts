import { Injectable } from '@nestjs/common';
import { prepared } from '../../../database/prepared-statements.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { StoredValue } from '../fields/field.types.js';
import { outboxInsertSql } from '../../events/outbox.service.js';
import type { MergedAtOnceInsert } from './request.repository.js';
import type {
  DocumentMetadata,
  DocumentSettings,
  OperationRecord,
  OperationTarget,
  RevisionOperationType,
  RevisionRecord,
  RevisionStats,
} from '../domain/document.records.js';

interface RevisionRow extends Omit<RevisionRecord, 'version' | 'operationCount'> {
  version: string;
  operationCount: number | string;
}

const COLUMNS = `v.id, v.document_id AS "documentUuid", v.version, v.request_id AS "requestId", v.title, v.description,
  v.contributors, v.merged_by AS "mergedBy", v.stats, v.operation_count AS "operationCount",
  v.previous_revision_id AS "previousRevisionId", v.created_at AS "createdAt", v.updated_at AS "updatedAt"`;

const OPERATION_COLUMNS = `o.id, o.revision_id AS "revisionId", o.ordinal, o.type, o.target, o.old_value AS "oldValue",
  o.new_value AS "newValue", o.operator, o."timestamp", o.note`;

/** A merge's events ($19), stamped with the revision's number and the transaction's time (its `createdAt`). */
const MERGE_EVENTS_INSERT = outboxInsertSql('$19', { from: 'v', revisionVersion: 'v.version', committedAt: 'v."createdAt"' });

function toRecord(row: RevisionRow): RevisionRecord {
  return { ...row, version: Number(row.version), operationCount: Number(row.operationCount), contributors: row.contributors ?? [] };
}

/** An operation about to be written. */
export interface NewOperation {
  type: RevisionOperationType;
  target: OperationTarget;
  oldValue: StoredValue | null;
  newValue: StoredValue | null;
  note?: string | null;
}

/** What `commit` wrote: the revision and the request's times. */
export interface CommittedRevision {
  revision: RevisionRecord;
  requestCreatedAt: Date;
  requestMergedAt: Date;
  requestUpdatedAt: Date;
}

type CommittedRevisionRow = RevisionRow & { requestCreatedAt: Date; requestMergedAt: Date; requestUpdatedAt: Date };

/**
 * An operation as `commit` inserts it: one element of its JSON parameter, an array rather than an object. PostgreSQL
 * parses that parameter byte by byte, and for a 1000-row bulk write the keys of an object per operation were a third
 * of its 400 KB (the statement took 25–32 ms with objects, 21 ms with arrays, in the same session). The target's
 * kind, row and field are read from `target` in SQL.
 */
export type OperationItem = [
  ordinal: number,
  type: RevisionOperationType,
  target: OperationTarget,
  oldValue: StoredValue | null,
  newValue: StoredValue | null,
  note: string | null,
];

/** `ops` numbered from `firstOrdinal`, in the form `commit` inserts. */
export function operationItems(ops: readonly NewOperation[], firstOrdinal: number): OperationItem[] {
  return ops.map((op, index) => [firstOrdinal + index, op.type, op.target, op.oldValue, op.newValue, op.note ?? null]);
}

/**
 * The id of a revision's operation, from the revision's id and the operation's ordinal: the first 12 bytes of the
 * revision id (which carry its version and variant bits, so the result is a version 4 UUID too) followed by the
 * ordinal. A revision's operations thus sit next to each other in the primary key, and a 1000-row bulk write adds
 * them to one or two index pages instead of 1000 random ones; with a random id per operation, that index cost a
 * third of the operations' insert once the history held a million operations (docs/performance.md, "Tenth pass").
 * Unique as long as revision ids differ in their first 96 bits, of which 90 are random.
 */
export function operationIdSql(revisionId: string, ordinal: string): string {
  return `encode(overlay(uuid_send(${revisionId}) placing int4send(${ordinal}) from 13 for 4), 'hex')::uuid`;
}

/** SQL for the append-only `revisions` and `revision_operations`. */
@Injectable()
export class RevisionRepository {
  constructor(private readonly tx: TransactionHost) {}

  async latest(documentUuid: string): Promise<{ id: string; version: number } | null> {
    const rows = await this.tx.manager.query<{ id: string; version: string }[]>(
      `SELECT id, version FROM revisions WHERE document_id = $1 ORDER BY version DESC LIMIT 1`,
      [documentUuid],
    );
    return rows[0] ? { id: rows[0].id, version: Number(rows[0].version) } : null;
  }

  /**
   * Numbers and writes a merge's revision in one statement (docs/performance.md, "Writers"): it takes the document
   * row lock, bumps the document's version and counters (and its metadata or settings, when the merge changed
   * them), inserts the revision linked to the document's previous head and its pending operations, and marks the
   * request merged — or, for a request merged in the transaction that opens it (`openedRequest`), inserts it
   * already merged — and records the merge's events. The lock is held from here to the commit only. Null when the
   * document's metadata is no longer `expectedMetadataVersion` or the document was deleted: nothing is written then.
   *
   * `rowSeq` is the auto-number counter as a merge under the document lock computed it; a merge without the lock
   * passes what it assumed and the counter still advances by at least `rowsCreated`.
   *
   * The predecessor comes out of the UPDATE itself (`previous_revision_id` is set from the head it replaces, on the
   * row version the lock was granted on): a lookup of `version - 1` would use the statement's snapshot, taken
   * before the lock was granted, and miss a predecessor committed since.
   */
  async commit(input: {
    id: string;
    documentUuid: string;
    organizationId: string;
    workspaceId: string | null;
    requestId: string;
    title: string | null;
    description: string | null;
    contributors: string[];
    mergedBy: string;
    stats: RevisionStats;
    operationCount: number;
    /** Operations still to insert (those not written before, see OperationWriter), with the revision: a JSON array of OperationItems. */
    operationsJson: string;
    expectedMetadataVersion: number;
    rowSeq: number;
    rowsCreated: number;
    rowCountDelta: number;
    metadata?: DocumentMetadata;
    settings?: DocumentSettings;
    /** The request is not written yet (RequestRepository.mergedAtOnceDraft): insert it, merged. */
    openedRequest?: MergedAtOnceInsert;
    /** The merge's events (DocumentEventsService.mergedStatementEvents), recorded by this statement. */
    events: string;
  }): Promise<CommittedRevision | null> {
    const opened = input.openedRequest;
    // The request's row: marked merged, or inserted merged ($20–$22: author, inline changes, change count).
    const request = opened
      ? `INSERT INTO requests AS q (id, document_id, organization_id, workspace_id, title, description, author, contributors,
                                    implicit, inline_changes, change_count, status, generated_revision_id, merged_at, merged_by)
         SELECT $5::uuid, $1::uuid, $3::uuid, $4::uuid, $6::text, $7::text, $20::text, $8::text[], true, $21::json,
                $22::integer, 'merged', v.id, now(), $9::text
           FROM v
         RETURNING q.created_at, q.merged_at, q.updated_at`
      : `UPDATE requests AS q SET status = 'merged', generated_revision_id = v.id, merged_at = now(), merged_by = $9, updated_at = now()
           FROM v WHERE q.id = $5
         RETURNING q.created_at, q.merged_at, q.updated_at`;
    const rows = await this.tx.manager.query<CommittedRevisionRow[]>(
      prepared(`WITH doc AS (
         UPDATE documents d SET version = d.version + 1, updated_at = now(), updated_by = $9,
                row_seq = GREATEST(d.row_seq + $13, $14), row_count = d.row_count + $15,
                metadata = COALESCE($16::jsonb, d.metadata),
                metadata_version = d.metadata_version + (CASE WHEN $16::jsonb IS NULL THEN 0 ELSE 1 END),
                settings = COALESCE($17::jsonb, d.settings),
                previous_revision_id = d.last_revision_id,
                last_revision_id = $2
          WHERE d.id = $1 AND d.metadata_version = $12 AND d.deleted_at IS NULL
         RETURNING d.version, d.previous_revision_id AS previous
       ), v AS (
         INSERT INTO revisions AS v (id, document_id, organization_id, workspace_id, version, request_id, title, description,
                                     contributors, merged_by, stats, operation_count, previous_revision_id)
         SELECT $2::uuid, $1::uuid, $3::uuid, $4::uuid, doc.version, $5::uuid, $6::text, $7::text, $8::text[], $9::text,
                $10::jsonb, $11::integer, doc.previous
           FROM doc
         RETURNING ${COLUMNS}
       ), ops AS (
         INSERT INTO revision_operations (id, revision_id, document_id, ordinal, type, target, target_kind, target_row_id,
                                          target_field_id, old_value, new_value, operator, note)
         SELECT ${operationIdSql('$2::uuid', "(o->>0)::integer")}, $2::uuid, $1::uuid, (o->>0)::integer, o->>1, o->2, o->2->>'kind', o->2->>'rowId', o->2->>'fieldId',
                NULLIF(o->3, 'null'::jsonb), NULLIF(o->4, 'null'::jsonb), $9::text, o->>5
           FROM doc, jsonb_array_elements($18::jsonb) AS o
       ), merged AS (
         ${request}
       ), evt AS (
         ${MERGE_EVENTS_INSERT}
       )
       SELECT v.*, merged.created_at AS "requestCreatedAt", merged.merged_at AS "requestMergedAt", merged.updated_at AS "requestUpdatedAt"
         FROM v LEFT JOIN merged ON true`),
      [
        input.documentUuid,
        input.id,
        input.organizationId,
        input.workspaceId,
        input.requestId,
        input.title,
        input.description,
        input.contributors,
        input.mergedBy,
        JSON.stringify(input.stats),
        input.operationCount,
        input.expectedMetadataVersion,
        input.rowsCreated,
        input.rowSeq,
        input.rowCountDelta,
        input.metadata ? JSON.stringify(input.metadata) : null,
        input.settings ? JSON.stringify(input.settings) : null,
        input.operationsJson,
        input.events,
        ...(opened ? [opened.author, opened.inlineChanges(), opened.changeCount] : []),
      ],
    );
    const row = rows[0];
    if (!row) {
      return null;
    }
    const { requestCreatedAt, requestMergedAt, requestUpdatedAt, ...revision } = row;
    return { revision: toRecord(revision), requestCreatedAt, requestMergedAt, requestUpdatedAt };
  }

  /**
   * Appends an operation whose old value is `{field, values}`: the definition given plus the values snapshot taken
   * by FieldValuesRepository.snapshot() in this transaction (never passing the values through Node).
   */
  async insertSnapshotOperation(
    revisionId: string,
    documentUuid: string,
    operator: string,
    ordinal: number,
    op: NewOperation & { snapshotFieldId: string },
  ): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO revision_operations (id, revision_id, document_id, ordinal, type, target, target_kind, target_row_id, target_field_id,
                                        old_value, new_value, operator, note)
       SELECT ${operationIdSql('$1::uuid', '$3::integer')}, $1, $2, $3, $4, $5::jsonb, $6, NULL, $7,
              jsonb_build_object('field', $8::jsonb, 'values', COALESCE((SELECT s.v FROM quire_field_snapshots s WHERE s.k = $7), '{}'::jsonb)),
              $9::jsonb, $10, $11`,
      [
        revisionId,
        documentUuid,
        ordinal,
        op.type,
        JSON.stringify(op.target),
        op.target.kind,
        op.snapshotFieldId,
        JSON.stringify(op.oldValue),
        JSON.stringify(op.newValue),
        operator,
        op.note ?? null,
      ],
    );
  }

  async list(documentUuid: string, paging: { limit: number; offset: number }): Promise<{ items: RevisionRecord[]; total: number }> {
    const [items, count] = await Promise.all([
      this.tx.manager.query<RevisionRow[]>(`SELECT ${COLUMNS} FROM revisions v WHERE v.document_id = $1 ORDER BY v.version DESC LIMIT $2 OFFSET $3`, [
        documentUuid,
        paging.limit,
        paging.offset,
      ]),
      this.tx.manager.query<{ total: string }[]>(`SELECT count(*) AS total FROM revisions WHERE document_id = $1`, [documentUuid]),
    ]);
    return { items: items.map(toRecord), total: Number(count[0]?.total ?? 0) };
  }

  /** Revisions with a version above `afterVersion`, oldest first (GET /catalogs/{id}/revisions?since=). */
  async listAfter(documentUuid: string, afterVersion: number, paging: { limit: number; offset: number }): Promise<{ items: RevisionRecord[]; total: number }> {
    const [items, count] = await Promise.all([
      this.tx.manager.query<RevisionRow[]>(`SELECT ${COLUMNS} FROM revisions v WHERE v.document_id = $1 AND v.version > $2 ORDER BY v.version LIMIT $3 OFFSET $4`, [
        documentUuid,
        afterVersion,
        paging.limit,
        paging.offset,
      ]),
      this.tx.manager.query<{ total: string }[]>(`SELECT count(*) AS total FROM revisions WHERE document_id = $1 AND version > $2`, [documentUuid, afterVersion]),
    ]);
    return { items: items.map(toRecord), total: Number(count[0]?.total ?? 0) };
  }

  async find(documentUuid: string, revisionId: string): Promise<RevisionRecord | null> {
    const rows = await this.tx.manager.query<RevisionRow[]>(`SELECT ${COLUMNS} FROM revisions v WHERE v.id = $1 AND v.document_id = $2`, [
      revisionId,
      documentUuid,
    ]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async operations(revisionId: string, paging: { limit: number; offset: number }): Promise<OperationRecord[]> {
    return this.tx.manager.query<OperationRecord[]>(
      `SELECT ${OPERATION_COLUMNS} FROM revision_operations o WHERE o.revision_id = $1 ORDER BY o.ordinal LIMIT $2 OFFSET $3`,
      [revisionId, paging.limit, paging.offset],
    );
  }

  /** The first `limit` operations of each revision, in order: one statement for a page of revisions. */
  async firstOperationsOf(revisionIds: readonly string[], limit: number): Promise<Map<string, OperationRecord[]>> {
    const result = new Map(revisionIds.map((id) => [id, [] as OperationRecord[]]));
    if (revisionIds.length === 0) {
      return result;
    }
    const rows = await this.tx.manager.query<OperationRecord[]>(
      `SELECT ${OPERATION_COLUMNS}
         FROM unnest($1::uuid[]) AS v(id)
        CROSS JOIN LATERAL (SELECT * FROM revision_operations o WHERE o.revision_id = v.id ORDER BY o.ordinal LIMIT $2) o
        ORDER BY o.revision_id, o.ordinal`,
      [[...revisionIds], limit],
    );
    for (const operation of rows) {
      result.get(operation.revisionId)?.push(operation);
    }
    return result;
  }

  /** Operations on one kind of target of a document (newest first), e.g. the history of the properties. */
  async history(
    documentUuid: string,
    filter: { kind: string; rowId?: string },
    paging: { limit: number; offset: number },
  ): Promise<{ items: (OperationRecord & { revisionVersion: number })[]; total: number }> {
    const where = `o.document_id = $1 AND o.target_kind = $2 AND ($3::text IS NULL OR o.target_row_id = $3)`;
    const params = [documentUuid, filter.kind, filter.rowId ?? null];
    const [items, count] = await Promise.all([
      this.tx.manager.query<(OperationRecord & { revisionVersion: string })[]>(
        `SELECT ${OPERATION_COLUMNS}, v.version AS "revisionVersion" FROM revision_operations o JOIN revisions v ON v.id = o.revision_id
          WHERE ${where} ORDER BY v.version DESC, o.ordinal LIMIT $4 OFFSET $5`,
        [...params, paging.limit, paging.offset],
      ),
      this.tx.manager.query<{ total: string }[]>(`SELECT count(*) AS total FROM revision_operations o WHERE ${where}`, params),
    ]);
    return { items: items.map((item) => ({ ...item, revisionVersion: Number(item.revisionVersion) })), total: Number(count[0]?.total ?? 0) };
  }
}
