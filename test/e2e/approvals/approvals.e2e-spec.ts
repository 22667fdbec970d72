import request from 'supertest';
import { lastMessageTo } from '../../factories/notifications.js';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { problemsOf } from '../../utils/error-details.js';
import { addToWorkspace, bearer, createDocument, type DocHandle, newUser, scopedToken } from '../documents/documents.fixtures.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'qty', name: 'Quantity', type: 'number' },
];

interface Instance {
  id: string;
  status: string;
  currentNode: number | null;
  resetCount: number;
  updatedAt: string;
  nodes: { ordinal: number; approver: string; status: string; comment: string | null; signature: string | null; decidedAt: string | null }[];
}

describe('approvals: instances, decisions and the merge gate', () => {
  let t: TestApp;
  let owner: TestUser;
  let author: TestUser;
  let a1: TestUser;
  let a2: TestUser;
  let stranger: TestUser;
  let doc: DocHandle;
  let seq = 0;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    author = await newUser(t.http);
    a1 = await newUser(t.http);
    a2 = await newUser(t.http);
    stranger = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, author, 'editor');
    await addToWorkspace(t.dataSource, owner, a1, 'viewer');
    await addToWorkspace(t.dataSource, owner, a2, 'viewer');
    doc = await createDocument(t.http, owner, { fields: FIELDS, settings: { workflow: { requiresApproval: true, approvers: [a1.id, a2.id] } } });
  });
  afterAll(async () => {
    await t.close();
  });

  /** A write by the author: with approval required it stays open as a request; returns the request id. */
  async function pendingRequest(target: DocHandle = doc): Promise<{ requestId: string; rowId: string }> {
    seq += 1;
    const rowId = `r${seq}`;
    const res = await request(t.http).post(`${target.path}/data`).set(bearer(author)).send({ id: rowId, values: { name: `Row ${seq}` } }).expect(201);
    expect(res.body.payload.request).toMatchObject({ pendingApproval: true, merged: false });
    return { requestId: res.body.payload.request.requestId, rowId };
  }

  async function submit(requestId: string, approvers: TestUser[], strategy?: string, target: DocHandle = doc): Promise<Instance> {
    const res = await request(t.http)
      .post(`${target.path}/requests/${requestId}/submit-approval`)
      .set(bearer(author))
      .send({ approvers: approvers.map((user) => user.id), ...(strategy ? { strategy } : {}) })
      .expect(201);
    return res.body.payload;
  }

  async function approve(user: TestUser, instanceId: string, decision = 'approved', target: DocHandle = doc, expected = 200): Promise<request.Response> {
    return request(t.http).post(`${target.path}/approvals/${instanceId}/approve`).set(bearer(user)).send({ decision, comment: `${decision} by me` }).expect(expected);
  }

  async function events(instanceId: string): Promise<{ event_type: string; payload: Record<string, unknown> }[]> {
    return t.dataSource.query(`SELECT event_type, payload FROM outbox WHERE payload->>'instanceId' = $1 ORDER BY seq`, [instanceId]);
  }

  it('shows the approval configuration with flows from the settings', async () => {
    const res = await request(t.http).get(`${doc.path}/approval`).set(bearer(a1)).expect(200);
    expect(res.body.payload).toEqual({
      requiresApproval: true,
      autoMerge: false,
      flows: [
        expect.objectContaining({ id: 'settings-sequential', strategy: 'sequential', approvers: [a1.id, a2.id] }),
        expect.objectContaining({ id: 'settings-parallel', strategy: 'parallel', approvers: [a1.id, a2.id] }),
      ],
    });
  });

  it('sequential: approvers decide in order; the gate refuses the merge until all approved; decisions are stored', async () => {
    const { requestId, rowId } = await pendingRequest();
    const gated = await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(409);
    expect(gated.body).toMatchObject({ code: 'APPROVAL_REQUIRED', payload: { requestId, instanceId: null, status: null } });

    const instance = await submit(requestId, [a1, a2]);
    expect(instance).toMatchObject({ status: 'pending', currentNode: 1, nodes: [{ approver: a1.id, status: 'pending' }, { approver: a2.id, status: 'pending' }] });
    expect((await lastMessageTo(t.dataSource, a1.email, 'approval_requested'))?.data).toMatchObject({ instanceId: instance.id });

    const early = await approve(a2, instance.id, 'approved', doc, 403);
    expect(early.body.code).toBe('FORBIDDEN');

    const first = await request(t.http)
      .post(`${doc.path}/approval/${instance.id}/decision?result=approved`)
      .set(bearer(a1))
      .send({ comment: 'looks right', signature: 'A. One' })
      .expect(200);
    expect(first.body.payload).toMatchObject({ status: 'pending', currentNode: 2, merge: null });
    expect(first.body.payload.nodes[0]).toMatchObject({ status: 'approved', comment: 'looks right', signature: 'A. One', decidedAt: expect.any(String) });
    // A decision that is not the last still changes the instance (its current node, its nodes): updatedAt moves with it.
    expect(first.body.payload.updatedAt).toBe(first.body.payload.nodes[0].decidedAt);
    expect(Date.parse(first.body.payload.updatedAt)).toBeGreaterThan(Date.parse(instance.updatedAt));
    expect((await lastMessageTo(t.dataSource, a2.email, 'approval_requested'))?.data).toMatchObject({ instanceId: instance.id });

    const stillGated = await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(409);
    expect(stillGated.body.payload).toMatchObject({ instanceId: instance.id, status: 'pending' });
    await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(owner)).expect(404);

    const done = await approve(a2, instance.id);
    expect(done.body.payload).toMatchObject({ status: 'approved', currentNode: null, completedAt: expect.any(String) });
    await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(author)).expect(200);
    await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(owner)).expect(200);

    const recorded = await events(instance.id);
    expect(recorded.map((event) => event.event_type)).toEqual(['approval_started', 'approval_node_completed', 'approval_node_completed', 'approval_approved']);
    expect(recorded[1]?.payload).toMatchObject({ instanceId: instance.id, status: 'pending', currentNode: 2, approver: a1.id, decision: 'approved', comment: 'looks right', completedAt: null });
    expect(recorded[3]?.payload).toMatchObject({ status: 'approved', approver: a2.id, completedAt: expect.any(String) });
  });

  it('parallel: any pending approver decides; all approvals approve', async () => {
    const { requestId } = await pendingRequest();
    const instance = await submit(requestId, [a1, a2], 'parallel');
    expect((await approve(a2, instance.id)).body.payload.status).toBe('pending');
    await approve(a2, instance.id, 'approved', doc, 403);
    expect((await approve(a1, instance.id)).body.payload.status).toBe('approved');
  });

  it('a rejection rejects the instance; the gate reports it; the request can be submitted again', async () => {
    const { requestId } = await pendingRequest();
    const instance = await submit(requestId, [a1, a2], 'parallel');
    const rejected = await request(t.http).post(`${doc.path}/approval/${instance.id}/decision?result=rejected`).set(bearer(a2)).send({ comment: 'no' }).expect(200);
    expect(rejected.body.payload.status).toBe('rejected');
    const gated = await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(409);
    expect(gated.body).toMatchObject({ code: 'APPROVAL_REQUIRED', payload: { instanceId: instance.id, status: 'rejected' } });
    await approve(a1, instance.id, 'approved', doc, 409);
    expect((await events(instance.id)).map((event) => event.event_type)).toEqual(['approval_started', 'approval_node_completed', 'approval_rejected']);
    await submit(requestId, [a1]);
  });

  it('request_changes sends the request back to its author', async () => {
    const { requestId } = await pendingRequest();
    const instance = await submit(requestId, [a1, a2]);
    const res = await approve(a1, instance.id, 'request_changes');
    expect(res.body.payload).toMatchObject({ status: 'changes_requested', nodes: [{ status: 'changes_requested', comment: 'request_changes by me' }, { status: 'pending' }] });
    const recorded = await events(instance.id);
    expect(recorded[2]).toMatchObject({ event_type: 'approval_rejected', payload: { status: 'changes_requested', decision: 'request_changes' } });
    expect((await lastMessageTo(t.dataSource, author.email, 'approval_completed'))?.data).toMatchObject({ instanceId: instance.id, status: 'changes_requested' });
  });

  it('new changes on the request withdraw the approvals already given', async () => {
    const { requestId, rowId } = await pendingRequest();
    const instance = await submit(requestId, [a1, a2]);
    await approve(a1, instance.id);
    await request(t.http).put(`${doc.path}/data/${rowId}?requestId=${requestId}`).set(bearer(author)).send({ values: { qty: 3 } }).expect(200);
    const after = await request(t.http).get(`${doc.path}/approval/${instance.id}`).set(bearer(author)).expect(200);
    expect(after.body.payload).toMatchObject({ status: 'pending', currentNode: 1, resetCount: 1, nodes: [{ status: 'pending', comment: null }, { status: 'pending' }] });
    await approve(a2, instance.id, 'approved', doc, 403);
    expect((await events(instance.id)).at(-1)).toMatchObject({ event_type: 'approval_started', payload: { reset: true } });
  });

  it('closing the request cancels its approval', async () => {
    const { requestId } = await pendingRequest();
    const instance = await submit(requestId, [a1]);
    await request(t.http).post(`${doc.path}/requests/${requestId}/close`).set(bearer(author)).expect(200);
    const after = await request(t.http).get(`${doc.path}/approval/${instance.id}`).set(bearer(a1)).expect(200);
    expect(after.body.payload.status).toBe('canceled');
    expect((await events(instance.id)).at(-1)).toMatchObject({ event_type: 'approval_canceled', payload: { status: 'canceled', reason: 'request-closed' } });
    const late = await approve(a1, instance.id, 'approved', doc, 409);
    expect(late.body.code).toBe('INVALID_STATE');
  });

  it('with autoMerge the completing approval merges the request', async () => {
    const auto = await createDocument(t.http, owner, { fields: FIELDS, settings: { workflow: { requiresApproval: true, approvers: [owner.id], autoMerge: true } } });
    const { requestId, rowId } = await pendingRequest(auto);
    const started = await request(t.http).post(`${auto.path}/approval/start`).set(bearer(author)).send({ requestId, flowId: 'settings-sequential' }).expect(201);
    const res = await approve(owner, started.body.payload.id, 'approved', auto);
    expect(res.body.payload).toMatchObject({ status: 'approved', merge: { merged: true, revisionId: expect.any(String), conflicts: [] } });
    await request(t.http).get(`${auto.path}/data/${rowId}`).set(bearer(owner)).expect(200);
    const req = await request(t.http).get(`${auto.path}/requests/${requestId}`).set(bearer(owner)).expect(200);
    expect(req.body.payload).toMatchObject({ status: 'merged', mergedBy: owner.id });
  });

  it('with autoMerge, an approver who may not merge (a viewer) records the approval and leaves the merge to someone allowed', async () => {
    const auto = await createDocument(t.http, owner, { fields: FIELDS, settings: { workflow: { requiresApproval: true, approvers: [a1.id], autoMerge: true } } });
    const { requestId, rowId } = await pendingRequest(auto);
    const started = await request(t.http).post(`${auto.path}/approval/start`).set(bearer(author)).send({ requestId, flowId: 'settings-sequential' }).expect(201);
    const res = await approve(a1, started.body.payload.id, 'approved', auto);
    expect(res.body.payload).toMatchObject({ status: 'approved', merge: { merged: false, revisionId: null, conflicts: [], error: { code: 'FORBIDDEN' } } });
    expect((await request(t.http).get(`${auto.path}/requests/${requestId}`).set(bearer(owner)).expect(200)).body.payload.status).toBe('open');
    await request(t.http).get(`${auto.path}/data/${rowId}`).set(bearer(owner)).expect(404);
    const merged = await request(t.http).post(`${auto.path}/requests/${requestId}/merge`).set(bearer(author)).expect(200);
    expect(merged.body.payload).toMatchObject({ status: 'merged', mergedBy: author.id });
  });

  it('refuses bad enums, unknown flows, outsiders as approvers and a second live approval; nothing is half-applied', async () => {
    const { requestId } = await pendingRequest();
    const badStrategy = await request(t.http).post(`${doc.path}/requests/${requestId}/submit-approval`).set(bearer(author)).send({ approvers: [a1.id], strategy: 'random' }).expect(400);
    expect(badStrategy.body.code).toBe('VALIDATION_ERROR');
    const outsider = await request(t.http).post(`${doc.path}/requests/${requestId}/submit-approval`).set(bearer(author)).send({ approvers: [a1.id, stranger.id] }).expect(400);
    expect(outsider.body).toMatchObject({ code: 'VALIDATION_ERROR', details: expect.objectContaining({ field: 'approvers[1]' }) });
    const unknownFlow = await request(t.http).post(`${doc.path}/approval/start`).set(bearer(author)).send({ requestId, flowId: 'nope' }).expect(404);
    expect(unknownFlow.body.code).toBe('NOT_FOUND');
    const [{ count }] = await t.dataSource.query(`SELECT count(*)::int AS count FROM approval_instances WHERE request_id = $1`, [requestId]);
    expect(count).toBe(0);

    const instance = await submit(requestId, [a1]);
    const again = await request(t.http).post(`${doc.path}/requests/${requestId}/submit-approval`).set(bearer(author)).send({ approvers: [a2.id] }).expect(409);
    expect(again.body).toMatchObject({ code: 'INVALID_STATE', payload: { instanceId: instance.id, status: 'pending' } });
    const badResult = await request(t.http).post(`${doc.path}/approval/${instance.id}/decision?result=maybe`).set(bearer(a1)).send({}).expect(400);
    expect(badResult.body.code).toBe('VALIDATION_ERROR');
    const badDecision = await request(t.http).post(`${doc.path}/approvals/${instance.id}/approve`).set(bearer(a1)).send({ decision: 'yes' }).expect(400);
    expect(badDecision.body.code).toBe('VALIDATION_ERROR');
    const still = await request(t.http).get(`${doc.path}/approval/${instance.id}`).set(bearer(a1)).expect(200);
    expect(still.body.payload.nodes[0].status).toBe('pending');
  });

  it('refuses as approver a member the document permissions settings do not let view it (they could never decide)', async () => {
    const narrowed = await createDocument(t.http, owner, {
      fields: FIELDS,
      settings: { workflow: { requiresApproval: true }, permissions: { view: [a1.id, 'role:editor'] } },
    });
    const { requestId } = await pendingRequest(narrowed);
    const refused = await request(t.http).post(`${narrowed.path}/requests/${requestId}/submit-approval`).set(bearer(author)).send({ approvers: [a1.id, a2.id] }).expect(400);
    expect(problemsOf(refused.body)).toEqual([expect.objectContaining({ field: 'approvers[1]', reason: 'not a user who can read the document' })]);
    const instance = await submit(requestId, [a1], undefined, narrowed);
    expect(instance.status).toBe('pending');
  });

  it('refuses wrong roles and scopes, and hides approvals from other tenants', async () => {
    const { requestId } = await pendingRequest();
    await request(t.http).post(`${doc.path}/requests/${requestId}/submit-approval`).set(bearer(a1)).send({ approvers: [a2.id] }).expect(403);
    const instance = await submit(requestId, [a1]);
    const readOnly = await scopedToken(t, a1, ['doc:read']);
    await request(t.http).post(`${doc.path}/approvals/${instance.id}/approve`).set(bearer(readOnly)).send({ decision: 'approved' }).expect(403);
    const notApprover = await approve(author, instance.id, 'approved', doc, 403);
    expect(notApprover.body.code).toBe('FORBIDDEN');
    const hidden = await request(t.http).get(`${doc.path}/approval/${instance.id}`).set(bearer(stranger)).expect(404);
    expect(JSON.stringify(hidden.body)).not.toContain(instance.id);
    await request(t.http).post(`${doc.path}/approvals/${instance.id}/approve`).set(bearer(stranger)).send({ decision: 'approved' }).expect(404);
    await request(t.http).get(`${doc.path}/approval/00000000-0000-4000-8000-000000000000`).set(bearer(owner)).expect(404);
  });
});
