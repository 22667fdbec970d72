import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ALL_MIGRATIONS } from '../../../migrations/all-migrations.js';
import { Documents1732240300000 } from '../../../migrations/1732240300000-documents.js';
import { loadConfig } from '../../../src/config/app.config.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { registerUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { adminQuery, urlFor } from '../../utils/test-database.js';
import { API, bearer } from './documents.fixtures.js';

/**
 * A database that holds documents written under the old global `(doc_type, doc_id)` identity is migrated to the
 * tenant-scoped identity with nothing lost: every document, row and revision is served afterwards, and the
 * same id becomes usable in another workspace.
 */
describe('migration to tenant-scoped document identity', () => {
  const serverUrl = process.env.QUIRE_TEST_SERVER_URL as string;
  const name = `${process.env.QUIRE_TEST_RUN_PREFIX}_legacy_${randomUUID().slice(0, 8)}`;
  const url = urlFor(serverUrl, name);
  let t: TestApp | undefined;

  afterAll(async () => {
    await t?.close();
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });

  it('keeps every document, row and revision written before it', async () => {
    await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
    const legacyMigrations = ALL_MIGRATIONS.slice(0, ALL_MIGRATIONS.indexOf(Documents1732240300000) + 1);
    const legacy = new DataSource({ ...dataSourceOptions(loadConfig({}), url), migrations: legacyMigrations });
    await legacy.initialize();
    await legacy.runMigrations({ transaction: 'each' });
    const [user] = await legacy.query<Array<{ id: string }>>(`INSERT INTO users (email, display_name) VALUES ('legacy@example.test', 'Legacy') RETURNING id`);
    const [org] = await legacy.query<Array<{ id: string }>>(
      `INSERT INTO organizations (name, slug, type, owner_id, created_by) VALUES ('Legacy', $2, 'team', $1, $1) RETURNING id`,
      [user?.id, `legacy-${randomUUID().slice(0, 8)}`],
    );
    const workspaces: string[] = [];
    for (const slug of ['one', 'two']) {
      const [ws] = await legacy.query<Array<{ id: string }>>(
        `INSERT INTO workspaces (organization_id, name, slug, created_by) VALUES ($1, $2, $2, $3) RETURNING id`,
        [org?.id, slug, user?.id],
      );
      workspaces.push(ws?.id as string);
    }
    const fields = JSON.stringify({ fields: [{ id: 'name', name: 'Name', type: 'text' }], properties: [] });
    for (const [index, docId] of ['orders', 'invoices'].entries()) {
      const [doc] = await legacy.query<Array<{ id: string }>>(
        `INSERT INTO documents (organization_id, workspace_id, doc_type, doc_id, metadata, version, row_count, created_by)
         VALUES ($1, $2, 'table', $3, $4::jsonb, 1, 2, $5) RETURNING id`,
        [org?.id, workspaces[index], docId, fields, user?.id],
      );
      await legacy.query(`INSERT INTO document_properties (document_id, organization_id, workspace_id) VALUES ($1, $2, $3)`, [doc?.id, org?.id, workspaces[index]]);
      await legacy.query(
        `INSERT INTO document_rows (document_id, id, "values", created_by) VALUES ($1, 'r1', '{"name": "first"}', $2), ($1, 'r2', '{"name": "second"}', $2)`,
        [doc?.id, user?.id],
      );
      await legacy.query(`INSERT INTO revisions (document_id, organization_id, workspace_id, version, title, merged_by) VALUES ($1, $2, $3, 1, 'Seed', $4)`, [
        doc?.id,
        org?.id,
        workspaces[index],
        user?.id,
      ]);
    }
    await legacy.destroy();

    const migrated = new DataSource(dataSourceOptions(loadConfig({}), url));
    await migrated.initialize();
    await migrated.runMigrations({ transaction: 'each' });
    await migrated.destroy();

    t = await createTestApp({}, { databaseUrl: url });
    const reader = await registerUser(t.http);
    await t.dataSource.query(`INSERT INTO organization_members (organization_id, user_id, role) VALUES ($1, $2, 'admin')`, [org?.id, reader.id]);

    for (const [index, docId] of ['orders', 'invoices'].entries()) {
      const rows = await request(t.http).get(`${API}/doc/table/${docId}/data`).set(bearer(reader)).expect(200);
      expect(rows.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['r1', 'r2']);
      const bundle = await request(t.http).get(`${API}/doc/table/${docId}?include=revisions`).set(bearer(reader)).expect(200);
      expect(bundle.body.payload.document).toMatchObject({ organizationId: org?.id, workspaceId: workspaces[index], version: 1 });
      expect(bundle.body.payload.revisions).toHaveLength(1);
      // The revision head is backfilled (migration 1732241000000): the next merge links to the seeded revision.
      await request(t.http).post(`${API}/doc/table/${docId}/data`).set(bearer(reader)).send({ id: 'r3', values: { name: 'third' } }).expect(201);
      const [seeded, next] = (await request(t.http).get(`${API}/doc/table/${docId}?include=revisions`).set(bearer(reader)).expect(200)).body.payload.revisions
        .slice()
        .sort((a: { version: number }, b: { version: number }) => a.version - b.version);
      expect(next).toMatchObject({ version: 2, previousRevisionId: seeded.id });
    }
    // The old global key is gone: the same id now exists once per workspace.
    await request(t.http)
      .post(`${API}/doc/table`)
      .set(bearer(reader))
      .send({ id: 'orders', organizationId: org?.id, workspaceId: workspaces[1] })
      .expect(201);
    const ambiguous = await request(t.http).get(`${API}/doc/table/orders`).set(bearer(reader)).expect(409);
    expect(ambiguous.body.code).toBe('AMBIGUOUS_DOCUMENT');
  });
});
