import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every instance keeps verified sessions and access rights in memory for a moment (docs/auth.md, "Caches").
 * These triggers announce any change that can take a right away — membership, role, status, archive and
 * delete of organizations and workspaces, data-source references, ended sessions, revoked keys, deleted
 * clients — with NOTIFY on channel `quire_access_changed`. NOTIFY is transactional: it is delivered when the
 * change commits, to every instance listening, which drops its caches. No code path can forget to invalidate.
 */
const SOURCES: Array<{ table: string; events: string }> = [
  { table: 'organizations', events: 'UPDATE OR DELETE' },
  { table: 'organization_members', events: 'INSERT OR UPDATE OR DELETE' },
  { table: 'workspaces', events: 'INSERT OR UPDATE OR DELETE' },
  { table: 'workspace_members', events: 'INSERT OR UPDATE OR DELETE' },
  { table: 'data_source_references', events: 'INSERT OR UPDATE OR DELETE' },
  { table: 'sessions', events: 'UPDATE OF revoked_at, expires_at OR DELETE' },
  { table: 'api_keys', events: 'UPDATE OF revoked_at, expires_at, scopes, ip_allowlist OR DELETE' },
  { table: 'oauth_clients', events: 'UPDATE OR DELETE' },
];

export class AccessChangeNotify1732240450000 implements MigrationInterface {
  name = 'AccessChangeNotify1732240450000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION quire_notify_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('quire_access_changed', TG_TABLE_NAME);
        RETURN NULL;
      END $$`);
    for (const { table, events } of SOURCES) {
      await q.query(
        `CREATE TRIGGER ${table}_access_changed AFTER ${events} ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION quire_notify_access_changed()`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table } of SOURCES) {
      await q.query(`DROP TRIGGER IF EXISTS ${table}_access_changed ON ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS quire_notify_access_changed()`);
  }
}
