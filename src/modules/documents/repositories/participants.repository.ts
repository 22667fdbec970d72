import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentSettings } from '../domain/document.records.js';

export interface NotifiedDocument {
  uuid: string;
  organizationId: string;
  workspaceId: string | null;
  title: string | null;
  settings: DocumentSettings;
  createdBy: string;
}

const UUID_TEXT = `'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'`;

/**
 * SQL behind the settings' `notifications` (docs/settings.md): the document an event names, its participants, and
 * whether an event was already handled (delivery is at least once).
 */
@Injectable()
export class ParticipantsRepository {
  constructor(private readonly tx: TransactionHost) {}

  async document(organizationId: string, workspaceId: string | null, docType: string, docId: string): Promise<NotifiedDocument | null> {
    const rows = await this.tx.manager.query<NotifiedDocument[]>(
      `SELECT d.id AS "uuid", d.organization_id AS "organizationId", d.workspace_id AS "workspaceId", d.title,
              COALESCE(d.settings, '{}'::jsonb) AS settings, d.created_by AS "createdBy"
         FROM documents d
        WHERE ${workspaceId ? 'd.workspace_id = $2::uuid' : 'd.workspace_id IS NULL AND $2::uuid IS NULL'}
          AND d.organization_id = $1 AND d.doc_type = $3 AND d.doc_id = $4 AND d.deleted_at IS NULL`,
      [organizationId, workspaceId, docType, docId],
    );
    return rows[0] ?? null;
  }

  /**
   * The participants of a document: the author and contributors of the request the event names (if any), the
   * document's creator, and the workspace's owners (organization owners and admins for organization-level
   * documents) — among active members of the document's organization only, less `actor`.
   */
  async of(document: NotifiedDocument, requestId: string | null, actor: string | null): Promise<string[]> {
    const rows = await this.tx.manager.query<{ userId: string }[]>(
      `WITH candidates AS (
         SELECT $3::text AS user_id
         UNION SELECT r.author FROM requests r WHERE r.id::text = $4 AND r.document_id = $5
         UNION SELECT unnest(r.contributors) FROM requests r WHERE r.id::text = $4 AND r.document_id = $5
         UNION SELECT wm.user_id::text FROM workspace_members wm
                WHERE $2::uuid IS NOT NULL AND wm.workspace_id = $2::uuid AND wm.role = 'owner' AND wm.status = 'active'
         UNION SELECT om.user_id::text FROM organization_members om
                WHERE $2::uuid IS NULL AND om.organization_id = $1 AND om.role IN ('owner', 'admin') AND om.status = 'active'
       )
       SELECT DISTINCT c.user_id AS "userId"
         FROM candidates c
         JOIN organization_members om ON om.organization_id = $1 AND om.status = 'active' AND c.user_id ~ ${UUID_TEXT} AND om.user_id = c.user_id::uuid
        WHERE c.user_id IS DISTINCT FROM $6
        ORDER BY 1`,
      [document.organizationId, document.workspaceId, document.createdBy, requestId ?? '', document.uuid, actor],
    );
    return rows.map((row) => row.userId);
  }

  async alreadyNotified(eventId: string): Promise<boolean> {
    const rows = await this.tx.manager.query<unknown[]>(`SELECT 1 FROM notifications WHERE data ? 'eventId' AND data->>'eventId' = $1 LIMIT 1`, [eventId]);
    return rows.length > 0;
  }
}
