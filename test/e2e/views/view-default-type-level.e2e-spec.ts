import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, bearer, createDocument, type DocHandle, newUser } from '../documents/documents.fixtures.js';

/**
 * The effective default view of a document without one of its own is the view the type-level `defaultViewId` names
 * (docs/views.md, "Default view"). Deleting that view — or creating it — changes the document's default, so spec 6.2's
 * "view events fire on … default change" applies: `view_default_changed`, in the transaction of the view write.
 */
describe('views: view_default_changed when the type-level default view is deleted or created', () => {
  let t: TestApp;
  let owner: TestUser;

  async function outbox(doc: DocHandle): Promise<Array<{ event_type: string; payload: Record<string, unknown> }>> {
    return t.dataSource.query(`SELECT event_type, payload FROM outbox WHERE doc_id = $1 AND event_type LIKE 'view_%' ORDER BY seq`, [doc.docId]);
  }

  async function typeDocument(defaultViewId: string): Promise<DocHandle> {
    const docType = `tdv${randomUUID().slice(0, 8)}`;
    const doc = await createDocument(t.http, owner, { docType });
    await request(t.http)
      .put(`${API}/doc/${docType}/setting?workspaceId=${owner.defaultWorkspaceId}`)
      .set(bearer(owner))
      .send({ defaultViewId })
      .expect(200);
    return doc;
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  it('deleting the view the type-level defaultViewId names records view_default_changed (default now none) after view_deleted', async () => {
    const doc = await typeDocument('board');
    await request(t.http).post(`${doc.path}/views`).set(bearer(owner)).send({ id: 'board', name: 'Board', type: 'kanban' }).expect(201);
    await request(t.http).post(`${doc.path}/views`).set(bearer(owner)).send({ id: 'other', name: 'Other', type: 'table' }).expect(201);
    const before = await request(t.http).get(`${doc.path}/views/board`).set(bearer(owner)).expect(200);
    expect(before.body.payload).toMatchObject({ isDefault: true, defaultSource: 'type' });

    await request(t.http).delete(`${doc.path}/views/board`).set(bearer(owner)).expect(200);
    const list = await request(t.http).get(`${doc.path}/views`).set(bearer(owner)).expect(200);
    expect(list.body.payload.items.filter((view: { isDefault: boolean }) => view.isDefault)).toEqual([]);

    const events = (await outbox(doc)).filter((row) => row.payload.viewId === 'board' || row.event_type === 'view_default_changed');
    expect(events.map((row) => row.event_type).slice(-2)).toEqual(['view_deleted', 'view_default_changed']);
    expect(events.at(-1)?.payload).toEqual(
      expect.objectContaining({
        viewId: null,
        name: null,
        type: null,
        filters: null,
        createdBy: null,
        createdAt: null,
        updatedBy: null,
        updatedAt: null,
        previousDefaultViewId: 'board',
      }),
    );

    // Deleting a view that is nobody's default changes nothing.
    await request(t.http).delete(`${doc.path}/views/other`).set(bearer(owner)).expect(200);
    // (Two changes in all: creating `board` made it the default, deleting it made the default none.)
    expect((await outbox(doc)).filter((row) => row.event_type === 'view_default_changed')).toHaveLength(2);
  });

  it('a document default of its own wins: deleting the type-level one then records nothing about the default', async () => {
    const doc = await typeDocument('board');
    await request(t.http).post(`${doc.path}/views`).set(bearer(owner)).send({ id: 'mine', name: 'Mine', type: 'table' }).expect(201);
    await request(t.http).post(`${doc.path}/views/mine/default`).set(bearer(owner)).expect(200);
    await request(t.http).post(`${doc.path}/views`).set(bearer(owner)).send({ id: 'board', name: 'Board', type: 'kanban' }).expect(201);
    const changes = async () => (await outbox(doc)).filter((row) => row.event_type === 'view_default_changed');
    expect(await changes()).toHaveLength(1); // setting `mine`; creating `board` changed nothing
    await request(t.http).delete(`${doc.path}/views/board`).set(bearer(owner)).expect(200);
    expect(await changes()).toHaveLength(1);
  });

  it('creating the view the type-level defaultViewId names makes it the default: view_default_changed from none', async () => {
    const doc = await typeDocument('board');
    await request(t.http).post(`${doc.path}/views`).set(bearer(owner)).send({ id: 'board', name: 'Board', type: 'kanban' }).expect(201);
    const events = await outbox(doc);
    expect(events.map((row) => row.event_type)).toEqual(['view_created', 'view_default_changed']);
    expect(events[1]?.payload).toEqual(expect.objectContaining({ viewId: 'board', name: 'Board', type: 'kanban', createdBy: owner.id, previousDefaultViewId: null }));
    // The type-level setting still names `board` (it is one id for every document of the type).
    const setting = await request(t.http).get(`${API}/doc/${doc.docType}/setting?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).expect(200);
    expect(setting.body.payload.defaultViewId).toBe('board');
  });
});
