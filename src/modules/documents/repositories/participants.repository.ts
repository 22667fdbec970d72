import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentRecord } from '../domain/document.records.js';

const UUID_TEXT = `'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'`;

/**
 * SQL behind the settings' `notifications` (docs/settings.md): a document's participants, and whether an event was
 * already handled (delivery is at least once).
 */
@Injectable()
export class ParticipantsRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * The participants of a document, less `actor`: the author and contributors of the request the event names (if
   * any), the document's creator, and the workspace's owners (organization owners and admins for organization-level
   * documents). Only user ids; whether each may still read the document is the caller's question
   * (DocumentAccessService.mayView), as everywhere else a user other than the caller is given a document.
   */
  async of(document: Pick<DocumentRecord, 'uuid' | 'organizationId' | 'workspaceId' | 'createdBy'>, requestId: string | null, actor: string | null): Promise<string[]> {
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
       SELECT DISTINCT u.user_id::text AS "userId"
         FROM (SELECT CASE WHEN c.user_id ~ ${UUID_TEXT} THEN c.user_id::uuid END AS user_id FROM candidates c) u
        WHERE u.user_id IS NOT NULL AND u.user_id::text IS DISTINCT FROM lower($6)
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
