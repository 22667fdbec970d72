import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentMetadata, DocumentRecord, DocumentSettings, RowRecord } from '../domain/document.records.js';
import type { FieldDefinition, StoredRowValues } from '../fields/field.types.js';
import { toRowRecord } from './row.repository.js';
import { prepared } from '../../../database/prepared-statements.js';

interface DocumentRow {
  uuid: string;
  organizationId: string;
  workspaceId: string | null;
  docType: string;
  docId: string;
  title: string | null;
  metadata: DocumentMetadata | null;
  metadataVersion: string;
  settings: DocumentSettings | null;
  version: string;
  rowSeq: string;
  rowCount: string;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
  updatedBy: string | null;
}

const COLUMNS = `d.id AS "uuid", d.organization_id AS "organizationId", d.workspace_id AS "workspaceId", d.doc_type AS "docType",
  d.doc_id AS "docId", d.title, d.metadata, d.metadata_version AS "metadataVersion", d.settings, d.version,
  d.row_seq AS "rowSeq", d.row_count AS "rowCount", d.created_at AS "createdAt", d.created_by AS "createdBy",
  d.updated_at AS "updatedAt", d.updated_by AS "updatedBy"`;

/** `document_rows` columns read next to the document by findInWorkspaceWithRow (NULL when the row does not exist). */
const PREFETCHED_ROW_COLUMNS = `r.id AS "prefetchedRowId", r.seq AS "prefetchedRowSeq", r."values" AS "prefetchedRowValues",
  r.version AS "prefetchedRowVersion", r.created_at AS "prefetchedRowCreatedAt", r.created_by AS "prefetchedRowCreatedBy",
  r.updated_at AS "prefetchedRowUpdatedAt", r.updated_by AS "prefetchedRowUpdatedBy"`;

interface PrefetchedRowColumns {
  prefetchedRowId: string | null;
  prefetchedRowSeq: string;
  prefetchedRowValues: StoredRowValues;
  prefetchedRowVersion: string;
  prefetchedRowCreatedAt: Date;
  prefetchedRowCreatedBy: string | null;
  prefetchedRowUpdatedAt: Date;
  prefetchedRowUpdatedBy: string | null;
}

/**
 * The advisory key of a document's write lock (docs/documents.md, "Locking"): taken exclusively before the document
 * row by writers that lock the document first (`lock`), shared by rows-only writes before their rows
 * (`shareWriteLock`, also by what a write changes in another document). Lock order on one document is thus always
 * write lock, rows, document row, or write lock, document row, rows — never a document row held while a rows-only
 * writer waits for it with rows of its own. An
 * advisory lock lives in the lock manager only: unlike a share lock on the document row (`FOR KEY SHARE`), many
 * holders never make the row a multixact that the revision's `UPDATE` must rewrite (docs/performance.md).
 */
const WRITE_LOCK_KEY = `hashtextextended('document-write:' || $1::text, 0)`;

function toRecord(row: DocumentRow): DocumentRecord {
  return {
    ...row,
    metadata: { fields: row.metadata?.fields ?? [], properties: row.metadata?.properties ?? [] },
    settings: row.settings ?? {},
    metadataVersion: Number(row.metadataVersion),
    version: Number(row.version),
    rowSeq: Number(row.rowSeq),
    rowCount: Number(row.rowCount),
  };
}

/**
 * SQL for `documents`. A document is identified within its tenant (docs/documents.md): `(workspace, type, id)`,
 * or `(organization, type, id)` for organization-level documents (`workspace_id` NULL). Every lookup names the
 * workspace or the organizations it searches; none searches across tenants.
 */
@Injectable()
export class DocumentRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(input: {
    organizationId: string;
    workspaceId: string | null;
    docType: string;
    docId: string;
    title: string | null;
    settings: DocumentSettings;
    createdBy: string;
  }): Promise<DocumentRecord> {
    const rows = await this.tx.manager.query<DocumentRow[]>(
      `INSERT INTO documents AS d (organization_id, workspace_id, doc_type, doc_id, title, settings, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $7)
       RETURNING ${COLUMNS}`,
      [input.organizationId, input.workspaceId, input.docType, input.docId, input.title, JSON.stringify(input.settings), input.createdBy],
    );
    return toRecord(rows[0] as DocumentRow);
  }

  /**
   * Takes the document's write lock shared until the transaction ends: the first statement of a rows-only write
   * (ChangeEngineService), before any row lock; also taken before the rows of another document that a write changes
   * (recomputed lookups, references to deleted rows dropped). Rows-only writes of one document go on together (their
   * rows serialize them); a writer that locks the document row first (`lock`) waits for them, and they for it. Once
   * per group of writes (WriteBatcher): a group is one transaction.
   */
  async shareWriteLock(uuid: string): Promise<void> {
    await this.tx.groupMemo(this, `write-lock|${uuid}`, () =>
      this.tx.manager.query(prepared(`SELECT pg_advisory_xact_lock_shared(${WRITE_LOCK_KEY})`), [uuid]),
    );
  }

  /** The live document's field definitions, its row share-locked until the transaction ends (DocumentFacts.lockFields). */
  async lockFields(uuid: string): Promise<FieldDefinition[] | null> {
    const rows = await this.tx.manager.query<Array<{ fields: FieldDefinition[] | null }>>(
      prepared(`SELECT d.metadata->'fields' AS fields FROM documents d WHERE d.id = $1 AND d.deleted_at IS NULL FOR SHARE`),
      [uuid],
    );
    return rows[0] ? (rows[0].fields ?? []) : null;
  }

  /** Live (not deleted) documents of an organization, for the organization's statistics. */
  async countByOrganization(organizationId: string): Promise<number> {
    // A deleted workspace keeps its rows but no route reaches them: they are not live documents of the organization.
    const rows = await this.tx.manager.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM documents d
        WHERE d.organization_id = $1 AND d.deleted_at IS NULL
          AND (d.workspace_id IS NULL OR EXISTS (SELECT 1 FROM workspaces w WHERE w.id = d.workspace_id AND w.deleted_at IS NULL))`,
      [organizationId],
    );
    return rows[0]?.n ?? 0;
  }

  /** A live document with this id in the same scope: the workspace, or the organization level when `workspaceId` is null. */
  async existsInScope(organizationId: string, workspaceId: string | null, docType: string, docId: string): Promise<boolean> {
    const rows = await this.tx.manager.query<unknown[]>(
      workspaceId
        ? `SELECT 1 FROM documents WHERE workspace_id = $1 AND doc_type = $2 AND doc_id = $3 AND deleted_at IS NULL`
        : `SELECT 1 FROM documents WHERE organization_id = $1 AND workspace_id IS NULL AND doc_type = $2 AND doc_id = $3 AND deleted_at IS NULL`,
      [workspaceId ?? organizationId, docType, docId],
    );
    return rows.length > 0;
  }

  async findInWorkspace(workspaceId: string, docType: string, docId: string): Promise<DocumentRecord | null> {
    const rows = await this.tx.select<DocumentRow>(
      prepared(`SELECT ${COLUMNS} FROM documents d WHERE d.workspace_id = $1 AND d.doc_type = $2 AND d.doc_id = $3 AND d.deleted_at IS NULL`),
      [workspaceId, docType, docId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * The workspace's document with one of its rows, in one statement: `GET /data/{rowId}` is the hottest read, and
   * the row is read in the same snapshot as the document it is rendered with (docs/performance.md).
   */
  async findInWorkspaceWithRow(
    workspaceId: string,
    docType: string,
    docId: string,
    rowId: string,
  ): Promise<{ document: DocumentRecord; row: RowRecord | null } | null> {
    const rows = await this.tx.select<DocumentRow & PrefetchedRowColumns>(
      prepared(`SELECT ${COLUMNS}, ${PREFETCHED_ROW_COLUMNS}
         FROM documents d LEFT JOIN document_rows r ON r.document_id = d.id AND r.id = $4
        WHERE d.workspace_id = $1 AND d.doc_type = $2 AND d.doc_id = $3 AND d.deleted_at IS NULL`),
      [workspaceId, docType, docId, rowId],
    );
    const found = rows[0];
    if (!found) {
      return null;
    }
    const row =
      found.prefetchedRowId === null
        ? null
        : toRowRecord({
            id: found.prefetchedRowId,
            seq: found.prefetchedRowSeq,
            values: found.prefetchedRowValues,
            version: found.prefetchedRowVersion,
            createdAt: found.prefetchedRowCreatedAt,
            createdBy: found.prefetchedRowCreatedBy,
            updatedAt: found.prefetchedRowUpdatedAt,
            updatedBy: found.prefetchedRowUpdatedBy,
          });
    return { document: toRecord(found), row };
  }

  async findOrganizationLevel(organizationId: string, docType: string, docId: string): Promise<DocumentRecord | null> {
    const rows = await this.tx.select<DocumentRow>(
      prepared(`SELECT ${COLUMNS} FROM documents d
        WHERE d.organization_id = $1 AND d.workspace_id IS NULL AND d.doc_type = $2 AND d.doc_id = $3 AND d.deleted_at IS NULL`),
      [organizationId, docType, docId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * Documents with this type and id in the given organizations (the caller's), workspace-level and organization-level,
   * oldest first, `limit` at a time: `after` (a document's internal id) continues after that document. The key is
   * compared in SQL (a subquery reads its `created_at`), since a JavaScript Date would drop the microseconds.
   */
  async findInOrganizations(organizationIds: readonly string[], docType: string, docId: string, limit: number, after?: string): Promise<DocumentRecord[]> {
    if (organizationIds.length === 0) {
      return [];
    }
    const rows = await this.tx.manager.query<DocumentRow[]>(
      `SELECT ${COLUMNS} FROM documents d
        WHERE d.organization_id = ANY($1::uuid[]) AND d.doc_type = $2 AND d.doc_id = $3 AND d.deleted_at IS NULL
          AND ($5::uuid IS NULL OR (d.created_at, d.id) > (SELECT a.created_at, a.id FROM documents a WHERE a.id = $5::uuid))
        ORDER BY d.created_at, d.id LIMIT $4`,
      [organizationIds, docType, docId, limit, after ?? null],
    );
    return rows.map(toRecord);
  }

  /** A live document by its internal id (re-read inside a unit of work). */
  async findByUuid(uuid: string): Promise<DocumentRecord | null> {
    const rows = await this.tx.manager.query<DocumentRow[]>(prepared(`SELECT ${COLUMNS} FROM documents d WHERE d.id = $1 AND d.deleted_at IS NULL`), [uuid]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** A document by its internal id, also once deleted (its record as it stood then: tenant, type, settings). */
  async findIncludingDeleted(uuid: string): Promise<DocumentRecord | null> {
    const rows = await this.tx.manager.query<DocumentRow[]>(prepared(`SELECT ${COLUMNS} FROM documents d WHERE d.id = $1`), [uuid]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * Locks the document row: every write and every merge of one document runs after this, one at a time. The
   * document's write lock is taken exclusively first (WRITE_LOCK_KEY): a rows-only write holds it shared from its first
   * statement, before its rows, so a writer that locks the document and then rows waits for the rows-only writes
   * under way (which lock rows, then the document row at their end) instead of deadlocking with them.
   */
  async lock(uuid: string): Promise<DocumentRecord | null> {
    await this.tx.manager.query(prepared(`SELECT pg_advisory_xact_lock(${WRITE_LOCK_KEY})`), [uuid]);
    const rows = await this.tx.manager.query<DocumentRow[]>(
      prepared(`SELECT ${COLUMNS} FROM documents d WHERE d.id = $1 AND d.deleted_at IS NULL FOR UPDATE`),
      [uuid],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * Documents of a type served in one scope, oldest first: a workspace's own documents, plus (with
   * `organizationId`) the organization-level documents of that organization; or, with `workspaceId` null, only
   * the organization-level documents.
   */
  async listInScope(
    scope: { workspaceId: string | null; organizationId: string | null },
    docType: string,
    paging: { limit: number; offset: number },
  ): Promise<{ items: DocumentRecord[]; total: number }> {
    const where = `d.doc_type = $1 AND d.deleted_at IS NULL AND (d.workspace_id = $2 OR (d.workspace_id IS NULL AND d.organization_id = $3))`;
    const params = [docType, scope.workspaceId, scope.organizationId];
    const [items, count] = await Promise.all([
      this.tx.manager.query<DocumentRow[]>(`SELECT ${COLUMNS} FROM documents d WHERE ${where} ORDER BY d.created_at, d.id LIMIT $4 OFFSET $5`, [
        ...params,
        paging.limit,
        paging.offset,
      ]),
      this.tx.manager.query<{ total: string }[]>(`SELECT count(*) AS total FROM documents d WHERE ${where}`, params),
    ]);
    return { items: items.map(toRecord), total: Number(count[0]?.total ?? 0) };
  }

  async softDelete(uuid: string, userId: string): Promise<void> {
    await this.tx.manager.query(`UPDATE documents SET deleted_at = now(), deleted_by = $2, updated_at = now(), updated_by = $2 WHERE id = $1`, [
      uuid,
      userId,
    ]);
  }
}
