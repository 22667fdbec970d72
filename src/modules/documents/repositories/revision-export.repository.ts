import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { StoredRowValues, StoredValue } from '../fields/field.types.js';
import type { OperationRecord } from '../domain/document.records.js';

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
 */
const ROWS_AS_OF = `
  WITH later AS (
    SELECT o.type, o.target_kind, o.target_row_id, o.target_field_id, o.old_value, v.version, o.ordinal
      FROM revision_operations o JOIN revisions v ON v.id = o.revision_id
     WHERE o.document_id = $1 AND v.version > $2
       AND (o.target_kind = 'row' OR (o.target_kind = 'field' AND o.type IN ('field-delete', 'field-update') AND o.old_value ? 'values'))
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
    SELECT r.id AS row_id, r."values" AS vals, r.seq AS seq
      FROM document_rows r LEFT JOIN touched t ON t.row_id = r.id
     WHERE r.document_id = $1 AND (t.row_id IS NULL OR (t.first_type <> 'row-create' AND t.del_version IS NULL))
    UNION ALL
    SELECT t.row_id, t.del_vals, NULL::bigint FROM touched t WHERE t.first_type <> 'row-create' AND t.del_version IS NOT NULL
  )
  SELECT b.row_id AS id, jsonb_strip_nulls(COALESCE(b.vals, '{}'::jsonb) || COALESCE(o.vals, '{}'::jsonb)) AS "values"
    FROM base b LEFT JOIN overrides o ON o.row_id = b.row_id
   ORDER BY b.seq NULLS LAST, b.row_id`;

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

  async currentProperties(documentUuid: string): Promise<StoredRowValues> {
    const rows = await this.tx.manager.query<{ properties: StoredRowValues }[]>(`SELECT properties FROM document_properties WHERE document_id = $1`, [documentUuid]);
    return rows[0]?.properties ?? {};
  }

  /** Streams the rows as of `version` in batches of `batchSize` to `each` (awaited: the consumer sets the pace). */
  async rowsAsOf(documentUuid: string, version: number, batchSize: number, each: (rows: { id: string; values: StoredRowValues }[]) => Promise<void>): Promise<void> {
    await this.cursor(ROWS_AS_OF, [documentUuid, version], batchSize, each);
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
