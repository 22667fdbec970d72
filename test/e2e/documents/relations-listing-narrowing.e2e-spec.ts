import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, addToWorkspace, addWorkspace, bearer, createDocument, createRow, type DocHandle, newUser } from './documents.fixtures.js';

interface Edge {
  target: { docId: string; rowId: string };
}

/**
 * `GET /doc/{docType}/{docId}/relations` decides "may the caller read the other end" per workspace and type, and
 * each document's own `permissions.view` in SQL before paging (docs/documents.md, "Relations"): the outcome must be
 * what opening each document would decide — the caller's role in that document's workspace, the type's list there,
 * the document's list (a role it reaches, or its id in any letter case) — and `total` and the pages must count only
 * the edges shown.
 */
describe('documents: relation listings narrow per workspace, type and document, before paging', () => {
  let t: TestApp;
  let owner: TestUser;
  let viewer: TestUser;
  let hub: DocHandle;
  const visible: string[] = [];

  const relate = async (to: DocHandle, toRow: string, workspaceId: string): Promise<void> => {
    await request(t.http)
      .post(`${API}/relations`)
      .set(bearer(owner))
      .send({
        type: 'cites',
        source: { docType: hub.docType, docId: hub.docId, rowId: 'h1' },
        target: { docType: to.docType, docId: to.docId, rowId: toRow, workspaceId },
      })
      .expect(201);
  };
  const leaf = async (workspaceId: string, opts: { docType?: string; settings?: Record<string, unknown> }, shown: boolean): Promise<void> => {
    const doc = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }], workspaceId, ...opts });
    await request(t.http).post(`${doc.path}/data?workspaceId=${workspaceId}`).set(bearer(owner)).send({ id: 'r1', values: { name: 'x' } }).expect(201);
    await relate(doc, 'r1', workspaceId);
    if (shown) {
      visible.push(doc.docId);
    }
  };

  beforeAll(async () => {
    t = await createTestApp();
    [owner, viewer] = await Promise.all([newUser(t.http), newUser(t.http)]);
    const ws = owner.defaultWorkspaceId;
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    const otherWs = await addWorkspace(t.dataSource, owner);
    await addToWorkspace(t.dataSource, owner, owner, 'owner', otherWs);
    await addToWorkspace(t.dataSource, owner, viewer, 'editor', otherWs);
    const strangerWs = await addWorkspace(t.dataSource, owner);
    await addToWorkspace(t.dataSource, owner, owner, 'owner', strangerWs);
    // The type `memos` of the default workspace is closed to everyone below owner.
    await request(t.http)
      .put(`${API}/doc/memos/setting?workspaceId=${ws}`)
      .set(bearer(owner))
      .send({ permissions: { view: ['role:owner'] } })
      .expect(200);
    hub = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }] });
    await createRow(t.http, owner, hub, { id: 'h1', values: { name: 'hub' } });
    await createRow(t.http, owner, hub, { id: 'h2', values: { name: 'hub 2' } });
    await leaf(ws, {}, true);
    await leaf(ws, {}, true);
    await leaf(ws, { settings: { permissions: { view: ['role:viewer'] } } }, true);
    await leaf(ws, { settings: { permissions: { view: ['role:editor'] } } }, false);
    await leaf(ws, { settings: { permissions: { view: [`user:${viewer.id.toUpperCase()}`] } } }, true);
    await leaf(ws, { settings: { permissions: { view: [owner.id] } } }, false);
    await leaf(ws, { docType: 'memos' }, false);
    // The viewer is an editor there: `role:editor` admits them in that workspace, though not in the default one.
    await leaf(otherWs, { settings: { permissions: { view: ['role:editor'] } } }, true);
    await leaf(otherWs, { docType: 'memos' }, true);
    await leaf(strangerWs, {}, false);
    // An edge within the hub itself is always listed: the caller reads the hub.
    await request(t.http)
      .post(`${API}/relations`)
      .set(bearer(owner))
      .send({ type: 'cites', source: { docType: hub.docType, docId: hub.docId, rowId: 'h1' }, target: { docType: hub.docType, docId: hub.docId, rowId: 'h2' } })
      .expect(201);
    visible.push(hub.docId);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists exactly the edges whose other end the caller may open, and pages and counts only those', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 4; page += 1) {
      const res = await request(t.http).get(`${hub.path}/relations?pageSize=2&page=${page}`).set(bearer(viewer)).expect(200);
      expect(res.body.payload.total).toBe(visible.length);
      seen.push(...(res.body.payload.items as Edge[]).map((edge) => edge.target.docId));
    }
    expect(seen.length).toBe(visible.length);
    expect([...seen].sort()).toEqual([...visible].sort());
    // The owner manages every workspace: nothing narrows them.
    const all = await request(t.http).get(`${hub.path}/relations?pageSize=50`).set(bearer(owner)).expect(200);
    expect(all.body.payload.total).toBe(11);
  });
});
