import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { ApprovalInstanceRecord, ApprovalNodeRecord, ApprovalStatus, ApprovalStrategy, NodeStatus } from '../domain/approval.records.js';

const INSTANCE_COLUMNS = `i.id, i.organization_id AS "organizationId", i.workspace_id AS "workspaceId", i.document_id AS "documentUuid",
  i.request_id AS "requestId", i.flow_id AS "flowId", i.strategy, i.status, i.created_by AS "createdBy", i.created_at AS "createdAt",
  i.updated_at AS "updatedAt", i.completed_at AS "completedAt", i.reset_count AS "resetCount",
  COALESCE((SELECT jsonb_agg(jsonb_build_object('id', n.id, 'ordinal', n.ordinal, 'approver', n.approver, 'status', n.status,
                                                'decidedAt', n.decided_at, 'comment', n.comment, 'signature', n.signature) ORDER BY n.ordinal)
              FROM approval_nodes n WHERE n.instance_id = i.id), '[]'::jsonb) AS nodes`;

type InstanceRow = Omit<ApprovalInstanceRecord, 'nodes'> & { nodes: (Omit<ApprovalNodeRecord, 'decidedAt'> & { decidedAt: string | null })[] };

function toRecord(row: InstanceRow): ApprovalInstanceRecord {
  return { ...row, nodes: row.nodes.map((node) => ({ ...node, decidedAt: node.decidedAt ? new Date(node.decidedAt) : null })) };
}

/** SQL for approval instances and their nodes; every statement names the document (resolved with a tenant check). */
@Injectable()
export class ApprovalRepository {
  constructor(private readonly tx: TransactionHost) {}

  async create(input: {
    organizationId: string;
    workspaceId: string | null;
    documentUuid: string;
    requestId: string;
    flowId: string;
    strategy: ApprovalStrategy;
    createdBy: string;
    approvers: string[];
  }): Promise<ApprovalInstanceRecord> {
    const rows = await this.tx.manager.query<{ id: string }[]>(
      `INSERT INTO approval_instances (organization_id, workspace_id, document_id, request_id, flow_id, strategy, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [input.organizationId, input.workspaceId, input.documentUuid, input.requestId, input.flowId, input.strategy, input.createdBy],
    );
    const id = rows[0]?.id as string;
    await this.tx.manager.query(
      `INSERT INTO approval_nodes (organization_id, instance_id, ordinal, approver)
       SELECT $1, $2, a.ordinality, a.approver FROM unnest($3::uuid[]) WITH ORDINALITY AS a(approver, ordinality)`,
      [input.organizationId, id, input.approvers],
    );
    return (await this.find(input.documentUuid, id)) as ApprovalInstanceRecord;
  }

  /**
   * Key-share-locks the document row (what the instances' foreign key to it takes), before the request and the
   * instance: the order of a merge, which locks the document row first.
   */
  async lockDocument(documentUuid: string): Promise<void> {
    await this.tx.manager.query(`SELECT 1 FROM documents WHERE id = $1 FOR KEY SHARE`, [documentUuid]);
  }

  async find(documentUuid: string, instanceId: string, lock = false): Promise<ApprovalInstanceRecord | null> {
    if (lock) {
      await this.tx.manager.query(`SELECT 1 FROM approval_instances WHERE id = $1 AND document_id = $2 FOR UPDATE`, [instanceId, documentUuid]);
    }
    const rows = await this.tx.manager.query<InstanceRow[]>(`SELECT ${INSTANCE_COLUMNS} FROM approval_instances i WHERE i.id = $1 AND i.document_id = $2`, [
      instanceId,
      documentUuid,
    ]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** The request's live instance (`pending` or `approved`), if any. */
  async live(documentUuid: string, requestId: string, lock = false): Promise<ApprovalInstanceRecord | null> {
    const rows = await this.tx.manager.query<InstanceRow[]>(
      `SELECT ${INSTANCE_COLUMNS} FROM approval_instances i
        WHERE i.document_id = $1 AND i.request_id = $2 AND i.status IN ('pending', 'approved')${lock ? ' FOR UPDATE OF i' : ''}`,
      [documentUuid, requestId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** The request's newest instance, whatever its state (the gate reports it). */
  async latest(documentUuid: string, requestId: string): Promise<ApprovalInstanceRecord | null> {
    const rows = await this.tx.manager.query<InstanceRow[]>(
      `SELECT ${INSTANCE_COLUMNS} FROM approval_instances i WHERE i.document_id = $1 AND i.request_id = $2 ORDER BY i.created_at DESC, i.id LIMIT 1`,
      [documentUuid, requestId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Records a node's decision; the instance changed with it (its current node, its nodes), so its updatedAt moves too. */
  async decideNode(nodeId: string, status: NodeStatus, comment: string | null, signature: string | null): Promise<void> {
    await this.tx.manager.query(
      `WITH node AS (
         UPDATE approval_nodes SET status = $2, decided_at = now(), comment = $3, signature = $4 WHERE id = $1 RETURNING instance_id
       )
       UPDATE approval_instances i SET updated_at = now() FROM node WHERE i.id = node.instance_id`,
      [nodeId, status, comment, signature],
    );
  }

  async setStatus(instanceId: string, status: ApprovalStatus): Promise<void> {
    await this.tx.manager.query(
      `UPDATE approval_instances SET status = $2, updated_at = now(), completed_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END WHERE id = $1`,
      [instanceId, status],
    );
  }

  /** Approvals already given are withdrawn (the request changed): nodes back to pending, the instance pending. */
  async reset(instanceId: string): Promise<void> {
    await this.tx.manager.query(`UPDATE approval_nodes SET status = 'pending', decided_at = NULL, comment = NULL, signature = NULL WHERE instance_id = $1`, [instanceId]);
    await this.tx.manager.query(
      `UPDATE approval_instances SET status = 'pending', completed_at = NULL, updated_at = now(), reset_count = reset_count + 1 WHERE id = $1`,
      [instanceId],
    );
  }

  /**
   * Of `userIds`, those who can read the document: active members of its workspace (any role) or active owners and
   * admins of its organization; for an organization-level document, active members of the organization.
   */
  async readers(organizationId: string, workspaceId: string | null, userIds: readonly string[]): Promise<Set<string>> {
    const rows = await this.tx.manager.query<{ id: string }[]>(
      `SELECT u.id::text AS id FROM unnest($3::uuid[]) AS u(id)
        WHERE EXISTS (SELECT 1 FROM organization_members om WHERE om.organization_id = $1 AND om.user_id = u.id AND om.status = 'active'
                        AND ($2::uuid IS NULL OR om.role IN ('owner', 'admin')))
           OR ($2::uuid IS NOT NULL AND EXISTS (SELECT 1 FROM workspace_members wm
                  JOIN organization_members om ON om.organization_id = $1 AND om.user_id = wm.user_id AND om.status = 'active'
                 WHERE wm.workspace_id = $2 AND wm.user_id = u.id AND wm.status = 'active'))`,
      [organizationId, workspaceId, userIds],
    );
    return new Set(rows.map((row) => row.id));
  }
}
