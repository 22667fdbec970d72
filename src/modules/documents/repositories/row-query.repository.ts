import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { StoredRowValues, StoredValue } from '../fields/field.types.js';
import type { CompiledQuery } from '../query/query.types.js';
import type { RowRecord } from '../domain/document.records.js';
import { ROW_COLUMNS, toRowRecord } from './row.repository.js';

/**
 * A request's folded row changes, laid over the document's rows when reading a draft (`?requestId=`).
 * `update` sets `set` and removes `unset`; `create`/`replace` give the whole `values`; `delete` hides the row.
 */
export interface DraftOverlayRow {
  id: string;
  kind: 'create' | 'update' | 'replace' | 'delete';
  set: StoredRowValues;
  unset: string[];
  values: StoredRowValues;
  ord: number;
  by: string;
  at: string;
}

/** Rows created in a draft sort after every stored row, in the order the request created them. */
const DRAFT_SEQ_BASE = '9000000000000000000';

/** The SQL a statement reads rows from, with its own leading parameters. */
interface RowSource {
  /** `WITH …` prefix (draft) or empty. */
  with: string;
  /** FROM item aliased `r`. */
  from: string;
  params: unknown[];
}

export interface RowPageRecord extends RowRecord {
  cursor?: Record<string, unknown>;
}

/**
 * Reads of rows for lists, queries, cursors and groupings: the compiled WHERE/ORDER BY of the query module over
 * `document_rows r`, or over the same rows with a request's draft laid over them. Only one page of rows (or the
 * group results) ever leaves PostgreSQL.
 */
@Injectable()
export class RowQueryRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** Whether reads run inside a unit of work (one connection: statements one at a time). */
  get inTransaction(): boolean {
    return this.tx.inTransaction;
  }

  /** Number of leading parameters the query compiler must leave to the source (`paramOffset`). */
  static paramOffset(overlay: readonly DraftOverlayRow[] | null): number {
    return overlay && overlay.length > 0 ? 2 : 1;
  }

  private source(documentUuid: string, overlay: readonly DraftOverlayRow[] | null): RowSource {
    if (!overlay || overlay.length === 0) {
      return { with: '', from: 'document_rows r', params: [documentUuid] };
    }
    return {
      with: `WITH d AS (
          SELECT * FROM jsonb_to_recordset($2::jsonb)
            AS x(id text, kind text, "set" jsonb, unset jsonb, "values" jsonb, ord integer, "by" text, "at" timestamptz)
        ), draft AS (
          SELECT b.document_id, b.id, b.seq,
                 CASE d.kind WHEN 'update' THEN (b."values" - ARRAY(SELECT jsonb_array_elements_text(d.unset))) || d."set"
                             WHEN 'replace' THEN d."values" ELSE b."values" END AS "values",
                 b.version + (CASE WHEN d.kind IS NULL THEN 0 ELSE 1 END) AS version,
                 b.created_at, b.created_by,
                 COALESCE(d."at", b.updated_at) AS updated_at, COALESCE(d."by", b.updated_by) AS updated_by
            FROM document_rows b LEFT JOIN d ON d.id = b.id AND d.kind <> 'create'
           WHERE b.document_id = $1 AND d.kind IS DISTINCT FROM 'delete'
          UNION ALL
          SELECT $1::uuid, d.id, ${DRAFT_SEQ_BASE}::bigint + d.ord, d."values", 1::bigint, d."at", d."by", d."at", d."by"
            FROM d WHERE d.kind = 'create'
        )`,
      from: 'draft r',
      params: [documentUuid, JSON.stringify(overlay)],
    };
  }

  async page(
    documentUuid: string,
    compiled: CompiledQuery,
    paging: { limit: number; offset: number },
    overlay: readonly DraftOverlayRow[] | null,
  ): Promise<RowRecord[]> {
    const src = this.source(documentUuid, overlay);
    const params = [...src.params, ...compiled.params];
    const rows = await this.tx.manager.query<Parameters<typeof toRowRecord>[0][]>(
      `${src.with} SELECT ${ROW_COLUMNS} FROM ${src.from}
        WHERE r.document_id = $1 AND ${compiled.where}
        ORDER BY ${compiled.orderBy}
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, paging.limit, paging.offset],
    );
    return rows.map(toRowRecord);
  }

  /** A keyset page: rows after `compiled.afterWhere`, each with its sort-key values for the next cursor. */
  async cursorPage(
    documentUuid: string,
    compiled: CompiledQuery,
    limit: number,
    overlay: readonly DraftOverlayRow[] | null,
  ): Promise<RowPageRecord[]> {
    const src = this.source(documentUuid, overlay);
    const params = [...src.params, ...compiled.params];
    const rows = await this.tx.manager.query<(Parameters<typeof toRowRecord>[0] & Record<string, unknown>)[]>(
      `${src.with} SELECT ${ROW_COLUMNS}, ${compiled.cursorSelect} FROM ${src.from}
        WHERE r.document_id = $1 AND ${compiled.where} ${compiled.afterWhere ? `AND ${compiled.afterWhere}` : ''}
        ORDER BY ${compiled.orderBy}
        LIMIT $${params.length + 1}`,
      [...params, limit],
    );
    return rows.map((row) => ({ ...toRowRecord(row), cursor: row }));
  }

  /**
   * The sort-key values (`compiled.cursorSelect`, by alias) of the row with this `seq`, or null when it is gone: a
   * cursor whose sort value was too long to carry resumes from them. `where` is only mentioned (its parameters are
   * bound): the row counts even if the filter changed since.
   */
  async sortKeysOf(
    documentUuid: string,
    compiled: CompiledQuery,
    seq: string,
    overlay: readonly DraftOverlayRow[] | null,
  ): Promise<Record<string, unknown> | null> {
    const src = this.source(documentUuid, overlay);
    const params = [...src.params, ...compiled.params];
    const rows = await this.tx.manager.query<Record<string, unknown>[]>(
      `${src.with} SELECT ${compiled.cursorSelect} FROM ${src.from}
        WHERE r.document_id = $1 AND r.seq = $${params.length + 1}::bigint AND ((${compiled.where}) OR TRUE)`,
      [...params, seq],
    );
    return rows[0] ?? null;
  }

  async count(documentUuid: string, compiled: CompiledQuery, overlay: readonly DraftOverlayRow[] | null): Promise<number> {
    const src = this.source(documentUuid, overlay);
    const rows = await this.tx.manager.query<{ total: string }[]>(
      `${src.with} SELECT count(*) AS total FROM ${src.from} WHERE r.document_id = $1 AND ${compiled.where}`,
      [...src.params, ...compiled.countParams],
    );
    return Number(rows[0]?.total ?? 0);
  }

  /**
   * The planner's estimate of the rows matching the filter (EXPLAIN, nothing executed): costs a plan, not a scan.
   * Used for the totals of large documents in the `estimated` count mode.
   */
  async estimate(documentUuid: string, compiled: CompiledQuery, overlay: readonly DraftOverlayRow[] | null): Promise<number> {
    const src = this.source(documentUuid, overlay);
    const rows = await this.tx.manager.query<Array<{ 'QUERY PLAN': Array<{ Plan?: { 'Plan Rows'?: number } }> }>>(
      `EXPLAIN (FORMAT JSON) ${src.with} SELECT 1 FROM ${src.from} WHERE r.document_id = $1 AND ${compiled.where}`,
      [...src.params, ...compiled.countParams],
    );
    return Math.max(0, Math.round(rows[0]?.['QUERY PLAN'][0]?.Plan?.['Plan Rows'] ?? 0));
  }

  /**
   * Grouped aggregation, one page of groups: one result row per group, keys and aggregates as JSON under the
   * compiler's aliases, ordered by the group keys (unique per group, so pages are stable). `total` is the number
   * of groups, counted by a window over the groups in the same statement.
   */
  async groups(
    documentUuid: string,
    compiled: CompiledQuery,
    paging: { limit: number; offset: number },
    overlay: readonly DraftOverlayRow[] | null,
  ): Promise<{ rows: Record<string, StoredValue>[]; total: number }> {
    const group = compiled.groupBy;
    if (!group) {
      return { rows: [], total: 0 };
    }
    const src = this.source(documentUuid, overlay);
    const params = [...src.params, ...group.params];
    const groups = `FROM ${src.from}
        WHERE r.document_id = $1 AND ${compiled.where}
        ${group.groupBy ? `GROUP BY ${group.groupBy}` : ''}`;
    const rows = await this.tx.manager.query<(Record<string, StoredValue> & { __total: string })[]>(
      `${src.with} SELECT ${group.select}, count(*) OVER () AS "__total" ${groups}
        ${group.orderBy ? `ORDER BY ${group.orderBy}` : ''}
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, paging.limit, paging.offset],
    );
    if (rows.length > 0 || paging.offset === 0) {
      return { rows, total: Number(rows[0]?.__total ?? 0) };
    }
    // A page past the last group has no row to carry the total.
    const counted = await this.tx.manager.query<{ total: string }[]>(
      `${src.with} SELECT count(*) AS total FROM (SELECT ${group.select} ${groups}) g`,
      params,
    );
    return { rows, total: Number(counted[0]?.total ?? 0) };
  }
}
