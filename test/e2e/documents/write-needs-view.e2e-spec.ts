import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, addToWorkspace, bearer, createDocument, createRow, type DocHandle, newUser } from './documents.fixtures.js';

/**
 * `permissions.view` narrows who may read a document (docs/settings.md); a writer it shuts out may not write either:
 * a write presupposes the read right it was built on (roles rank owner > editor > viewer), and every write answers
 * with what it wrote — a partial `PUT /data/{rowId}` answered the whole stored row, fields the writer had not sent
 * included, so an editor refused `GET /data/{rowId}` read it through a one-field update. The same holds for the
 * catalogs' row routes (an organization-level document, docs/supply-chain.md).
 */
describe('documents: a writer whom permissions.view shuts out does not write', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let member: TestUser;
  let closed: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    [owner, editor, member] = await Promise.all([newUser(t.http), newUser(t.http), newUser(t.http)]);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    closed = await createDocument(t.http, owner, {
      fields: [
        { id: 'name', name: 'Name', type: 'text' },
        { id: 'salary', name: 'Salary', type: 'text' },
      ],
      settings: { permissions: { view: ['role:owner'] } },
    });
    await createRow(t.http, owner, closed, { id: 'r1', values: { name: 'Ann', salary: 'SECRET-SALARY' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses every row write of a document the editor may not view, and answers nothing of its rows', async () => {
    await request(t.http).get(`${closed.path}/data/r1`).set(bearer(editor)).expect(403);
    const writes: Array<[string, request.Test]> = [
      ['PUT /data/{rowId}', request(t.http).put(`${closed.path}/data/r1`).set(bearer(editor)).send({ values: { name: 'Bob' } })],
      ['PUT /rows/{rowId}', request(t.http).put(`${closed.path}/rows/r1`).set(bearer(editor)).send({ values: { name: 'Bob' } })],
      ['POST /data', request(t.http).post(`${closed.path}/data`).set(bearer(editor)).send({ id: 'r2', values: { name: 'New' } })],
      ['POST /rows/batch-update', request(t.http).post(`${closed.path}/rows/batch-update`).set(bearer(editor)).send({ updates: [{ target: { row: 'r1', field: 'name' }, value: 'Bob' }] })],
      ['DELETE /data/{rowId}', request(t.http).delete(`${closed.path}/data/r1`).set(bearer(editor))],
      ['DELETE /data/{unknown rowId}', request(t.http).delete(`${closed.path}/data/nope`).set(bearer(editor))],
    ];
    const answers: Record<string, unknown> = {};
    for (const [name, write] of writes) {
      const res = await write;
      answers[name] = { status: res.status, code: res.body.code, details: res.body.details };
      expect(JSON.stringify(res.body)).not.toContain('SECRET-SALARY');
    }
    const refused = { status: 403, code: 'FORBIDDEN', details: { reason: "the document's permissions settings do not allow you to view it" } };
    expect(answers).toEqual(Object.fromEntries(writes.map(([name]) => [name, refused])));
    // Nothing changed.
    const row = await request(t.http).get(`${closed.path}/data/r1`).set(bearer(owner)).expect(200);
    expect(row.body.payload.values).toEqual(expect.arrayContaining([{ fieldId: 'name', value: { text: 'Ann' } }]));
    await request(t.http).get(`${closed.path}/data/r2`).set(bearer(owner)).expect(404);
  });

  it('drops the lock of an editor once permissions.view shuts them out, as of one who lost write access', async () => {
    const doc = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }] });
    await createRow(t.http, owner, doc, { id: 'l1', values: { name: 'Locked' } });
    const realtime = doc.path.replace(`${API}/doc`, '/realtime/doc');
    await request(t.http).post(`${realtime}/lock`).set(bearer(editor)).send({ target: { type: 'row', rowId: 'l1' }, ttlSeconds: 600 }).expect(201);
    await request(t.http).put(`${doc.path}/data/l1`).set(bearer(owner)).send({ values: { name: 'Blocked' } }).expect(409);
    await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ permissions: { view: ['role:owner'] } }).expect(200);
    // The editor may no longer write (docs/settings.md), so their lock no longer stands (docs/realtime.md, "Locks").
    await request(t.http).put(`${doc.path}/data/l1`).set(bearer(owner)).send({ values: { name: 'Free' } }).expect(200);
    const locks = await request(t.http).get(`${realtime}/locks`).set(bearer(owner)).expect(200);
    expect(locks.body.payload.items).toEqual([]);
  });

  it("refuses a catalog row update to an organization member the catalog's permissions.view shuts out", async () => {
    await t.dataSource.query(`INSERT INTO organization_members (organization_id, user_id, role) VALUES ($1, $2, 'member')`, [owner.defaultOrganizationId, member.id]);
    const sc = `${API}/organizations/${owner.defaultOrganizationId}`;
    const fields = [
      { id: 'sku', name: 'sku', type: 'text' },
      { id: 'cost', name: 'cost', type: 'text' },
    ];
    const catalog = (await request(t.http).post(`${sc}/catalogs`).set(bearer(owner)).send({ name: 'Costs', catalogType: 'product', fields }).expect(201)).body.payload.id as string;
    await request(t.http)
      .post(`${sc}/catalogs/${catalog}/rows/batch-update`)
      .set(bearer(owner))
      .send({ rows: [{ id: 'c1', values: { sku: 'S-1', cost: 'SECRET-COST' } }] })
      .expect(200);
    await request(t.http)
      .put(`${API}/doc/catalog/${catalog}/settings?organizationId=${owner.defaultOrganizationId}`)
      .set(bearer(owner))
      .send({ permissions: { view: ['role:owner'] } })
      .expect(200);
    await request(t.http).get(`${sc}/catalogs/${catalog}`).set(bearer(member)).expect(403);

    const patch = await request(t.http).patch(`${sc}/catalogs/${catalog}/rows/c1`).set(bearer(member)).send({ values: { sku: 'S-2' } });
    expect(JSON.stringify(patch.body)).not.toContain('SECRET-COST');
    expect(patch.status).toBe(403);
    const batch = await request(t.http).post(`${sc}/catalogs/${catalog}/rows/batch-update`).set(bearer(member)).send({ rows: [{ id: 'c1', values: { sku: 'S-3' } }] });
    expect(batch.status).toBe(403);
    const kept = await request(t.http).get(`${API}/doc/catalog/${catalog}/data/c1?organizationId=${owner.defaultOrganizationId}`).set(bearer(owner)).expect(200);
    expect(kept.body.payload.values).toEqual(expect.arrayContaining([{ fieldId: 'sku', value: { text: 'S-1' } }]));
  });
});
