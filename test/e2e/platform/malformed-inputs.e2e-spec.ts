import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * Findings of a malformed-input sweep over every operation of the OpenAPI document: each answer to a malformed
 * request is a 4xx envelope naming the field, never a 500, and nothing is written.
 */
describe('malformed inputs', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await registerUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  function refusal(res: request.Response, field: string): void {
    expect({ status: res.status, code: res.body.code, success: res.body.success }).toEqual({
      status: 400,
      code: 'VALIDATION_ERROR',
      success: false,
    });
    expect(problemsOf(res.body).map((problem: { field?: string }) => problem.field)).toContain(field);
  }

  it('refuses null for a sign-in field (it used to answer 500 for phone, and read a null code as a wrong one)', async () => {
    const ip = '198.51.100.201';
    const login = (body: Record<string, unknown>) =>
      request(t.http).post('/api/v1/auth/login').set('X-Forwarded-For', ip).send(body);
    refusal(await login({ phone: null, code: '123456' }), 'phone');
    refusal(await login({ phone: '+4915112345678', code: null }), 'code');
    refusal(await login({ email: null, password: owner.password }), 'email');
    refusal(await login({ email: owner.email, password: null }), 'password');
    // None of them counted as a failed sign-in: the right password still signs in.
    await login({ email: owner.email, password: owner.password }).expect(200);
  });

  it('refuses a null challengeToken of the second sign-in step (it used to answer 500)', async () => {
    const res = await request(t.http).post('/api/v1/auth/2fa/verify').send({ challengeToken: null, code: '123456' });
    refusal(res, 'challengeToken');
  });

  it('refuses id: null in the body of PUT /webhooks/{id} (it used to answer 500) and leaves the webhook as it was', async () => {
    const created = await request(t.http)
      .post('/api/v1/webhooks')
      .set(bearer(owner))
      .send({ name: 'hook', url: 'http://127.0.0.1:9/hook', events: ['*'] })
      .expect(201);
    const id = created.body.payload.id as string;
    refusal(await request(t.http).put(`/api/v1/webhooks/${id}`).set(bearer(owner)).send({ id: null, name: 'renamed' }), 'id');
    const read = await request(t.http).get(`/api/v1/webhooks/${id}`).set(bearer(owner)).expect(200);
    expect(read.body.payload.name).toBe('hook');
  });

  it('refuses a lookup or rollup of the wrong JSON type on a field of another type (it used to be dropped silently)', async () => {
    await request(t.http)
      .post('/api/v1/doc/tasks')
      .set(bearer(owner))
      .send({
        id: 't1',
        organizationId: owner.defaultOrganizationId,
        workspaceId: owner.defaultWorkspaceId,
        metadata: { fields: [{ id: 'title', name: 'Title', type: 'text' }] },
      })
      .expect(201);
    const path = '/api/v1/doc/tasks/t1/metadata';
    const before = (await request(t.http).get(path).set(bearer(owner)).expect(200)).body.payload;
    for (const [key, value] of [
      ['lookup', 5],
      ['lookup', 'title'],
      ['rollup', ['sum']],
      ['rollup', true],
    ] as const) {
      const res = await request(t.http)
        .put(path)
        .set(bearer(owner))
        .send({ fields: [{ id: 'title', name: 'Renamed', type: 'text', [key]: value }] });
      refusal(res, `fields[0].${key}`);
    }
    // A well-formed reference on a field of another type is still ignored (a type changed back may keep its old one).
    await request(t.http)
      .put(path)
      .set(bearer(owner))
      .send({ fields: [{ id: 'title', name: 'Title', type: 'text', lookup: null, rollup: null }] })
      .expect(200);
    const after = (await request(t.http).get(path).set(bearer(owner)).expect(200)).body.payload;
    expect(after.fields).toEqual(before.fields);
  });

  it('refuses PUT /settings without a body instead of resetting every setting ({} still asks for the defaults)', async () => {
    await request(t.http)
      .post('/api/v1/doc/guarded')
      .set(bearer(owner))
      .send({
        id: 'g1',
        organizationId: owner.defaultOrganizationId,
        workspaceId: owner.defaultWorkspaceId,
        metadata: { fields: [] },
        settings: { permissions: { delete: ['owner'] }, notifications: { onMerge: false } },
      })
      .expect(201);
    const path = '/api/v1/doc/guarded/g1/settings';
    const before = (await request(t.http).get(path).set(bearer(owner)).expect(200)).body.payload;
    expect(before.permissions).toEqual({ delete: ['owner'] });
    refusal(await request(t.http).put(path).set(bearer(owner)), 'body');
    refusal(await request(t.http).put(path).set(bearer(owner)).set('Content-Type', 'application/json'), 'body');
    expect((await request(t.http).get(path).set(bearer(owner)).expect(200)).body.payload).toEqual(before);
    await request(t.http).put(path).set(bearer(owner)).send({}).expect(200);
    expect((await request(t.http).get(path).set(bearer(owner)).expect(200)).body.payload.permissions).toEqual({});

    // The type-level settings likewise (PUT /doc/{docType}/setting).
    const typePath = `/api/v1/doc/guarded/setting?workspaceId=${owner.defaultWorkspaceId}`;
    await request(t.http).put(typePath).set(bearer(owner)).send({ permissions: { delete: ['owner'] } }).expect(200);
    const typeBefore = (await request(t.http).get(typePath).set(bearer(owner)).expect(200)).body.payload;
    refusal(await request(t.http).put(typePath).set(bearer(owner)), 'body');
    expect((await request(t.http).get(typePath).set(bearer(owner)).expect(200)).body.payload).toEqual(typeBefore);
  });

  it('refuses a batch row metadata or a sync change sourceRowId of the wrong type (they used to be dropped or cut silently)', async () => {
    const org = `/api/v1/organizations/${owner.defaultOrganizationId}`;
    const catalog = await request(t.http)
      .post(`${org}/catalogs`)
      .set(bearer(owner))
      .send({ name: 'Parts', catalogType: 'product', fields: [{ name: 'SKU', type: 'text' }] })
      .expect(201);
    const catalogPath = `${org}/catalogs/${catalog.body.payload.id}`;
    const revisionsBefore = (await request(t.http).get(`${catalogPath}/revisions`).set(bearer(owner)).expect(200)).body.payload.total;
    for (const metadata of ['x', 5, true, ['a']]) {
      const res = await request(t.http)
        .post(`${catalogPath}/rows/batch-update`)
        .set(bearer(owner))
        .send({ rows: [{ target: { row: 'k1' }, values: [{ fieldId: 'sku', value: { text: 'a' } }], metadata }] });
      refusal(res, 'rows[0].metadata');
    }
    expect((await request(t.http).get(`${catalogPath}/revisions`).set(bearer(owner)).expect(200)).body.payload.total).toBe(revisionsBefore);
    await request(t.http)
      .post(`${catalogPath}/rows/batch-update`)
      .set(bearer(owner))
      .send({ rows: [{ target: { row: 'k1' }, values: [{ fieldId: 'sku', value: { text: 'a' } }], metadata: { note: 'kept on nothing' } }] })
      .expect(200);

    const book = await request(t.http).post(`${org}/orderbooks`).set(bearer(owner)).send({ name: 'Orders' }).expect(201);
    const requestsPath = `${org}/orderbooks/${book.body.payload.id}/requests`;
    for (const sourceRowId of [5, { id: 'k1' }, 'k'.repeat(129)]) {
      const res = await request(t.http)
        .post(requestsPath)
        .set(bearer(owner))
        .send({ changes: [{ operation: 'create_row', values: [], sourceRowId }] });
      refusal(res, 'changes[0].sourceRowId');
    }
    expect((await request(t.http).get(requestsPath).set(bearer(owner)).expect(200)).body.payload.total).toBe(0);
  });

  it('refuses a query parameter of an operation that takes none, as unknown parameters of the others are', async () => {
    refusal(await request(t.http).get('/api/v1/users/me?fields=id').set(bearer(owner)), 'fields');
    // Express matches paths without regard to case: so does the refusal.
    refusal(await request(t.http).get('/API/V1/users/me?fields=id').set(bearer(owner)), 'fields');
    refusal(await request(t.http).patch('/api/v1/users/me?dryRun=true').set(bearer(owner)).send({ displayName: 'Changed' }), 'dryRun');
    const slug = `org-${Date.now()}`;
    refusal(
      await request(t.http)
        .post('/API/v1/organizations?requestId=r1')
        .set(bearer(owner))
        .send({ name: 'Org', slug, type: 'team' }),
      'requestId',
    );
    refusal(await request(t.http).get(`/api/v1/organizations/${owner.defaultOrganizationId}?include=members`).set(bearer(owner)), 'include');
    // Nothing was written by the refused writes.
    const me = await request(t.http).get('/api/v1/users/me').set(bearer(owner)).expect(200);
    expect(me.body.payload.displayName).not.toBe('Changed');
    const orgs = await request(t.http).get('/api/v1/users/me/organizations').set(bearer(owner)).expect(200);
    expect(JSON.stringify(orgs.body.payload)).not.toContain(slug);
    // Parameters read by the edge itself still work: the probes take any, documents their workspace context.
    await request(t.http).get('/health?probe=1').expect(200);
    await request(t.http)
      .post('/api/v1/doc/notes')
      .set(bearer(owner))
      .send({ id: 'n1', organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId, metadata: { fields: [] } })
      .expect(201);
    await request(t.http).get(`/api/v1/doc/notes/n1/revisions?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).expect(200);
  });
});
