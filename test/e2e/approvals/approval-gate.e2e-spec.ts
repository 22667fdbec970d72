import request from 'supertest';
import { lastMessageTo } from '../../factories/notifications.js';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { problemsOf } from '../../utils/error-details.js';
import {
  addToWorkspace,
  API,
  bearer,
  createDocument,
  type DocHandle,
  newUser,
} from '../documents/documents.fixtures.js';

const FIELDS = [{ id: 'name', name: 'Name', type: 'text' }];

/**
 * The approval gate cannot be satisfied by the request's own writers, and the owner's workflow.approvers bound who
 * approves (docs/decisions/approvals-gate.md); approval e-mails go only to users who may still read the document.
 */
describe('approvals: who may approve a gated request, and who is asked', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let editor2: TestUser;
  let viewer: TestUser;
  let approver2: TestUser;
  let seq = 0;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    editor2 = await newUser(t.http);
    viewer = await newUser(t.http);
    approver2 = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, editor2, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    await addToWorkspace(t.dataSource, owner, approver2, 'viewer');
  });
  afterAll(async () => {
    await t.close();
  });

  /** A write by `by`: with approval required it stays open as a request; returns its id and the row. */
  async function pendingWrite(
    doc: DocHandle,
    by: TestUser = editor,
  ): Promise<{ requestId: string; rowId: string }> {
    seq += 1;
    const rowId = `r${seq}`;
    const res = await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(by))
      .send({ id: rowId, values: { name: `Row ${seq}` } })
      .expect(201);
    expect(res.body.payload.request).toMatchObject({ pendingApproval: true, merged: false });
    return { requestId: res.body.payload.request.requestId, rowId };
  }

  function submit(
    doc: DocHandle,
    requestId: string,
    by: TestUser,
    approvers: TestUser[],
    strategy = 'sequential',
  ): request.Test {
    return request(t.http)
      .post(`${doc.path}/requests/${requestId}/submit-approval`)
      .set(bearer(by))
      .send({ approvers: approvers.map((user) => user.id), strategy });
  }

  async function instanceCount(requestId: string, status?: string): Promise<number> {
    const [{ count }] = await t.dataSource.query(
      `SELECT count(*)::int AS count FROM approval_instances WHERE request_id = $1 AND ($2::text IS NULL OR status = $2)`,
      [requestId, status ?? null],
    );
    return count;
  }

  it('refuses the author as approver, also after close/reopen canceled the configured flow; only configured approvers are accepted', async () => {
    const doc = await createDocument(t.http, owner, {
      fields: FIELDS,
      settings: {
        workflow: { requiresApproval: true, autoMerge: true, approvers: [viewer.id, approver2.id] },
      },
    });
    const { requestId, rowId } = await pendingWrite(doc);

    const self = await submit(doc, requestId, editor, [editor]).expect(400);
    expect(self.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(self.body)).toEqual([
      expect.objectContaining({
        field: 'approvers[0]',
        reason: expect.stringContaining('author or contributor'),
      }),
    ]);

    await request(t.http)
      .post(`${doc.path}/approval/start`)
      .set(bearer(owner))
      .send({ requestId, flowId: 'settings-sequential' })
      .expect(201);
    await request(t.http).post(`${doc.path}/requests/${requestId}/close`).set(bearer(editor)).expect(200);
    await request(t.http).post(`${doc.path}/requests/${requestId}/reopen`).set(bearer(editor)).expect(200);
    expect(await instanceCount(requestId, 'canceled')).toBe(1);

    const again = await submit(doc, requestId, editor, [editor]).expect(400);
    expect(problemsOf(again.body)).toEqual([expect.objectContaining({ field: 'approvers[0]' })]);
    // Someone else, but not one of the owner's workflow.approvers: refused as well, every entry named.
    const unlisted = await submit(doc, requestId, editor, [viewer, editor2, editor]).expect(400);
    expect(problemsOf(unlisted.body)).toEqual([
      expect.objectContaining({
        field: 'approvers[1]',
        reason: "not one of the document's workflow.approvers",
      }),
      expect.objectContaining({
        field: 'approvers[2]',
        reason: expect.stringContaining('author or contributor'),
      }),
    ]);
    expect(await instanceCount(requestId)).toBe(1);
    const gated = await request(t.http)
      .post(`${doc.path}/requests/${requestId}/merge`)
      .set(bearer(editor))
      .expect(409);
    expect(gated.body.code).toBe('APPROVAL_REQUIRED');
    await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(viewer)).expect(404);

    // Configured approvers (the list bounds who, in the order the submitter chooses) are accepted.
    const instance = await submit(doc, requestId, editor, [approver2, viewer]).expect(201);
    expect(instance.body.payload.nodes.map((node: { approver: string }) => node.approver)).toEqual([
      approver2.id,
      viewer.id,
    ]);
  });

  it('refuses a configured approver who wrote changes of the request when the flow starts, naming the settings entry', async () => {
    const doc = await createDocument(t.http, owner, {
      fields: FIELDS,
      settings: { workflow: { requiresApproval: true, approvers: [viewer.id, editor.id] } },
    });
    const { requestId } = await pendingWrite(doc);
    const refused = await request(t.http)
      .post(`${doc.path}/approval/start`)
      .set(bearer(owner))
      .send({ requestId, flowId: 'settings-parallel' })
      .expect(400);
    expect(problemsOf(refused.body)).toEqual([
      expect.objectContaining({
        field: 'workflow.approvers[1]',
        reason: expect.stringContaining('author or contributor'),
      }),
    ]);
    expect(await instanceCount(requestId)).toBe(0);
    // The other configured approvers can still be asked.
    await submit(doc, requestId, owner, [viewer]).expect(201);
  });

  it('refuses the decision of an approver who became a contributor, or whom the settings no longer list: nothing is decided', async () => {
    const doc = await createDocument(t.http, owner, {
      fields: FIELDS,
      settings: { workflow: { requiresApproval: true, autoMerge: true } },
    });
    const { requestId, rowId } = await pendingWrite(doc);
    const instance = (await submit(doc, requestId, editor, [editor2, viewer], 'parallel').expect(201)).body
      .payload;

    // editor2 writes into the request: the approvals reset and editor2 is now one of its writers.
    await request(t.http)
      .put(`${doc.path}/data/${rowId}?requestId=${requestId}`)
      .set(bearer(editor2))
      .send({ values: { name: 'changed by editor2' } })
      .expect(200);
    const own = await request(t.http)
      .post(`${doc.path}/approval/${instance.id}/decision?result=approved`)
      .set(bearer(editor2))
      .send({})
      .expect(403);
    expect(own.body.code).toBe('FORBIDDEN');
    expect(problemsOf(own.body)[0]?.reason).toContain('author or contributor');

    // The owner now lists only approver2 (the settings change of a gated document is itself approved, then merged):
    // viewer, asked before, may no longer decide.
    const change = await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({ workflow: { requiresApproval: true, autoMerge: true, approvers: [approver2.id] } })
      .expect(200);
    const changeRequest = change.body.payload.request.requestId as string;
    const changeApproval = (await submit(doc, changeRequest, owner, [approver2]).expect(201)).body.payload;
    await request(t.http)
      .post(`${doc.path}/approval/${changeApproval.id}/decision?result=approved`)
      .set(bearer(approver2))
      .send({})
      .expect(200);
    await request(t.http).post(`${doc.path}/requests/${changeRequest}/merge`).set(bearer(owner)).expect(200);
    const unlisted = await request(t.http)
      .post(`${doc.path}/approvals/${instance.id}/approve`)
      .set(bearer(viewer))
      .send({ decision: 'approved' })
      .expect(403);
    expect(problemsOf(unlisted.body)[0]?.reason).toContain('workflow.approvers');

    const after = await request(t.http)
      .get(`${doc.path}/approval/${instance.id}`)
      .set(bearer(owner))
      .expect(200);
    expect(after.body.payload).toMatchObject({
      status: 'pending',
      nodes: [{ status: 'pending' }, { status: 'pending' }],
    });
    await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(owner)).expect(404);
  });

  it('without requiresApproval approvals are advisory: the author may approve their own request', async () => {
    const doc = await createDocument(t.http, owner, {
      fields: FIELDS,
      settings: { workflow: { approvers: [viewer.id] } },
    });
    const opened = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(editor))
      .send({ title: 'advisory' })
      .expect(201);
    const instance = (await submit(doc, opened.body.payload.id, editor, [editor]).expect(201)).body.payload;
    const res = await request(t.http)
      .post(`${doc.path}/approval/${instance.id}/decision?result=approved`)
      .set(bearer(editor))
      .send({})
      .expect(200);
    expect(res.body.payload.status).toBe('approved');
  });

  it('does not bind a manager of the document, who could switch the gate off: the owner approves their own request', async () => {
    const doc = await createDocument(t.http, owner, {
      fields: FIELDS,
      settings: { workflow: { requiresApproval: true, autoMerge: true, approvers: [viewer.id] } },
    });
    const { requestId, rowId } = await pendingWrite(doc, owner);
    // The owner wrote the request and is not listed, yet may approve it; an editor in the same place may not.
    const instance = (await submit(doc, requestId, owner, [owner]).expect(201)).body.payload;
    const res = await request(t.http)
      .post(`${doc.path}/approval/${instance.id}/decision?result=approved`)
      .set(bearer(owner))
      .send({})
      .expect(200);
    expect(res.body.payload).toMatchObject({ status: 'approved', merge: { merged: true } });
    await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(viewer)).expect(200);
    const byEditor = await pendingWrite(doc, editor);
    await submit(doc, byEditor.requestId, editor, [editor]).expect(400);
    await submit(doc, byEditor.requestId, editor, [owner]).expect(201);
  });

  it('does not ask the next sequential approver once they may no longer read the document; the instance waits', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS });
    const opened = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(editor))
      .send({ title: 'seq' })
      .expect(201);
    const requestId = opened.body.payload.id as string;
    const removed = await newUser(t.http);
    const shut = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, removed, 'viewer');
    await addToWorkspace(t.dataSource, owner, shut, 'viewer');
    const instance = (await submit(doc, requestId, editor, [viewer, removed]).expect(201)).body.payload;
    const parallel = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, parallel, 'viewer');

    const members = await request(t.http)
      .get(
        `${API}/organizations/${owner.defaultOrganizationId}/workspaces/${owner.defaultWorkspaceId}/members`,
      )
      .query({ pageSize: 100 })
      .set(bearer(owner))
      .expect(200);
    const membership = members.body.payload.items.find(
      (item: { userId: string }) => item.userId === removed.id,
    );
    await request(t.http)
      .delete(
        `${API}/organizations/${owner.defaultOrganizationId}/workspaces/${owner.defaultWorkspaceId}/members/${membership.id}`,
      )
      .set(bearer(owner))
      .expect(200);

    const first = await request(t.http)
      .post(`${doc.path}/approval/${instance.id}/decision?result=approved`)
      .set(bearer(viewer))
      .send({})
      .expect(200);
    expect(first.body.payload).toMatchObject({ status: 'pending', currentNode: 2 });
    expect(await lastMessageTo(t.dataSource, removed.email, 'approval_requested')).toBeUndefined();

    // Shut out by permissions.view (not removed): not asked either when the approvals restart on new changes.
    const second = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(editor))
      .send({ title: 'par' })
      .expect(201);
    const par = (await submit(doc, second.body.payload.id, editor, [shut, parallel], 'parallel').expect(201))
      .body.payload;
    await request(t.http)
      .post(`${doc.path}/approval/${par.id}/decision?result=approved`)
      .set(bearer(parallel))
      .send({})
      .expect(200);
    await t.dataSource.query(`DELETE FROM notifications WHERE lower(recipient) = lower($1)`, [shut.email]);
    await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({ permissions: { view: ['role:editor', parallel.id] } })
      .expect(200);
    await request(t.http)
      .post(`${doc.path}/data?requestId=${second.body.payload.id}`)
      .set(bearer(editor))
      .send({ id: 'later', values: { name: 'later' } })
      .expect(201);
    expect(
      (await request(t.http).get(`${doc.path}/approval/${par.id}`).set(bearer(owner)).expect(200)).body
        .payload,
    ).toMatchObject({ status: 'pending', resetCount: 1 });
    expect(await lastMessageTo(t.dataSource, shut.email, 'approval_requested')).toBeUndefined();
    // The reader among them is asked again (once at the start, once at the restart).
    const [{ asked }] = await t.dataSource.query(
      `SELECT count(*)::int AS asked FROM notifications WHERE lower(recipient) = lower($1) AND kind = 'approval_requested' AND data->>'instanceId' = $2`,
      [parallel.email, par.id],
    );
    expect(asked).toBe(2);
  });
});
