import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * History and approvals (issue 11).
 *
 * - `revision_reverts` (docs/documents.md, "Revision diff, history, revert") marks a request as the revert of a
 *   revision, so merging it — at once, or later after its conflicts were resolved or it was approved — raises
 *   `revision_reverted` in the merge's transaction.
 * - `approval_instances` / `approval_nodes` (docs/approvals.md): one instance per submission of a request for
 *   approval, one node per approver in order. At most one live (`pending` or `approved`) instance per request.
 *
 * Every table carries the document's tenant with an index starting with it and references the document (or its
 * request), so deleting a document, a request or a tenant removes them.
 */
export class HistoryApprovals1732240800000 implements MigrationInterface {
  name = 'HistoryApprovals1732240800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE revision_reverts (
        request_id uuid PRIMARY KEY REFERENCES requests(id) ON DELETE CASCADE,
        reverted_revision_id uuid NOT NULL REFERENCES revisions(id) ON DELETE CASCADE,
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        workspace_id uuid,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX revision_reverts_org_idx ON revision_reverts (organization_id, document_id, created_at)`);

    await q.query(`
      CREATE TABLE approval_instances (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL,
        workspace_id uuid,
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        request_id uuid NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
        flow_id text NOT NULL,
        strategy text NOT NULL CHECK (strategy IN ('sequential', 'parallel')),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'changes_requested', 'canceled')),
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        reset_count integer NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX approval_instances_org_idx ON approval_instances (organization_id, document_id, created_at DESC)`);
    await q.query(`CREATE UNIQUE INDEX approval_instances_live_uq ON approval_instances (request_id) WHERE status IN ('pending', 'approved')`);

    await q.query(`
      CREATE TABLE approval_nodes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL,
        instance_id uuid NOT NULL REFERENCES approval_instances(id) ON DELETE CASCADE,
        ordinal integer NOT NULL,
        approver uuid NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'changes_requested')),
        decided_at timestamptz,
        comment text,
        signature text,
        UNIQUE (instance_id, ordinal),
        UNIQUE (instance_id, approver)
      )`);
    await q.query(`CREATE INDEX approval_nodes_org_idx ON approval_nodes (organization_id, approver, status)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE approval_nodes`);
    await q.query(`DROP TABLE approval_instances`);
    await q.query(`DROP TABLE revision_reverts`);
  }
}
