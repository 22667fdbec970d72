import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { problemsOf } from '../../utils/error-details.js';
import { addToWorkspace, bearer, createDocument, createRow, type DocHandle, newUser, scopedToken } from './documents.fixtures.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'qty', name: 'Quantity', type: 'number' },
];

const ROW_CREATE = { type: 'row-create', target: { kind: 'row', rowId: 'n1' }, newValue: { values: { name: 'New' } } };
const SETTINGS = { type: 'settings-update', target: { kind: 'settings' }, newValue: { workflow: { requiresApproval: true } } };
const FIELD_DELETE = { type: 'field-delete', target: { kind: 'field', fieldId: 'qty' } };
const PROPERTY = { type: 'property-update', target: { kind: 'property' }, newValue: {} };

/**
 * A request writes what the direct routes write, so it needs their scopes too (spec 5.8): row changes data:write,
 * field, metadata, settings and property changes doc:write — on create, on merge and on revert. Also: a change's
 * target kind must fit its type, reviewers must be readers, malformed ids are unknown ids, and a merged request's
 * diff is what its merge changed.
 */
describe('requests: scopes of the changes, target kinds, reviewers, ids and the diff of a merged request', () => {
  let t: TestApp;
  let owner: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    viewer = await newUser(t.http);
    stranger = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
  });
  afterAll(async () => {
    await t.close();
  });

  async function doc(): Promise<DocHandle> {
    return createDocument(t.http, owner, { fields: FIELDS });
  }

  it('refuses changes whose direct route needs a scope the token lacks, and writes nothing', async () => {
    const target = await doc();
    const requestsOnly = await scopedToken(t, owner, ['doc:read', 'requests:manage']);
    for (const change of [ROW_CREATE, SETTINGS, FIELD_DELETE, PROPERTY]) {
      const refused = await request(t.http).post(`${target.path}/requests`).set(bearer(requestsOnly)).send({ title: 'sneak', changes: [change] }).expect(403);
      expect(refused.body.code).toBe('FORBIDDEN');
      expect(problemsOf(refused.body)[0]?.reason).toMatch(/missing scope (data|doc):write/);
    }
    const list = await request(t.http).get(`${target.path}/requests?status=open`).set(bearer(owner)).expect(200);
    expect(list.body.payload.items).toEqual([]);

    // With the scope of each kind the same bodies are accepted; an empty request needs none.
    const rows = await scopedToken(t, owner, ['requests:manage', 'data:write']);
    await request(t.http).post(`${target.path}/requests`).set(bearer(rows)).send({ changes: [ROW_CREATE] }).expect(201);
    await request(t.http).post(`${target.path}/requests`).set(bearer(rows)).send({ changes: [SETTINGS] }).expect(403);
    const structure = await scopedToken(t, owner, ['requests:manage', 'doc:write']);
    await request(t.http).post(`${target.path}/requests`).set(bearer(structure)).send({ changes: [SETTINGS, FIELD_DELETE] }).expect(201);
    await request(t.http).post(`${target.path}/requests`).set(bearer(requestsOnly)).send({ title: 'empty' }).expect(201);
  });

  it('refuses merging changes whose scopes the token lacks; the session of the same user merges', async () => {
    const target = await doc();
    const opened = await request(t.http).post(`${target.path}/requests`).set(bearer(owner)).send({ changes: [ROW_CREATE, SETTINGS] }).expect(201);
    const requestId = opened.body.payload.id as string;
    const requestsOnly = await scopedToken(t, owner, ['requests:manage']);
    const refused = await request(t.http).post(`${target.path}/requests/${requestId}/merge`).set(bearer(requestsOnly)).expect(403);
    expect(problemsOf(refused.body)[0]?.reason).toContain('missing scope data:write doc:write');
    const rowsOnly = await scopedToken(t, owner, ['requests:manage', 'data:write']);
    await request(t.http).post(`${target.path}/requests/${requestId}/merge`).set(bearer(rowsOnly)).expect(403);
    expect((await request(t.http).get(`${target.path}/requests/${requestId}`).set(bearer(owner)).expect(200)).body.payload.status).toBe('open');
    await request(t.http).get(`${target.path}/data/n1`).set(bearer(owner)).expect(404);
    await request(t.http).post(`${target.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);
  });

  it('refuses reverting with requests:manage alone; the scopes of what the revert undoes are needed', async () => {
    const target = await doc();
    const row = await createRow(t.http, owner, target, { id: 'r1', values: { name: 'One' } });
    expect(row.id).toBe('r1');
    const revisions = await request(t.http).get(`${target.path}/revisions`).set(bearer(owner)).expect(200);
    const revisionId = revisions.body.payload.items[0].id as string;
    const requestsOnly = await scopedToken(t, owner, ['requests:manage']);
    const refused = await request(t.http).post(`${target.path}/revisions/${revisionId}/revert`).set(bearer(requestsOnly)).expect(403);
    expect(problemsOf(refused.body)[0]?.reason).toContain('missing scope data:write');
    await request(t.http).get(`${target.path}/data/r1`).set(bearer(owner)).expect(200);
    const allowed = await scopedToken(t, owner, ['requests:manage', 'data:write']);
    await request(t.http).post(`${target.path}/revisions/${revisionId}/revert`).set(bearer(allowed)).expect(200);
    await request(t.http).get(`${target.path}/data/r1`).set(bearer(owner)).expect(404);
  });

  it('refuses a change whose target.kind does not fit its type, naming changes[i].target.kind', async () => {
    const target = await doc();
    const res = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [ROW_CREATE, { type: 'row-create', target: { kind: 'field', rowId: 'ok1' }, newValue: { values: { name: 'x' } } }] })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(res.body)).toEqual([expect.objectContaining({ field: 'changes[1].target.kind' })]);
    const settings = await request(t.http).post(`${target.path}/requests`).set(bearer(owner)).send({ changes: [{ ...SETTINGS, target: { kind: 'row' } }] }).expect(400);
    expect(problemsOf(settings.body)).toEqual([expect.objectContaining({ field: 'changes[0].target.kind' })]);
    expect((await request(t.http).get(`${target.path}/requests?status=open`).set(bearer(owner)).expect(200)).body.payload.items).toEqual([]);
  });

  it("takes a change's operation as a Change shows it (spec 2.9) when it fits the type, and refuses one that does not", async () => {
    const target = await doc();
    await createRow(t.http, owner, target, { id: 'r1', values: { name: 'One' } });
    const accepted = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({
        changes: [
          { ...ROW_CREATE, operation: 'create' },
          { type: 'row-update', operation: 'update', target: { kind: 'row', rowId: 'r1' }, newValue: { values: { qty: 3 } } },
          { ...FIELD_DELETE, operation: 'delete' },
          // A Change of POST /properties shows create: sent back, it is taken (and recorded as the patch it is).
          { ...PROPERTY, operation: 'create' },
        ],
      })
      .expect(201);
    expect(accepted.body.payload.changes.map((change: { operation: string }) => change.operation)).toEqual(['create', 'update', 'update', 'update']);
    const refused = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [ROW_CREATE, { type: 'row-delete', operation: 'update', target: { kind: 'row', rowId: 'r1' } }] })
      .expect(400);
    expect(problemsOf(refused.body)).toEqual([expect.objectContaining({ field: 'changes[1].operation', reason: 'must be delete for a row-delete change' })]);
    const unknown = await request(t.http).post(`${target.path}/requests`).set(bearer(owner)).send({ changes: [{ ...ROW_CREATE, operation: 'upsert' }] }).expect(400);
    expect(problemsOf(unknown.body)[0]?.field).toBe('changes[0].operation');
    const open = await request(t.http).get(`${target.path}/requests?status=open`).set(bearer(owner)).expect(200);
    expect(open.body.payload.items).toHaveLength(1);
  });

  it('accepts as reviewers only users who can read the document', async () => {
    const target = await doc();
    const bad = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({ reviewers: [viewer.id, 'junk', stranger.id] })
      .expect(400);
    expect(problemsOf(bad.body).map((problem) => problem.field)).toEqual(['reviewers[1]', 'reviewers[2]']);
    const ok = await request(t.http).post(`${target.path}/requests`).set(bearer(owner)).send({ reviewers: [viewer.id, viewer.id] }).expect(201);
    expect(ok.body.payload.reviewers).toEqual([viewer.id]);
  });

  it('answers a malformed request or revision id like an unknown one: NOT_FOUND naming it', async () => {
    const target = await doc();
    const diff = await request(t.http).get(`${target.path}/requests/abc/diff`).set(bearer(owner)).expect(404);
    expect(problemsOf(diff.body)[0]?.field).toBe('requestId');
    await createRow(t.http, owner, target, { id: 'r1', values: { name: 'One' } });
    await createRow(t.http, owner, target, { id: 'r2', values: { name: 'Two' } });
    const revisionId = (await request(t.http).get(`${target.path}/revisions`).set(bearer(owner)).expect(200)).body.payload.items[0].id as string;
    for (const base of ['abc', '00000000-0000-4000-8000-000000000000']) {
      const res = await request(t.http).get(`${target.path}/revisions/${revisionId}/diff`).query({ base }).set(bearer(owner)).expect(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND' });
      expect(problemsOf(res.body)[0]?.field).toBe('base');
    }
  });

  it('shows a merged request as its merge changed the document, whatever happened after', async () => {
    const target = await doc();
    await createRow(t.http, owner, target, { id: 'r1', values: { name: 'One', qty: 1 } });
    const opened = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({
        changes: [
          { type: 'row-update', target: { kind: 'row', rowId: 'r1' }, newValue: { values: { qty: 2 } } },
          { type: 'row-create', target: { kind: 'row', rowId: 'r9' }, newValue: { values: { name: 'Nine' } } },
          { type: 'field-update', target: { kind: 'field', fieldId: 'name' }, newValue: { name: 'Title' } },
        ],
      })
      .expect(201);
    const requestId = opened.body.payload.id as string;
    const open = (await request(t.http).get(`${target.path}/requests/${requestId}/diff`).set(bearer(owner)).expect(200)).body.payload;
    await request(t.http).post(`${target.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);
    // Later writes change the same cell and delete the created row.
    await request(t.http).put(`${target.path}/data/r1`).set(bearer(owner)).send({ values: { qty: 11 } }).expect(200);
    await request(t.http).delete(`${target.path}/data/r9`).set(bearer(owner)).expect((res) => expect(res.status).toBeLessThan(300));

    const merged = (await request(t.http).get(`${target.path}/requests/${requestId}/diff`).set(bearer(owner)).expect(200)).body.payload;
    expect(open.updatedCells).toEqual([{ rowId: 'r1', fieldId: 'qty', oldValue: { number: 1 }, newValue: { number: 2 } }]);
    expect(merged.updatedCells).toEqual(open.updatedCells);
    expect(merged.addedRows.map((row: { id: string }) => row.id)).toEqual(['r9']);
    expect(merged.deletedRows).toEqual([]);
    expect(merged.fields).toEqual({ created: [], updated: ['name'], deleted: [] });
    expect(merged.settingsChanged).toBe(false);
  });

  it("shows a merged request's deleted row as the merge found it: its last change, not only its creation", async () => {
    const target = await doc();
    const editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await createRow(t.http, owner, target, { id: 'r1', values: { name: 'One', qty: 1 } });
    await request(t.http).put(`${target.path}/data/r1`).set(bearer(editor)).send({ values: { qty: 5 } }).expect(200);
    const before = (await request(t.http).get(`${target.path}/data/r1`).set(bearer(owner)).expect(200)).body.payload;
    expect(before.updatedBy).toBe(editor.id);
    const opened = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'row-delete', target: { kind: 'row', rowId: 'r1' } }] })
      .expect(201);
    await request(t.http).post(`${target.path}/requests/${opened.body.payload.id}/merge`).set(bearer(owner)).expect(200);

    const merged = (await request(t.http).get(`${target.path}/requests/${opened.body.payload.id}/diff`).set(bearer(owner)).expect(200)).body.payload;
    expect(merged.deletedRows).toEqual([
      expect.objectContaining({ id: 'r1', version: before.version, createdAt: before.createdAt, createdBy: owner.id, updatedAt: before.updatedAt, updatedBy: editor.id }),
    ]);
  });

  it('declares the 409s of merge, close, reopen and revert and an optional body for POST /requests', () => {
    const paths = t.openApi.paths;
    const base = '/api/v1/doc/{docType}/{docId}';
    for (const path of [`${base}/requests/{reqId}/merge`, `${base}/requests/{reqId}/close`, `${base}/requests/{reqId}/reopen`, `${base}/revisions/{revId}/revert`]) {
      expect(Object.keys(paths[path]?.post?.responses ?? {})).toContain('409');
    }
    const body = paths[`${base}/requests`]?.post?.requestBody as { required?: boolean } | undefined;
    expect(body?.required).not.toBe(true);
  });
});
