import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, bearer, createDocument, createRow, type DocHandle, newUser } from './documents.fixtures.js';

interface Edge {
  id: string;
  type: string;
  direction: string;
  source: { docId: string; rowId: string };
  target: { docId: string; rowId: string };
}

/**
 * Edges whose other document was deleted leave the listings (and cannot be created, not even by a request drafted
 * before the deletion); a two-way edge links a pair once: the same type between the same rows in the other
 * direction is the same link, 409 ALREADY_EXISTS (docs/decisions/relations-model.md).
 */
describe('documents: relations to deleted documents, two-way edges from both ends', () => {
  let t: TestApp;
  let owner: TestUser;

  const relate = (body: Record<string, unknown>, query = ''): request.Test => request(t.http).post(`${API}/relations${query}`).set(bearer(owner)).send(body);
  const edge = (from: DocHandle, fromRow: string, to: DocHandle, toRow: string, type: string, direction = 'outgoing'): Record<string, unknown> => ({
    type,
    direction,
    source: { docType: from.docType, docId: from.docId, rowId: fromRow },
    target: { docType: to.docType, docId: to.docId, rowId: toRow },
  });
  const list = async (doc: DocHandle, query = ''): Promise<{ items: Edge[]; total: number }> =>
    (await request(t.http).get(`${doc.path}/relations${query}`).set(bearer(owner)).expect(200)).body.payload;
  const edgeCount = async (): Promise<number> => Number((await t.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM document_relations`))[0]?.n);
  async function docWithRows(docType: string, rows: string[]): Promise<DocHandle> {
    const doc = await createDocument(t.http, owner, { docType });
    for (const id of rows) {
      await createRow(t.http, owner, doc, { id, values: { name: id } });
    }
    return doc;
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  it('drops edges to and from a deleted document from the listings, and refuses new ones, also from a request drafted before', async () => {
    const orders = await docWithRows('orders', ['o1']);
    const suppliers = await docWithRows('suppliers', ['s1']);
    const kept = await docWithRows('suppliers', ['k1']);
    await relate(edge(orders, 'o1', suppliers, 's1', 'supplied-by')).expect(201);
    await relate(edge(orders, 'o1', kept, 'k1', 'supplied-by')).expect(201);
    await relate(edge(suppliers, 's1', orders, 'o1', 'supplies')).expect(201);
    const pending = await request(t.http).post(`${orders.path}/requests`).set(bearer(owner)).send({ title: 'later' }).expect(201);
    const requestId = pending.body.payload.id as string;
    await relate(edge(orders, 'o1', suppliers, 's1', 'backup-for'), `?requestId=${requestId}`).expect(201);
    expect((await list(orders)).total).toBe(2);
    expect((await list(orders, '?direction=incoming')).total).toBe(1);

    await request(t.http).delete(suppliers.path).set(bearer(owner)).expect(200);
    const outgoing = await list(orders);
    expect(outgoing.items.map((item) => item.target.docId)).toEqual([kept.docId]);
    expect(outgoing.total).toBe(1);
    expect(await list(orders, '?direction=incoming')).toMatchObject({ items: [], total: 0 });

    const refused = await relate(edge(orders, 'o1', suppliers, 's1', 'supplied-by'));
    expect(refused.status).toBe(404);
    expect(refused.body.code).toBe('DOC_NOT_FOUND');
    // The edge drafted before the deletion is refused by the merge, which checks both ends again; nothing is written.
    const before = await edgeCount();
    const merge = await request(t.http).post(`${orders.path}/requests/${requestId}/merge`).set(bearer(owner));
    expect(merge.status).toBe(400);
    expect(merge.body.code).toBe('VALIDATION_ERROR');
    expect(merge.body.details).toMatchObject({ field: 'target.rowId' });
    expect(await edgeCount()).toBe(before);

    // A new document with the deleted one's type and id starts without its edges.
    const again = await createDocument(t.http, owner, { docType: 'suppliers', id: suppliers.docId });
    await createRow(t.http, owner, again, { id: 's1', values: { name: 's1' } });
    expect((await list(again, '?direction=incoming')).total).toBe(0);
    await relate(edge(orders, 'o1', again, 's1', 'supplied-by')).expect(201);
    expect((await list(orders)).items.map((item) => item.target.docId).sort()).toEqual([again.docId, kept.docId].sort());
  });

  it('refuses a two-way edge created again from the other end (either direction), with the existing edge named', async () => {
    const left = await docWithRows('left', ['a']);
    const right = await docWithRows('right', ['b']);
    const first = (await relate(edge(left, 'a', right, 'b', 'pair', 'bidirectional')).expect(201)).body.payload;
    const before = await edgeCount();
    for (const direction of ['bidirectional', 'outgoing']) {
      const again = await relate(edge(right, 'b', left, 'a', 'pair', direction)).expect(409);
      expect(again.body).toMatchObject({ code: 'ALREADY_EXISTS', payload: { relationId: first.id } });
    }
    // An outgoing edge first, then a two-way one from the other end: the same pair linked twice, refused too.
    const oneWay = (await relate(edge(left, 'a', right, 'b', 'follows')).expect(201)).body.payload;
    const upgrade = await relate(edge(right, 'b', left, 'a', 'follows', 'bidirectional')).expect(409);
    expect(upgrade.body.payload).toEqual({ relationId: oneWay.id });
    expect(await edgeCount()).toBe(before + 1);
    // Two one-way edges in opposite directions are two different links.
    await relate(edge(right, 'b', left, 'a', 'follows')).expect(201);
    // The two-way edge is listed once from each end.
    expect((await list(right, '?type=pair')).items.map((item) => item.id)).toEqual([first.id]);
    expect((await list(left, '?type=pair')).items.map((item) => item.id)).toEqual([first.id]);
  });

  it('creates a two-way pair drafted from both ends once: the later merge finds the link there and skips its edge', async () => {
    const left = await docWithRows('left', ['a']);
    const right = await docWithRows('right', ['b']);
    const fromLeft = (await request(t.http).post(`${left.path}/requests`).set(bearer(owner)).send({ title: 'l' }).expect(201)).body.payload.id as string;
    const fromRight = (await request(t.http).post(`${right.path}/requests`).set(bearer(owner)).send({ title: 'r' }).expect(201)).body.payload.id as string;
    await relate(edge(left, 'a', right, 'b', 'twin', 'bidirectional'), `?requestId=${fromLeft}`).expect(201);
    await relate(edge(right, 'b', left, 'a', 'twin', 'bidirectional'), `?requestId=${fromRight}`).expect(201);
    await request(t.http).post(`${left.path}/requests/${fromLeft}/merge`).set(bearer(owner)).expect(200);
    // As an exact duplicate merged meanwhile is skipped by the unique index, the reverse two-way edge is skipped: the
    // link the request asks for exists, and the rest of the request merges.
    const second = await request(t.http).post(`${right.path}/requests/${fromRight}/merge`).set(bearer(owner)).expect(200);
    const operations = await request(t.http).get(`${right.path}/revisions/${second.body.payload.revision.id}/operations`).set(bearer(owner)).expect(200);
    expect(operations.body.payload.items.filter((op: { type: string }) => op.type === 'relation-create')).toEqual([]);
    expect((await list(left, '?type=twin')).total).toBe(1);
    expect((await list(right, '?type=twin')).total).toBe(1);
  });
});
