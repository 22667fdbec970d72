import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { StoredValue } from '../fields/field.types.js';

export interface FieldValueBatchItem {
  seq: string;
  id: string;
  value: StoredValue;
}

/**
 * Whole-column work on one field of a document's rows, for metadata changes: snapshots kept for history,
 * conversion in keyset batches, removal, auto-number backfill. Nothing here loads all rows into Node at once.
 */
@Injectable()
export class FieldValuesRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Copies every value of the field, keyed by row id, into a transaction-scoped table, so the revision can keep
   * the values as they were before the field was converted or removed (see `insertSnapshotOperation`).
   */
  async snapshot(documentUuid: string, fieldId: string): Promise<void> {
    await this.tx.manager.query(`CREATE TEMP TABLE IF NOT EXISTS quire_field_snapshots (k text PRIMARY KEY, v jsonb NOT NULL) ON COMMIT DROP`);
    await this.tx.manager.query(
      `INSERT INTO quire_field_snapshots (k, v)
       SELECT $2::text, COALESCE(jsonb_object_agg(r.id, r."values" -> $2::text), '{}'::jsonb)
         FROM document_rows r WHERE r.document_id = $1 AND r."values" ? $2::text
       ON CONFLICT (k) DO NOTHING`,
      [documentUuid, fieldId],
    );
  }

  /** The next batch of a field's values after `afterSeq`, in row order. */
  async batch(documentUuid: string, fieldId: string, afterSeq: string, limit: number): Promise<FieldValueBatchItem[]> {
    return this.tx.manager.query<FieldValueBatchItem[]>(
      `SELECT r.seq::text AS seq, r.id, r."values" -> $2::text AS value FROM document_rows r
        WHERE r.document_id = $1 AND r.seq > $3::bigint AND r."values" ? $2::text
        ORDER BY r.seq LIMIT $4`,
      [documentUuid, fieldId, afterSeq, limit],
    );
  }

  /** Writes converted values (`null` removes the value). Row versions do not change: the rows' content is the same. */
  async writeValues(documentUuid: string, fieldId: string, items: readonly { id: string; value: StoredValue | null }[]): Promise<void> {
    if (items.length === 0) {
      return;
    }
    await this.tx.manager.query(
      `UPDATE document_rows AS r
          SET "values" = CASE WHEN d.v IS NULL OR jsonb_typeof(d.v) = 'null' THEN r."values" - $2::text
                              ELSE jsonb_set(r."values", ARRAY[$2::text], d.v) END
         FROM jsonb_to_recordset($3::jsonb) AS d(id text, v jsonb)
        WHERE r.document_id = $1 AND r.id = d.id`,
      [documentUuid, fieldId, JSON.stringify(items.map((item) => ({ id: item.id, v: item.value })))],
    );
  }

  async remove(documentUuid: string, fieldId: string): Promise<void> {
    await this.tx.manager.query(`UPDATE document_rows SET "values" = "values" - $2::text WHERE document_id = $1 AND "values" ? $2::text`, [
      documentUuid,
      fieldId,
    ]);
  }

  /** Numbers existing rows 1..n in insertion order for a new auto_number field; returns n. */
  async backfillAutoNumber(documentUuid: string, fieldId: string, start: number): Promise<number> {
    const [, count] = await this.tx.manager.query<[unknown[], number]>(
      `UPDATE document_rows AS r SET "values" = r."values" || jsonb_build_object($2::text, n.rn + $3::bigint)
         FROM (SELECT id, row_number() OVER (ORDER BY seq) AS rn FROM document_rows WHERE document_id = $1) AS n
        WHERE r.document_id = $1 AND r.id = n.id`,
      [documentUuid, fieldId, start],
    );
    return count;
  }
}
