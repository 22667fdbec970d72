import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, addWorkspace, API, bearer, createDocument, createRow, type DocHandle, newUser, PRODUCT_FIELDS, scopedToken, valueOf } from './documents.fixtures.js';

interface Edge {
  id: string;
  type: string;
  fieldId: string | null;
  source: { docType: string; docId: string; rowId: string };
  target: { docType: string; docId: string; rowId: string };
}

describe('documents: relations', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let outsider: TestUser;
  let orders: DocHandle;
  let suppliers: DocHandle;

  const edgeCount = async (): Promise<number> => Number((await t.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM document_relations`))[0]?.n);
  const relate = (user: { token: string }, body: Record<string, unknown>, query = ''): request.Test =>
    request(t.http).post(`${API}/relations${query}`).set(bearer(user)).send(body);
  const edge = (sourceRow: string, targetRow: string, type = 'supplied-by', target: DocHandle = suppliers): Record<string, unknown> => ({
    type,
    source: { docType: orders.docType, docId: orders.docId, rowId: sourceRow },
    target: { docType: target.docType, docId: target.docId, rowId: targetRow },
    metadata: { note: 'primary' },
  });
  const list = async (doc: DocHandle, query = ''): Promise<Edge[]> =>
    (await request(t.http).get(`${doc.path}/relations${query}`).set(bearer(owner)).expect(200)).body.payload.items as Edge[];
  const operations = async (doc: DocHandle, revisionId: string): Promise<{ type: string; target: Record<string, unknown>; oldValue: unknown; newValue: unknown }[]> =>
    (await request(t.http).get(`${doc.path}/revisions/${revisionId}/operations?pageSize=100`).set(bearer(owner)).expect(200)).body.payload.items;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    viewer = await newUser(t.http);
    outsider = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    orders = await createDocument(t.http, owner, { docType: 'orders', fields: [...PRODUCT_FIELDS, { id: 'links', name: 'Links', type: 'relation' }] });
    suppliers = await createDocument(t.http, owner, { docType: 'suppliers' });
    for (const id of ['o1', 'o2', 'o3']) {
      await createRow(t.http, owner, orders, { id, values: { name: id } });
    }
    for (const id of ['s1', 's2']) {
      await createRow(t.http, owner, suppliers, { id, values: { name: id } });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates an edge merged at once, listed outgoing from the source and incoming at the target, in the revision', async () => {
    const res = await relate(editor, edge('o1', 's1')).expect(201);
    const created = res.body.payload;
    expect(created).toMatchObject({
      type: 'supplied-by',
      direction: 'outgoing',
      source: { docType: 'orders', docId: orders.docId, rowId: 'o1', workspaceId: owner.defaultWorkspaceId },
      target: { docType: 'suppliers', docId: suppliers.docId, rowId: 's1' },
      fieldId: null,
      metadata: { note: 'primary' },
      createdBy: editor.id,
      request: { merged: true, requestStatus: 'merged' },
    });
    const outgoing = await list(orders, '?type=supplied-by');
    expect(outgoing.map((item) => item.id)).toEqual([created.id]);
    expect(await list(suppliers)).toEqual([]);
    const incoming = await list(suppliers, '?direction=incoming');
    expect(incoming.map((item) => item.id)).toEqual([created.id]);
    expect(await list(suppliers, '?direction=incoming&rowId=s2')).toEqual([]);
    expect((await list(orders, '?type=other')).length).toBe(0);
    expect((await list(orders, `?workspaceId=${owner.defaultWorkspaceId}`)).length).toBe(1);
    // Without a workspace in the ends, the call's context names it.
    const viaContext = await relate(owner, { ...edge('o1', 's1', 'ctx') }, `?workspaceId=${owner.defaultWorkspaceId}`).expect(201);
    expect(viaContext.body.payload.request.merged).toBe(true);

    const ops = await operations(orders, created.request.revisionId);
    expect(ops).toEqual([
      expect.objectContaining({ type: 'relation-create', target: { kind: 'row', rowId: 'o1' }, oldValue: null, newValue: expect.objectContaining({ id: created.id, type: 'supplied-by' }) }),
    ]);
    // Spec 2.9 names five target kinds: an edge's operation targets its row, and the row's history shows it.
    const history = async (query: string) =>
      (await request(t.http).get(`${orders.path}/revisions/history${query}`).set(bearer(owner)).expect(200)).body.payload.items as { type: string; target: { kind: string } }[];
    const rowHistory = await history('?targetKind=row&rowId=o1');
    expect(rowHistory.map((op) => op.type)).toEqual(['relation-create', 'relation-create', 'row-create']);
    expect(rowHistory.every((op) => op.target.kind === 'row')).toBe(true);
    expect((await history('?rowId=o1')).length).toBe(3);
    expect((await history('?targetKind=relation&rowId=o1')).map((op) => op.type)).toEqual(['relation-create', 'relation-create']);
  });

  it('goes through an explicit request: recorded, not visible, created by the merge', async () => {
    const req = await request(t.http).post(`${orders.path}/requests`).set(bearer(owner)).send({ title: 'link o2' }).expect(201);
    const requestId = req.body.payload.id;
    const res = await relate(owner, edge('o2', 's2'), `?requestId=${requestId}`).expect(201);
    expect(res.body.payload).toMatchObject({ createdAt: null, request: { requestId, merged: false, requestStatus: 'open' } });
    expect((await list(orders, '?rowId=o2')).length).toBe(0);
    const detail = await request(t.http).get(`${orders.path}/requests/${requestId}`).set(bearer(owner)).expect(200);
    expect(detail.body.payload.changes.map((change: { type: string }) => change.type)).toEqual(['relation-create']);
    const merged = await request(t.http).post(`${orders.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);
    const afterMerge = await list(orders, '?rowId=o2');
    expect(afterMerge.map((item) => item.id)).toEqual([res.body.payload.id]);
    const revisionId = merged.body.payload.generatedRevisionId ?? merged.body.payload.revisionId;
    expect((await operations(orders, revisionId)).map((op) => op.type)).toEqual(['relation-create']);
  });

  it('refuses a missing row, a foreign organization, an unreadable target, the viewer role and a missing scope; nothing is written', async () => {
    const before = await edgeCount();
    const missingTarget = await relate(owner, edge('o1', 'nope')).expect(400);
    expect(missingTarget.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(missingTarget.body.details.field).toBe('target.rowId');
    expect((await relate(owner, edge('nope', 's1')).expect(400)).body.details.field).toBe('source.rowId');
    expect((await relate(owner, { ...edge('o1', 's1'), type: 'bad type!' }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect((await relate(owner, { ...edge('o1', 's1'), direction: 'sideways' }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    const duplicate = await relate(owner, edge('o1', 's1')).expect(409);
    expect(duplicate.body).toMatchObject({ code: 'ALREADY_EXISTS' });

    const foreignDoc = await createDocument(t.http, outsider, { docType: 'suppliers' });
    await createRow(t.http, outsider, foreignDoc, { id: 'x1', values: { name: 'x' } });
    const foreign = await relate(owner, edge('o1', 'x1', 'supplied-by', foreignDoc)).expect(404);
    expect(foreign.body.code).toBe('DOC_NOT_FOUND');
    const foreignSource = await relate(outsider, edge('o1', 's1')).expect(404);
    expect(foreignSource.body.code).toBe('DOC_NOT_FOUND');
    expect((await request(t.http).get(`${orders.path}/relations`).set(bearer(outsider)).expect(404)).body.code).toBe('DOC_NOT_FOUND');

    // A workspace of the organization the editor is not a member of: its documents cannot be read.
    const hiddenWs = await addWorkspace(t.dataSource, owner);
    const hidden = await createDocument(t.http, owner, { docType: 'suppliers', workspaceId: hiddenWs });
    await createRow(t.http, owner, hidden, { id: 'h1', values: { name: 'h' } });
    const unreadable = await relate(editor, { ...edge('o1', 'h1', 'supplied-by', hidden), target: { docType: 'suppliers', docId: hidden.docId, rowId: 'h1', workspaceId: hiddenWs } }).expect(403);
    expect(unreadable.body.code).toBe('FORBIDDEN');

    expect((await relate(viewer, edge('o1', 's2')).expect(403)).body.code).toBe('FORBIDDEN');
    const readOnly = await scopedToken(t, owner, ['data:read', 'doc:read']);
    expect((await relate(readOnly, edge('o1', 's2')).expect(403)).body.code).toBe('FORBIDDEN');
    expect(await edgeCount()).toBe(before);

    // The owner may link into the other workspace; the editor does not see that edge in the listing.
    await relate(owner, { ...edge('o3', 'h1', 'supplied-by', hidden), target: { docType: 'suppliers', docId: hidden.docId, rowId: 'h1', workspaceId: hiddenWs } }).expect(201);
    const asEditor = await request(t.http).get(`${orders.path}/relations?rowId=o3`).set(bearer(editor)).expect(200);
    expect(asEditor.body.payload.items).toEqual([]);
    expect((await list(orders, '?rowId=o3')).map((item) => item.target.rowId)).toEqual(['h1']);
  });

  it('refuses a body without source or target (or with null or an array) as VALIDATION_ERROR naming the end, as the OpenAPI document requires them', async () => {
    // They used to pass validation (@ValidateNested alone skips a missing value) and fail later with 500 INTERNAL_ERROR.
    const before = await edgeCount();
    const { source, target, ...rest } = edge('o1', 's1');
    for (const [body, field] of [
      [{ ...rest, target }, 'source'],
      [{ ...rest, source }, 'target'],
    ] as const) {
      const res = await relate(owner, body).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(res.body)).toEqual([{ field, reason: `${field} is required` }]);
    }
    const nullSource = await relate(owner, { ...rest, source: null, target }).expect(400);
    expect(nullSource.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(nullSource.body)).toContainEqual({ field: 'source', reason: 'source should not be null or undefined' });
    // An array is not an end either (nested validation walks arrays item by item; it reached the lookup as 404).
    for (const wrong of [[], [source]]) {
      const res = await relate(owner, { ...rest, source: wrong, target }).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(res.body)).toContainEqual({ field: 'source', reason: 'source must be an object' });
    }
    expect(await edgeCount()).toBe(before);
  });

  it('a relation field value is its set of edges, kept equal on create and update; a missing row is refused', async () => {
    const created = await createRow(t.http, owner, orders, {
      id: 'o4',
      values: { name: 'four', links: [{ rowId: 'o1' }, { docType: 'suppliers', docId: suppliers.docId, rowId: 's1' }] },
    });
    expect(created.id).toBe('o4');
    const fieldEdges = async (): Promise<string[]> =>
      (await list(orders, '?rowId=o4&type=links')).map((item) => `${item.target.docType}/${item.target.rowId}:${item.fieldId}`).sort();
    expect(await fieldEdges()).toEqual(['orders/o1:links', 'suppliers/s1:links']);

    const updated = await request(t.http)
      .put(`${orders.path}/data/o4`)
      .set(bearer(owner))
      .send({ values: { links: [{ rowId: 'o2' }, { docType: 'suppliers', docId: suppliers.docId, rowId: 's1' }] } })
      .expect(200);
    const value = valueOf(updated.body.payload, 'links') as { relation: { rowId: string }[] };
    expect(value.relation.map((ref) => ref.rowId).sort()).toEqual(['o2', 's1']);
    expect(await fieldEdges()).toEqual(['orders/o2:links', 'suppliers/s1:links']);
    const ops = await operations(orders, updated.body.payload.request.revisionId);
    expect(ops.map((op) => op.type).sort()).toEqual(['relation-create', 'relation-delete', 'row-update']);

    const before = await edgeCount();
    const refused = await request(t.http).post(`${orders.path}/data`).set(bearer(owner)).send({ id: 'o5', values: { name: 'five', links: [{ rowId: 'ghost' }] } }).expect(400);
    expect(refused.body.code).toBe('VALIDATION_ERROR');
    // Issue 5: a value failure names the field ({fieldId, reason}), and the row holding the reference.
    expect(refused.body.details).toMatchObject({ field: 'links', fieldId: 'links', rowId: 'o5', reason: 'row ghost does not exist' });
    await request(t.http).get(`${orders.path}/data/o5`).set(bearer(owner)).expect(404);
    expect(await edgeCount()).toBe(before);

    // Clearing the value removes its edges.
    await request(t.http).put(`${orders.path}/data/o4`).set(bearer(owner)).send({ values: { links: null } }).expect(200);
    expect(await fieldEdges()).toEqual([]);
    await request(t.http).put(`${orders.path}/data/o4`).set(bearer(owner)).send({ values: { links: [{ docType: 'suppliers', docId: suppliers.docId, rowId: 's2' }] } }).expect(200);
  });

  it('deleting a row removes its edges in both directions in the same merge, kept in the revision operations', async () => {
    // s2 is the target of o2's free edge and of o4's relation field; o1 the source of a free edge.
    const incomingBefore = await list(suppliers, '?direction=incoming&rowId=s2');
    expect(incomingBefore.length).toBe(2);
    const deleted = await request(t.http).delete(`${suppliers.path}/data/s2`).set(bearer(owner)).expect(200);
    expect(await list(suppliers, '?direction=incoming&rowId=s2')).toEqual([]);
    const ops = await operations(suppliers, deleted.body.payload.request.revisionId);
    const removed = ops.filter((op) => op.type === 'relation-delete');
    expect(removed).toHaveLength(2);
    expect(removed.map((op) => (op.oldValue as Edge).id).sort()).toEqual(incomingBefore.map((item) => item.id).sort());
    expect(removed[0]?.newValue).toBeNull();
    // o4's relation field no longer names the deleted row: value and edges stay equal.
    const o4 = await request(t.http).get(`${orders.path}/data/o4`).set(bearer(owner)).expect(200);
    expect(valueOf(o4.body.payload, 'links')).toBeUndefined();
    expect(await list(orders, '?rowId=o4')).toEqual([]);

    const outgoingBefore = await list(orders, '?rowId=o1');
    expect(outgoingBefore.length).toBe(2);
    const gone = await request(t.http).delete(`${orders.path}/data/o1`).set(bearer(owner)).expect(200);
    expect(await list(orders, '?rowId=o1')).toEqual([]);
    expect((await operations(orders, gone.body.payload.request.revisionId)).map((op) => op.type)).toEqual(['row-delete', 'relation-delete', 'relation-delete']);
  });

  it('lists a bidirectional edge as outgoing from both ends', async () => {
    const res = await relate(owner, { ...edge('o3', 's1', 'partner'), direction: 'bidirectional' }).expect(201);
    expect((await list(suppliers, '?type=partner')).map((item) => item.id)).toEqual([res.body.payload.id]);
    expect((await list(orders, '?type=partner&rowId=o3')).map((item) => item.id)).toEqual([res.body.payload.id]);
    expect((await list(orders, '?direction=incoming&type=partner')).map((item) => item.id)).toEqual([res.body.payload.id]);
  });

  it('deleting a relation field removes its edges in the metadata merge, with relation-delete operations', async () => {
    await createRow(t.http, owner, orders, { id: 'o6', values: { name: 'six', links: [{ rowId: 'o2' }] } });
    expect((await list(orders, '?rowId=o6')).map((item) => item.fieldId)).toEqual(['links']);
    await request(t.http).put(`${orders.path}/metadata`).set(bearer(owner)).send({ fields: PRODUCT_FIELDS, properties: [] }).expect(200);
    expect(await list(orders, '?rowId=o6')).toEqual([]);
    const revisions = await request(t.http).get(`${orders.path}/revisions?pageSize=1`).set(bearer(owner)).expect(200);
    const ops = await operations(orders, revisions.body.payload.items[0].id);
    expect(ops.filter((op) => op.type === 'relation-delete').map((op) => op.target)).toEqual([{ kind: 'row', rowId: 'o6', fieldId: 'links' }]);
    // Free-standing edges are not touched by a field's removal.
    expect((await list(orders, '?rowId=o3&type=supplied-by')).length).toBe(1);
  });

  it('reverting the revision that created an edge removes it, with a relation-delete operation; reverting that brings it back', async () => {
    await createRow(t.http, owner, orders, { id: 'rv-o', values: { name: 'rv-o' } });
    await createRow(t.http, owner, suppliers, { id: 'rv-s', values: { name: 'rv-s' } });
    const created = (await relate(editor, edge('rv-o', 'rv-s', 'reverted')).expect(201)).body.payload;
    expect((await list(orders, '?rowId=rv-o')).map((item) => item.id)).toEqual([created.id]);
    const revert = async (revisionId: string): Promise<{ revisionId: string; skipped: unknown[] }> =>
      (await request(t.http).post(`${orders.path}/revisions/${revisionId}/revert`).set(bearer(owner)).expect(200)).body.payload;
    const undone = await revert(created.request.revisionId);
    expect(undone.skipped).toEqual([]);
    expect(await list(orders, '?rowId=rv-o')).toEqual([]);
    expect(await list(suppliers, '?direction=incoming&rowId=rv-s')).toEqual([]);
    const revisions = await request(t.http).get(`${orders.path}/revisions?pageSize=1`).set(bearer(owner)).expect(200);
    const revertRevision = revisions.body.payload.items[0].id;
    expect(await operations(orders, revertRevision)).toEqual([
      expect.objectContaining({ type: 'relation-delete', target: { kind: 'row', rowId: 'rv-o' }, oldValue: expect.objectContaining({ id: created.id, type: 'reverted' }), newValue: null }),
    ]);
    // The revert of the revert creates the edge again (same id), as a revert of any relation-delete does.
    await revert(revertRevision);
    expect((await list(orders, '?rowId=rv-o')).map((item) => [item.id, item.type])).toEqual([[created.id, 'reverted']]);
  });

  it('takes the deprecated apply like every write, answering X-API-Deprecated', async () => {
    await createRow(t.http, owner, orders, { id: 'ap-o', values: { name: 'ap-o' } });
    await createRow(t.http, owner, suppliers, { id: 'ap-s', values: { name: 'ap-s' } });
    const res = await relate(editor, edge('ap-o', 'ap-s', 'applied'), '?apply=true').expect(201);
    expect(res.headers['x-api-deprecated']).toBe('true');
    expect(res.body.payload.request).toMatchObject({ merged: true });
    await relate(editor, edge('ap-o', 'ap-s', 'applied-again'), '?apply=maybe').expect(400);
  });

  it('bounds metadata at 16384 bytes of JSON, counted in bytes (UTF-8), not characters; nothing is written past it', async () => {
    await createRow(t.http, owner, orders, { id: 'mb-o', values: { name: 'mb-o' } });
    await createRow(t.http, owner, suppliers, { id: 'mb-s', values: { name: 'mb-s' } });
    // {"note":"…"} is 11 bytes around the text.
    const ascii = edge('mb-o', 'mb-s', 'meta-ascii');
    ascii.metadata = { note: 'a'.repeat(16_384 - 11) };
    await relate(owner, ascii).expect(201);
    const before = await edgeCount();
    // 8,187 two-byte characters: 8,198 characters of JSON but 16,385 bytes.
    const wide = edge('mb-o', 'mb-s', 'meta-wide');
    wide.metadata = { note: 'é'.repeat(8_187) };
    const refused = await relate(owner, wide).expect(400);
    expect(refused.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(refused.body)[0]).toMatchObject({ field: 'metadata' });
    const over = edge('mb-o', 'mb-s', 'meta-over');
    over.metadata = { note: 'a'.repeat(16_384 - 10) };
    await relate(owner, over).expect(400);
    expect(await edgeCount()).toBe(before);
  });
});
