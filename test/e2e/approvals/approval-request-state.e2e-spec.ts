import request from 'supertest';
import { lastMessageTo } from '../../factories/notifications.js';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, type DocHandle, newUser } from '../documents/documents.fixtures.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'qty', name: 'Quantity', type: 'number' },
];

/** Title of the requests whose merge a trigger of this file's database fails (an error that is not a conflict). */
const FAILING_MERGE = 'merge fails';

describe('approvals: a request that is no longer open, and the auto-merge', () => {
  let t: TestApp;
  let owner: TestUser;
  let author: TestUser;
  let approver: TestUser;
  let seq = 0;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    author = await newUser(t.http);
    approver = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, author, 'editor');
    // An editor: the auto-merge a completing approval triggers acts for the approver, who must be allowed to merge.
    await addToWorkspace(t.dataSource, owner, approver, 'editor');
    await t.dataSource.query(`
      CREATE FUNCTION test_fail_merge() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.status = 'merged' AND NEW.title = '${FAILING_MERGE}' THEN
          RAISE EXCEPTION 'merge failed by the test';
        END IF;
        RETURN NEW;
      END $$`);
    await t.dataSource.query(`CREATE TRIGGER test_fail_merge BEFORE UPDATE ON requests FOR EACH ROW EXECUTE FUNCTION test_fail_merge()`);
  });
  afterAll(async () => {
    await t.close();
  });

  /** A document that does not require approval: its requests merge directly, submitted or not. */
  async function freeDocument(autoMerge: boolean): Promise<DocHandle> {
    return createDocument(t.http, owner, { fields: FIELDS, settings: { workflow: { requiresApproval: false, autoMerge } } });
  }

  /** An open request with one new row, submitted to `approver`; returns the ids. */
  async function submitted(doc: DocHandle, title = 'Draft'): Promise<{ requestId: string; rowId: string; instanceId: string }> {
    seq += 1;
    const rowId = `r${seq}`;
    const opened = await request(t.http).post(`${doc.path}/requests`).set(bearer(author)).send({ title }).expect(201);
    const requestId = opened.body.payload.id as string;
    await request(t.http).post(`${doc.path}/data?requestId=${requestId}`).set(bearer(author)).send({ id: rowId, values: { name: `Row ${seq}` } }).expect(201);
    const instance = await request(t.http).post(`${doc.path}/requests/${requestId}/submit-approval`).set(bearer(author)).send({ approvers: [approver.id] }).expect(201);
    return { requestId, rowId, instanceId: instance.body.payload.id };
  }

  async function approve(doc: DocHandle, instanceId: string, expected: number): Promise<request.Response> {
    return request(t.http).post(`${doc.path}/approvals/${instanceId}/approve`).set(bearer(approver)).send({ decision: 'approved', comment: 'fine' }).expect(expected);
  }

  async function instance(doc: DocHandle, instanceId: string): Promise<{ status: string; completedAt: string | null; nodes: { status: string; decidedAt: string | null }[] }> {
    return (await request(t.http).get(`${doc.path}/approval/${instanceId}`).set(bearer(owner)).expect(200)).body.payload;
  }

  async function events(instanceId: string): Promise<{ event_type: string; payload: Record<string, unknown>; triggered_by: string }[]> {
    return t.dataSource.query(`SELECT event_type, payload, triggered_by FROM outbox WHERE payload->>'instanceId' = $1 ORDER BY seq`, [instanceId]);
  }

  it('merging a request cancels its pending approval and records approval_canceled', async () => {
    const doc = await freeDocument(false);
    const { requestId, instanceId } = await submitted(doc);
    await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);

    expect(await instance(doc, instanceId)).toMatchObject({ status: 'canceled', completedAt: expect.any(String), nodes: [{ status: 'pending', decidedAt: null }] });
    const recorded = await events(instanceId);
    expect(recorded.map((event) => event.event_type)).toEqual(['approval_started', 'approval_canceled']);
    expect(recorded[1]).toMatchObject({
      triggered_by: owner.id,
      payload: { instanceId, requestId, status: 'canceled', currentNode: null, approver: null, decision: null, comment: null, completedAt: expect.any(String), reason: 'request-merged' },
    });
  });

  it('a decision after a direct merge is refused: the approval is unchanged and no event is recorded', async () => {
    const doc = await freeDocument(false);
    const { requestId, instanceId } = await submitted(doc);
    await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);
    const before = await instance(doc, instanceId);

    const refused = await approve(doc, instanceId, 409);
    expect(refused.body).toMatchObject({ success: false, code: 'INVALID_STATE', payload: { instanceId, status: 'canceled' } });
    expect(await instance(doc, instanceId)).toEqual(before);
    expect((await events(instanceId)).map((event) => event.event_type)).toEqual(['approval_started', 'approval_canceled']);
    expect(await lastMessageTo(t.dataSource, author.email, 'approval_completed')).toBeUndefined();
  });

  it('an approval left pending on a merged request (recorded before merges canceled approvals) cannot be decided', async () => {
    const doc = await freeDocument(true);
    const { requestId, instanceId } = await submitted(doc);
    await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);
    await t.dataSource.query(`UPDATE approval_instances SET status = 'pending', completed_at = NULL WHERE id = $1`, [instanceId]);
    await t.dataSource.query(`DELETE FROM outbox WHERE payload->>'instanceId' = $1 AND event_type = 'approval_canceled'`, [instanceId]);

    const refused = await approve(doc, instanceId, 409);
    expect(refused.body).toMatchObject({ code: 'INVALID_STATE', payload: { requestId, status: 'merged' } });
    expect(await instance(doc, instanceId)).toMatchObject({ status: 'pending', completedAt: null, nodes: [{ status: 'pending', decidedAt: null }] });
    expect((await events(instanceId)).map((event) => event.event_type)).toEqual(['approval_started']);
  });

  it('with autoMerge, a decision after a direct merge is refused before anything is written', async () => {
    const doc = await freeDocument(true);
    const { requestId, instanceId } = await submitted(doc);
    await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);

    const refused = await approve(doc, instanceId, 409);
    expect(refused.body.code).toBe('INVALID_STATE');
    expect(await instance(doc, instanceId)).toMatchObject({ status: 'canceled', nodes: [{ status: 'pending', decidedAt: null }] });
    expect((await events(instanceId)).map((event) => event.event_type)).toEqual(['approval_started', 'approval_canceled']);
  });

  it('with autoMerge, the completing approval merges the request; its approval stays approved', async () => {
    const doc = await freeDocument(true);
    const { requestId, rowId, instanceId } = await submitted(doc);

    const res = await approve(doc, instanceId, 200);
    expect(res.body.payload).toMatchObject({ status: 'approved', merge: { merged: true, revisionId: expect.any(String), conflicts: [], error: null } });
    await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(owner)).expect(200);
    expect((await request(t.http).get(`${doc.path}/requests/${requestId}`).set(bearer(owner)).expect(200)).body.payload.status).toBe('merged');
    expect((await instance(doc, instanceId)).status).toBe('approved');
    expect((await events(instanceId)).map((event) => event.event_type)).toEqual(['approval_started', 'approval_node_completed', 'approval_approved']);
  });

  it('with autoMerge, a merge failing for another reason than a conflict is reported in merge; the decision stands', async () => {
    const doc = await freeDocument(true);
    const { requestId, rowId, instanceId } = await submitted(doc, FAILING_MERGE);

    const res = await approve(doc, instanceId, 200);
    expect(res.body).toMatchObject({ success: true, payload: { status: 'approved', merge: { merged: false, revisionId: null, conflicts: [], error: { code: 'INTERNAL_ERROR', details: [] } } } });
    expect((await instance(doc, instanceId)).status).toBe('approved');
    expect((await events(instanceId)).map((event) => event.event_type)).toEqual(['approval_started', 'approval_node_completed', 'approval_approved']);
    expect((await request(t.http).get(`${doc.path}/requests/${requestId}`).set(bearer(owner)).expect(200)).body.payload.status).toBe('open');
    await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(owner)).expect(404);
  });
});
