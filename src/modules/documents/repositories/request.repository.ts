import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { prepared } from '../../../database/prepared-statements.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { ChangeDraft, ChangeRecord, RequestRecord, RequestStatus } from '../domain/document.records.js';

interface RequestRow extends Omit<RequestRecord, 'changeCount'> {
  changeCount: number | string;
}

const COLUMNS = `q.id, q.document_id AS "documentUuid", q.organization_id AS "organizationId", q.workspace_id AS "workspaceId",
  q.title, q.description, q.status, q.author, q.reviewers, q.contributors, q.implicit, q.change_count AS "changeCount",
  q.generated_revision_id AS "generatedRevisionId", q.created_at AS "createdAt", q.updated_at AS "updatedAt",
  q.merged_at AS "mergedAt", q.merged_by AS "mergedBy", q.closed_at AS "closedAt", q.closed_by AS "closedBy"`;

function toRecord(row: RequestRow): RequestRecord {
  return { ...row, changeCount: Number(row.changeCount), reviewers: row.reviewers ?? [], contributors: row.contributors ?? [] };
}

const CHANGE_COLUMNS = `c.id, c.seq::text AS seq, c.type, c.operation, c.target_id AS "targetId", c.data,
  c.changed_at AS "changedAt", c.changed_by AS "changedBy"`;

/**
 * What an insert of changes hands back: per change, in recording order, its id, seq and time, as one JSON array
 * (`[[id, seq, changedAt], …]`). The rest of each record is the draft the caller already holds: sending every
 * change's data back, as `RETURNING` of whole rows did, cost a bulk write of 1000 rows about a third of its time.
 */
const STORED_CHANGES = `(SELECT json_agg(json_build_array(c.id, c.seq::text, c.changed_at) ORDER BY c.seq) FROM c)`;

type StoredChange = [id: string, seq: string, changedAt: string];

/** What the revision's statement needs to insert a request merged at once (see mergedAtOnceDraft). */
export interface MergedAtOnceInsert {
  author: string;
  /**
   * The changes, as the JSON array stored in `inline_changes`: written when first asked for, which a merge does
   * while PostgreSQL runs its row statements (MergeService.merge), off the write's critical path.
   */
  inlineChanges(): string;
  changeCount: number;
}

/** The stored changes as records: the drafts (in recording order, which `seq` follows) with what the insert assigned. */
function storedChanges(drafts: readonly ChangeDraft[], stored: StoredChange[] | null, changedBy: string): ChangeRecord[] {
  return (stored ?? []).map(([id, seq, changedAt], i) => changeRecord(drafts[i], id, seq, new Date(changedAt), changedBy));
}

/**
 * A draft with what storing it assigned. Built field by field (a draft has exactly these four): a bulk write makes
 * 1,000 of these, and on V8 spreading the draft into a literal with more keys costs about ten times as much.
 */
export function changeRecord(draft: ChangeDraft, id: string, seq: string, changedAt: Date, changedBy: string): ChangeRecord {
  return { type: draft.type, operation: draft.operation, targetId: draft.targetId, data: draft.data, id, seq, changedAt, changedBy } as ChangeRecord;
}

/** Changes as the `jsonb_to_recordset` input of the inserts below, in recording order (`ord`). */
function changesJson(changes: readonly ChangeDraft[]): string {
  return JSON.stringify(changes.map((change, ord) => ({ type: change.type, operation: change.operation, target_id: change.targetId, data: change.data, ord })));
}

/**
 * SQL for `requests` and their changes (`request_changes` rows, or `inline_changes` for a request merged at once;
 * read through `request_change_items`). Lookups name the document the request belongs to.
 */
@Injectable()
export class RequestRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * A request merged in the transaction that opens it (a write without `requestId`), not written yet: the merge
   * inserts it, already merged, in the statement that numbers its revision (RevisionRepository.commit), one round
   * trip less per write. Such a request never takes another change, so its changes are kept as one JSON value on
   * the request (`inline_changes`), with ids drawn here and `seq` their position, instead of one `request_changes`
   * row each (docs/performance.md, "Sixth pass"); readers see both forms through `request_change_items`.
   *
   * The times are the transaction's (`now()`), known once the insert ran: `createdAt`, `updatedAt` and the changes'
   * `changedAt` are provisional until the merge sets them from what the commit returned (MergeService.merge).
   */
  mergedAtOnceDraft(
    input: { documentUuid: string; organizationId: string; workspaceId: string | null; title: string; description: string | null; author: string },
    changes: readonly ChangeDraft[],
  ): { request: RequestRecord; changes: ChangeRecord[]; insert: MergedAtOnceInsert } {
    const now = new Date();
    const records = changes.map((change, i) => changeRecord(change, randomUUID(), String(i + 1), now, input.author));
    const request: RequestRecord = {
      id: randomUUID(),
      documentUuid: input.documentUuid,
      organizationId: input.organizationId,
      workspaceId: input.workspaceId,
      title: input.title,
      description: input.description,
      status: 'open',
      author: input.author,
      reviewers: [],
      contributors: [input.author],
      implicit: true,
      changeCount: changes.length,
      generatedRevisionId: null,
      createdAt: now,
      updatedAt: now,
      mergedAt: null,
      mergedBy: null,
      closedAt: null,
      closedBy: null,
    };
    let json: string | undefined;
    const inlineChanges = (): string =>
      (json ??= JSON.stringify(records.map(({ id, type, operation, targetId, data }) => ({ id, type, operation, targetId, data }))));
    return { request, changes: records, insert: { author: input.author, inlineChanges, changeCount: changes.length } };
  }

  /**
   * Opens a request that stays open (explicit, or waiting for approval) holding its first changes, in one
   * statement. The author is the writer: the first contributor and the changes' `changedBy`. Null when the
   * document is gone.
   */
  async createWithChanges(
    input: {
      documentUuid: string;
      organizationId: string;
      workspaceId: string | null;
      title: string;
      description: string | null;
      author: string;
      reviewers: string[];
      implicit: boolean;
    },
    changes: readonly ChangeDraft[],
  ): Promise<{ request: RequestRecord; changes: ChangeRecord[] } | null> {
    const request = [
      input.documentUuid,
      input.organizationId,
      input.workspaceId,
      input.title,
      input.description,
      input.author,
      input.reviewers,
      input.implicit,
    ];
    // The document row is locked FOR KEY SHARE, as a foreign key would (migration 1732241300000): a document
    // deleted meanwhile yields no row. A request merged at once needs no such lock: the statement inserting it
    // updates the document row and finds none for a deleted document.
    const rows = await this.tx.manager.query<Array<RequestRow & { changes: StoredChange[] | null }>>(
      prepared(`WITH doc AS (
         SELECT d.id FROM documents d WHERE d.id = $1 FOR KEY SHARE
       ), q AS (
         INSERT INTO requests AS q (document_id, organization_id, workspace_id, title, description, author, reviewers, contributors, implicit, change_count)
         SELECT doc.id, $2, $3, $4, $5, $6, $7::text[], ARRAY[$6]::text[], $8, $10 FROM doc
         RETURNING ${COLUMNS}
       ), c AS (
         INSERT INTO request_changes AS c (request_id, type, operation, target_id, data, changed_by)
         SELECT q.id, d.type, d.operation, d.target_id, d.data, $6
           FROM q, jsonb_to_recordset($9::jsonb) AS d(type text, operation text, target_id text, data jsonb, ord integer)
          ORDER BY d.ord
         RETURNING c.id, c.seq, c.changed_at
       )
       SELECT q.*, ${STORED_CHANGES} AS changes FROM q`),
      [...request, changesJson(changes), changes.length],
    );
    if (!rows[0]) {
      return null;
    }
    const { changes: stored, ...created } = rows[0];
    return { request: toRecord(created), changes: storedChanges(changes, stored, input.author) };
  }

  async find(documentUuid: string, requestId: string, lock = false): Promise<RequestRecord | null> {
    const rows = await this.tx.manager.query<RequestRow[]>(
      prepared(`SELECT ${COLUMNS} FROM requests q WHERE q.id = $1 AND q.document_id = $2 ${lock ? 'FOR UPDATE' : ''}`),
      [requestId, documentUuid],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(
    documentUuid: string,
    status: RequestStatus | undefined,
    paging: { limit: number; offset: number },
  ): Promise<{ items: RequestRecord[]; total: number }> {
    const [items, count] = await Promise.all([
      this.tx.manager.query<RequestRow[]>(
        `SELECT ${COLUMNS} FROM requests q WHERE q.document_id = $1 AND ($2::text IS NULL OR q.status = $2)
          ORDER BY q.created_at DESC, q.id DESC LIMIT $3 OFFSET $4`,
        [documentUuid, status ?? null, paging.limit, paging.offset],
      ),
      this.tx.manager.query<{ total: string }[]>(
        `SELECT count(*) AS total FROM requests WHERE document_id = $1 AND ($2::text IS NULL OR status = $2)`,
        [documentUuid, status ?? null],
      ),
    ]);
    return { items: items.map(toRecord), total: Number(count[0]?.total ?? 0) };
  }

  /** Appends changes in order and records the writer as a contributor. */
  async appendChanges(requestId: string, changes: readonly ChangeDraft[], userId: string): Promise<ChangeRecord[]> {
    if (changes.length === 0) {
      return [];
    }
    // One statement: the changes and the request's counters (one round trip per write, whatever the request's size).
    const rows = await this.tx.manager.query<Array<{ changes: StoredChange[] | null }>>(
      prepared(`WITH counted AS (
         UPDATE requests SET change_count = change_count + $4, updated_at = now(),
                contributors = CASE WHEN $3 = ANY(contributors) THEN contributors ELSE array_append(contributors, $3) END
          WHERE id = $1
       ), c AS (
         INSERT INTO request_changes AS c (request_id, type, operation, target_id, data, changed_by)
         SELECT $1, d.type, d.operation, d.target_id, d.data, $3
           FROM jsonb_to_recordset($2::jsonb) AS d(type text, operation text, target_id text, data jsonb, ord integer)
          ORDER BY d.ord
         RETURNING c.id, c.seq, c.changed_at
       )
       SELECT ${STORED_CHANGES} AS changes`),
      [
        requestId,
        changesJson(changes),
        userId,
        changes.length,
      ],
    );
    return storedChanges(changes, rows[0]?.changes ?? null, userId);
  }

  /** The request's changes in recording order; `targetIds` narrows to some targets. */
  async changes(requestId: string, opts: { targetIds?: readonly string[]; limit?: number } = {}): Promise<ChangeRecord[]> {
    return this.tx.manager.query<ChangeRecord[]>(
      `SELECT ${CHANGE_COLUMNS} FROM request_change_items c
        WHERE c.request_id = $1 AND ($2::text[] IS NULL OR c.target_id = ANY($2::text[]))
        ORDER BY c.seq LIMIT $3`,
      [requestId, opts.targetIds ? [...opts.targetIds] : null, opts.limit ?? null],
    );
  }

  /**
   * Rows a request's row creates and updates gave one of `candidates` (a unique field's value), but the rows in
   * `excludeRowIds`: the rows whose draft may hold the value (DraftScope.checkUnique folds them to be sure).
   */
  async rowsGivingValues(
    requestId: string,
    candidates: readonly { fieldId: string; value: unknown }[],
    excludeRowIds: readonly string[],
  ): Promise<string[]> {
    if (candidates.length === 0) {
      return [];
    }
    const rows = await this.tx.manager.query<{ rowId: string }[]>(
      `SELECT DISTINCT c.target_id AS "rowId"
         FROM request_changes c
         JOIN jsonb_to_recordset($2::jsonb) AS v(k text, v jsonb) ON c.data -> 'values' -> v.k = v.v
        WHERE c.request_id = $1 AND c.type IN ('row-create', 'row-update') AND NOT (c.target_id = ANY($3::text[]))
        LIMIT 100`,
      [requestId, JSON.stringify(candidates.map((candidate) => ({ k: candidate.fieldId, v: candidate.value }))), [...excludeRowIds]],
    );
    return rows.map((row) => row.rowId);
  }

  /** The first `limit` changes of each request, in recording order: one statement for a page of requests. */
  async firstChangesOf(requestIds: readonly string[], limit: number): Promise<Map<string, ChangeRecord[]>> {
    const result = new Map(requestIds.map((id) => [id, [] as ChangeRecord[]]));
    if (requestIds.length === 0) {
      return result;
    }
    const rows = await this.tx.manager.query<Array<ChangeRecord & { requestId: string }>>(
      `SELECT r.id AS "requestId", ${CHANGE_COLUMNS}
         FROM unnest($1::uuid[]) AS r(id)
        CROSS JOIN LATERAL (SELECT * FROM request_change_items c WHERE c.request_id = r.id ORDER BY c.seq LIMIT $2) c
        ORDER BY c.request_id, c.seq`,
      [[...requestIds], limit],
    );
    for (const { requestId, ...change } of rows) {
      result.get(requestId)?.push(change);
    }
    return result;
  }

  async setStatus(requestId: string, status: 'open' | 'closed', userId: string): Promise<RequestRecord> {
    const [rows] = await this.tx.manager.query<[RequestRow[], number]>(
      `UPDATE requests AS q SET status = $2, updated_at = now(),
              closed_at = CASE WHEN $2 = 'closed' THEN now() ELSE NULL END,
              closed_by = CASE WHEN $2 = 'closed' THEN $3 ELSE NULL END
        WHERE q.id = $1 RETURNING ${COLUMNS}`,
      [requestId, status, userId],
    );
    return toRecord(rows[0] as RequestRow);
  }
}
