import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  API,
  bearer,
  createDocument,
  type DocHandle,
  newUser,
} from '../documents/documents.fixtures.js';
import {
  listen,
  openStream,
  REALTIME_TEST_ENV,
  type Received,
  realtimePath,
  sleep,
  waitFor,
} from '../realtime/realtime.fixtures.js';

interface ViewDto {
  id: string;
  name: string;
  type: string;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  updatedBy: string;
}

/** The view fields an event and the REST resource have in common. */
function viewFields(view: ViewDto): Record<string, unknown> {
  return {
    viewId: view.id,
    name: view.name,
    type: view.type,
    createdAt: view.createdAt,
    createdBy: view.createdBy,
    updatedAt: view.updatedAt,
    updatedBy: view.updatedBy,
  };
}

/**
 * docs/views.md, "Events": a view event carries the view as stored, so a client applying the REST answer and the
 * realtime event sees the same view (timestamps and who changed it included).
 */
describe('view events match the REST view they describe', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let editor: TestUser;
  let doc: DocHandle;
  let stream: ReturnType<typeof openStream>;

  const views = (suffix = ''): string => `${doc.path}/views${suffix}`;
  const received = (type: string, viewId: string | null): Received[] =>
    stream.events.filter(
      (event) => event.type === type && (event.data.payload as { viewId: string | null }).viewId === viewId,
    );
  async function eventOf(type: string, viewId: string | null, nth = 0): Promise<Record<string, unknown>> {
    await waitFor(() => received(type, viewId).length > nth, 15_000, `${type} of ${viewId}`);
    return received(type, viewId)[nth]?.data.payload as Record<string, unknown>;
  }

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    base = await listen(t);
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    doc = await createDocument(t.http, owner, { docType: 'boards' });
    stream = openStream(
      `${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`,
      owner.token,
    );
    await waitFor(() => stream.opened() === 1, 15_000, 'stream open');
  });
  afterAll(async () => {
    stream.es.close();
    await t.close();
  });

  it('create, update, make default and delete: each event carries the stored updatedAt and updatedBy', async () => {
    const created = (
      await request(t.http)
        .post(views())
        .set(bearer(editor))
        .send({ id: 'v1', name: 'One', type: 'table' })
        .expect(201)
    ).body.payload as ViewDto;
    expect(await eventOf('view_created', 'v1')).toMatchObject(viewFields(created));

    await sleep(20);
    const updated = (
      await request(t.http).put(views('/v1')).set(bearer(owner)).send({ name: 'Uno' }).expect(200)
    ).body.payload as ViewDto;
    expect(updated.updatedBy).toBe(owner.id);
    expect(await eventOf('view_updated', 'v1')).toMatchObject(viewFields(updated));

    // Making it the default changes its row: the event carries the values after that change, as the answer does.
    await sleep(20);
    const madeDefault = (await request(t.http).post(views('/v1/default')).set(bearer(editor)).expect(200))
      .body.payload as ViewDto;
    expect(madeDefault.updatedAt).not.toBe(updated.updatedAt);
    expect(await eventOf('view_default_changed', 'v1')).toMatchObject({
      ...viewFields(madeDefault),
      previousDefaultViewId: null,
    });

    await sleep(20);
    const deleted = (await request(t.http).delete(views('/v1')).set(bearer(owner)).expect(200)).body
      .payload as ViewDto;
    expect(await eventOf('view_deleted', 'v1')).toMatchObject(viewFields(deleted));
    // No fallback: the view fields of the default change are all null.
    expect(await eventOf('view_default_changed', null)).toMatchObject({
      viewId: null,
      createdAt: null,
      createdBy: null,
      updatedAt: null,
      updatedBy: null,
      previousDefaultViewId: 'v1',
    });
  });

  it('names the type-level fallback, which was not changed, with its own updatedAt and updatedBy', async () => {
    const fallback = (
      await request(t.http)
        .post(views())
        .set(bearer(owner))
        .send({ id: 'byTitle', name: 'By title', type: 'table' })
        .expect(201)
    ).body.payload as ViewDto;
    await request(t.http)
      .put(`${API}/doc/${doc.docType}/setting?workspaceId=${owner.defaultWorkspaceId}`)
      .set(bearer(owner))
      .send({ defaultViewId: 'byTitle' })
      .expect(200);
    await request(t.http)
      .post(views())
      .set(bearer(editor))
      .send({ id: 'own', name: 'Own', type: 'table' })
      .expect(201);
    await request(t.http).post(views('/own/default')).set(bearer(editor)).expect(200);

    await sleep(20);
    await request(t.http).delete(views('/own')).set(bearer(editor)).expect(200);
    const now = (await request(t.http).get(views('/byTitle')).set(bearer(owner)).expect(200)).body
      .payload as ViewDto & { isDefault: boolean };
    expect(now).toMatchObject({ isDefault: true, updatedAt: fallback.updatedAt, updatedBy: owner.id });
    expect(await eventOf('view_default_changed', 'byTitle')).toMatchObject({
      ...viewFields(now),
      previousDefaultViewId: 'own',
    });
  });
});
