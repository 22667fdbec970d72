import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser } from './documents.fixtures.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'qty', name: 'Qty', type: 'number' },
];

/**
 * A revert opens its request and merges it in one unit of work (docs/documents.md, "Revision diff, history,
 * revert"): a merge the rules refuse (CONFLICT) leaves the revert request open, as documented, but a failure of the
 * database rolls the whole revert back — an error answer leaves no open revert request, no revert record and no
 * request_created event behind.
 */
describe('documents: a failed revert leaves nothing behind', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    // The revert's revision fails to be written (a database fault at the merge's last step).
    await t.dataSource.query(`
      CREATE FUNCTION test_fail_revert_revision() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'revision insert failed by the test';
      END $$`);
  });
  afterAll(async () => {
    await t.close();
  });

  async function lastRevision(doc: DocHandle): Promise<string> {
    const res = await request(t.http).get(`${doc.path}/revisions?pageSize=1`).set(bearer(owner)).expect(200);
    return res.body.payload.items[0].id as string;
  }

  async function revertRequests(doc: DocHandle): Promise<Array<{ status: string }>> {
    return t.dataSource.query(
      `SELECT r.status FROM requests r JOIN documents d ON d.id = r.document_id WHERE d.doc_id = $1 AND r.title LIKE 'Revert revision %'`,
      [doc.docId],
    );
  }

  it('a database failure merging the revert answers 500 and keeps no revert request, record or event', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS });
    await createRow(t.http, owner, doc, { id: 'a', values: { name: 'A', qty: 1 } });
    await request(t.http).put(`${doc.path}/data/a`).set(bearer(owner)).send({ values: { qty: 2 } }).expect(200);
    const revisionId = await lastRevision(doc);

    await t.dataSource.query(
      `CREATE TRIGGER test_fail_revert_revision BEFORE INSERT ON revisions FOR EACH ROW WHEN (NEW.title LIKE 'Revert revision %') EXECUTE FUNCTION test_fail_revert_revision()`,
    );
    try {
      const failed = await request(t.http).post(`${doc.path}/revisions/${revisionId}/revert`).set(bearer(owner)).expect(500);
      expect(failed.body).toMatchObject({ success: false, code: 'INTERNAL_ERROR', payload: null });
    } finally {
      await t.dataSource.query(`DROP TRIGGER test_fail_revert_revision ON revisions`);
    }
    expect(await revertRequests(doc)).toEqual([]);
    expect(await t.dataSource.query(`SELECT 1 FROM revision_reverts WHERE reverted_revision_id = $1`, [revisionId])).toEqual([]);
    expect(
      await t.dataSource.query(`SELECT 1 FROM outbox WHERE doc_id = $1 AND payload->>'title' LIKE 'Revert revision %'`, [doc.docId]),
    ).toEqual([]);
    const row = await request(t.http).get(`${doc.path}/data/a`).set(bearer(owner)).expect(200);
    expect(row.body.payload.version).toBe(2);

    // Once the fault is gone, the same revert goes through.
    const reverted = await request(t.http).post(`${doc.path}/revisions/${revisionId}/revert`).set(bearer(owner)).expect(200);
    expect(reverted.body.payload).toMatchObject({ merged: true, pendingApproval: false });
    expect(await revertRequests(doc)).toEqual([{ status: 'merged' }]);
  });

  it('concurrent reverts of one document each go through (they queue on the document, never deadlock)', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS });
    const revisions: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      await createRow(t.http, owner, doc, { id: `c${i}`, values: { name: `C${i}` } });
      revisions.push(await lastRevision(doc));
    }
    const answers = await Promise.all(revisions.map((id) => request(t.http).post(`${doc.path}/revisions/${id}/revert`).set(bearer(owner))));
    expect(answers.map((answer) => [answer.status, answer.body.payload?.merged])).toEqual(revisions.map(() => [200, true]));
    const rows = await request(t.http).get(`${doc.path}/data`).set(bearer(owner)).expect(200);
    expect(rows.body.payload.items).toEqual([]);
  });

  it('a revert the merge refuses (CONFLICT) still keeps its request open, as documented', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS });
    await createRow(t.http, owner, doc, { id: 'a', values: { name: 'A', qty: 1 } });
    await request(t.http).put(`${doc.path}/data/a`).set(bearer(owner)).send({ values: { qty: 2 } }).expect(200);
    const revisionId = await lastRevision(doc);
    await request(t.http).put(`${doc.path}/data/a`).set(bearer(owner)).send({ values: { qty: 3 } }).expect(200);

    const refused = await request(t.http).post(`${doc.path}/revisions/${revisionId}/revert`).set(bearer(owner)).expect(409);
    expect(refused.body).toMatchObject({ code: 'CONFLICT', payload: { requestId: expect.any(String), conflicts: [expect.objectContaining({ type: 'row-changed' })] } });
    expect(await revertRequests(doc)).toEqual([{ status: 'open' }]);
    expect(await t.dataSource.query(`SELECT 1 FROM revision_reverts WHERE reverted_revision_id = $1`, [revisionId])).toHaveLength(1);
  });
});
