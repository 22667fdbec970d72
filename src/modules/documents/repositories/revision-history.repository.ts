import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { StoredRowValues, StoredValue } from '../fields/field.types.js';
import { type OperationRecord, storedKindsOf } from '../domain/document.records.js';

const OPERATION_COLUMNS = `o.id, o.revision_id AS "revisionId", o.ordinal, o.type, o.target, o.old_value AS "oldValue",
  o.new_value AS "newValue", o.operator, o."timestamp", o.note`;

/**
 * Per cell of the diffed row `p`, its value at the base: the first old value up to the row's first `row-delete` in the
 * range (whose old values are the whole row). Empty (`null`) cells are left out.
 */
const CELLS_BEFORE = `SELECT key, value FROM (
    SELECT DISTINCT ON (k.key) k.key, k.value
      FROM ops CROSS JOIN LATERAL jsonb_each(COALESCE(ops.old_value -> 'values', '{}'::jsonb)) AS k(key, value)
     WHERE ops.row_id = p.row_id AND (ops.version, ops.ordinal) <= (p.delete_version, p.delete_ordinal)
     ORDER BY k.key, ops.version, ops.ordinal) first_values
   WHERE value <> 'null'::jsonb`;

/**
 * Per cell of the diffed row `p`, its value at the end of the range: the row's last `row-create` (the whole row) with
 * the later updates laid over, the last new value winning. Empty (`null`) cells are left out.
 */
const CELLS_AFTER = `SELECT key, value FROM (
    SELECT DISTINCT ON (k.key) k.key, k.value
      FROM ops CROSS JOIN LATERAL jsonb_each(COALESCE(ops.new_value -> 'values', '{}'::jsonb)) AS k(key, value)
     WHERE ops.row_id = p.row_id AND (ops.version, ops.ordinal) >= (p.create_version, p.create_ordinal)
     ORDER BY k.key, ops.version DESC, ops.ordinal DESC) last_values
   WHERE value <> 'null'::jsonb`;

/** A row between two revisions: its first recorded state and its last, per the operations in between. */
export interface DiffRow {
  rowId: string;
  kind: 'added' | 'updated' | 'deleted';
  /** added: the values after; deleted: the values before. */
  values: StoredRowValues | null;
  /** updated: changed cells, old and new stored values (null = absent). */
  cells: { fieldId: string; oldValue: StoredValue | null; newValue: StoredValue | null }[] | null;
}

/** A row, property or field target's first old and last new value between two revisions. */
export interface DiffTarget {
  kind: 'property' | 'field';
  fieldId: string;
  firstType: string;
  lastType: string;
  oldValue: StoredValue | null;
  newValue: StoredValue | null;
}

export interface HistoryFilter {
  kind: string;
  rowId?: string;
  fieldId?: string;
}

/**
 * Read-side SQL over the append-only history (docs/documents.md, "Revision diff, history, revert"): differences
 * between two revisions and the history of one target are computed in PostgreSQL from `revision_operations`; only
 * the page asked for leaves it.
 */
@Injectable()
export class RevisionHistoryRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Rows changed by the revisions numbered (`baseVersion`, `version`], in row id order, paged. A row created and
   * deleted within the range is no difference. An added row's values are the row as the range leaves it
   * (`CELLS_AFTER`), a deleted row's the row as it stood at the base (`CELLS_BEFORE`): whole rows, not only the last
   * or first operation's cells. Update cells come from the `row-update` operations (for each cell the first old value
   * and the last new one); for a row deleted and created again within the range, from the row at the base against
   * the row at the end.
   */
  async diffRows(documentUuid: string, baseVersion: number, version: number, paging: { limit: number; offset: number }): Promise<{ items: DiffRow[]; total: number }> {
    const cte = `WITH ops AS (
        SELECT o.target_row_id AS row_id, o.type, o.old_value, o.new_value, v.version, o.ordinal
          FROM revision_operations o JOIN revisions v ON v.id = o.revision_id
         WHERE o.document_id = $1 AND o.target_kind = 'row' AND v.version > $2 AND v.version <= $3
      ), per_row AS (
        SELECT row_id,
               (array_agg(type ORDER BY version, ordinal))[1] AS first_type,
               (array_agg(type ORDER BY version DESC, ordinal DESC))[1] AS last_type,
               (array_agg(version ORDER BY version DESC, ordinal DESC) FILTER (WHERE type = 'row-create'))[1] AS create_version,
               (array_agg(ordinal ORDER BY version DESC, ordinal DESC) FILTER (WHERE type = 'row-create'))[1] AS create_ordinal,
               (array_agg(version ORDER BY version, ordinal) FILTER (WHERE type = 'row-delete'))[1] AS delete_version,
               (array_agg(ordinal ORDER BY version, ordinal) FILTER (WHERE type = 'row-delete'))[1] AS delete_ordinal
          FROM ops GROUP BY row_id
      ), classified AS (
        SELECT row_id, create_version, create_ordinal, delete_version, delete_ordinal,
               CASE WHEN first_type = 'row-create' AND last_type <> 'row-delete' THEN 'added'
                    WHEN first_type <> 'row-create' AND last_type = 'row-delete' THEN 'deleted'
                    WHEN first_type = 'row-create' THEN NULL
                    ELSE 'updated' END AS kind
          FROM per_row
      )`;
    const params = [documentUuid, baseVersion, version];
    const [items, count] = await Promise.all([
      this.tx.manager.query<{ rowId: string; kind: DiffRow['kind']; values: StoredRowValues | null; cells: DiffRow['cells'] }[]>(
        `${cte}, page AS (
           SELECT * FROM classified WHERE kind IS NOT NULL ORDER BY row_id LIMIT $4 OFFSET $5
         )
         SELECT p.row_id AS "rowId", p.kind,
                CASE p.kind
                  WHEN 'added' THEN (SELECT COALESCE(jsonb_object_agg(a.key, a.value), '{}'::jsonb) FROM (${CELLS_AFTER}) a)
                  WHEN 'deleted' THEN (SELECT COALESCE(jsonb_object_agg(b.key, b.value), '{}'::jsonb) FROM (${CELLS_BEFORE}) b)
                END AS "values",
                CASE WHEN p.kind = 'updated' AND p.delete_version IS NULL THEN (
                  SELECT COALESCE(jsonb_agg(jsonb_build_object('fieldId', c.key, 'oldValue', c.old, 'newValue', c.new) ORDER BY c.key), '[]'::jsonb)
                    FROM (SELECT k.key,
                                 (array_agg(ops.old_value -> 'values' -> k.key ORDER BY ops.version, ops.ordinal))[1] AS old,
                                 (array_agg(ops.new_value -> 'values' -> k.key ORDER BY ops.version DESC, ops.ordinal DESC))[1] AS new
                            FROM ops CROSS JOIN LATERAL jsonb_object_keys(COALESCE(ops.new_value -> 'values', '{}'::jsonb)) AS k(key)
                           WHERE ops.row_id = p.row_id AND ops.type = 'row-update'
                           GROUP BY k.key) c
                   WHERE c.old IS DISTINCT FROM c.new
                ) WHEN p.kind = 'updated' THEN (
                  SELECT COALESCE(jsonb_agg(jsonb_build_object('fieldId', c.key, 'oldValue', c.old, 'newValue', c.new) ORDER BY c.key), '[]'::jsonb)
                    FROM (SELECT COALESCE(b.key, a.key) AS key, b.value AS old, a.value AS new
                            FROM (${CELLS_BEFORE}) b FULL JOIN (${CELLS_AFTER}) a ON a.key = b.key) c
                   WHERE c.old IS DISTINCT FROM c.new
                ) END AS cells
           FROM page p ORDER BY p.row_id`,
        [...params, paging.limit, paging.offset],
      ),
      this.tx.manager.query<{ total: string }[]>(`${cte} SELECT count(*) AS total FROM classified WHERE kind IS NOT NULL`, params),
    ]);
    return {
      items: items.map((item) => ({ ...item, values: item.values ?? null, cells: item.cells ?? null })),
      total: Number(count[0]?.total ?? 0),
    };
  }

  /** Property values, field definitions and settings changed by the revisions in (`baseVersion`, `version`]. */
  async diffTargets(documentUuid: string, baseVersion: number, version: number): Promise<{ targets: DiffTarget[]; settingsChanged: boolean }> {
    const rows = await this.tx.manager.query<(DiffTarget & { targetKind: string })[]>(
      `SELECT o.target_kind AS "targetKind", o.target_field_id AS "fieldId",
              (array_agg(o.type ORDER BY v.version, o.ordinal))[1] AS "firstType",
              (array_agg(o.type ORDER BY v.version DESC, o.ordinal DESC))[1] AS "lastType",
              (array_agg(o.old_value ORDER BY v.version, o.ordinal))[1] AS "oldValue",
              (array_agg(o.new_value ORDER BY v.version DESC, o.ordinal DESC))[1] AS "newValue"
         FROM revision_operations o JOIN revisions v ON v.id = o.revision_id
        WHERE o.document_id = $1 AND o.target_kind IN ('property', 'field', 'settings') AND v.version > $2 AND v.version <= $3
        GROUP BY o.target_kind, o.target_field_id, (o.type = 'property-delete')
        ORDER BY o.target_field_id NULLS FIRST`,
      [documentUuid, baseVersion, version],
    );
    return {
      targets: rows.filter((row) => row.targetKind !== 'settings').map((row) => ({ ...row, kind: row.targetKind === 'field' ? 'field' : 'property' })),
      settingsChanged: rows.some((row) => row.targetKind === 'settings'),
    };
  }

  /**
   * Operations on one target, newest first: `kind` with `rowId` (row operations; with `fieldId` only those touching
   * that cell) or `fieldId` (field and property operations).
   */
  async history(
    documentUuid: string,
    filter: HistoryFilter,
    paging: { limit: number; offset: number },
  ): Promise<{ items: (OperationRecord & { revisionVersion: number })[]; total: number }> {
    const where = `o.document_id = $1 AND o.target_kind = ANY($2::text[])
      AND ($3::text IS NULL OR o.target_row_id = $3)
      AND ($4::text IS NULL OR o.target_field_id = $4
           OR (o.target_kind = 'row' AND (o.old_value -> 'values' ? $4 OR o.new_value -> 'values' ? $4)))`;
    const params = [documentUuid, storedKindsOf(filter.kind), filter.rowId ?? null, filter.fieldId ?? null];
    const [items, count] = await Promise.all([
      this.tx.manager.query<(OperationRecord & { revisionVersion: string })[]>(
        `SELECT ${OPERATION_COLUMNS}, v.version AS "revisionVersion" FROM revision_operations o JOIN revisions v ON v.id = o.revision_id
          WHERE ${where} ORDER BY v.version DESC, o.ordinal DESC LIMIT $5 OFFSET $6`,
        [...params, paging.limit, paging.offset],
      ),
      this.tx.manager.query<{ total: string }[]>(`SELECT count(*) AS total FROM revision_operations o WHERE ${where}`, params),
    ]);
    return { items: items.map((item) => ({ ...item, revisionVersion: Number(item.revisionVersion) })), total: Number(count[0]?.total ?? 0) };
  }

  /** The revision numbered `version` of a document, if any. */
  async byVersion(documentUuid: string, version: number): Promise<{ id: string; version: number } | null> {
    const rows = await this.tx.manager.query<{ id: string }[]>(`SELECT id FROM revisions WHERE document_id = $1 AND version = $2`, [documentUuid, version]);
    return rows[0] ? { id: rows[0].id, version } : null;
  }

  /** All operations of a revision, in order (a revert builds their inverse). */
  async allOperations(revisionId: string, limit: number): Promise<OperationRecord[]> {
    return this.tx.manager.query<OperationRecord[]>(`SELECT ${OPERATION_COLUMNS} FROM revision_operations o WHERE o.revision_id = $1 ORDER BY o.ordinal LIMIT $2`, [
      revisionId,
      limit,
    ]);
  }

  /** Which of these row ids exist now. */
  async existingRowIds(documentUuid: string, rowIds: readonly string[]): Promise<Set<string>> {
    if (rowIds.length === 0) {
      return new Set();
    }
    const rows = await this.tx.manager.query<{ id: string }[]>(`SELECT id FROM document_rows WHERE document_id = $1 AND id = ANY($2::text[])`, [documentUuid, rowIds]);
    return new Set(rows.map((row) => row.id));
  }

  /** Records that `requestId` reverts `revisionId` (read when that request is merged: `revision_reverted`). */
  async recordRevert(input: { requestId: string; revisionId: string; documentUuid: string; organizationId: string; workspaceId: string | null }): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO revision_reverts (request_id, reverted_revision_id, document_id, organization_id, workspace_id) VALUES ($1, $2, $3, $4, $5)`,
      [input.requestId, input.revisionId, input.documentUuid, input.organizationId, input.workspaceId],
    );
  }

  /** The revision a request reverts, if it is a revert request. */
  async revertedBy(requestId: string): Promise<{ revisionId: string; version: number } | null> {
    const rows = await this.tx.manager.query<{ revisionId: string; version: string }[]>(
      `SELECT r.reverted_revision_id AS "revisionId", v.version FROM revision_reverts r JOIN revisions v ON v.id = r.reverted_revision_id WHERE r.request_id = $1`,
      [requestId],
    );
    return rows[0] ? { revisionId: rows[0].revisionId, version: Number(rows[0].version) } : null;
  }
}
