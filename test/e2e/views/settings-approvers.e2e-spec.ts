import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, API, bearer, createDocument, newUser, PRODUCT_FIELDS } from '../documents/documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

const UNKNOWN_USER = '00000000-0000-4000-8000-000000000000';

/**
 * `workflow.approvers` names people who can act: each must be a user who may read the document under the settings
 * being written. An unknown id, a non-member or someone `permissions.view` shuts out could never decide, and under
 * `requiresApproval` every request would wait for them — refused with VALIDATION_ERROR naming the entry, on every
 * way settings are written (document creation, PUT /settings, a settings-update change of POST /requests).
 */
describe('settings: workflow.approvers must be users who can read the document', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;

  const documentCount = async (): Promise<number> => Number((await t.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM documents`))[0]?.n);
  const fields = (res: request.Response): string[] => problemsOf(res.body).map((detail: { field: string }) => detail.field);

  beforeAll(async () => {
    t = await createTestApp();
    [owner, editor, viewer, stranger] = await Promise.all([1, 2, 3, 4].map(() => newUser(t.http)));
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a document created with approvers who cannot read it, and creates nothing', async () => {
    const before = await documentCount();
    const res = await request(t.http)
      .post(`${API}/doc/products`)
      .set(bearer(owner))
      .send({
        id: 'gated-stranger',
        organizationId: owner.defaultOrganizationId,
        workspaceId: owner.defaultWorkspaceId,
        metadata: { fields: PRODUCT_FIELDS },
        settings: { workflow: { requiresApproval: true, approvers: [viewer.id, stranger.id, UNKNOWN_USER] } },
      })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(res.body)).toEqual([
      expect.objectContaining({ field: 'workflow.approvers[1]', reason: 'not a user who can read the document' }),
      expect.objectContaining({ field: 'workflow.approvers[2]', reason: 'not a user who can read the document' }),
    ]);
    expect(await documentCount()).toBe(before);
    await request(t.http).get(`${API}/doc/products/gated-stranger`).set(bearer(owner)).expect(404);
  });

  it('refuses PUT /settings naming a stranger, an unknown id or someone permissions.view shuts out; the settings stay', async () => {
    const doc = await createDocument(t.http, owner, { settings: { workflow: { requiresApproval: true, approvers: [editor.id] } } });
    const strangerRes = await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ workflow: { requiresApproval: true, approvers: [editor.id, stranger.id] } }).expect(400);
    expect(fields(strangerRes)).toEqual(['workflow.approvers[1]']);
    const unknown = await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ workflow: { approvers: [UNKNOWN_USER] } }).expect(400);
    expect(fields(unknown)).toEqual(['workflow.approvers[0]']);
    // The viewer is a member, but the settings being written shut them out of the document.
    const shutOut = await request(t.http)
      .put(`${doc.path}/settings`)
      .set(bearer(owner))
      .send({ permissions: { view: ['role:editor'] }, workflow: { requiresApproval: true, approvers: [viewer.id, editor.id] } })
      .expect(400);
    expect(fields(shutOut)).toEqual(['workflow.approvers[0]']);
    const settings = await request(t.http).get(`${doc.path}/settings`).set(bearer(owner)).expect(200);
    expect(settings.body.payload.workflow).toEqual({ requiresApproval: true, approvers: [editor.id] });

    // Readers are accepted: a viewer (approvers need read rights only) and the owner (a manager).
    const ok = await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ workflow: { requiresApproval: true, approvers: [viewer.id, owner.id] } }).expect(200);
    expect(ok.body.payload.workflow.approvers).toEqual([viewer.id, owner.id]);
  });

  it('refuses a settings-update change of POST /requests naming a stranger, and records no request', async () => {
    const doc = await createDocument(t.http, owner);
    const requestCount = async (): Promise<number> => (await request(t.http).get(`${doc.path}/requests`).set(bearer(owner)).expect(200)).body.payload.total;
    const before = await requestCount();
    const res = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'gate', changes: [{ type: 'settings-update', target: { kind: 'settings' }, newValue: { workflow: { requiresApproval: true, approvers: [stranger.id] } } }] })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(fields(res)).toEqual(['changes[0].workflow.approvers[0]']);
    expect(await requestCount()).toBe(before);
  });
});
