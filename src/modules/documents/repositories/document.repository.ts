import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentMetadata, DocumentRecord, DocumentSettings } from '../domain/document.records.js';

interface DocumentRow {
  uuid: string;
  organizationId: string;
  workspaceId: string;
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

/** SQL for `documents`. Every lookup names the document type, or the workspace it lists. */
@Injectable()
export class DocumentRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(input: {
    organizationId: string;
    workspaceId: string;
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

  /** Live (not deleted) documents of an organization, for the organization's statistics. */
  async countByOrganization(organizationId: string): Promise<number> {
    const rows = await this.tx.manager.query<Array<{ n: number }>>(
      'SELECT count(*)::int AS n FROM documents WHERE organization_id = $1 AND deleted_at IS NULL',
      [organizationId],
    );
    return rows[0]?.n ?? 0;
  }

  async existsDocId(docType: string, docId: string): Promise<boolean> {
    const rows = await this.tx.manager.query<unknown[]>(
      `SELECT 1 FROM documents WHERE doc_type = $1 AND doc_id = $2 AND deleted_at IS NULL`,
      [docType, docId],
    );
    return rows.length > 0;
  }

  async find(docType: string, docId: string): Promise<DocumentRecord | null> {
    const rows = await this.tx.manager.query<DocumentRow[]>(
      `SELECT ${COLUMNS} FROM documents d WHERE d.doc_type = $1 AND d.doc_id = $2 AND d.deleted_at IS NULL`,
      [docType, docId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Locks the document row: every write and every merge of one document runs after this, one at a time. */
  async lock(uuid: string): Promise<DocumentRecord | null> {
    const rows = await this.tx.manager.query<DocumentRow[]>(
      `SELECT ${COLUMNS} FROM documents d WHERE d.id = $1 AND d.deleted_at IS NULL FOR UPDATE`,
      [uuid],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async listByWorkspace(
    workspaceId: string,
    docType: string,
    paging: { limit: number; offset: number },
  ): Promise<{ items: DocumentRecord[]; total: number }> {
    const [items, count] = await Promise.all([
      this.tx.manager.query<DocumentRow[]>(
        `SELECT ${COLUMNS} FROM documents d
          WHERE d.workspace_id = $1 AND d.doc_type = $2 AND d.deleted_at IS NULL
          ORDER BY d.created_at, d.id LIMIT $3 OFFSET $4`,
        [workspaceId, docType, paging.limit, paging.offset],
      ),
      this.tx.manager.query<{ total: string }[]>(
        `SELECT count(*) AS total FROM documents WHERE workspace_id = $1 AND doc_type = $2 AND deleted_at IS NULL`,
        [workspaceId, docType],
      ),
    ]);
    return { items: items.map(toRecord), total: Number(count[0]?.total ?? 0) };
  }

  async softDelete(uuid: string, userId: string): Promise<void> {
    await this.tx.manager.query(`UPDATE documents SET deleted_at = now(), deleted_by = $2, updated_at = now(), updated_by = $2 WHERE id = $1`, [
      uuid,
      userId,
    ]);
  }

  /** Records a merge: the new revision number and whatever the merge changed on the document itself. */
  async applyMerge(
    uuid: string,
    change: {
      version: number;
      updatedBy: string;
      rowSeq: number;
      rowCountDelta: number;
      metadata?: DocumentMetadata;
      settings?: DocumentSettings;
    },
  ): Promise<void> {
    await this.tx.manager.query(
      `UPDATE documents SET version = $2, updated_at = now(), updated_by = $3, row_seq = $4, row_count = row_count + $5,
              metadata = COALESCE($6::jsonb, metadata),
              metadata_version = metadata_version + (CASE WHEN $6::jsonb IS NULL THEN 0 ELSE 1 END),
              settings = COALESCE($7::jsonb, settings)
        WHERE id = $1`,
      [
        uuid,
        change.version,
        change.updatedBy,
        change.rowSeq,
        change.rowCountDelta,
        change.metadata ? JSON.stringify(change.metadata) : null,
        change.settings ? JSON.stringify(change.settings) : null,
      ],
    );
  }
}
