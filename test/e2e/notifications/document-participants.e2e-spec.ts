import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  API,
  bearer,
  createRow,
  type DocHandle,
  newUser,
} from '../documents/documents.fixtures.js';

interface NotificationRow {
  kind: string;
  data: { payload?: unknown };
}

/**
 * Document participant notifications (docs/settings.md, "Participants") reach only participants who may read the
 * document when the event is dispatched: nothing — not even a `notifications` record with the event's payload — for a
 * creator shut out by `permissions.view`, removed from the workspace or suspended in it.
 */
describe('document notifications: only participants who may read the document', () => {
  let t: TestApp;
  let owner: TestUser;
  /** A second workspace owner: a participant of every document of the workspace, and a reader of all of them. */
  let coOwner: TestUser;

  const ALL_ON = { onCommentAdd: true, onDataChange: true, emailOnChange: true, onMerge: true };

  const notificationsOf = (user: TestUser, doc: DocHandle): Promise<NotificationRow[]> =>
    t.dataSource.query<NotificationRow[]>(
      `SELECT kind, data FROM notifications WHERE user_id = $1 AND data->>'docId' = $2 ORDER BY created_at`,
      [user.id, doc.docId],
    );

  /** Waits until every event of the document was dispatched (its notifications are recorded in that transaction). */
  async function settled(doc: DocHandle): Promise<void> {
    const until = Date.now() + 15_000;
    for (;;) {
      const [pending] = await t.dataSource.query<{ n: string }[]>(
        `SELECT count(*) AS n FROM outbox WHERE doc_type = $1 AND doc_id = $2 AND dispatched_at IS NULL`,
        [doc.docType, doc.docId],
      );
      if (Number(pending?.n) === 0) {
        return;
      }
      if (Date.now() > until) {
        throw new Error(`events of ${doc.docId} still pending`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * The owner writes a row and a comment: data, comment and change notifications for the participants. The
   * co-owner, who may read, is told of each (so the switches are on and the events were handled).
   */
  async function ownerActs(doc: DocHandle, secret: string): Promise<void> {
    await createRow(t.http, owner, doc, { id: 'secret', values: { name: secret } });
    await request(t.http)
      .post(`${doc.path}/comments`)
      .set(bearer(owner))
      .send({ target: { scope: 'row', rowId: 'secret' }, content: `about ${secret}` })
      .expect(201);
    await settled(doc);
    const kinds = (await notificationsOf(coOwner, doc)).map((row) => row.kind);
    expect(kinds).toEqual(
      expect.arrayContaining(['document_data_changed', 'document_comment_added', 'document_changed']),
    );
  }

  /** `creator` creates a document in the owner's workspace (so the creator is a participant of it). */
  async function createdBy(
    creator: TestUser,
    overrides: { docType?: string; settings?: Record<string, unknown> } = {},
  ): Promise<DocHandle> {
    const docType = overrides.docType ?? 'products';
    const docId = `doc-${randomUUID().slice(0, 8)}`;
    await request(t.http)
      .post(`${API}/doc/${docType}`)
      .set(bearer(creator))
      .send({
        id: docId,
        organizationId: owner.defaultOrganizationId,
        workspaceId: owner.defaultWorkspaceId,
        metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] },
        ...(overrides.settings ? { settings: overrides.settings } : {}),
      })
      .expect(201);
    return { docType, docId, path: `${API}/doc/${docType}/${docId}` };
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    coOwner = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, coOwner, 'owner');
  });
  afterAll(async () => {
    await t.close();
  });

  it("sends nothing to the creator when the document's permissions.view shuts them out", async () => {
    const creator = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, creator, 'editor');
    const doc = await createdBy(creator);
    await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({ permissions: { view: ['role:owner'] }, notifications: ALL_ON })
      .expect(200);
    await request(t.http).get(`${doc.path}/data`).set(bearer(creator)).expect(403);

    await ownerActs(doc, 'Q3 layoffs list');
    expect(await notificationsOf(creator, doc)).toEqual([]);
    const leaked = await t.dataSource.query<unknown[]>(
      `SELECT 1 FROM notifications WHERE user_id = $1 AND data::text LIKE '%Q3 layoffs list%'`,
      [creator.id],
    );
    expect(leaked).toHaveLength(0);
  });

  it("sends nothing to the creator when its type's permissions.view shuts them out", async () => {
    const creator = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, creator, 'editor');
    const doc = await createdBy(creator, { docType: 'ledgers' });
    await request(t.http)
      .put(`${API}/doc/ledgers/setting?workspaceId=${owner.defaultWorkspaceId}`)
      .set(bearer(owner))
      .send({ permissions: { view: ['role:owner'] } })
      .expect(200);
    await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({ notifications: ALL_ON })
      .expect(200);
    await request(t.http).get(`${doc.path}/data`).set(bearer(creator)).expect(403);

    await ownerActs(doc, 'type-level secret');
    expect(await notificationsOf(creator, doc)).toEqual([]);
  });

  it('sends nothing to a creator removed from the workspace, or suspended in it', async () => {
    const removed = await newUser(t.http);
    const suspended = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, removed, 'editor');
    await addToWorkspace(t.dataSource, owner, suspended, 'editor');
    const removedDoc = await createdBy(removed, { settings: { notifications: ALL_ON } });
    const suspendedDoc = await createdBy(suspended, { settings: { notifications: ALL_ON } });
    // Let the creation's own events pass before access changes.
    await settled(removedDoc);
    await settled(suspendedDoc);
    const before = {
      removed: (await notificationsOf(removed, removedDoc)).length,
      suspended: (await notificationsOf(suspended, suspendedDoc)).length,
    };

    const [membership] = await t.dataSource.query<{ id: string }[]>(
      `SELECT id FROM workspace_members WHERE workspace_id = $1 AND user_id = $2`,
      [owner.defaultWorkspaceId, removed.id],
    );
    await request(t.http)
      .delete(
        `${API}/organizations/${owner.defaultOrganizationId}/workspaces/${owner.defaultWorkspaceId}/members/${membership?.id}`,
      )
      .set(bearer(owner))
      .expect(200);
    await t.dataSource.query(
      `UPDATE workspace_members SET status = 'suspended' WHERE workspace_id = $1 AND user_id = $2`,
      [owner.defaultWorkspaceId, suspended.id],
    );
    await request(t.http)
      .get(`${removedDoc.path}/comments?workspaceId=${owner.defaultWorkspaceId}`)
      .set(bearer(removed))
      .expect(403);
    await request(t.http)
      .get(`${suspendedDoc.path}/comments?workspaceId=${owner.defaultWorkspaceId}`)
      .set(bearer(suspended))
      .expect(403);

    await ownerActs(removedDoc, 'after removal');
    await ownerActs(suspendedDoc, 'after suspension');
    expect(await notificationsOf(removed, removedDoc)).toHaveLength(before.removed);
    expect(await notificationsOf(suspended, suspendedDoc)).toHaveLength(before.suspended);
  });

  it('still notifies a creator who may read (an editor), with the payload', async () => {
    const creator = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, creator, 'editor');
    const doc = await createdBy(creator, { settings: { notifications: ALL_ON } });
    await ownerActs(doc, 'open news');
    const kinds = (await notificationsOf(creator, doc)).map((row) => row.kind);
    expect(kinds).toEqual(
      expect.arrayContaining(['document_data_changed', 'document_comment_added', 'document_changed']),
    );
    const comment = (await notificationsOf(creator, doc)).find(
      (row) => row.kind === 'document_comment_added',
    );
    expect(comment?.data.payload).toMatchObject({ content: 'about open news' });
  });
});
