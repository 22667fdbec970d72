import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { StoredRowValues, StoredValue } from '../fields/field.types.js';
import type { RowRecord } from '../domain/document.records.js';
import { prepared } from '../../../database/prepared-statements.js';

interface RowRow {
  id: string;
  seq: string;
  values: StoredRowValues;
  version: string;
  createdAt: Date;
  createdBy: string | null;
  updatedAt: Date;
  updatedBy: string | null;
}

export const ROW_COLUMNS = `r.id, r.seq, r."values", r.version, r.created_at AS "createdAt", r.created_by AS "createdBy",
  r.updated_at AS "updatedAt", r.updated_by AS "updatedBy"`;

/**
 * Built field by field, not by spreading `row`: a bulk write makes 2,000 of these, and on V8 a spread with extra
 * keys costs about ten times an object literal. Columns beyond the record's (cursor keys) are left out.
 */
export function toRowRecord(row: Omit<RowRow, 'values'> & { values?: StoredRowValues | null }): RowRecord {
  return {
    id: row.id,
    seq: String(row.seq),
    values: row.values ?? {},
    version: Number(row.version),
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    updatedAt: row.updatedAt,
    updatedBy: row.updatedBy,
  };
}

/**
 * The columns a write hands back: all but the values, which the writer sent and still holds (a bulk write of 1000
 * rows would otherwise receive and parse every row's JSON once more).
 */
const WRITTEN_ROW_COLUMNS = `r.id, r.seq, r.version, r.created_at AS "createdAt", r.created_by AS "createdBy",
  r.updated_at AS "updatedAt", r.updated_by AS "updatedBy"`;

function writtenRecords(written: Omit<RowRow, 'values'>[], sent: readonly { id: string; values: StoredRowValues }[]): RowRecord[] {
  const valuesById = new Map(sent.map((row) => [row.id, row.values]));
  return written.map((row) => {
    // The statement did not return the values: the writer's are the row's.
    const record = toRowRecord(row);
    record.values = valuesById.get(row.id) ?? {};
    return record;
  });
}

export interface UniqueCandidate {
  fieldId: string;
  value: StoredValue;
}

export interface UniqueClash {
  rowId: string;
  fieldId: string;
  value: StoredValue;
}

/** SQL for single rows of `document_rows`, addressed by document uuid and row id (writes and merges). */
@Injectable()
export class RowRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** The ids among `rowIds` that exist in the document. */
  async existingIds(documentUuid: string, rowIds: readonly string[]): Promise<Set<string>> {
    const rows = await this.tx.manager.query<Array<{ id: string }>>(
      prepared(`SELECT r.id FROM document_rows r WHERE r.document_id = $1 AND r.id = ANY($2::text[])`),
      [documentUuid, [...rowIds]],
    );
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Rows whose value of one field, as text, trimmed and lower-cased, is one of `keys`, in row order: a trimmed,
   * case-insensitive equality the row query API does not offer (`contains` is ILIKE '%…%', some 300 times slower
   * over 10,000 rows, for a superset). Supply-chain deduplication finds its candidates with it.
   */
  async findByTextKeys(documentUuid: string, fieldId: string, keys: readonly string[]): Promise<{ id: string; values: StoredRowValues }[]> {
    if (keys.length === 0) {
      return [];
    }
    return this.tx.manager.query<{ id: string; values: StoredRowValues }[]>(
      `SELECT r.id, r."values" FROM document_rows r
        WHERE r.document_id = $1 AND lower(btrim(r."values" ->> $2::text)) = ANY($3::text[])
        ORDER BY r.seq`,
      [documentUuid, fieldId, [...keys]],
    );
  }

  async find(documentUuid: string, rowId: string): Promise<RowRecord | null> {
    const rows = await this.tx.manager.query<RowRow[]>(prepared(`SELECT ${ROW_COLUMNS} FROM document_rows r WHERE r.document_id = $1 AND r.id = $2`), [
      documentUuid,
      rowId,
    ]);
    return rows[0] ? toRowRecord(rows[0]) : null;
  }

  /**
   * The rows with these ids (those that exist), optionally locked for the merge, in id order: `FOR NO KEY UPDATE`,
   * which serializes writers of a row but lets a merge pointing a relation at it go on (RelationRepository
   * .existingRows); a delete takes the stronger lock itself. The writes of a group (WriteBatcher) lock theirs with
   * one statement: one order for all their rows, as a bulk write locks its rows, so two groups or a group and a bulk
   * write never wait on each other in a cycle.
   */
  async findMany(documentUuid: string, rowIds: readonly string[], lock = false): Promise<Map<string, RowRecord>> {
    if (rowIds.length === 0) {
      return new Map();
    }
    if (!lock) {
      return this.select(documentUuid, rowIds, false);
    }
    const locked = await this.tx.coalesce(this, documentUuid, rowIds, (ids) => this.select(documentUuid, ids, true));
    // The whole group's rows came back: this caller sees its own.
    const mine = new Map<string, RowRecord>();
    for (const id of rowIds) {
      const row = locked.get(id);
      if (row) {
        mine.set(id, row);
      }
    }
    return mine;
  }

  private async select(documentUuid: string, rowIds: readonly string[], lock: boolean): Promise<Map<string, RowRecord>> {
    const rows = await this.tx.manager.query<RowRow[]>(
      prepared(`SELECT ${ROW_COLUMNS} FROM document_rows r WHERE r.document_id = $1 AND r.id = ANY($2::text[]) ORDER BY r.id ${lock ? 'FOR NO KEY UPDATE' : ''}`),
      [documentUuid, [...new Set(rowIds)]],
    );
    return new Map(rows.map((row) => [row.id, toRowRecord(row)]));
  }

  /** Inserts rows in the given order (their `seq` follows it). */
  async insertMany(documentUuid: string, rows: readonly { id: string; values: StoredRowValues }[], userId: string): Promise<RowRecord[]> {
    if (rows.length === 0) {
      return [];
    }
    const inserted = await this.tx.manager.query<Omit<RowRow, 'values'>[]>(
      prepared(`INSERT INTO document_rows AS r (document_id, id, "values", version, created_by, updated_by)
       SELECT $1, d.id, d."values", 1, $3, $3
         FROM jsonb_to_recordset($2::jsonb) AS d(id text, "values" jsonb, ord integer)
        ORDER BY d.ord
       RETURNING ${WRITTEN_ROW_COLUMNS}`),
      [documentUuid, JSON.stringify(rows.map((row, ord) => ({ id: row.id, values: row.values, ord }))), userId],
    );
    return writtenRecords(inserted, rows);
  }

  /**
   * Sets the complete values of existing rows and increments their versions. The writes of a group (WriteBatcher)
   * update theirs with one statement, each row stamped with its own writer.
   */
  async updateMany(documentUuid: string, rows: readonly { id: string; values: StoredRowValues }[], userId: string): Promise<RowRecord[]> {
    if (rows.length === 0) {
      return [];
    }
    const items = rows.map((row) => ({ id: row.id, values: row.values, by: userId }));
    const updated = await this.tx.coalesce(this, `update:${documentUuid}`, items, async (all) => {
      const [written] = await this.tx.manager.query<[Omit<RowRow, 'values'>[], number]>(
        prepared(`UPDATE document_rows AS r SET "values" = d."values", version = r.version + 1, updated_at = now(), updated_by = d.by
           FROM jsonb_to_recordset($2::jsonb) AS d(id text, "values" jsonb, by text)
          WHERE r.document_id = $1 AND r.id = d.id
         RETURNING ${WRITTEN_ROW_COLUMNS}`),
        [documentUuid, JSON.stringify(all)],
      );
      return written;
    });
    const mine = new Set(rows.map((row) => row.id));
    return writtenRecords(
      updated.filter((row) => mine.has(row.id)),
      rows,
    );
  }

  async deleteMany(documentUuid: string, rowIds: readonly string[]): Promise<number> {
    if (rowIds.length === 0) {
      return 0;
    }
    const result = await this.tx.manager.query<[unknown[], number]>(
      prepared(`DELETE FROM document_rows WHERE document_id = $1 AND id = ANY($2::text[])`),
      [documentUuid, [...rowIds]],
    );
    return result[1];
  }

  /**
   * Rows outside `excludeRowIds` already holding one of the candidate values. Containment (`@>`) lets the GIN
   * index find candidates; the equality test keeps arrays exact.
   */
  async findUniqueClashes(documentUuid: string, candidates: readonly UniqueCandidate[], excludeRowIds: readonly string[]): Promise<UniqueClash[]> {
    if (candidates.length === 0) {
      return [];
    }
    const probe = candidates.map((candidate) => ({ k: candidate.fieldId, v: candidate.value, o: { [candidate.fieldId]: candidate.value } }));
    const rows = await this.tx.manager.query<{ rowId: string; fieldId: string; value: StoredValue }[]>(
      `SELECT r.id AS "rowId", c.k AS "fieldId", c.v AS value
         FROM jsonb_to_recordset($2::jsonb) AS c(k text, v jsonb, o jsonb)
         JOIN document_rows r ON r.document_id = $1 AND r."values" @> c.o AND r."values" -> c.k = c.v
        WHERE NOT (r.id = ANY($3::text[]))
        LIMIT 100`,
      [documentUuid, JSON.stringify(probe), [...excludeRowIds]],
    );
    return rows;
  }

  /** A field's values occurring more than once (for switching `unique` on). */
  async duplicateValues(documentUuid: string, fieldId: string): Promise<StoredValue[]> {
    const rows = await this.tx.manager.query<{ value: StoredValue }[]>(
      `SELECT r."values" -> $2::text AS value FROM document_rows r
        WHERE r.document_id = $1 AND r."values" ? $2::text
        GROUP BY 1 HAVING count(*) > 1 LIMIT 10`,
      [documentUuid, fieldId],
    );
    return rows.map((row) => row.value);
  }
}
