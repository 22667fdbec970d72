import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { problemsOf } from '../../utils/error-details.js';
import { addToWorkspace, API, bearer, createDocument, type DocHandle, newUser, scopedToken } from '../documents/documents.fixtures.js';

const FIELDS = [{ id: 'name', name: 'Name', type: 'text' }];

/**
 * Decisions are writes (refused in archived workspaces and through read-only references), the auto-merge acts for
 * a decider who must be allowed to merge, settings approvers are checked when a flow starts, and a malformed
 * request id is an unknown one.
 */
describe('approvals: refused decisions, the decider of an auto-merge, settings approvers', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;
  let seq = 0;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    viewer = await newUser(t.http);
    stranger = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
  });
  afterAll(async () => {
    await t.close();
  });

  async function workspace(): Promise<string> {
    seq += 1;
    const res = await request(t.http)
      .post(`${API}/organizations/${owner.defaultOrganizationId}/workspaces`)
      .set(bearer(owner))
      .send({ name: `Ws ${seq}`, slug: `ws-approvals-${seq}` })
      .expect(201);
    return res.body.payload.id as string;
  }

  /** An open request with one row, submitted to `approvers`; returns the ids. */
  async function submitted(doc: DocHandle, approvers: TestUser[], query: Record<string, string> = {}): Promise<{ requestId: string; instanceId: string; rowId: string }> {
    seq += 1;
    const rowId = `r${seq}`;
    const opened = await request(t.http)
      .post(`${doc.path}/requests`)
      .query(query)
      .set(bearer(owner))
      .send({ changes: [{ type: 'row-create', target: { kind: 'row', rowId }, newValue: { values: { name: `Row ${seq}` } } }] })
      .expect(201);
    const requestId = opened.body.payload.id as string;
    const instance = await request(t.http)
      .post(`${doc.path}/requests/${requestId}/submit-approval`)
      .query(query)
      .set(bearer(owner))
      .send({ approvers: approvers.map((user) => user.id) })
      .expect(201);
    return { requestId, instanceId: instance.body.payload.id, rowId };
  }

  async function status(doc: DocHandle, requestId: string, instanceId: string, query: Record<string, string> = {}): Promise<[string, string]> {
    const req = await request(t.http).get(`${doc.path}/requests/${requestId}`).query(query).set(bearer(owner)).expect(200);
    const instance = await request(t.http).get(`${doc.path}/approval/${instanceId}`).query(query).set(bearer(owner)).expect(200);
    return [req.body.payload.status, instance.body.payload.status];
  }

  it('refuses a decision in an archived workspace like a merge there: nothing is decided or merged', async () => {
    const ws = await workspace();
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer', ws);
    const doc = await createDocument(t.http, owner, { fields: FIELDS, workspaceId: ws, settings: { workflow: { requiresApproval: true, autoMerge: true } } });
    // The approver is not the request's author: the author may not approve a request of a gated document.
    const { requestId, instanceId } = await submitted(doc, [viewer]);
    await request(t.http).post(`${API}/organizations/${owner.defaultOrganizationId}/workspaces/${ws}/archive`).set(bearer(owner)).expect(200);

    const merge = await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(403);
    const decision = await request(t.http).post(`${doc.path}/approval/${instanceId}/decision?result=approved`).set(bearer(viewer)).send({}).expect(403);
    expect(decision.body.code).toBe('FORBIDDEN');
    expect(problemsOf(decision.body)[0]?.reason).toBe(problemsOf(merge.body)[0]?.reason);
    await request(t.http).post(`${doc.path}/approvals/${instanceId}/approve`).set(bearer(viewer)).send({ decision: 'rejected' }).expect(403);
    expect(await status(doc, requestId, instanceId)).toEqual(['open', 'pending']);
  });

  it('refuses a decision through a data-source reference that serves the type read-only', async () => {
    const source = await workspace();
    const target = await workspace();
    const doc = await createDocument(t.http, owner, { docType: 'parts', fields: FIELDS, workspaceId: source });
    const { requestId, instanceId } = await submitted(doc, [owner], { workspaceId: source });
    await request(t.http)
      .post(`${API}/organizations/${owner.defaultOrganizationId}/workspaces/${target}/data-source-references`)
      .set(bearer(owner))
      .send({ sourceWorkspaceId: source, docType: 'parts' })
      .expect(201);
    const refused = await request(t.http).post(`${doc.path}/approval/${instanceId}/decision`).query({ result: 'approved', workspaceId: target }).set(bearer(owner)).send({}).expect(403);
    expect(problemsOf(refused.body)[0]?.reason).toContain('read-only');
    expect(await status(doc, requestId, instanceId, { workspaceId: source })).toEqual(['open', 'pending']);
    // In the source workspace itself the same decision is an ordinary one.
    await request(t.http).post(`${doc.path}/approval/${instanceId}/decision`).query({ result: 'approved', workspaceId: source }).set(bearer(owner)).send({}).expect(200);
  });

  it('records the approval of a decider without requests:manage but leaves the auto-merge to someone allowed', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS, settings: { workflow: { requiresApproval: true, autoMerge: true } } });
    const { requestId, instanceId, rowId } = await submitted(doc, [editor]);
    const approvalsOnly = await scopedToken(t, editor, ['approvals:manage']);
    const res = await request(t.http).post(`${doc.path}/approvals/${instanceId}/approve`).set(bearer(approvalsOnly)).send({ decision: 'approved' }).expect(200);
    expect(res.body.payload).toMatchObject({ status: 'approved', merge: { merged: false, revisionId: null, error: { code: 'FORBIDDEN' } } });
    expect(await status(doc, requestId, instanceId)).toEqual(['open', 'approved']);
    await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(owner)).expect(404);
    const merged = await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);
    expect(merged.body.payload.mergedBy).toBe(owner.id);
  });

  it('refuses an approver listed twice in settings, and names the settings entry of an approver who cannot read', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS, settings: { workflow: { requiresApproval: true, approvers: [viewer.id, editor.id] } } });
    const twice = await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({ workflow: { requiresApproval: true, approvers: [viewer.id, editor.id, viewer.id.toUpperCase()] } })
      .expect(400);
    expect(problemsOf(twice.body)).toEqual([expect.objectContaining({ field: 'workflow.approvers[2]', reason: 'is listed twice' })]);
    const config = await request(t.http).get(`${doc.path}/approval`).set(bearer(owner)).expect(200);
    expect(config.body.payload.flows[0].approvers).toEqual([viewer.id, editor.id]);
    const opened = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: 'dup' }).expect(201);
    const started = await request(t.http).post(`${doc.path}/approval/start`).set(bearer(owner)).send({ requestId: opened.body.payload.id, flowId: 'settings-sequential' }).expect(201);
    expect(started.body.payload.nodes.map((node: { approver: string }) => node.approver)).toEqual([viewer.id, editor.id]);

    // A stranger cannot be written into the settings at all (docs/settings.md); an approver who loses access after
    // the settings were written is caught when a flow starts.
    await expect(createDocument(t.http, owner, { fields: FIELDS, settings: { workflow: { requiresApproval: true, approvers: [viewer.id, stranger.id] } } })).rejects.toThrow(
      /workflow\.approvers\[1\]/,
    );
    const leaver = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, leaver, 'viewer');
    const withStranger = await createDocument(t.http, owner, { fields: FIELDS, settings: { workflow: { requiresApproval: true, approvers: [viewer.id, leaver.id] } } });
    await t.dataSource.query(`DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2`, [owner.defaultWorkspaceId, leaver.id]);
    const other = await request(t.http).post(`${withStranger.path}/requests`).set(bearer(owner)).send({ title: 'stranger' }).expect(201);
    const refused = await request(t.http)
      .post(`${withStranger.path}/approval/start`)
      .set(bearer(owner))
      .send({ requestId: other.body.payload.id, flowId: 'settings-parallel' })
      .expect(400);
    expect(refused.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(refused.body)).toEqual([expect.objectContaining({ field: 'workflow.approvers[1]', reason: 'not a user who can read the document' })]);
  });

  it('answers a malformed requestId like an unknown one: NOT_FOUND naming requestId', async () => {
    const doc = await createDocument(t.http, owner, { fields: FIELDS, settings: { workflow: { requiresApproval: true, approvers: [viewer.id] } } });
    for (const requestId of ['abc', '00000000-0000-4000-8000-000000000000']) {
      const res = await request(t.http).post(`${doc.path}/approval/start`).set(bearer(owner)).send({ requestId, flowId: 'settings-sequential' }).expect(404);
      expect(res.body.code).toBe('NOT_FOUND');
      expect(problemsOf(res.body)[0]?.field).toBe('requestId');
    }
  });

  it('declares the 409s of the approval writes and an optional decision body', () => {
    const paths = t.openApi.paths;
    const base = '/api/v1/doc/{docType}/{docId}';
    for (const path of [`${base}/requests/{reqId}/submit-approval`, `${base}/approval/start`, `${base}/approval/{instanceId}/decision`, `${base}/approvals/{approvalId}/approve`]) {
      expect(Object.keys(paths[path]?.post?.responses ?? {})).toContain('409');
    }
    const body = paths[`${base}/approval/{instanceId}/decision`]?.post?.requestBody as { required?: boolean } | undefined;
    expect(body?.required).not.toBe(true);
  });
});
