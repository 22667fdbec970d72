import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { FieldDefinition, StoredRowValues, StoredValue } from '../fields/field.types.js';
import type { RowRecord } from '../domain/document.records.js';
import { ROW_COLUMNS, toRowRecord } from './row.repository.js';
import { prepared } from '../../../database/prepared-statements.js';

export interface LinkedValues {
  rowId: string;
  fieldId: string;
  targetDocumentUuid: string;
  targetRowId: string;
  /** The target row's values of the requested field ids only. */
  values: StoredRowValues;
}

export interface ComputedPatch {
  id: string;
  set: StoredRowValues;
  unset: string[];
}

export interface DependentRows {
  documentUuid: string;
  fieldId: string;
  rowIds: string[];
}

/**
 * SQL for materialised computed values (docs/formulas.md): rows to recompute, the values their relation edges
 * reach, the rows that depend on changed rows, and in-place writes that neither bump the row version nor create
 * a revision.
 */
@Injectable()
export class ComputedValuesRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * The rows with these ids, in `seq` order. `lock`: locked first (in id order and mode, as every row writer), so a
   * recomputation reads its sources only once no other transaction can recompute the same rows: two merges changing
   * different sources of one rollup then see each other's change instead of each writing a sum missing the other's.
   */
  async rowsByIds(documentUuid: string, rowIds: readonly string[], lock = false): Promise<RowRecord[]> {
    if (rowIds.length === 0) {
      return [];
    }
    const select = `SELECT ${ROW_COLUMNS} FROM document_rows r WHERE r.document_id = $1 AND r.id = ANY($2::text[])`;
    const rows = await this.tx.manager.query<Parameters<typeof toRowRecord>[0][]>(
      lock
        ? `SELECT * FROM (${select} ORDER BY r.id FOR NO KEY UPDATE) r ORDER BY r.seq`
        : `${select} ORDER BY r.seq`,
      [documentUuid, [...rowIds]],
    );
    return rows.map(toRowRecord);
  }

  /** The next batch of rows after `afterSeq` (keyset), for recomputing a whole document. */
  async rowsAfter(documentUuid: string, afterSeq: string, limit: number): Promise<RowRecord[]> {
    const rows = await this.tx.manager.query<Parameters<typeof toRowRecord>[0][]>(
      `SELECT ${ROW_COLUMNS} FROM document_rows r WHERE r.document_id = $1 AND r.seq > $2::bigint ORDER BY r.seq LIMIT $3`,
      [documentUuid, afterSeq, limit],
    );
    return rows.map(toRowRecord);
  }

  /** For each source row and relation field: the linked target rows (edge order) with the target fields asked for. */
  async linkedValues(
    documentUuid: string,
    rowIds: readonly string[],
    relationFieldIds: readonly string[],
    targetFieldIds: readonly string[],
  ): Promise<LinkedValues[]> {
    if (rowIds.length === 0 || relationFieldIds.length === 0) {
      return [];
    }
    return this.tx.manager.query<LinkedValues[]>(
      `SELECT e.source_row_id AS "rowId", e.field_id AS "fieldId", e.target_document_id AS "targetDocumentUuid",
              e.target_row_id AS "targetRowId",
              COALESCE((SELECT jsonb_object_agg(k, t."values" -> k) FROM unnest($4::text[]) AS k WHERE t."values" ? k), '{}'::jsonb) AS "values"
         FROM document_relations e
         JOIN document_rows t ON t.document_id = e.target_document_id AND t.id = e.target_row_id
         JOIN documents td ON td.id = e.target_document_id AND td.deleted_at IS NULL
        WHERE e.source_document_id = $1 AND e.source_row_id = ANY($2::text[]) AND e.field_id = ANY($3::text[])
        ORDER BY e.source_row_id, e.created_at, e.id`,
      [documentUuid, [...rowIds], [...relationFieldIds], [...targetFieldIds]],
    );
  }

  /** Rows (of any document) whose relation field values link to these rows. */
  async dependents(targetDocumentUuid: string, targetRowIds: readonly string[]): Promise<DependentRows[]> {
    if (targetRowIds.length === 0) {
      return [];
    }
    return this.tx.manager.query<DependentRows[]>(
      `SELECT e.source_document_id AS "documentUuid", e.field_id AS "fieldId", array_agg(DISTINCT e.source_row_id) AS "rowIds"
         FROM document_relations e
        WHERE e.target_document_id = $1 AND e.target_row_id = ANY($2::text[]) AND e.field_id IS NOT NULL
        GROUP BY 1, 2`,
      [targetDocumentUuid, [...targetRowIds]],
    );
  }

  /** Rows of other documents whose relation field values link to any row of this document. */
  dependentsOfDocument(targetDocumentUuid: string): Promise<DependentRows[]> {
    return this.tx.manager.query<DependentRows[]>(
      `SELECT e.source_document_id AS "documentUuid", e.field_id AS "fieldId", array_agg(DISTINCT e.source_row_id) AS "rowIds"
         FROM document_relations e
        WHERE e.target_document_id = $1 AND e.field_id IS NOT NULL
        GROUP BY 1, 2`,
      [targetDocumentUuid],
    );
  }

  /** Writes computed values in place: no version bump, no `updated_at`, no revision (they are derived). */
  async write(documentUuid: string, patches: readonly ComputedPatch[]): Promise<void> {
    if (patches.length === 0) {
      return;
    }
    await this.tx.manager.query(
      `UPDATE document_rows AS r
          SET "values" = (r."values" || d.set) - ARRAY(SELECT jsonb_array_elements_text(d.unset))
         FROM jsonb_to_recordset($2::jsonb) AS d(id text, set jsonb, unset jsonb)
        WHERE r.document_id = $1 AND r.id = d.id`,
      [documentUuid, JSON.stringify(patches)],
    );
  }

  /** Records which documents a relation field's lookups read from (only adds). */
  async recordSources(
    documentUuid: string,
    sources: readonly { relationFieldId: string; targetDocumentUuid: string }[],
  ): Promise<void> {
    if (sources.length === 0) {
      return;
    }
    await this.tx.manager.query(
      `INSERT INTO computed_field_sources (organization_id, document_id, relation_field_id, target_document_id)
       SELECT d.organization_id, d.id, s.f, s.t FROM documents d, jsonb_to_recordset($2::jsonb) AS s(f text, t uuid)
        WHERE d.id = $1
       ON CONFLICT DO NOTHING`,
      [
        documentUuid,
        JSON.stringify(
          sources.map((source) => ({ f: source.relationFieldId, t: source.targetDocumentUuid })),
        ),
      ],
    );
  }

  /** The other documents the lookups over these relation fields have read from. */
  async sources(
    documentUuid: string,
    relationFieldIds: readonly string[],
  ): Promise<{ relationFieldId: string; targetDocumentUuid: string }[]> {
    if (relationFieldIds.length === 0) {
      return [];
    }
    return this.tx.manager.query(
      `SELECT s.relation_field_id AS "relationFieldId", s.target_document_id AS "targetDocumentUuid"
         FROM computed_field_sources s
         JOIN documents d ON d.id = s.document_id
        WHERE s.organization_id = d.organization_id AND s.document_id = $1 AND s.relation_field_id = ANY($2::text[])`,
      [documentUuid, [...relationFieldIds]],
    );
  }

  /** Every document the lookups over any relation field of the document have read from (its own included). */
  async allSources(documentUuid: string): Promise<{ relationFieldId: string; targetDocumentUuid: string }[]> {
    return this.tx.manager.query(
      `SELECT s.relation_field_id AS "relationFieldId", s.target_document_id AS "targetDocumentUuid"
         FROM computed_field_sources s
         JOIN documents d ON d.id = s.document_id
        WHERE s.organization_id = d.organization_id AND s.document_id = $1`,
      [documentUuid],
    );
  }

  /**
   * The definitions of formulas, lookups and rollups the document's history records (field operations): values its
   * revisions hold may belong to fields it no longer has, or had with another definition.
   */
  async recordedComputedFields(documentUuid: string): Promise<FieldDefinition[]> {
    const rows = await this.tx.manager.query<{ field: FieldDefinition }[]>(
      `SELECT DISTINCT d.def AS field
         FROM revision_operations o, LATERAL (VALUES (o.old_value -> 'field'), (o.new_value -> 'field')) AS d(def)
        WHERE o.document_id = $1 AND o.target_kind = 'field' AND jsonb_typeof(d.def) = 'object'
          AND d.def ->> 'type' IN ('formula', 'lookup', 'rollup')`,
      [documentUuid],
    );
    return rows.map((row) => row.field).filter((field) => typeof field.id === 'string');
  }

  /** Documents whose lookups over a relation field have read from `targetDocumentUuid`, with that field. */
  async readers(
    organizationId: string,
    targetDocumentUuid: string,
  ): Promise<{ documentUuid: string; relationFieldId: string }[]> {
    // A group of row writes of one document (WriteBatcher) asks once for all of them: rows-only writes never change
    // the sources. Elsewhere the read is fresh, since a metadata merge may record sources earlier in its transaction.
    return this.tx.groupMemo(this, `${organizationId}|${targetDocumentUuid}`, () =>
      this.tx.manager.query<{ documentUuid: string; relationFieldId: string }[]>(
        prepared(`SELECT s.document_id AS "documentUuid", s.relation_field_id AS "relationFieldId"
           FROM computed_field_sources s
          WHERE s.organization_id = $1 AND s.target_document_id = $2`),
        [organizationId, targetDocumentUuid],
      ),
    );
  }

  /** A document's stored property values, for read-time property formulas. */
  async aggregate(
    documentUuid: string,
    fn: 'SUM' | 'AVG' | 'MIN' | 'MAX' | 'COUNT',
    fieldId: string,
    // The field's value as SQL over `r` when it is not stored (a NOW()/TODAY() formula: volatileFieldSql).
    valueSql?: string,
  ): Promise<StoredValue> {
    if (fieldId === '*') {
      const rows = await this.tx.manager.query<{ value: string }[]>(
        `SELECT count(*)::text AS value FROM document_rows r WHERE r.document_id = $1`,
        [documentUuid],
      );
      return Number(rows[0]?.value ?? 0);
    }
    // In numeric, not double precision: a sum past 1.8e308 overflowed in PostgreSQL (an error on the read, and on
    // the read-back of a committed property write); here it comes back as text and becomes an empty value.
    const number = valueSql
      ? `(${valueSql})::numeric`
      : `(CASE WHEN jsonb_typeof(r."values" -> $2::text) = 'number' THEN (r."values" -> $2::text)::numeric END)`;
    const present = valueSql
      ? `(${valueSql}) IS NOT NULL`
      : `r."values" ? $2::text AND r."values" -> $2::text <> 'null'::jsonb`;
    const expression =
      fn === 'COUNT' ? `count(*) FILTER (WHERE ${present})` : `${fn.toLowerCase()}(${number})`;
    const rows = await this.tx.manager.query<{ value: string | null }[]>(
      `SELECT (${expression})::text AS value FROM document_rows r WHERE r.document_id = $1`,
      valueSql ? [documentUuid] : [documentUuid, fieldId],
    );
    const value = rows[0]?.value;
    if (value === null || value === undefined) {
      return fn === 'SUM' ? 0 : null;
    }
    // A runtime error leaves the value empty (docs/formulas.md): a total beyond the double range is one.
    const total = Number(value);
    return Number.isFinite(total) ? total : null;
  }
}
