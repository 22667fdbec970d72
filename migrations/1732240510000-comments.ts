import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Comments on documents (spec 2.8, docs/comments.md).
 * - `comments` carries the tenant ids of its document; `root_id` is the thread a reply belongs to (NULL for a
 *   top-level comment), `parent_id` the comment it answers. Deleting a comment deletes its replies (cascade).
 * - The target row is kept as a plain id, not a foreign key: a comment on a row that is later deleted stays,
 *   and whether its row exists is computed at read time (so a restored row restores the link).
 * - `comment_reactions`: one per (comment, emoji, user).
 */
export class Comments1732240510000 implements MigrationInterface {
  name = 'Comments1732240510000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE comments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        workspace_id uuid REFERENCES workspaces(id) ON DELETE CASCADE,
        document_id uuid NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        root_id uuid REFERENCES comments(id) ON DELETE CASCADE,
        parent_id uuid REFERENCES comments(id) ON DELETE CASCADE,
        scope text NOT NULL CHECK (scope IN ('document', 'field', 'row', 'cell')),
        field_id text,
        row_id text,
        content text NOT NULL,
        mentions text[] NOT NULL DEFAULT '{}',
        pinned_at timestamptz,
        pinned_by uuid,
        resolved_at timestamptz,
        resolved_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by uuid NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by uuid NOT NULL
      )`);
    await q.query(`CREATE INDEX comments_document_idx ON comments (organization_id, document_id, created_at DESC, id DESC) WHERE root_id IS NULL`);
    await q.query(`CREATE INDEX comments_root_idx ON comments (root_id, created_at, id) WHERE root_id IS NOT NULL`);
    await q.query(`CREATE INDEX comments_row_idx ON comments (document_id, row_id) WHERE row_id IS NOT NULL`);
    await q.query(`
      CREATE TABLE comment_reactions (
        comment_id uuid NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
        emoji text NOT NULL,
        user_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (comment_id, emoji, user_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE comment_reactions`);
    await q.query(`DROP TABLE comments`);
  }
}
