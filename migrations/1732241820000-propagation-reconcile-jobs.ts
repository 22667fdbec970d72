import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A reconcile job of the propagation ledger (a connection's share scope changed: every active binding re-reads the
 * catalog, docs/supply-chain.md "Reconcile") is keyed by the change that queued it, not only by the catalog revision
 * it starts from: a binding already holds a job at the catalog's newest revision (its initial sync, or that
 * revision's own job), and the unique (binding, revision) key would swallow the reconcile. `trigger_key` is '' for
 * revision and initial-sync jobs, so those still meet on the unique key exactly as before.
 */
export class PropagationReconcileJobs1732241820000 implements MigrationInterface {
  name = 'PropagationReconcileJobs1732241820000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sync_propagation_jobs ADD COLUMN trigger_key text NOT NULL DEFAULT ''`);
    await q.query(`ALTER TABLE sync_propagation_jobs DROP CONSTRAINT sync_propagation_jobs_once`);
    await q.query(
      `ALTER TABLE sync_propagation_jobs ADD CONSTRAINT sync_propagation_jobs_once UNIQUE (binding_id, catalog_revision_id, trigger_key)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM sync_propagation_jobs WHERE trigger_key <> ''`);
    await q.query(`ALTER TABLE sync_propagation_jobs DROP CONSTRAINT sync_propagation_jobs_once`);
    await q.query(
      `ALTER TABLE sync_propagation_jobs ADD CONSTRAINT sync_propagation_jobs_once UNIQUE (binding_id, catalog_revision_id)`,
    );
    await q.query(`ALTER TABLE sync_propagation_jobs DROP COLUMN trigger_key`);
  }
}
