import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createTestDatabase } from '../../utils/test-database.js';
import { addToWorkspace, API, bearer, createDocument, type DocHandle, newUser } from '../documents/documents.fixtures.js';
import type { TestUser } from '../../factories/users.factory.js';

/** The documented bound (docs/auth.md, "Caches"): AUTH_CACHE_TTL_MS, 5 s by default; NOTIFY makes it near-immediate. */
const BOUND_MS = 5000;

async function refusedWithin(probe: () => Promise<number>, allowed: number[], boundMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const status = await probe();
    if (!allowed.includes(status)) {
      return Date.now() - started;
    }
    if (Date.now() - started > boundMs + 1000) {
      throw new Error(`still answered ${status} after ${boundMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Verified tokens and access rights are cached per instance; revocations and role changes must still take
 * effect at once on the instance that made them and within the documented bound on every other instance.
 */
describe('identity: cached sessions and rights are invalidated on revoke and role change', () => {
  let database: { url: string; drop: () => Promise<void> };
  let a: TestApp;
  let b: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    database = await createTestDatabase();
    a = await createTestApp({}, { databaseUrl: database.url });
    b = await createTestApp({}, { databaseUrl: database.url });
    owner = await newUser(a.http);
    doc = await createDocument(a.http, owner);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  it('refuses a removed member on the same instance at once and on another instance within the bound', async () => {
    const member = await newUser(a.http);
    await addToWorkspace(a.dataSource, owner, member, 'editor');
    // Warm both instances' caches with the member's rights.
    await request(a.http).get(`${doc.path}/data`).set(bearer(member)).expect(200);
    await request(b.http).get(`${doc.path}/data`).set(bearer(member)).expect(200);

    const members = await request(a.http).get(`${API}/organizations/${owner.defaultOrganizationId}/workspaces/${owner.defaultWorkspaceId}/members`).set(bearer(owner)).expect(200);
    const membership = members.body.payload.items.find((item: { userId: string }) => item.userId === member.id);
    await request(a.http)
      .delete(`${API}/organizations/${owner.defaultOrganizationId}/workspaces/${owner.defaultWorkspaceId}/members/${membership.id}`)
      .set(bearer(owner))
      .expect(200);
    // Without a context the document is simply no longer among those the member can read.
    const local = await request(a.http).get(`${doc.path}/data`).set(bearer(member));
    expect(local.status).toBe(404);
    expect(local.body.code).toBe('DOC_NOT_FOUND');
    const elapsed = await refusedWithin(async () => (await request(b.http).get(`${doc.path}/data`).set(bearer(member))).status, [200], BOUND_MS);
    expect(elapsed).toBeLessThanOrEqual(BOUND_MS);
  });

  it('refuses the token of an ended session on the same instance at once and on another within the bound', async () => {
    const user = await newUser(a.http);
    await request(a.http).get(`${API}/users/me`).set(bearer(user)).expect(200);
    await request(b.http).get(`${API}/users/me`).set(bearer(user)).expect(200);
    await request(a.http).delete(`${API}/auth/sessions/${user.sessionId}`).set(bearer(user)).expect(200);
    expect((await request(a.http).get(`${API}/users/me`).set(bearer(user))).status).toBe(401);
    const elapsed = await refusedWithin(async () => (await request(b.http).get(`${API}/users/me`).set(bearer(user))).status, [200], BOUND_MS);
    expect(elapsed).toBeLessThanOrEqual(BOUND_MS);
  });

  it('refuses a revoked API key at once on both instances', async () => {
    const user = await newUser(a.http);
    const created = await request(a.http).post(`${API}/api-keys`).set(bearer(user)).send({ name: 'k', scopes: ['doc:read'] }).expect(201);
    const key = { token: created.body.payload.key as string };
    await request(a.http).get(`${API}/users/me`).set(bearer(key)).expect(200);
    await request(b.http).get(`${API}/users/me`).set(bearer(key)).expect(200);
    await request(a.http).post(`${API}/api-keys/${created.body.payload.id}/revoke`).set(bearer(user)).expect(200);
    expect((await request(a.http).get(`${API}/users/me`).set(bearer(key))).status).toBe(401);
    const elapsed = await refusedWithin(async () => (await request(b.http).get(`${API}/users/me`).set(bearer(key))).status, [200], BOUND_MS);
    expect(elapsed).toBeLessThanOrEqual(BOUND_MS);
  });

  it('applies a role change (editor to viewer) to writes at once', async () => {
    const editor = await newUser(a.http);
    await addToWorkspace(a.dataSource, owner, editor, 'editor');
    await request(a.http).post(`${doc.path}/data`).set(bearer(editor)).send({ values: { name: 'by editor' } }).expect(201);
    const members = await request(a.http).get(`${API}/organizations/${owner.defaultOrganizationId}/workspaces/${owner.defaultWorkspaceId}/members`).set(bearer(owner)).expect(200);
    const membership = members.body.payload.items.find((item: { userId: string }) => item.userId === editor.id);
    await request(a.http)
      .patch(`${API}/organizations/${owner.defaultOrganizationId}/workspaces/${owner.defaultWorkspaceId}/members/${membership.id}`)
      .set(bearer(owner))
      .send({ role: 'viewer' })
      .expect(200);
    await request(a.http).post(`${doc.path}/data`).set(bearer(editor)).send({ values: { name: 'refused' } }).expect(403);
    await refusedWithin(async () => (await request(b.http).post(`${doc.path}/data`).set(bearer(editor)).send({ values: { name: 'x' } })).status, [201], BOUND_MS);
  });
});
