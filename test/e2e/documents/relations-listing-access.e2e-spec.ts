import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, addToWorkspace, addWorkspace, bearer, createDocument, createRow, type DocHandle, newUser } from './documents.fixtures.js';

interface Edge {
  source: { docId: string; rowId: string };
  target: { docId: string; rowId: string };
  metadata: Record<string, unknown>;
}

/**
 * `GET /doc/{docType}/{docId}/relations` leaves out the edges whose other end the caller may not read
 * (docs/documents.md, "Relations"): a document of a workspace they are not in, and — the same rule every read of a
 * document applies (docs/settings.md `permissions.view`) — a document of their own workspace whose
 * `permissions.view` shuts them out. Such an edge names a row of that document and carries its metadata; the
 * document list shows that the document exists, never its rows.
 */
describe('documents: relation listings hide the ends the caller may not read', () => {
  let t: TestApp;
  let owner: TestUser;
  let viewer: TestUser;
  let shared: DocHandle;
  let closed: DocHandle;
  let elsewhere: DocHandle;
  let open: DocHandle;

  const list = async (user: TestUser, doc: DocHandle, direction: 'incoming' | 'outgoing'): Promise<{ items: Edge[]; total: number }> =>
    (await request(t.http).get(`${doc.path}/relations?direction=${direction}`).set(bearer(user)).expect(200)).body.payload;
  const relate = async (from: DocHandle, fromRow: string, to: DocHandle, toRow: string, direction = 'outgoing', fromWs?: string): Promise<void> => {
    await request(t.http)
      .post(`${API}/relations`)
      .set(bearer(owner))
      .send({
        type: direction === 'bidirectional' ? 'mirrors' : 'cites',
        direction,
        metadata: { note: `from ${from.docId}` },
        source: { docType: from.docType, docId: from.docId, rowId: fromRow, ...(fromWs ? { workspaceId: fromWs } : {}) },
        target: { docType: to.docType, docId: to.docId, rowId: toRow, workspaceId: owner.defaultWorkspaceId },
      })
      .expect(201);
  };

  beforeAll(async () => {
    t = await createTestApp();
    [owner, viewer] = await Promise.all([newUser(t.http), newUser(t.http)]);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    const fields = [{ id: 'name', name: 'Name', type: 'text' }];
    shared = await createDocument(t.http, owner, { fields });
    open = await createDocument(t.http, owner, { fields });
    closed = await createDocument(t.http, owner, { fields, settings: { permissions: { view: ['role:owner'] } } });
    const otherWs = await addWorkspace(t.dataSource, owner);
    await addToWorkspace(t.dataSource, owner, owner, 'owner', otherWs);
    elsewhere = await createDocument(t.http, owner, { fields, workspaceId: otherWs });
    await createRow(t.http, owner, shared, { id: 's1', values: { name: 'shared' } });
    await createRow(t.http, owner, open, { id: 'o1', values: { name: 'open' } });
    await createRow(t.http, owner, closed, { id: 'secret-row', values: { name: 'closed' } });
    await request(t.http).post(`${elsewhere.path}/data?workspaceId=${otherWs}`).set(bearer(owner)).send({ id: 'far-row', values: { name: 'far' } }).expect(201);
    await relate(open, 'o1', shared, 's1');
    await relate(closed, 'secret-row', shared, 's1');
    await relate(closed, 'secret-row', shared, 's1', 'bidirectional');
    await relate(elsewhere, 'far-row', shared, 's1', 'outgoing', otherWs);
  });
  afterAll(async () => {
    await t.close();
  });

  it("leaves out edges from a document whose permissions.view shuts the caller out, as from another workspace's", async () => {
    // The owner sees all four edges.
    expect((await list(owner, shared, 'incoming')).total).toBe(4);
    // The viewer may read `shared` and `open`, but neither `closed` (permissions.view) nor `elsewhere` (workspace).
    const incoming = await list(viewer, shared, 'incoming');
    expect(incoming.items.map((edge) => `${edge.source.docId}/${edge.source.rowId}`)).toEqual([`${open.docId}/o1`]);
    expect(incoming.total).toBe(1);
    // The two-way edge is listed from both ends, so it is hidden from the outgoing view too.
    const outgoing = await list(viewer, shared, 'outgoing');
    expect(outgoing.items).toEqual([]);
    expect(outgoing.total).toBe(0);
    expect(JSON.stringify([incoming, outgoing])).not.toContain('secret-row');
  });
});
