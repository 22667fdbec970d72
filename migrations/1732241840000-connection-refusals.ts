import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A supplier's reject of a binding stands for that buyer organization on that connection (docs/supply-chain.md,
 * "Bindings"): while a refusal is recorded, a new binding of the organization to the connection is not admitted
 * `active` by a public or whitelist access control but waits `pending` for the supplier; approving one lifts the
 * refusal. Rejections made before this migration recorded none (nothing told the supplier's reject apart from the
 * other endings of a binding).
 */
export class ConnectionRefusals1732241840000 implements MigrationInterface {
  name = 'ConnectionRefusals1732241840000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE connection_refusals (
        connection_id uuid NOT NULL REFERENCES catalog_connections (id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
        binding_id uuid REFERENCES orderbook_bindings (id) ON DELETE SET NULL,
        refused_by uuid NOT NULL,
        refused_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (connection_id, organization_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE connection_refusals`);
  }
}
