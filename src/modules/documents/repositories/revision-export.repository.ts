import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { StoredRowValues, StoredValue } from '../fields/field.types.js';
import type { OperationRecord } from '../domain/document.records.js';
import type { RowAggregate } from '../../../common/formula/index.js';

/** An operation after the exported revision on a field, property, metadata or settings target (few per document). */
export interface LaterOperation {
  type: string;
  kind: string;
  fieldId: string | null;
  oldValue: StoredValue | null;
}

/**
 * The rows of a document as they stood at revision `$2`, from the current rows and the operations after it — never
 * by replaying history. Per row, the first later row operation decides: a `row-create` means the row did not exist
 * yet. Otherwise the row's nearest full snapshot is its first later `row-delete` (the whole old values), else the
 * current row; each cell then takes the old value of the first later operation that touched it before that
 * snapshot — a `row-update` of the row, or the values snapshot of a field deleted or converted later.
 *
 * The row's columns as of the revision: a row no operation after it touched (row or relation) has them as they are
 * now. Otherwise its creation comes from the current row (when that is the row of the time), else from its last
 * `row-create` up to the revision; its last change from its last `row-create` / `row-update` up to the revision
 * (operations record the merge's time and merger, which is what a merge stamps on the row), else its creation.
 */
const ROWS_AS_OF = `
  WITH later AS (
    SELECT o.type, o.target_kind, o.target_row_id, o.target_field_id, o.old_value, v.version, o.ordinal
      FROM revision_operations o JOIN revisions v ON v.id = o.revision_id
     WHERE o.document_id = $1 AND v.version > $2
       AND (o.target_kind IN ('row', 'relation') OR (o.target_kind = 'field' AND o.type IN ('field-delete', 'field-update') AND o.old_value ? 'values'))
  ), stamped AS (
    -- Rows whose columns (updated_at/by) may have moved since the revision.
    SELECT DISTINCT target_row_id AS row_id FROM later WHERE target_row_id IS NOT NULL
  ), stamps AS (
    SELECT o.target_row_id AS row_id,
           (array_agg(o."timestamp" ORDER BY v.version DESC, o.ordinal DESC) FILTER (WHERE o.type = 'row-create'))[1] AS created_at,
           (array_agg(o.operator ORDER BY v.version DESC, o.ordinal DESC) FILTER (WHERE o.type = 'row-create'))[1] AS created_by,
           (array_agg(o."timestamp" ORDER BY v.version DESC, o.ordinal DESC))[1] AS updated_at,
           (array_agg(o.operator ORDER BY v.version DESC, o.ordinal DESC))[1] AS updated_by
      FROM revision_operations o JOIN revisions v ON v.id = o.revision_id
     WHERE o.document_id = $1 AND v.version <= $2 AND o.target_kind = 'row' AND o.type IN ('row-create', 'row-update')
       AND o.target_row_id IN (SELECT row_id FROM stamped)
     GROUP BY o.target_row_id
  ), touched AS (
    -- One line per row changed later: its first operation and its first deletion (the nearest full snapshot).
    SELECT target_row_id AS row_id,
           (array_agg(type ORDER BY version, ordinal))[1] AS first_type,
           (array_agg(old_value -> 'values' ORDER BY version, ordinal) FILTER (WHERE type = 'row-delete'))[1] AS del_vals,
           (array_agg(version ORDER BY version, ordinal) FILTER (WHERE type = 'row-delete'))[1] AS del_version,
           (array_agg(ordinal ORDER BY version, ordinal) FILTER (WHERE type = 'row-delete'))[1] AS del_ordinal
      FROM later WHERE target_kind = 'row' GROUP BY target_row_id
  ), cell_ops AS (
    SELECT l.target_row_id AS row_id, k.key, l.old_value -> 'values' -> k.key AS val, l.version, l.ordinal
      FROM later l CROSS JOIN LATERAL jsonb_object_keys(COALESCE(l.old_value -> 'values', '{}'::jsonb)) AS k(key)
     WHERE l.type = 'row-update'
    UNION ALL
    SELECT s.key, l.target_field_id, s.value, l.version, l.ordinal
      FROM later l CROSS JOIN LATERAL jsonb_each(COALESCE(l.old_value -> 'values', '{}'::jsonb)) AS s(key, value)
     WHERE l.target_kind = 'field'
  ), overrides AS (
    SELECT c.row_id, jsonb_object_agg(c.key, c.val) AS vals
      FROM (SELECT DISTINCT ON (c.row_id, c.key) c.row_id, c.key, c.val
              FROM cell_ops c LEFT JOIN touched t ON t.row_id = c.row_id
             WHERE t.del_version IS NULL OR (c.version, c.ordinal) < (t.del_version, t.del_ordinal)
             ORDER BY c.row_id, c.key, c.version, c.ordinal) c
     GROUP BY c.row_id
  ), base AS (
    SELECT r.id AS row_id, r."values" AS vals, r.seq AS seq, r.created_at, r.created_by, r.updated_at, r.updated_by
      FROM document_rows r LEFT JOIN touched t ON t.row_id = r.id
     WHERE r.document_id = $1 AND (t.row_id IS NULL OR (t.first_type <> 'row-create' AND t.del_version IS NULL))
    UNION ALL
    SELECT t.row_id, t.del_vals, NULL::bigint, NULL::timestamptz, NULL::text, NULL::timestamptz, NULL::text
      FROM touched t WHERE t.first_type <> 'row-create' AND t.del_version IS NOT NULL
  )
  SELECT b.row_id AS id, jsonb_strip_nulls(COALESCE(b.vals, '{}'::jsonb) || COALESCE(o.vals, '{}'::jsonb)) AS "values",
         COALESCE(b.created_at, s.created_at) AS "createdAt",
         CASE WHEN b.created_at IS NOT NULL THEN b.created_by ELSE s.created_by END AS "createdBy",
         CASE WHEN m.row_id IS NULL AND b.updated_at IS NOT NULL THEN b.updated_at
              ELSE COALESCE(s.updated_at, b.created_at, s.created_at) END AS "updatedAt",
         CASE WHEN m.row_id IS NULL AND b.updated_at IS NOT NULL THEN b.updated_by
              WHEN s.updated_at IS NOT NULL THEN s.updated_by
              WHEN b.created_at IS NOT NULL THEN b.created_by ELSE s.created_by END AS "updatedBy"
    FROM base b LEFT JOIN overrides o ON o.row_id = b.row_id
         LEFT JOIN stamped m ON m.row_id = b.row_id LEFT JOIN stamps s ON s.row_id = b.row_id
   ORDER BY b.seq NULLS LAST, b.row_id`;

/** A row as of a revision: its values and its columns of that time (null when history does not tell). */
export interface RowAsOf {
  id: string;
  values: StoredRowValues;
  createdAt: Date | null;
  createdBy: string | null;
  updatedAt: Date | null;
  updatedBy: string | null;
}

const OPERATION_COLUMNS = `o.id, o.revision_id AS "revisionId", o.ordinal, o.type, o.target, o.old_value AS "oldValue",
  o.new_value AS "newValue", o.operator, o."timestamp", o.note`;

/**
 * SQL of the point-in-time export. Rows leave PostgreSQL through a server-side cursor in batches, inside the
 * caller's read-only REPEATABLE READ transaction (one snapshot for metadata, properties and rows), so memory stays
 * flat whatever the size of the document.
 */
@Injectable()
export class RevisionExportRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** Field, property, metadata and settings operations after `version`, oldest first. */
  async laterOperations(documentUuid: string, version: number): Promise<LaterOperation[]> {
    return this.tx.manager.query<LaterOperation[]>(
      `SELECT o.type, o.target_kind AS kind, o.target_field_id AS "fieldId",
              CASE WHEN o.target_kind = 'field' THEN o.old_value - 'values' ELSE o.old_value END AS "oldValue"
         FROM revision_operations o JOIN revisions v ON v.id = o.revision_id
        WHERE o.document_id = $1 AND v.version > $2 AND o.target_kind IN ('field', 'property', 'metadata', 'settings')
        ORDER BY v.version, o.ordinal`,
      [documentUuid, version],
    );
  }

  /**
   * The field and property ids, in order, of the metadata in force at `version`: the whole lists of the metadata
   * change of the request merged by the latest revision up to `version` that changed fields or properties (the
   * operations record definitions and pure reorders, not where a field created or deleted stood). Null when no such
   * revision or change is found.
   */
  async metadataOrderAsOf(documentUuid: string, version: number): Promise<{ fields: string[]; properties: string[] } | null> {
    const rows = await this.tx.manager.query<{ fields: string[]; properties: string[] }[]>(
      `SELECT jsonb_path_query_array(c.data, '$.fields[*].id') AS fields, jsonb_path_query_array(c.data, '$.properties[*].id') AS properties
         FROM (SELECT v.request_id FROM revision_operations o JOIN revisions v ON v.id = o.revision_id
                WHERE o.document_id = $1 AND o.target_kind IN ('field', 'property', 'metadata')
                  AND o.type IN ('field-create', 'field-update', 'field-delete', 'metadata-update') AND v.version <= $2
                ORDER BY v.version DESC LIMIT 1) r
         JOIN request_change_items c ON c.request_id = r.request_id AND c.type = 'metadata-update'
        ORDER BY c.seq DESC LIMIT 1`,
      [documentUuid, version],
    );
    return rows[0] ?? null;
  }

  async currentProperties(documentUuid: string): Promise<StoredRowValues> {
    const rows = await this.tx.manager.query<{ properties: StoredRowValues }[]>(`SELECT properties FROM document_properties WHERE document_id = $1`, [documentUuid]);
    return rows[0]?.properties ?? {};
  }

  /** Streams the rows as of `version` in batches of `batchSize` to `each` (awaited: the consumer sets the pace). */
  async rowsAsOf(documentUuid: string, version: number, batchSize: number, each: (rows: RowAsOf[]) => Promise<void>): Promise<void> {
    await this.cursor(ROWS_AS_OF, [documentUuid, version], batchSize, each);
  }

  /**
   * Row aggregates of property formulas (SUM({qty}), COUNT(*)) over the rows as of `version`, in one statement, keyed
   * `FN:fieldId`, computed like the live ones (ComputedValuesRepository.aggregate): in numeric, a total beyond the
   * double range (or no total) empty, a SUM of nothing 0.
   */
  async aggregatesAsOf(
    documentUuid: string,
    version: number,
    aggregates: readonly RowAggregate[],
    // SQL over `r` of the fields that are not stored (NOW()/TODAY() formulas: volatileFieldSql), by id.
    valueSql: ReadonlyMap<string, string> = new Map(),
  ): Promise<Map<string, StoredValue>> {
    const result = new Map<string, StoredValue>();
    if (aggregates.length === 0) {
      return result;
    }
    const params: unknown[] = [documentUuid, version];
    const columns = aggregates.map((aggregate, index) => {
      if (aggregate.fieldId === '*') {
        return `count(*)::text AS a${index}`;
      }
      const computed = valueSql.get(aggregate.fieldId);
      if (computed) {
        const expression = aggregate.fn === 'COUNT' ? `count(*) FILTER (WHERE (${computed}) IS NOT NULL)` : `${aggregate.fn.toLowerCase()}((${computed})::numeric)`;
        return `(${expression})::text AS a${index}`;
      }
      params.push(aggregate.fieldId);
      const key = `$${params.length}::text`;
      const number = `(CASE WHEN jsonb_typeof(r."values" -> ${key}) = 'number' THEN (r."values" -> ${key})::numeric END)`;
      const expression = aggregate.fn === 'COUNT' ? `count(*) FILTER (WHERE r."values" ? ${key})` : `${aggregate.fn.toLowerCase()}(${number})`;
      return `(${expression})::text AS a${index}`;
    });
    // The row columns under the names a computed expression reads (r.created_at …), as document_rows has them.
    const rows = `SELECT "values", "createdAt" AS created_at, "createdBy" AS created_by, "updatedAt" AS updated_at, "updatedBy" AS updated_by FROM (${ROWS_AS_OF}) a`;
    const [row] = await this.tx.manager.query<Record<string, string | null>[]>(`SELECT ${columns.join(', ')} FROM (${rows}) r`, params);
    aggregates.forEach((aggregate, index) => {
      const text = row?.[`a${index}`];
      const total = text === null || text === undefined ? null : Number(text);
      result.set(`${aggregate.fn}:${aggregate.fieldId}`, total === null ? (aggregate.fn === 'SUM' ? 0 : null) : Number.isFinite(total) ? total : null);
    });
    return result;
  }

  /** Streams a revision's operations in order. */
  async operations(revisionId: string, batchSize: number, each: (rows: OperationRecord[]) => Promise<void>): Promise<void> {
    await this.cursor(`SELECT ${OPERATION_COLUMNS} FROM revision_operations o WHERE o.revision_id = $1 ORDER BY o.ordinal`, [revisionId], batchSize, each);
  }

  private async cursor<T>(sql: string, params: unknown[], batchSize: number, each: (rows: T[]) => Promise<void>): Promise<void> {
    const name = `quire_export_${Math.random().toString(36).slice(2, 10)}`;
    await this.tx.manager.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${sql}`, params);
    try {
      for (;;) {
        const rows = await this.tx.manager.query<T[]>(`FETCH ${Number(batchSize)} FROM ${name}`);
        if (rows.length > 0) {
          await each(rows);
        }
        if (rows.length < batchSize) {
          break;
        }
      }
    } finally {
      await this.tx.manager.query(`CLOSE ${name}`);
    }
  }
}
