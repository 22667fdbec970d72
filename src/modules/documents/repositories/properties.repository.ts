import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { StoredRowValues } from '../fields/field.types.js';
import type { PropertiesRecord } from '../domain/document.records.js';

interface PropertiesRow {
  id: string;
  documentUuid: string;
  organizationId: string;
  workspaceId: string | null;
  properties: StoredRowValues;
  version: string;
  createdAt: Date;
  updatedAt: Date;
  updatedBy: string | null;
}

const COLUMNS = `p.id, p.document_id AS "documentUuid", p.organization_id AS "organizationId", p.workspace_id AS "workspaceId",
  p.properties, p.version, p.created_at AS "createdAt", p.updated_at AS "updatedAt", p.updated_by AS "updatedBy"`;

function toRecord(row: PropertiesRow): PropertiesRecord {
  return { ...row, version: Number(row.version), properties: row.properties ?? {} };
}

/** SQL for `document_properties` (one row per document, created with the document). */
@Injectable()
export class PropertiesRepository {
  constructor(private readonly tx: TransactionHost) {}

  async create(input: { documentUuid: string; organizationId: string; workspaceId: string | null; userId: string }): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO document_properties (document_id, organization_id, workspace_id, updated_by) VALUES ($1, $2, $3, $4)`,
      [input.documentUuid, input.organizationId, input.workspaceId, input.userId],
    );
  }

  async find(documentUuid: string): Promise<PropertiesRecord | null> {
    const rows = await this.tx.manager.query<PropertiesRow[]>(`SELECT ${COLUMNS} FROM document_properties p WHERE p.document_id = $1`, [
      documentUuid,
    ]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async update(documentUuid: string, properties: StoredRowValues, userId: string): Promise<PropertiesRecord> {
    const [rows] = await this.tx.manager.query<[PropertiesRow[], number]>(
      `UPDATE document_properties AS p SET properties = $2::jsonb, version = p.version + 1, updated_at = now(), updated_by = $3
        WHERE p.document_id = $1 RETURNING ${COLUMNS}`,
      [documentUuid, JSON.stringify(properties), userId],
    );
    return toRecord(rows[0] as PropertiesRow);
  }
}
