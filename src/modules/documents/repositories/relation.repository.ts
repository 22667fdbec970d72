import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { RelationDirection, RelationEnd } from '../domain/document.records.js';
import type { StoredRowValues, StoredValue } from '../fields/field.types.js';
import { permissionListAdmitsSql } from './settings-sql.js';

/** One `document_relations` row with both ends named. */
export interface RelationRecord {
  id: string;
  organizationId: string;
  source: RelationEnd;
  target: RelationEnd;
  fieldId: string | null;
  type: string;
  direction: RelationDirection;
  metadata: Record<string, unknown>;
  createdAt: Date;
  createdBy: string;
}

export interface NewRelation {
  id?: string;
  organizationId: string;
  sourceDocumentUuid: string;
  sourceRowId: string;
  fieldId: string | null;
  type: string;
  direction: RelationDirection;
  targetDocumentUuid: string;
  targetRowId: string;
  metadata: Record<string, unknown>;
  createdBy: string;
}

export type RelationView = 'outgoing' | 'incoming';

interface RelationRow {
  id: string;
  organizationId: string;
  fieldId: string | null;
  type: string;
  direction: RelationDirection;
  metadata: Record<string, unknown>;
  createdAt: Date;
  createdBy: string;
  sUuid: string;
  sType: string;
  sId: string;
  sWs: string | null;
  sRow: string;
  tUuid: string;
  tType: string;
  tId: string;
  tWs: string | null;
  tRow: string;
}

/** Selects an edge `e` with both documents; used over the table and over DELETE/INSERT … RETURNING sets. */
const SELECT = `SELECT e.id, e.organization_id AS "organizationId", e.field_id AS "fieldId", e.type, e.direction, e.metadata,
  e.created_at AS "createdAt", e.created_by AS "createdBy",
  sd.id AS "sUuid", sd.doc_type AS "sType", sd.doc_id AS "sId", sd.workspace_id AS "sWs", e.source_row_id AS "sRow",
  td.id AS "tUuid", td.doc_type AS "tType", td.doc_id AS "tId", td.workspace_id AS "tWs", e.target_row_id AS "tRow"`;
const JOIN = `JOIN documents sd ON sd.id = e.source_document_id JOIN documents td ON td.id = e.target_document_id`;

/** A document's scope and type as one text key (`<workspace>|<type>`, `org:<organization>|<type>` at organization level). */
const SCOPE_KEY = (alias: string): string => `(coalesce(${alias}.workspace_id::text, 'org:' || ${alias}.organization_id::text) || '|' || ${alias}.doc_type)`;

/** Where documents at the other end of a document's edges live (otherScopes). */
export interface OtherEndScope {
  key: string;
  organizationId: string;
  workspaceId: string | null;
  docType: string;
}

/**
 * Which documents at the other end of listed edges the caller may read, by scope key (OtherEndScope): `open`, every
 * document there; `narrowed`, those whose own `permissions.view` holds one of the role subjects given, or `userId`
 * (settings-sql.ts). A key in neither is closed: its edges are left out.
 */
export interface OtherEndReaders {
  open: readonly string[];
  narrowed: Record<string, string[]>;
  userId: string;
}

function toRecord(row: RelationRow): RelationRecord {
  return {
    id: row.id,
    organizationId: row.organizationId,
    fieldId: row.fieldId,
    type: row.type,
    direction: row.direction,
    metadata: row.metadata,
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    source: { documentUuid: row.sUuid, docType: row.sType, docId: row.sId, workspaceId: row.sWs, rowId: row.sRow },
    target: { documentUuid: row.tUuid, docType: row.tType, docId: row.tId, workspaceId: row.tWs, rowId: row.tRow },
  };
}

/** SQL for `document_relations` (the edges of relations and of relation field values). */
@Injectable()
export class RelationRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** Inserts edges; one that exists already is skipped (not returned). */
  async insertMany(edges: readonly NewRelation[]): Promise<RelationRecord[]> {
    if (edges.length === 0) {
      return [];
    }
    const rows = await this.tx.manager.query<RelationRow[]>(
      `WITH e AS (
         INSERT INTO document_relations (id, organization_id, source_document_id, source_row_id, field_id, type, direction, target_document_id, target_row_id, metadata, created_by)
         SELECT coalesce(x.id, gen_random_uuid()), x.organization_id, x.source_document_id, x.source_row_id, x.field_id, x.type, x.direction,
                x.target_document_id, x.target_row_id, coalesce(x.metadata, '{}'::jsonb), x.created_by
           FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, organization_id uuid, source_document_id uuid, source_row_id text, field_id text, type text,
                direction text, target_document_id uuid, target_row_id text, metadata jsonb, created_by text, ord integer)
          ORDER BY x.ord
         ON CONFLICT DO NOTHING
         RETURNING *)
       ${SELECT} FROM e ${JOIN} ORDER BY e.created_at, e.id`,
      [
        JSON.stringify(
          edges.map((edge, ord) => ({
            id: edge.id ?? null,
            organization_id: edge.organizationId,
            source_document_id: edge.sourceDocumentUuid,
            source_row_id: edge.sourceRowId,
            field_id: edge.fieldId,
            type: edge.type,
            direction: edge.direction,
            target_document_id: edge.targetDocumentUuid,
            target_row_id: edge.targetRowId,
            metadata: edge.metadata,
            created_by: edge.createdBy,
            ord,
          })),
        ),
      ],
    );
    return rows.map(toRecord);
  }

  async find(id: string): Promise<RelationRecord | null> {
    const rows = await this.tx.manager.query<RelationRow[]>(`${SELECT} FROM document_relations e ${JOIN} WHERE e.id = $1`, [id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * The free-standing edge of this type that already links these rows as a new edge would, if there is one: the
   * same edge, or the edge in the other direction when either of the two is `bidirectional` (a two-way edge links
   * its pair once, docs/decisions/relations-model.md).
   */
  async findFree(
    sourceDocumentUuid: string,
    sourceRowId: string,
    type: string,
    targetDocumentUuid: string,
    targetRowId: string,
    direction: RelationDirection,
  ): Promise<RelationRecord | null> {
    const rows = await this.tx.manager.query<RelationRow[]>(
      `${SELECT} FROM document_relations e ${JOIN}
        WHERE e.field_id IS NULL AND e.type = $3
          AND ((e.source_document_id = $1 AND e.source_row_id = $2 AND e.target_document_id = $4 AND e.target_row_id = $5)
            OR (e.source_document_id = $4 AND e.source_row_id = $5 AND e.target_document_id = $1 AND e.target_row_id = $2
                AND ($6 = 'bidirectional' OR e.direction = 'bidirectional')))
        ORDER BY e.created_at, e.id LIMIT 1`,
      [sourceDocumentUuid, sourceRowId, type, targetDocumentUuid, targetRowId, direction],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * Serializes, until the transaction ends, the writers of free-standing edges of `type` between two rows, in
   * either direction (merges of the two documents lock different document rows, and the unique index sees only one
   * direction). Callers lock several pairs in sorted order.
   */
  async lockPair(organizationId: string, type: string, ends: readonly [string, string]): Promise<void> {
    const [first, second] = [...ends].sort();
    await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`relation-pair:${organizationId}:${type}:${first}:${second}`]);
  }

  async deleteByIds(ids: readonly string[]): Promise<RelationRecord[]> {
    if (ids.length === 0) {
      return [];
    }
    return this.deleteWhere(`id = ANY($1::uuid[])`, [ids]);
  }

  /** Removes free-standing edges (no relation field) starting at a row of a document, by id; others are left. */
  async deleteFree(documentUuid: string, ids: readonly string[]): Promise<RelationRecord[]> {
    if (ids.length === 0) {
      return [];
    }
    return this.deleteWhere(`source_document_id = $1 AND field_id IS NULL AND id = ANY($2::uuid[])`, [documentUuid, ids]);
  }

  /** Removes every edge from or to these rows of a document (a row delete). */
  async deleteForRows(documentUuid: string, rowIds: readonly string[]): Promise<RelationRecord[]> {
    if (rowIds.length === 0) {
      return [];
    }
    return this.deleteWhere(
      `(source_document_id = $1 AND source_row_id = ANY($2::text[])) OR (target_document_id = $1 AND target_row_id = ANY($2::text[]))`,
      [documentUuid, rowIds],
    );
  }

  /** Removes the edges of relation fields of a document (fields deleted or converted away from `relation`). */
  async deleteForFields(documentUuid: string, fieldIds: readonly string[]): Promise<RelationRecord[]> {
    if (fieldIds.length === 0) {
      return [];
    }
    return this.deleteWhere(`source_document_id = $1 AND field_id = ANY($2::text[])`, [documentUuid, fieldIds]);
  }

  /** The edges of relation fields on some rows of a document. */
  async fieldEdges(documentUuid: string, rowIds: readonly string[]): Promise<RelationRecord[]> {
    if (rowIds.length === 0) {
      return [];
    }
    const rows = await this.tx.manager.query<RelationRow[]>(
      `${SELECT} FROM document_relations e ${JOIN} WHERE e.source_document_id = $1 AND e.source_row_id = ANY($2::text[]) AND e.field_id IS NOT NULL ORDER BY e.created_at, e.id`,
      [documentUuid, rowIds],
    );
    return rows.map(toRecord);
  }

  /** Which of these rows exist in a document. */
  /**
   * The ids among `rowIds` that exist, each locked `FOR KEY SHARE` until the transaction ends, as a foreign key
   * would: a row an edge is about to point at cannot be deleted meanwhile (the delete waits, then removes the new
   * edge too), while writers of its values go on (they lock `FOR NO KEY UPDATE`).
   */
  async existingRows(documentUuid: string, rowIds: readonly string[]): Promise<Set<string>> {
    if (rowIds.length === 0) {
      return new Set();
    }
    // Rows of a deleted document are not there for an edge (its rows are kept, the document is soft-deleted).
    const rows = await this.tx.manager.query<{ id: string }[]>(
      `SELECT r.id FROM document_rows r JOIN documents d ON d.id = r.document_id AND d.deleted_at IS NULL
        WHERE r.document_id = $1 AND r.id = ANY($2::text[]) ORDER BY r.id FOR KEY SHARE OF r`,
      [documentUuid, [...rowIds]],
    );
    return new Set(rows.map((row) => row.id));
  }

  /** Whether a relation field of another document's row names one of these rows (deleting them changes that row). */
  async referencedElsewhere(documentUuid: string, rowIds: readonly string[]): Promise<boolean> {
    if (rowIds.length === 0) {
      return false;
    }
    const rows = await this.tx.manager.query<{ found: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM document_relations WHERE target_document_id = $1 AND target_row_id = ANY($2::text[])
                         AND field_id IS NOT NULL AND source_document_id <> $1) AS found`,
      [documentUuid, [...rowIds]],
    );
    return rows[0]?.found === true;
  }

  /**
   * The other documents whose rows' relation fields name one of these rows, in id order: the documents a deletion of
   * the rows changes (MergeService.dropReferencesElsewhere), read before the rows are locked (docs/documents.md, "Locking").
   */
  async referencingDocuments(documentUuid: string, rowIds: readonly string[]): Promise<string[]> {
    if (rowIds.length === 0) {
      return [];
    }
    const rows = await this.tx.manager.query<{ id: string }[]>(
      `SELECT DISTINCT source_document_id AS id FROM document_relations
        WHERE target_document_id = $1 AND target_row_id = ANY($2::text[]) AND field_id IS NOT NULL AND source_document_id <> $1
        ORDER BY 1`,
      [documentUuid, [...rowIds]],
    );
    return rows.map((row) => row.id);
  }

  /** A row's values, locked (to take a dangling reference out of a relation field). */
  async lockRowValues(documentUuid: string, rowId: string): Promise<StoredRowValues | null> {
    const rows = await this.tx.manager.query<{ values: StoredRowValues }[]>(`SELECT "values" FROM document_rows WHERE document_id = $1 AND id = $2 FOR UPDATE`, [documentUuid, rowId]);
    return rows[0]?.values ?? null;
  }

  /** Sets (or with null removes) one field of a row, as a new row version. */
  async setRowField(documentUuid: string, rowId: string, fieldId: string, value: StoredValue | null, userId: string): Promise<void> {
    await this.tx.manager.query(
      `UPDATE document_rows SET "values" = CASE WHEN $4::jsonb IS NULL THEN "values" - $3 ELSE jsonb_set("values", ARRAY[$3], $4::jsonb) END,
              version = version + 1, updated_at = now(), updated_by = $5
        WHERE document_id = $1 AND id = $2`,
      [documentUuid, rowId, fieldId, value === null ? null : JSON.stringify(value), userId],
    );
  }

  /**
   * Edges of a document, newest first. `outgoing`: from its rows (and bidirectional edges to them); `incoming`: to
   * its rows (and bidirectional edges from them). `rowId` names this document's end. Edges whose other document was
   * deleted are left out, and so are those whose other document `readers` does not admit — in SQL, before paging, so
   * `total` and the pages count only the edges the caller may see. Edges within the document itself are always in.
   */
  async list(
    documentUuid: string,
    view: RelationView,
    filters: { type?: string; rowId?: string; readers: OtherEndReaders },
    paging: { limit: number; offset: number },
  ): Promise<{ items: RelationRecord[]; total: number }> {
    const [near, far] = view === 'outgoing' ? ['source', 'target'] : ['target', 'source'];
    const { readers } = filters;
    const params: unknown[] = [documentUuid, filters.rowId ?? null, filters.type ?? null, [...readers.open], JSON.stringify(readers.narrowed), readers.userId];
    // `o` is the other end's document; its scope key picks the rule its workspace and type resolved to.
    const join = `${JOIN} JOIN documents o ON o.id = (CASE WHEN e.${near}_document_id = $1 THEN e.${far}_document_id ELSE e.${near}_document_id END)`;
    const where = `((e.${near}_document_id = $1 AND ($2::text IS NULL OR e.${near}_row_id = $2))
        OR (e.direction = 'bidirectional' AND e.${far}_document_id = $1 AND ($2::text IS NULL OR e.${far}_row_id = $2)))
      AND ($3::text IS NULL OR e.type = $3)
      AND sd.deleted_at IS NULL AND td.deleted_at IS NULL
      AND (o.id = $1 OR ${SCOPE_KEY('o')} = ANY($4::text[])
        OR ($5::jsonb ? ${SCOPE_KEY('o')}
          AND ${permissionListAdmitsSql(`o.settings -> 'permissions' -> 'view'`, `ARRAY(SELECT jsonb_array_elements_text($5::jsonb -> ${SCOPE_KEY('o')}))`, '$6')}))`;
    const [count] = await this.tx.manager.query<{ total: string }[]>(`SELECT count(*) AS total FROM document_relations e ${join} WHERE ${where}`, params);
    const rows = await this.tx.manager.query<RelationRow[]>(`${SELECT} FROM document_relations e ${join} WHERE ${where} ORDER BY e.created_at DESC, e.id DESC LIMIT $7 OFFSET $8`, [
      ...params,
      paging.limit,
      paging.offset,
    ]);
    return { items: rows.map(toRecord), total: Number(count?.total ?? 0) };
  }

  /**
   * Where the live documents at the other end of a document's edges live — workspace (or organization level) and
   * type, each once with its scope key — itself excepted: the caller's access is resolved per scope and type, not
   * per document (RelationsService.list).
   */
  async otherScopes(documentUuid: string): Promise<OtherEndScope[]> {
    return this.tx.manager.query<OtherEndScope[]>(
      `SELECT DISTINCT ${SCOPE_KEY('d')} AS key, d.organization_id AS "organizationId", d.workspace_id AS "workspaceId", d.doc_type AS "docType"
         FROM documents d
        WHERE d.deleted_at IS NULL AND d.id <> $1
          AND d.id IN (SELECT e.target_document_id FROM document_relations e WHERE e.source_document_id = $1
                       UNION SELECT e.source_document_id FROM document_relations e WHERE e.target_document_id = $1)`,
      [documentUuid],
    );
  }

  private async deleteWhere(condition: string, params: unknown[]): Promise<RelationRecord[]> {
    const rows = await this.tx.manager.query<RelationRow[]>(`WITH e AS (DELETE FROM document_relations WHERE ${condition} RETURNING *) ${SELECT} FROM e ${JOIN} ORDER BY e.created_at, e.id`, params);
    return rows.map(toRecord);
  }
}
