import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { ConnectorRecord } from '../domain/supply-chain.types.js';
import { queryFirst, queryRows } from '../../../database/sql-result.js';
import { countOf, type Paging } from './sql.js';

const COLUMNS = `n.id, n.organization_id AS "organizationId", n.name, n.connector_type AS "connectorType", n.source_doc_type AS "sourceDocType",
  n.source_doc_id AS "sourceDocId", n.source_document_id AS "sourceDocumentId", n.target_doc_type AS "targetDocType",
  n.target_doc_id AS "targetDocId", n.target_document_id AS "targetDocumentId", n.config, n.sync_mode AS "syncMode",
  n.schedule_cron AS "scheduleCron", n.schedule_timezone AS "scheduleTimezone", n.bidirectional, n.status, n.created_by AS "createdBy",
  n.created_at AS "createdAt", n.updated_at AS "updatedAt"`;

export type NewConnector = Omit<ConnectorRecord, 'id' | 'status' | 'createdAt' | 'updatedAt'>;

/** Connectors (inside one organization). */
@Injectable()
export class ConnectorRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(input: NewConnector): Promise<ConnectorRecord> {
    return (await queryFirst<ConnectorRecord>(
      this.tx,
      `INSERT INTO connectors AS n (organization_id, name, connector_type, source_doc_type, source_doc_id, source_document_id, target_doc_type,
              target_doc_id, target_document_id, config, sync_mode, schedule_cron, schedule_timezone, bidirectional, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $15) RETURNING ${COLUMNS}`,
      [
        input.organizationId,
        input.name,
        input.connectorType,
        input.sourceDocType,
        input.sourceDocId,
        input.sourceDocumentId,
        input.targetDocType,
        input.targetDocId,
        input.targetDocumentId,
        JSON.stringify(input.config),
        input.syncMode,
        input.scheduleCron,
        input.scheduleTimezone,
        input.bidirectional,
        input.createdBy,
      ],
    )) as ConnectorRecord;
  }

  find(organizationId: string, id: string): Promise<ConnectorRecord | null> {
    return queryFirst<ConnectorRecord>(
      this.tx,
      `SELECT ${COLUMNS} FROM connectors n WHERE n.organization_id = $1 AND n.id = $2 AND n.deleted_at IS NULL`,
      [organizationId, id],
    );
  }

  findById(id: string): Promise<ConnectorRecord | null> {
    return queryFirst<ConnectorRecord>(
      this.tx,
      `SELECT ${COLUMNS} FROM connectors n WHERE n.id = $1 AND n.deleted_at IS NULL`,
      [id],
    );
  }

  async list(organizationId: string, paging: Paging): Promise<{ items: ConnectorRecord[]; total: number }> {
    const where = `FROM connectors n WHERE n.organization_id = $1 AND n.deleted_at IS NULL`;
    const [items, total] = await Promise.all([
      queryRows<ConnectorRecord>(
        this.tx,
        `SELECT ${COLUMNS} ${where} ORDER BY n.created_at, n.id LIMIT $2 OFFSET $3`,
        [organizationId, paging.limit, paging.offset],
      ),
      countOf(this.tx, `SELECT count(*) ${where}`, [organizationId]),
    ]);
    return { items, total };
  }

  /** Live connectors reading from (or, bidirectional, writing back to) a document. */
  forDocument(documentId: string): Promise<ConnectorRecord[]> {
    return queryRows<ConnectorRecord>(
      this.tx,
      `SELECT ${COLUMNS} FROM connectors n WHERE n.deleted_at IS NULL AND n.status = 'active'
          AND (n.source_document_id = $1 OR (n.bidirectional AND n.target_document_id = $1)) ORDER BY n.created_at, n.id`,
      [documentId],
    );
  }

  scheduled(): Promise<ConnectorRecord[]> {
    return queryRows<ConnectorRecord>(
      this.tx,
      `SELECT ${COLUMNS} FROM connectors n WHERE n.deleted_at IS NULL AND n.status = 'active' AND n.sync_mode = 'scheduled' ORDER BY n.created_at, n.id`,
    );
  }

  async softDelete(organizationId: string, id: string): Promise<boolean> {
    const rows = await queryRows<{ id: string }>(
      this.tx,
      `UPDATE connectors SET deleted_at = now(), updated_at = now() WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING id`,
      [organizationId, id],
    );
    return rows.length > 0;
  }

  async setStatus(
    organizationId: string,
    id: string,
    status: 'active' | 'paused',
    from: 'active' | 'paused',
  ): Promise<ConnectorRecord | null> {
    // Null when the connector is not (any longer) in state `from`.
    return queryFirst<ConnectorRecord>(
      this.tx,
      `UPDATE connectors n SET status = $3, updated_at = now()
        WHERE n.organization_id = $1 AND n.id = $2 AND n.deleted_at IS NULL AND n.status = $4 RETURNING ${COLUMNS}`,
      [organizationId, id, status, from],
    );
  }
}
