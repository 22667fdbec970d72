import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../../src/config/app.config.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { adminQuery, undoMigrationsThrough, urlFor } from '../../utils/test-database.js';

/**
 * Migration 1732241400000: a declined invitation is stored as `revoked` with `declined_at` (spec 2.4 binds
 * `Tenant.InvitationStatus` to four values), and the CHECK constraint admits only those four.
 */
describe('migration: declined invitations become revoked', () => {
  const serverUrl = process.env.QUIRE_TEST_SERVER_URL as string;
  const name = `${process.env.QUIRE_TEST_RUN_PREFIX}_invstatus_${randomUUID().slice(0, 8)}`;
  let db: DataSource | undefined;

  afterAll(async () => {
    await db?.destroy();
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });

  it('rewrites declined rows to revoked, narrows the CHECK constraint, and undoes both', async () => {
    await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
    const migrated = new DataSource(dataSourceOptions(loadConfig({}), urlFor(serverUrl, name)));
    db = migrated;
    await migrated.initialize();
    await migrated.runMigrations({ transaction: 'each' });
    await undoMigrationsThrough(migrated, 'InvitationDeclinedRevoked1732241400000');

    const [user] = await migrated.query<Array<{ id: string }>>(
      `INSERT INTO users (email, display_name) VALUES ($1, 'Inviter') RETURNING id`,
      [`inv-${randomUUID().slice(0, 8)}@example.test`],
    );
    const [org] = await migrated.query<Array<{ id: string }>>(
      `INSERT INTO organizations (name, slug, type, owner_id, created_by) VALUES ('Inv', $2, 'team', $1, $1) RETURNING id`,
      [user?.id, `inv-${randomUUID().slice(0, 8)}`],
    );
    const insert = (email: string, status: string, declined: boolean, revoked: boolean): Promise<unknown> =>
      migrated.query(
        `INSERT INTO organization_invitations
           (organization_id, email, role, status, token_hash, invited_by, expires_at, declined_at, revoked_at, revoked_by)
         VALUES ($1, $2, 'member', $3, $4, $5, now() + interval '7 days',
                 CASE WHEN $6 THEN now() - interval '1 hour' END, CASE WHEN $7 THEN now() END, CASE WHEN $7 THEN $5::uuid END)`,
        [org?.id, email, status, randomUUID(), user?.id, declined, revoked],
      );
    await insert('declined@example.test', 'declined', true, false);
    await insert('revoked@example.test', 'revoked', false, true);
    // Declined, then revoked by an admin while `declined` still existed.
    await insert('both@example.test', 'revoked', true, true);
    await insert('pending@example.test', 'pending', false, false);
    const rows = `SELECT email, status, declined_at IS NOT NULL AS declined FROM organization_invitations WHERE organization_id = $1 ORDER BY email`;
    const [before] = await migrated.query<Array<{ declined_at: Date }>>(
      `SELECT declined_at FROM organization_invitations WHERE email = 'declined@example.test'`,
    );

    await migrated.runMigrations({ transaction: 'each' });
    expect(await migrated.query(rows, [org?.id])).toEqual([
      { email: 'both@example.test', status: 'revoked', declined: true },
      { email: 'declined@example.test', status: 'revoked', declined: true },
      { email: 'pending@example.test', status: 'pending', declined: false },
      { email: 'revoked@example.test', status: 'revoked', declined: false },
    ]);
    const [after] = await migrated.query<Array<{ declined_at: Date }>>(
      `SELECT declined_at FROM organization_invitations WHERE email = 'declined@example.test'`,
    );
    expect(after?.declined_at).toEqual(before?.declined_at);
    await expect(insert('new@example.test', 'declined', true, false)).rejects.toMatchObject({
      code: '23514',
      constraint: 'organization_invitations_status_check',
    });

    await undoMigrationsThrough(migrated, 'InvitationDeclinedRevoked1732241400000');
    expect(await migrated.query(rows, [org?.id])).toEqual([
      { email: 'both@example.test', status: 'revoked', declined: true },
      { email: 'declined@example.test', status: 'declined', declined: true },
      { email: 'pending@example.test', status: 'pending', declined: false },
      { email: 'revoked@example.test', status: 'revoked', declined: false },
    ]);
    await insert('new@example.test', 'declined', true, false);
  });
});
