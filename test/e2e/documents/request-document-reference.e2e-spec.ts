import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../../src/config/app.config.js';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { TransactionHost } from '../../../src/database/transaction-host.js';
import { RequestRepository } from '../../../src/modules/documents/repositories/request.repository.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { adminQuery, undoMigrationsThrough, urlFor } from '../../utils/test-database.js';
import { bearer, createDocument, createRow, type DocHandle } from './documents.fixtures.js';

/**
 * Migration 1732241300000 (docs/performance.md, "Seventh pass"): `requests.document_id` keeps no foreign key, so
 * concurrent writers of one document no longer share a lock on its row. The reference holds without it: a request
 * that stays open locks the document row itself, and deleting documents deletes their requests (trigger).
 */
describe('requests without a foreign key to their document', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await registerUser(t.http);
  });

  afterAll(async () => {
    await t.close();
  });

  const uuidOf = async (doc: DocHandle): Promise<string> =>
    (
      await t.dataSource.query<Array<{ id: string }>>(`SELECT id FROM documents WHERE doc_id = $1`, [
        doc.docId,
      ])
    )[0]?.id as string;
  const requestsOf = async (documentUuid: string): Promise<number> =>
    (
      await t.dataSource.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM requests WHERE document_id = $1`,
        [documentUuid],
      )
    )[0]?.n as number;

  it('deletes the requests of a hard-deleted document, with their changes, and keeps the others', async () => {
    const doomed = await createDocument(t.http, owner);
    const kept = await createDocument(t.http, owner);
    for (const doc of [doomed, kept]) {
      await createRow(t.http, owner, doc, { values: { name: 'merged at once' } });
      const open = await request(t.http)
        .post(`${doc.path}/requests`)
        .set(bearer(owner))
        .send({ title: 'stays open' })
        .expect(201);
      await request(t.http)
        .post(`${doc.path}/data`)
        .query({ requestId: open.body.payload.id })
        .set(bearer(owner))
        .send({ values: { name: 'in the open request' } })
        .expect(201);
    }
    const doomedUuid = await uuidOf(doomed);
    const keptUuid = await uuidOf(kept);
    // The document's creation, the merged write and the open request.
    expect(await requestsOf(doomedUuid)).toBe(3);
    const keptCount = await requestsOf(keptUuid);
    const doomedRequestIds = (
      await t.dataSource.query<Array<{ id: string }>>(`SELECT id FROM requests WHERE document_id = $1`, [
        doomedUuid,
      ])
    ).map((row) => row.id);

    await t.dataSource.query(`DELETE FROM documents WHERE id = $1`, [doomedUuid]);

    expect(await requestsOf(doomedUuid)).toBe(0);
    const orphanChanges = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM request_changes WHERE request_id = ANY($1::uuid[])`,
      [doomedRequestIds],
    );
    expect(orphanChanges[0]?.n).toBe(0);
    expect(await requestsOf(keptUuid)).toBe(keptCount);
  });

  it('never stores an open request for a document that is gone', async () => {
    const tx = t.app.get(TransactionHost);
    const requests = t.app.get(RequestRepository);
    const missing = randomUUID();
    const opened = await tx.run(() =>
      requests.createWithChanges(
        {
          documentUuid: missing,
          organizationId: owner.defaultOrganizationId,
          workspaceId: owner.defaultWorkspaceId,
          title: 'on a deleted document',
          description: null,
          author: owner.id,
          reviewers: [],
          implicit: false,
        },
        [{ type: 'row-create', operation: 'create', targetId: 'r1', data: { values: {} } }],
      ),
    );
    expect(opened).toBeNull();
    expect(await requestsOf(missing)).toBe(0);
  });
});

describe('migration: request document reference', () => {
  const serverUrl = process.env.QUIRE_TEST_SERVER_URL as string;
  const name = `${process.env.QUIRE_TEST_RUN_PREFIX}_reqref_${randomUUID().slice(0, 8)}`;
  let db: DataSource | undefined;

  afterAll(async () => {
    await db?.destroy();
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });

  const foreignKeys = `SELECT conname FROM pg_constraint WHERE conrelid = 'requests'::regclass AND contype = 'f'
                        AND confrelid = 'documents'::regclass`;

  it('drops the key and brings it back when undone (orphans removed first)', async () => {
    await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
    db = new DataSource(dataSourceOptions(loadConfig({}), urlFor(serverUrl, name)));
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });
    expect(await db.query(foreignKeys)).toEqual([]);

    // An orphan the key would refuse (written around the service): undoing must not fail on it.
    const [user] = await db.query<Array<{ id: string }>>(
      `INSERT INTO users (email, display_name) VALUES ($1, 'Ref') RETURNING id`,
      [`ref-${randomUUID().slice(0, 8)}@example.test`],
    );
    const [org] = await db.query<Array<{ id: string }>>(
      `INSERT INTO organizations (name, slug, type, owner_id, created_by) VALUES ('Ref', $2, 'team', $1, $1) RETURNING id`,
      [user?.id, `ref-${randomUUID().slice(0, 8)}`],
    );
    await db.query(
      `INSERT INTO requests (document_id, organization_id, title, author, implicit) VALUES ($1, $2, 'orphan', $3, false)`,
      [randomUUID(), org?.id, user?.id],
    );

    await undoMigrationsThrough(db, 'RequestDocumentReference1732241300000');
    expect(await db.query(foreignKeys)).toEqual([{ conname: 'requests_document_id_fkey' }]);
    expect(await db.query(`SELECT id FROM requests WHERE title = 'orphan'`)).toEqual([]);

    await db.runMigrations({ transaction: 'each' });
    expect(await db.query(foreignKeys)).toEqual([]);
  });
});
