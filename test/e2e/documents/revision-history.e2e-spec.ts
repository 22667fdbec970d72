import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, API, bearer, createDocument, type DocHandle, newUser, valueOf } from './documents.fixtures.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'qty', name: 'Quantity', type: 'number' },
  { id: 'note', name: 'Note', type: 'text' },
];

type Row = { id: string; version: number; values: { fieldId: string; value: Record<string, unknown> }[] };

describe('documents: revision diff, target history and revert', () => {
  let t: TestApp;
  let owner: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;
  let doc: DocHandle;
  const rev: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    viewer = await newUser(t.http);
    stranger = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    doc = await createDocument(t.http, owner, { fields: FIELDS });
    // rev 2..6: create a, create b, update a, delete b, create c.
    rev.createA = await write('post', '/data', { id: 'a', values: { name: 'A', qty: 1, note: 'first' } }, 201);
    rev.createB = await write('post', '/data', { id: 'b', values: { name: 'B', qty: 2, note: 'second' } }, 201);
    rev.updateA = await write('put', '/data/a', { values: { qty: 5 }, version: 1 }, 200);
    rev.deleteB = await write('delete', '/data/b', undefined, 200);
    rev.createC = await write('post', '/data', { id: 'c', values: { name: 'C', qty: 3 } }, 201);
  });
  afterAll(async () => {
    await t.close();
  });

  async function write(method: 'post' | 'put' | 'delete', path: string, body: unknown, status: number): Promise<string> {
    const res = await request(t.http)[method](`${doc.path}${path}`).set(bearer(owner)).send(body as object).expect(status);
    return res.body.payload.request.revisionId as string;
  }

  async function row(id: string, expected = 200): Promise<Row> {
    return (await request(t.http).get(`${doc.path}/data/${id}`).set(bearer(owner)).expect(expected)).body.payload;
  }

  it('answers GET /revisions/history as a history (not as a revision id), newest first, per row and per cell', async () => {
    const res = await request(t.http).get(`${doc.path}/revisions/history?targetKind=row&rowId=a`).set(bearer(viewer)).expect(200);
    const items = res.body.payload.items as { type: string; revisionId: string; revisionVersion: number; operator: string; timestamp: string; newValue: unknown }[];
    expect(items.map((item) => item.type)).toEqual(['row-update', 'row-create']);
    expect(items.map((item) => item.revisionId)).toEqual([rev.updateA, rev.createA]);
    expect(items[0]?.revisionVersion).toBeGreaterThan(items[1]?.revisionVersion as number);
    expect(items[0]).toMatchObject({ operator: owner.id, timestamp: expect.any(String), target: { kind: 'row', rowId: 'a' } });
    expect(res.body.payload.total).toBe(2);

    // One cell: only the operations that touched `note` of row a.
    const cell = await request(t.http).get(`${doc.path}/revisions/history?targetKind=row&rowId=a&fieldId=note`).set(bearer(owner)).expect(200);
    expect(cell.body.payload.items.map((item: { type: string }) => item.type)).toEqual(['row-create']);

    // Fields: the document's creation recorded field-create operations.
    const field = await request(t.http).get(`${doc.path}/revisions/history?targetKind=field&fieldId=qty`).set(bearer(owner)).expect(200);
    expect(field.body.payload.items.map((item: { type: string }) => item.type)).toEqual(['field-create']);

    // A row id alone names a row.
    const byRow = await request(t.http).get(`${doc.path}/revisions/history?rowId=a`).set(bearer(owner)).expect(200);
    expect(byRow.body.payload.items).toEqual(res.body.payload.items);

    const paged = await request(t.http).get(`${doc.path}/revisions/history?targetKind=row&pageSize=2&page=2`).set(bearer(owner)).expect(200);
    expect(paged.body.payload.total).toBe(5);
    expect(paged.body.payload.items).toHaveLength(2);
  });

  it('refuses a history without a target or with an unknown targetKind with VALIDATION_ERROR', async () => {
    const missing = await request(t.http).get(`${doc.path}/revisions/history`).set(bearer(owner)).expect(400);
    expect(missing.body.code).toBe('VALIDATION_ERROR');
    const bad = await request(t.http).get(`${doc.path}/revisions/history?targetKind=cells`).set(bearer(owner)).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });

  it('diffs a revision against the previous one: updated cells with old and new values, deleted rows', async () => {
    const update = await request(t.http).get(`${doc.path}/revisions/${rev.updateA}/diff`).set(bearer(viewer)).expect(200);
    expect(update.body.payload).toMatchObject({
      revisionId: rev.updateA,
      baseRevisionId: rev.createB,
      addedRows: [],
      deletedRows: [],
      updatedCells: [{ rowId: 'a', fieldId: 'qty', oldValue: { number: 1 }, newValue: { number: 5 } }],
      rowsTotal: 1,
    });
    const del = await request(t.http).get(`${doc.path}/revisions/${rev.deleteB}/diff`).set(bearer(owner)).expect(200);
    expect(del.body.payload.deletedRows).toEqual([{ id: 'b', values: expect.arrayContaining([{ fieldId: 'name', value: { text: 'B' } }, { fieldId: 'qty', value: { number: 2 } }]) }]);
  });

  it('diffs across several revisions with an explicit base, paged by row (a row created and deleted in between is no difference)', async () => {
    const all = await request(t.http).get(`${doc.path}/revisions/${rev.createC}/diff?base=${rev.createA}`).set(bearer(owner)).expect(200);
    expect(all.body.payload).toMatchObject({ baseRevisionId: rev.createA, rowsTotal: 2, deletedRows: [] });
    expect(all.body.payload.addedRows.map((item: { id: string }) => item.id)).toEqual(['c']);
    expect(all.body.payload.updatedCells).toEqual([{ rowId: 'a', fieldId: 'qty', oldValue: { number: 1 }, newValue: { number: 5 } }]);

    const page = await request(t.http).get(`${doc.path}/revisions/${rev.createC}/diff?base=${rev.createA}&pageSize=1&page=2`).set(bearer(owner)).expect(200);
    expect(page.body.payload.addedRows.map((item: { id: string }) => item.id)).toEqual(['c']);
    expect(page.body.payload.updatedCells).toEqual([]);
    expect(page.body.payload.rowsTotal).toBe(2);
  });

  it('diffs across several revisions with whole rows: an added row as it ends, a deleted row as it was at the base, a replaced row by cell', async () => {
    const other = await createDocument(t.http, owner, { fields: FIELDS });
    const put = async (method: 'post' | 'put' | 'delete', path: string, body?: unknown): Promise<string> =>
      (await request(t.http)[method](`${other.path}${path}`).set(bearer(owner)).send(body as object).expect(method === 'post' ? 201 : 200)).body.payload.request
        .revisionId as string;
    await put('post', '/data', { id: 'z', values: { name: 'Z', qty: 1 } });
    const base = await put('post', '/data', { id: 'x', values: { name: 'X', qty: 1 } });
    await put('put', '/data/x', { values: { qty: 2, note: 'later' }, version: 1 });
    await put('delete', '/data/x');
    await put('post', '/data', { id: 'y', values: { name: 'Y', qty: 3 } });
    await put('delete', '/data/z');
    await put('post', '/data', { id: 'z', values: { name: 'Z2', note: 'new' } });
    const last = await put('put', '/data/y', { values: { qty: 7 }, version: 1 });
    const diff = await request(t.http).get(`${other.path}/revisions/${last}/diff?base=${base}`).set(bearer(owner)).expect(200);
    const sorted = (values: { fieldId: string }[]): { fieldId: string }[] => [...values].sort((a, b) => a.fieldId.localeCompare(b.fieldId));
    expect(diff.body.payload.addedRows.map((item: { id: string; values: { fieldId: string }[] }) => ({ id: item.id, values: sorted(item.values) }))).toEqual([
      { id: 'y', values: [{ fieldId: 'name', value: { text: 'Y' } }, { fieldId: 'qty', value: { number: 7 } }] },
    ]);
    expect(diff.body.payload.deletedRows.map((item: { id: string; values: { fieldId: string }[] }) => ({ id: item.id, values: sorted(item.values) }))).toEqual([
      { id: 'x', values: [{ fieldId: 'name', value: { text: 'X' } }, { fieldId: 'qty', value: { number: 1 } }] },
    ]);
    // z deleted and created again in between: its cells, the row at the base against the row at the end.
    expect(diff.body.payload.updatedCells).toEqual([
      { rowId: 'z', fieldId: 'name', oldValue: { text: 'Z' }, newValue: { text: 'Z2' } },
      { rowId: 'z', fieldId: 'note', oldValue: null, newValue: { text: 'new' } },
      { rowId: 'z', fieldId: 'qty', oldValue: { number: 1 }, newValue: null },
    ]);
    expect(diff.body.payload.rowsTotal).toBe(3);
  });

  it('refuses a base that is not older (VALIDATION_ERROR) and unknown or malformed revisions (NOT_FOUND)', async () => {
    const newer = await request(t.http).get(`${doc.path}/revisions/${rev.createA}/diff?base=${rev.createC}`).set(bearer(owner)).expect(400);
    expect(newer.body.code).toBe('VALIDATION_ERROR');
    const notUuid = await request(t.http).get(`${doc.path}/revisions/${rev.createA}/diff?base=nope`).set(bearer(owner)).expect(404);
    expect(notUuid.body).toMatchObject({ code: 'NOT_FOUND', details: { field: 'base' } });
    // Every revision route names the path parameter of an unknown or malformed revision.
    for (const path of ['xyz', 'xyz/operations', 'xyz/request', '00000000-0000-4000-8000-000000000000']) {
      const res = await request(t.http).get(`${doc.path}/revisions/${path}`).set(bearer(owner)).expect(404);
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', details: { field: 'revId' } });
    }
    const unknown = await request(t.http).get(`${doc.path}/revisions/00000000-0000-4000-8000-000000000000/diff`).set(bearer(owner)).expect(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    await request(t.http).post(`${doc.path}/revisions/00000000-0000-4000-8000-000000000000/revert`).set(bearer(owner)).expect(404);
  });

  it('hides history, diff and revert from other tenants and refuses a viewer reverting', async () => {
    await request(t.http).get(`${doc.path}/revisions/history?targetKind=row&rowId=a`).set(bearer(stranger)).expect(404);
    const res = await request(t.http).get(`${doc.path}/revisions/${rev.updateA}/diff`).set(bearer(stranger)).expect(404);
    expect(JSON.stringify(res.body)).not.toContain('qty');
    await request(t.http).post(`${doc.path}/revisions/${rev.deleteB}/revert`).set(bearer(stranger)).expect(404);
    const forbidden = await request(t.http).post(`${doc.path}/revisions/${rev.deleteB}/revert`).set(bearer(viewer)).expect(403);
    expect(forbidden.body.code).toBe('FORBIDDEN');
    await row('b', 404);
  });

  it('reverts a row deletion: the row comes back with its id and values, in a new revision, raising revision_reverted', async () => {
    const before = await request(t.http).get(`${doc.path}/revisions/${rev.deleteB}/operations`).set(bearer(owner)).expect(200);
    const res = await request(t.http).post(`${doc.path}/revisions/${rev.deleteB}/revert`).set(bearer(owner)).expect(200);
    expect(res.body.payload).toMatchObject({ merged: true, pendingApproval: false, request: { status: 'merged', title: expect.stringContaining('Revert') } });
    const revision = res.body.payload.revision;
    expect(revision.stats).toMatchObject({ rowsCreated: 1 });
    const b = await row('b');
    expect(valueOf(b, 'name')).toEqual({ text: 'B' });
    expect(valueOf(b, 'note')).toEqual({ text: 'second' });

    // History is never edited: the reverted revision's operations are as they were.
    const after = await request(t.http).get(`${doc.path}/revisions/${rev.deleteB}/operations`).set(bearer(owner)).expect(200);
    expect(after.body.payload).toEqual(before.body.payload);

    const events = await t.dataSource.query<{ payload: Record<string, unknown>; triggered_by: string }[]>(
      `SELECT payload, triggered_by FROM outbox WHERE doc_id = $1 AND event_type = 'revision_reverted'`,
      [doc.docId],
    );
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toMatchObject({ revisionId: revision.id, revertedRevisionId: rev.deleteB, requestId: res.body.payload.request.id, mergedBy: owner.id });
  });

  it('reports conflicts when the rows were changed since; the revert request stays open and nothing is applied', async () => {
    await write('put', '/data/a', { values: { qty: 9 }, version: 2 }, 200);
    const res = await request(t.http).post(`${doc.path}/revisions/${rev.updateA}/revert`).set(bearer(owner)).expect(409);
    expect(res.body.code).toBe('CONFLICT');
    expect(res.body.payload.conflicts).toEqual([expect.objectContaining({ type: 'row-changed', rowId: 'a', baseVersion: 2, currentVersion: 3 })]);
    const revertRequest = await request(t.http).get(`${doc.path}/requests/${res.body.payload.requestId}`).set(bearer(owner)).expect(200);
    expect(revertRequest.body.payload.status).toBe('open');
    expect(revertRequest.body.payload.changes).toEqual([expect.objectContaining({ type: 'row-update', targetId: 'a', data: { values: [{ fieldId: 'qty', value: { number: 1 } }], baseVersion: 2 } })]);
    const a = await row('a');
    expect(valueOf(a, 'qty')).toEqual({ number: 9 });
    expect(a.version).toBe(3);
  });

  it('reverts a field deletion: the definition and every row value come back', async () => {
    const res = await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ fields: FIELDS.filter((field) => field.id !== 'note') })
      .expect(200);
    const dropped = res.body.payload.request.revisionId as string;
    expect(valueOf(await row('a'), 'note')).toBeUndefined();

    const revert = await request(t.http).post(`${doc.path}/revisions/${dropped}/revert`).set(bearer(owner)).expect(200);
    expect(revert.body.payload.revision.stats).toMatchObject({ fieldsCreated: 1, rowsUpdated: 2 });
    const metadata = await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200);
    expect(metadata.body.payload.fields.map((field: { id: string }) => field.id)).toEqual(['name', 'qty', 'note']);
    expect(valueOf(await row('a'), 'note')).toEqual({ text: 'first' });
    expect(valueOf(await row('b'), 'note')).toEqual({ text: 'second' });
    expect(valueOf(await row('c'), 'note')).toBeUndefined();
  });

  it('reverts a row creation by deleting the row', async () => {
    await request(t.http).post(`${doc.path}/revisions/${rev.createC}/revert`).set(bearer(owner)).expect(200);
    await row('c', 404);
  });

  it('reverts a row deletion with its links: the relation field value and its edge, and a free-standing edge', async () => {
    const linked = await createDocument(t.http, owner, { docType: 'linked', fields: [...FIELDS, { id: 'links', name: 'Links', type: 'relation' }] });
    await request(t.http).post(`${linked.path}/data`).set(bearer(owner)).send({ id: 'l2', values: { name: 'Two' } }).expect(201);
    await request(t.http).post(`${linked.path}/data`).set(bearer(owner)).send({ id: 'l1', values: { name: 'One', links: [{ rowId: 'l2' }] } }).expect(201);
    await request(t.http)
      .post(`${API}/relations`)
      .set(bearer(owner))
      .send({ type: 'ref', source: { docType: 'linked', docId: linked.docId, rowId: 'l1' }, target: { docType: 'linked', docId: linked.docId, rowId: 'l2' } })
      .expect(201);
    const edges = async (): Promise<string[]> =>
      ((await request(t.http).get(`${linked.path}/relations?rowId=l1`).set(bearer(owner)).expect(200)).body.payload.items as { type: string }[]).map((edge) => edge.type).sort();
    expect(await edges()).toEqual(['links', 'ref']);

    const del = await request(t.http).delete(`${linked.path}/data/l1`).set(bearer(owner)).expect(200);
    expect(await edges()).toEqual([]);
    const res = await request(t.http).post(`${linked.path}/revisions/${del.body.payload.request.revisionId}/revert`).set(bearer(owner)).expect(200);
    expect(res.body.payload.skipped).toEqual([]);
    const l1 = (await request(t.http).get(`${linked.path}/data/l1`).set(bearer(owner)).expect(200)).body.payload;
    expect(valueOf(l1, 'links')).toEqual({ relation: [expect.objectContaining({ rowId: 'l2' })] });
    expect(await edges()).toEqual(['links', 'ref']);
  });

  it('leaves the revert request open when the workflow requires approval', async () => {
    const gated = await createDocument(t.http, owner, { fields: FIELDS });
    const created = await request(t.http).post(`${gated.path}/data`).set(bearer(owner)).send({ id: 'x', values: { name: 'X' } }).expect(201);
    await request(t.http).put(`${gated.path}/settings`).set(bearer(owner)).send({ workflow: { requiresApproval: true } }).expect(200);
    const res = await request(t.http).post(`${gated.path}/revisions/${created.body.payload.request.revisionId}/revert`).set(bearer(owner)).expect(200);
    expect(res.body.payload).toMatchObject({ merged: false, pendingApproval: true, revision: null, request: { status: 'open' } });
    await request(t.http).get(`${gated.path}/data/x`).set(bearer(owner)).expect(200);
  });
});
