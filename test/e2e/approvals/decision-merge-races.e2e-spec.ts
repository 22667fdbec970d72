import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, type DocHandle, newUser } from '../documents/documents.fixtures.js';
import { listen } from '../realtime/realtime.fixtures.js';

/**
 * The approval that completes an instance and a merge of its request sent at once (docs/approvals.md): they run one
 * after the other. The request is merged exactly once — by the auto-merge or by the merge — and the other call answers
 * what it would one after the other (the merge 409 APPROVAL_REQUIRED or INVALID_STATE, the decision's `merge` an
 * error), never a deadlock surfacing as 409 CONFLICT "concurrent change, retry".
 */
interface Answer {
  status: number;
  body: { code?: string; payload: { merge?: { merged: boolean; error: { code: string } | null } | null } };
}

describe('approvals: a decision racing a merge of its request', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let approver: TestUser;
  let doc: DocHandle;
  let advisory: DocHandle;

  const send = async (user: TestUser, path: string, body: object = {}): Promise<Answer> => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { ...bearer(user), 'Content-Type': 'application/json', Connection: 'close' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  };

  beforeAll(async () => {
    t = await createTestApp();
    base = await listen(t);
    owner = await newUser(t.http);
    approver = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, approver, 'editor');
    doc = await createDocument(t.http, owner, {
      fields: [{ id: 'name', name: 'Name', type: 'text' }],
      settings: { workflow: { requiresApproval: true, autoMerge: true } },
    });
    advisory = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('merges the request once; neither call answers CONFLICT', async () => {
    for (let round = 0; round < 6; round += 1) {
      const rowId = `r${round}`;
      const created = await request(t.http)
        .post(`${doc.path}/requests`)
        .set(bearer(owner))
        .send({ title: `Row ${round}`, changes: [{ type: 'row-create', target: { kind: 'row', rowId }, newValue: [{ fieldId: 'name', value: { text: rowId } }] }] })
        .expect(201);
      const requestId = created.body.payload.id as string;
      const instance = await request(t.http)
        .post(`${doc.path}/requests/${requestId}/submit-approval`)
        .set(bearer(owner))
        .send({ approvers: [approver.id] })
        .expect(201);
      const [decision, merge] = await Promise.all([
        send(approver, `${doc.path}/approval/${instance.body.payload.id}/decision?result=approved`),
        send(owner, `${doc.path}/requests/${requestId}/merge`),
      ]);
      expect(decision.status).toBe(200);
      expect([200, 409]).toContain(merge.status);
      if (merge.status === 409) {
        expect(['APPROVAL_REQUIRED', 'INVALID_STATE']).toContain(merge.body.code);
      }
      // Exactly one of them merged it.
      const merges = [merge.status === 200, decision.body.payload.merge?.merged === true].filter(Boolean);
      expect(merges).toHaveLength(1);
      if (merge.status === 200) {
        expect(decision.body.payload.merge).toMatchObject({ merged: false, error: { code: 'INVALID_STATE' } });
      }
      const read = await request(t.http).get(`${doc.path}/requests/${requestId}`).set(bearer(owner)).expect(200);
      expect(read.body.payload.status).toBe('merged');
      await request(t.http).get(`${doc.path}/data/${rowId}`).set(bearer(owner)).expect(200);
    }
  });

  // A submission takes the request row, then inserts the instance, whose foreign key to the document waits for a merge
  // holding the document row while that merge waits for the request: the same deadlock as a decision's.
  it('a submission racing a merge (approval advisory): one after the other, neither answers CONFLICT', async () => {
    for (let round = 0; round < 12; round += 1) {
      const rowId = `s${round}`;
      const created = await request(t.http)
        .post(`${advisory.path}/requests`)
        .set(bearer(owner))
        .send({ title: `Row ${round}`, changes: [{ type: 'row-create', target: { kind: 'row', rowId }, newValue: [{ fieldId: 'name', value: { text: rowId } }] }] })
        .expect(201);
      const requestId = created.body.payload.id as string;
      const [submission, merge] = await Promise.all([
        send(owner, `${advisory.path}/requests/${requestId}/submit-approval`, { approvers: [approver.id] }),
        send(owner, `${advisory.path}/requests/${requestId}/merge`),
      ]);
      expect(merge.status).toBe(200);
      // Submitted first: the merge cancels the instance; merged first: the submission meets a merged request.
      if (submission.status === 201) {
        const id = (submission.body.payload as unknown as { id: string }).id;
        const instance = await request(t.http).get(`${advisory.path}/approval/${id}`).set(bearer(owner)).expect(200);
        expect(instance.body.payload.status).toBe('canceled');
      } else {
        expect(submission.status).toBe(409);
        expect(submission.body.code).toBe('INVALID_STATE');
      }
    }
  });
});
