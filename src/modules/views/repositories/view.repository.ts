import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { ViewConfig, ViewType } from '../domain/view-config.js';

/** One `views` row (migration 1732240500000). */
export interface ViewRecord {
  documentUuid: string;
  id: string;
  organizationId: string;
  workspaceId: string | null;
  name: string;
  type: ViewType;
  config: ViewConfig;
  isDefault: boolean;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
  updatedBy: string | null;
}

const COLUMNS = `v.document_id AS "documentUuid", v.id, v.organization_id AS "organizationId", v.workspace_id AS "workspaceId",
  v.name, v.type, v.config, v.is_default AS "isDefault", v.created_at AS "createdAt", v.created_by AS "createdBy",
  v.updated_at AS "updatedAt", v.updated_by AS "updatedBy"`;

/**
 * SQL for views. Every statement names the document (`document_id`), which the caller resolved with a tenant check
 * (DocumentAccessService), like the documents module's child tables.
 */
@Injectable()
export class ViewRepository {
  constructor(private readonly tx: TransactionHost) {}

  async list(documentUuid: string, paging: { limit: number; offset: number }): Promise<{ items: ViewRecord[]; total: number }> {
    // One after the other: inside the bundle's transaction both run on one connection.
    const items = await this.tx.manager.query<ViewRecord[]>(`SELECT ${COLUMNS} FROM views v WHERE v.document_id = $1 ORDER BY v.created_at, v.id LIMIT $2 OFFSET $3`, [
      documentUuid,
      paging.limit,
      paging.offset,
    ]);
    const count = await this.tx.manager.query<{ total: string }[]>(`SELECT count(*) AS total FROM views WHERE document_id = $1`, [documentUuid]);
    return { items, total: Number(count[0]?.total ?? 0) };
  }

  async find(documentUuid: string, id: string, lock = false): Promise<ViewRecord | null> {
    const rows = await this.tx.manager.query<ViewRecord[]>(`SELECT ${COLUMNS} FROM views v WHERE v.document_id = $1 AND v.id = $2${lock ? ' FOR UPDATE' : ''}`, [
      documentUuid,
      id,
    ]);
    return rows[0] ?? null;
  }

  async findDefault(documentUuid: string): Promise<string | null> {
    const rows = await this.tx.manager.query<{ id: string }[]>(`SELECT id FROM views WHERE document_id = $1 AND is_default`, [documentUuid]);
    return rows[0]?.id ?? null;
  }

  /** Every view of a document, locked (the merge's clean-up after a field change). */
  async lockAll(documentUuid: string): Promise<ViewRecord[]> {
    return this.tx.manager.query<ViewRecord[]>(`SELECT ${COLUMNS} FROM views v WHERE v.document_id = $1 ORDER BY v.created_at, v.id FOR UPDATE`, [documentUuid]);
  }

  /** Inserts a view; null when the id is taken in this document. */
  async insert(view: Omit<ViewRecord, 'createdAt' | 'updatedAt' | 'updatedBy' | 'isDefault'>): Promise<ViewRecord | null> {
    const rows = await this.tx.manager.query<ViewRecord[]>(
      `INSERT INTO views AS v (document_id, id, organization_id, workspace_id, name, type, config, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $8)
       ON CONFLICT (document_id, id) DO NOTHING
       RETURNING ${COLUMNS}`,
      [view.documentUuid, view.id, view.organizationId, view.workspaceId, view.name, view.type, JSON.stringify(view.config), view.createdBy],
    );
    return rows[0] ?? null;
  }

  async update(documentUuid: string, id: string, input: { name: string; type: ViewType; config: ViewConfig; updatedBy: string }): Promise<ViewRecord> {
    // UPDATE … RETURNING answers [rows, count] through TypeORM's pg driver.
    const [rows] = await this.tx.manager.query<[ViewRecord[], number]>(
      `UPDATE views AS v SET name = $3, type = $4, config = $5::jsonb, updated_by = $6, updated_at = now()
        WHERE v.document_id = $1 AND v.id = $2
       RETURNING ${COLUMNS}`,
      [documentUuid, id, input.name, input.type, JSON.stringify(input.config), input.updatedBy],
    );
    return rows[0] as ViewRecord;
  }

  async delete(documentUuid: string, id: string): Promise<void> {
    await this.tx.manager.query(`DELETE FROM views WHERE document_id = $1 AND id = $2`, [documentUuid, id]);
  }

  /**
   * Serializes the changes of a document's default view until the transaction ends (setting a default, deleting
   * one): two of them at once each saw the old default, and the second then ran into the one-default index
   * (a 409 ALREADY_EXISTS for a valid call). Taken before the view rows are read.
   */
  async lockDefault(documentUuid: string): Promise<void> {
    await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('views-default:' || $1, 0))`, [documentUuid]);
  }

  /**
   * Makes `id` the document's one default view: answers the view as stored after the change and the id of the
   * previous default (if another).
   */
  async setDefault(documentUuid: string, id: string, by: string): Promise<{ view: ViewRecord; previousDefaultId: string | null }> {
    const [previous] = await this.tx.manager.query<[{ id: string }[], number]>(
      `UPDATE views SET is_default = false, updated_by = $3, updated_at = now() WHERE document_id = $1 AND is_default AND id <> $2 RETURNING id`,
      [documentUuid, id, by],
    );
    const [rows] = await this.tx.manager.query<[ViewRecord[], number]>(
      `UPDATE views AS v SET is_default = true, updated_by = $3, updated_at = now() WHERE v.document_id = $1 AND v.id = $2 RETURNING ${COLUMNS}`,
      [documentUuid, id, by],
    );
    return { view: rows[0] as ViewRecord, previousDefaultId: previous[0]?.id ?? null };
  }
}
