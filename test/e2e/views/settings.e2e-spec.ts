import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { RequestRetentionJob } from '../../../src/modules/documents/jobs/request-retention.job.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, addWorkspace, API, bearer, createDocument, createRow, type DocHandle, newUser } from '../documents/documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';
import { blockedSessions } from '../../utils/row-locks.js';

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

describe('settings: document settings validated and enforced, type-level settings, retention, bundle snapshot', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let editor2: TestUser;
  let viewer: TestUser;
  let viewer2: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    [owner, editor, editor2, viewer, viewer2, stranger] = await Promise.all([1, 2, 3, 4, 5, 6].map(() => newUser(t.http)));
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, editor2, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    await addToWorkspace(t.dataSource, owner, viewer2, 'viewer');
  });
  afterAll(async () => {
    await t.close();
  });

  it('validates document settings, naming each bad key, and records a valid change as a settings-update revision', async () => {
    const doc = await createDocument(t.http, owner);
    const bad = await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({
        // `typo` is kept and not enforced: spec 2.11 leaves the permission keys open.
        permissions: { view: ['role:boss', 'not-a-user'], edit: 'role:editor', allowComment: 'no', typo: true },
        notifications: { onMerge: 'yes', onSomething: true },
        workflow: { approvers: ['bob'], autoMerge: 1 },
      })
      .expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(bad.body).map((d: { field: string }) => d.field).sort()).toEqual(
      [
        'notifications.onMerge',
        'notifications.onSomething',
        'permissions.allowComment',
        'permissions.edit',
        'permissions.view[0]',
        'permissions.view[1]',
        'workflow.approvers[0]',
        'workflow.autoMerge',
      ].sort(),
    );
    const contradiction = await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({ permissions: { requireApproval: true }, workflow: { requiresApproval: false } })
      .expect(400);
    expect(contradiction.body.details.field).toBe('permissions.requireApproval');
    const unchanged = await request(t.http).get(`${doc.path}/settings`).set(bearer(owner)).expect(200);
    expect(unchanged.body.payload.permissions).toEqual({});

    const settings = { permissions: { edit: ['role:editor', editor.id], allowComment: false, requireApproval: true }, notifications: { onMerge: true } };
    const ok = await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send(settings).expect(200);
    expect(ok.body.payload.workflow).toEqual({ requiresApproval: true });
    const revisionId = ok.body.payload.request.revisionId as string;
    const ops = await request(t.http).get(`${doc.path}/revisions/${revisionId}/operations`).set(bearer(owner)).expect(200);
    expect(ops.body.payload.items[0]).toMatchObject({ type: 'settings-update', target: { kind: 'settings' } });
    // permissions.requireApproval is the workflow switch: a write without requestId now waits for approval.
    const pending = await request(t.http).post(`${doc.path}/data`).set(bearer(editor)).send({ id: 'p1', values: { name: 'Pending' } }).expect(201);
    expect(pending.body.payload.request).toMatchObject({ merged: false, pendingApproval: true });
  });

  it('narrows who may view, edit and delete on top of the role, never widening it; managers are never narrowed', async () => {
    const doc = await createDocument(t.http, owner, {
      settings: { permissions: { view: ['role:editor', viewer2.id], edit: [editor.id], delete: [] } },
    });
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'One' } });

    const hidden = await request(t.http).get(`${doc.path}/data`).set(bearer(viewer)).expect(403);
    expect(hidden.body.code).toBe('FORBIDDEN');
    await request(t.http).get(`${doc.path}`).set(bearer(viewer)).expect(403);
    await request(t.http).get(`${doc.path}/data`).set(bearer(viewer2)).expect(200);
    // Named in `edit` would not make a viewer a writer: lists narrow, never widen.
    const widened = await createDocument(t.http, owner, { settings: { permissions: { edit: [viewer.id] } } });
    await request(t.http).post(`${widened.path}/data`).set(bearer(viewer)).send({ values: { name: 'x' } }).expect(403);

    await request(t.http).post(`${doc.path}/data`).set(bearer(editor)).send({ id: 'r2', values: { name: 'Two' } }).expect(201);
    const notListed = await request(t.http).post(`${doc.path}/data`).set(bearer(editor2)).send({ values: { name: 'No' } }).expect(403);
    expect(notListed.body.details.reason).toMatch(/edit/);
    await request(t.http).get(`${doc.path}/data`).set(bearer(editor2)).expect(200);
    const noDelete = await request(t.http).delete(`${doc.path}/data/r2`).set(bearer(editor)).expect(403);
    expect(noDelete.body.details.reason).toMatch(/delete/);
    await request(t.http).delete(`${doc.path}/views/none`).set(bearer(editor)).expect(403);

    // The workspace owner manages: never narrowed, so the settings can always be repaired.
    await request(t.http).delete(`${doc.path}/data/r2`).set(bearer(owner)).expect(200);
    await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ permissions: {} }).expect(200);
    await request(t.http).get(`${doc.path}/data`).set(bearer(viewer)).expect(200);
    await request(t.http).post(`${doc.path}/data`).set(bearer(editor2)).send({ values: { name: 'Now' } }).expect(201);
  });

  it('takes * (every reader) and user:<id> as subjects', async () => {
    const doc = await createDocument(t.http, owner, { settings: { permissions: { view: ['*'], edit: [`user:${editor.id}`] } } });
    await request(t.http).get(`${doc.path}/data`).set(bearer(viewer)).expect(200);
    await request(t.http).post(`${doc.path}/data`).set(bearer(editor)).send({ values: { name: 'Listed' } }).expect(201);
    await request(t.http).post(`${doc.path}/data`).set(bearer(editor2)).send({ values: { name: 'Not listed' } }).expect(403);
    const bad = await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ permissions: { view: ['user:nobody'] } }).expect(400);
    expect(bad.body.details.field).toBe('permissions.view[0]');
  });

  it('sends the notifications the settings switch on to the participants, not to the actor, once per event', async () => {
    const doc = await createDocument(t.http, owner, { settings: { notifications: { onMerge: true, onDataChange: true } } });
    const kinds = async (user: TestUser): Promise<string[]> =>
      (await t.dataSource.query<{ kind: string }[]>(`SELECT kind FROM notifications WHERE user_id = $1 AND data->>'docId' = $2 ORDER BY kind`, [user.id, doc.docId])).map(
        (row) => row.kind,
      );
    await createRow(t.http, editor, doc, { id: 'n1', values: { name: 'Hello' } });
    expect(await eventually(() => kinds(owner), (list) => list.length >= 2)).toEqual(['document_data_changed', 'document_request_merged']);
    const [mail] = await t.dataSource.query<{ recipient: string; channel: string }[]>(
      `SELECT recipient, channel FROM notifications WHERE user_id = $1 AND kind = 'document_request_merged' AND data->>'docId' = $2`,
      [owner.id, doc.docId],
    );
    expect(mail).toEqual({ recipient: owner.email, channel: 'email' });
    expect(await kinds(editor)).toEqual([]);
    // The owner writes: the owner is the actor and the editor took no part in that request, so nobody is notified.
    await createRow(t.http, owner, doc, { id: 'n2', values: { name: 'Mine' } });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(await kinds(owner)).toHaveLength(2);

    // Switched off: nothing more; emailOnChange alone: one `document_changed` per revision.
    await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ notifications: { emailOnChange: true } }).expect(200);
    await createRow(t.http, editor, doc, { id: 'n3', values: { name: 'Later' } });
    const after = await eventually(() => kinds(owner), (list) => list.includes('document_changed'));
    expect(after.filter((kind) => kind === 'document_changed')).toHaveLength(1);
    expect(after.filter((kind) => kind === 'document_data_changed')).toHaveLength(1);
  });

  it('refuses new comments when permissions.allowComment is false, and notifies participants of comments when onCommentAdd is on', async () => {
    const doc = await createDocument(t.http, owner, { settings: { permissions: { allowComment: false }, notifications: { onCommentAdd: true } } });
    const refused = await request(t.http).post(`${doc.path}/comments`).set(bearer(editor)).send({ target: { scope: 'document' }, content: 'Hi' }).expect(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    await request(t.http).post(`${doc.path}/comments`).set(bearer(owner)).send({ target: { scope: 'document' }, content: 'Owner too' }).expect(403);
    const [{ count }] = await t.dataSource.query<{ count: string }[]>(`SELECT count(*) FROM comments c JOIN documents d ON d.id = c.document_id WHERE d.doc_id = $1`, [doc.docId]);
    expect(count).toBe('0');

    await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ notifications: { onCommentAdd: true } }).expect(200);
    await request(t.http).post(`${doc.path}/comments`).set(bearer(editor)).send({ target: { scope: 'document' }, content: 'Now allowed' }).expect(201);
    const kinds = await eventually(
      async () =>
        (await t.dataSource.query<{ kind: string }[]>(`SELECT kind FROM notifications WHERE user_id = $1 AND data->>'docId' = $2`, [owner.id, doc.docId])).map((row) => row.kind),
      (list) => list.includes('document_comment_added'),
    );
    expect(kinds).toEqual(['document_comment_added']);
  });

  it('stops serving a type through data-source references when the source says sharing.allowDataSourceReferences: false', async () => {
    const source = await addWorkspace(t.dataSource, owner);
    const sourceDoc = await createDocument(t.http, owner, { docType: 'shared', workspaceId: source });
    await createRow(t.http, owner, sourceDoc, { id: 's1', values: { name: 'From source' } });
    await t.dataSource.query(
      `INSERT INTO data_source_references (organization_id, workspace_id, source_workspace_id, doc_type, created_by) VALUES ($1, $2, $3, 'shared', $4)`,
      [owner.defaultOrganizationId, owner.defaultWorkspaceId, source, owner.id],
    );
    const via = `?workspaceId=${owner.defaultWorkspaceId}`;
    await request(t.http).get(`${sourceDoc.path}/data${via}`).set(bearer(owner)).expect(200);
    await request(t.http).put(`${API}/doc/shared/setting?workspaceId=${source}`).set(bearer(owner)).send({ sharing: { allowDataSourceReferences: false } }).expect(200);
    const refused = await request(t.http).get(`${sourceDoc.path}/data${via}`).set(bearer(owner)).expect(403);
    expect(refused.body.details.reason).toMatch(/data-source references/);
    // In its own workspace the document is served as before.
    await request(t.http).get(`${sourceDoc.path}/data?workspaceId=${source}`).set(bearer(owner)).expect(200);
  });

  it('serves type-level settings per workspace context with validation and manage rights; /setting is never a document id', async () => {
    const url = `${API}/doc/tickets/setting?workspaceId=${owner.defaultWorkspaceId}`;
    const empty = await request(t.http).get(url).set(bearer(viewer)).expect(200);
    expect(empty.body.payload).toEqual({
      docType: 'tickets',
      organizationId: owner.defaultOrganizationId,
      workspaceId: owner.defaultWorkspaceId,
      defaultViewId: null,
      sharing: {},
      permissions: {},
      retention: {},
      updatedAt: null,
      updatedBy: null,
    });
    const body = { defaultViewId: 'main', sharing: { allowDataSourceReferences: false }, permissions: { delete: ['role:owner'] }, retention: { closedRequestsDays: 30 } };
    const byEditor = await request(t.http).put(url).set(bearer(editor)).send(body).expect(403);
    expect(byEditor.body.code).toBe('FORBIDDEN');
    const bad = await request(t.http)
      .put(url)
      .set(bearer(owner))
      .send({ defaultViewId: 'has space', sharing: { allowDataSourceReferences: 'no' }, permissions: { view: ['role:x'], allowComment: true }, retention: { closedRequestsDays: 0 } })
      .expect(400);
    expect(problemsOf(bad.body).map((d: { field: string }) => d.field).sort()).toEqual(
      ['defaultViewId', 'permissions.view[0]', 'retention.closedRequestsDays', 'sharing.allowDataSourceReferences'].sort(),
    );
    expect((await request(t.http).get(url).set(bearer(owner)).expect(200)).body.payload.updatedAt).toBeNull();
    // Keys the service does not enforce are kept as given (spec 2.11: `sharing` and `retention` are objects).
    const free = { sharing: { public: true }, retention: { days: 30, snapshots: { keep: 3 } } };
    expect((await request(t.http).put(url).set(bearer(owner)).send(free).expect(200)).body.payload).toMatchObject(free);
    const saved = await request(t.http).put(url).set(bearer(owner)).set('X-Workspace-Id', owner.defaultWorkspaceId).send(body).expect(200);
    expect(saved.body.payload).toMatchObject({ ...body, updatedBy: owner.id });
    const read = await request(t.http).get(`${API}/doc/tickets/setting`).set('X-Workspace-Id', owner.defaultWorkspaceId).set(bearer(editor)).expect(200);
    expect(read.body.payload).toMatchObject(body);

    // Called as the spec writes it, without a context: the caller's default workspace.
    const noContext = await request(t.http).get(`${API}/doc/tickets/setting`).set(bearer(owner)).expect(200);
    expect(noContext.body.payload).toMatchObject({ ...body, workspaceId: owner.defaultWorkspaceId });
    const editorOwn = await request(t.http).get(`${API}/doc/tickets/setting`).set(bearer(editor)).expect(200);
    expect(editorOwn.body.payload).toMatchObject({ workspaceId: editor.defaultWorkspaceId, defaultViewId: null });
    await t.dataSource.query(`UPDATE users SET default_workspace_id = NULL, default_organization_id = NULL WHERE id = $1`, [editor.id]);
    const none = await request(t.http).get(`${API}/doc/tickets/setting`).set(bearer(editor)).expect(400);
    expect(none.body.code).toBe('VALIDATION_ERROR');
    await t.dataSource.query(`UPDATE users SET default_workspace_id = $2, default_organization_id = $3 WHERE id = $1`, [
      editor.id,
      editor.defaultWorkspaceId,
      editor.defaultOrganizationId,
    ]);
    const foreign = await request(t.http).get(url).set(bearer(stranger)).expect(404);
    expect(foreign.body.code).toBe('DOC_NOT_FOUND');
    await request(t.http).put(url).set(bearer(stranger)).send(body).expect(404);
    // Another tenant's same type is its own, untouched.
    const own = await request(t.http).get(`${API}/doc/tickets/setting?workspaceId=${stranger.defaultWorkspaceId}`).set(bearer(stranger)).expect(200);
    expect(own.body.payload.defaultViewId).toBeNull();
    // Organization level.
    const orgUrl = `${API}/doc/tickets/setting?organizationId=${owner.defaultOrganizationId}`;
    await request(t.http).put(orgUrl).set(bearer(owner)).send({ retention: { closedRequestsDays: 7 } }).expect(200);
    expect((await request(t.http).get(orgUrl).set(bearer(owner)).expect(200)).body.payload).toMatchObject({ workspaceId: null, retention: { closedRequestsDays: 7 } });

    // No document may be named "setting" (its bundle would be shadowed); GET /doc/tickets/setting stays the type settings.
    const named = await request(t.http)
      .post(`${API}/doc/tickets`)
      .set(bearer(owner))
      .send({ id: 'setting', organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId, metadata: { fields: [] } })
      .expect(400);
    expect(named.body.details).toMatchObject({ field: 'id' });
    // Routes match without regard to case: GET /doc/tickets/Setting is the type settings too, so `Setting` is refused as well.
    for (const id of ['Setting', 'SETTING']) {
      const cased = await request(t.http)
        .post(`${API}/doc/tickets`)
        .set(bearer(owner))
        .send({ id, organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId, metadata: { fields: [] } })
        .expect(400);
      expect(cased.body.details).toMatchObject({ field: 'id' });
    }
    const typeLevel = await request(t.http).get(url).set(bearer(owner)).expect(200);
    expect(typeLevel.body.payload).toMatchObject({ docType: 'tickets', defaultViewId: 'main' });
    expect(typeLevel.body.payload).not.toHaveProperty('document');

    // Type-level permissions narrow every document of the type in the workspace: only owners delete tickets.
    const ticket = await createDocument(t.http, owner, { docType: 'tickets' });
    await createRow(t.http, editor, ticket, { id: 't1', values: { name: 'T' } });
    await request(t.http).delete(`${ticket.path}/data/t1`).set(bearer(editor)).expect(403);
    await request(t.http).delete(`${ticket.path}/data/t1`).set(bearer(owner)).expect(200);
    // The type's settings are cached on the access path; a change takes effect at once.
    await createRow(t.http, editor, ticket, { id: 't2', values: { name: 'T2' } });
    await request(t.http).delete(`${ticket.path}/data/t2`).set(bearer(editor)).expect(403);
    await request(t.http).put(url).set(bearer(owner)).send({ ...body, permissions: {} }).expect(200);
    await request(t.http).delete(`${ticket.path}/data/t2`).set(bearer(editor)).expect(200);
  });

  it('deletes closed requests older than retention.closedRequestsDays, and nothing else', async () => {
    const doc = await createDocument(t.http, owner, { docType: 'retained' });
    const other = await createDocument(t.http, owner, { docType: 'kept' });
    const open = async (d: DocHandle, title: string): Promise<string> =>
      (await request(t.http).post(`${d.path}/requests`).set(bearer(owner)).send({ title }).expect(201)).body.payload.id as string;
    const oldClosed = await open(doc, 'old closed');
    const newClosed = await open(doc, 'new closed');
    const oldOpen = await open(doc, 'old open');
    const otherType = await open(other, 'other type, old closed');
    for (const id of [oldClosed, newClosed]) {
      await request(t.http).post(`${doc.path}/requests/${id}/close`).set(bearer(owner)).expect(200);
    }
    await request(t.http).post(`${other.path}/requests/${otherType}/close`).set(bearer(owner)).expect(200);
    await t.dataSource.query(`UPDATE requests SET closed_at = now() - interval '10 days', created_at = now() - interval '10 days' WHERE id = ANY($1::uuid[])`, [
      [oldClosed, oldOpen, otherType],
    ]);
    const merged = await createRow(t.http, owner, doc, { id: 'm1', values: { name: 'merged' } });
    expect(merged.id).toBe('m1');

    const job = t.app.get(RequestRetentionJob);
    expect(await job.run()).toBe(0);
    await request(t.http).put(`${API}/doc/retained/setting?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).send({ retention: { closedRequestsDays: 5 } }).expect(200);
    expect(await job.run()).toBe(1);
    const left = await t.dataSource.query<{ id: string }[]>(`SELECT id FROM requests WHERE id = ANY($1::uuid[])`, [[oldClosed, newClosed, oldOpen, otherType]]);
    expect(left.map((row) => row.id).sort()).toEqual([newClosed, oldOpen, otherType].sort());
    await request(t.http).get(`${doc.path}/requests/${oldClosed}`).set(bearer(owner)).expect(404);
    const list = await request(t.http).get(`${doc.path}/requests?status=merged`).set(bearer(owner)).expect(200);
    expect(list.body.payload.total).toBe(2); // the document's creation and m1
  });

  it('reads the whole bundle in one snapshot: a merge committed while the bundle is being read does not show in it', async () => {
    const doc = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }] });
    await createRow(t.http, owner, doc, { id: 'before', values: { name: 'Before' } });
    // Hold the bundle between its first sections and its data: the views section waits for this lock, taken by
    // another connection. A row write meanwhile touches no view, so its merge commits while the bundle waits.
    const blocker = t.dataSource.createQueryRunner();
    await blocker.connect();
    await blocker.startTransaction();
    await blocker.query('LOCK TABLE views IN ACCESS EXCLUSIVE MODE');
    const reading = request(t.http)
      .get(`${doc.path}?include=metadata,views,data,revisions&revisionsLimit=1`)
      .set(bearer(owner))
      .then((res) => res);
    // The bundle has begun (its snapshot taken) once its views section waits for the lock.
    await blockedSessions(t.dataSource, 1);
    await createRow(t.http, owner, doc, { id: 'during', values: { name: 'During' } });
    await blocker.rollbackTransaction();
    await blocker.release();
    const res = await reading;
    expect(res.status).toBe(200);
    const bundle = res.body.payload;
    expect(bundle.data.items.map((row: { id: string }) => row.id)).toEqual(['before']);
    expect(bundle.data.total).toBe(1);
    expect(bundle.revisions[0].version).toBe(bundle.document.version);
    // Read again: everything moved together.
    const after = (await request(t.http).get(`${doc.path}?include=data,revisions&revisionsLimit=1`).set(bearer(owner)).expect(200)).body.payload;
    expect(after.data.items.map((row: { id: string }) => row.id)).toEqual(['before', 'during']);
    expect(after.document.version).toBe(bundle.document.version + 1);
    expect(after.revisions[0].version).toBe(after.document.version);
  });
});
