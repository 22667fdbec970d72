import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenancy beyond the core: invitations, join requests and data-source references (replacement mode),
 * plus the indexes the member and workspace lists filter on.
 */
export class Tenancy1732240200000 implements MigrationInterface {
  name = 'Tenancy1732240200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organization_invitations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('admin', 'member', 'guest')),
        message text,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'expired', 'revoked', 'declined')),
        token_hash text NOT NULL,
        invited_by uuid NOT NULL REFERENCES users(id),
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        accepted_by uuid REFERENCES users(id),
        declined_at timestamptz,
        revoked_at timestamptz,
        revoked_by uuid REFERENCES users(id),
        expired_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX organization_invitations_token_uq ON organization_invitations (token_hash)`);
    await q.query(`CREATE INDEX organization_invitations_org_idx ON organization_invitations (organization_id, status, created_at DESC)`);
    await q.query(
      `CREATE UNIQUE INDEX organization_invitations_pending_uq ON organization_invitations (organization_id, lower(email)) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX organization_invitations_expiry_idx ON organization_invitations (expires_at) WHERE status = 'pending'`);

    await q.query(`
      CREATE TABLE organization_join_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        message text,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
        role text CHECK (role IN ('admin', 'member', 'guest')),
        review_note text,
        reviewed_by uuid REFERENCES users(id),
        reviewed_at timestamptz,
        cancelled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX organization_join_requests_org_idx ON organization_join_requests (organization_id, status, created_at DESC)`);
    await q.query(
      `CREATE UNIQUE INDEX organization_join_requests_pending_uq ON organization_join_requests (organization_id, user_id) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX organization_join_requests_user_idx ON organization_join_requests (user_id)`);

    await q.query(`
      CREATE TABLE data_source_references (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        source_workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
        doc_type text NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
        created_by uuid NOT NULL REFERENCES users(id),
        updated_by uuid REFERENCES users(id),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT data_source_references_not_self CHECK (workspace_id <> source_workspace_id)
      )`);
    await q.query(`CREATE INDEX data_source_references_org_idx ON data_source_references (organization_id, workspace_id)`);
    await q.query(
      `CREATE UNIQUE INDEX data_source_references_source_uq ON data_source_references (workspace_id, doc_type, source_workspace_id)`,
    );
    await q.query(
      `CREATE UNIQUE INDEX data_source_references_active_uq ON data_source_references (workspace_id, doc_type) WHERE status = 'active'`,
    );
    await q.query(`CREATE INDEX data_source_references_source_idx ON data_source_references (source_workspace_id)`);

    // Member and workspace lists filter by role/status inside one organization or workspace.
    await q.query(`CREATE INDEX organization_members_org_role_idx ON organization_members (organization_id, role, status)`);
    await q.query(`CREATE INDEX workspaces_org_idx ON workspaces (organization_id, created_at) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX workspace_members_ws_role_idx ON workspace_members (workspace_id, role, status)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS workspace_members_ws_role_idx`);
    await q.query(`DROP INDEX IF EXISTS workspaces_org_idx`);
    await q.query(`DROP INDEX IF EXISTS organization_members_org_role_idx`);
    for (const table of ['data_source_references', 'organization_join_requests', 'organization_invitations']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
