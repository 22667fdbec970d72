import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * Tenancy changes need a first-party session: an API key (whatever its scopes) may read the caller's
 * organizations and workspaces but cannot create, change or delete them.
 */
describe('tenancy: delegated credentials', () => {
  let t: TestApp;
  let owner: TestUser;
  let apiKey: string;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await registerUser(t.http);
    const created = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(owner))
      .send({ name: 'integration', scopes: ['doc:read', 'doc:write', 'data:read', 'data:write'] })
      .expect(201);
    apiKey = created.body.payload.key;
    expect(apiKey).toEqual(expect.any(String));
  });
  afterAll(async () => {
    await t.close();
  });

  it('lets an API key read the organization', async () => {
    const res = await request(t.http).get(`/api/v1/organizations/${owner.defaultOrganizationId}`).set('X-API-Key', apiKey).expect(200);
    expect(res.body.payload.id).toBe(owner.defaultOrganizationId);
  });

  it('refuses an API key creating an organization or a workspace, and nothing is created', async () => {
    const org = await request(t.http)
      .post('/api/v1/organizations')
      .set('X-API-Key', apiKey)
      .send({ name: 'Keyed', slug: `keyed-${Date.now()}`, type: 'team' })
      .expect(403);
    expect(org.body.code).toBe('FORBIDDEN');
    const ws = await request(t.http)
      .post(`/api/v1/organizations/${owner.defaultOrganizationId}/workspaces`)
      .set('X-API-Key', apiKey)
      .send({ name: 'Keyed', slug: 'keyed' })
      .expect(403);
    expect(ws.body.code).toBe('FORBIDDEN');
    const rows = await t.dataSource.query(`SELECT count(*)::int AS n FROM workspaces WHERE slug = 'keyed'`);
    expect(rows[0].n).toBe(0);
  });

  it('still lets the signed-in owner do the same', async () => {
    await request(t.http)
      .post(`/api/v1/organizations/${owner.defaultOrganizationId}/workspaces`)
      .set(bearer(owner))
      .send({ name: 'Keyed', slug: 'keyed' })
      .expect(201);
  });
});
