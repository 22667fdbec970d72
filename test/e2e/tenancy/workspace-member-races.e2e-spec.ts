import request from 'supertest';
import { blockedSessions, holdLock } from '../../utils/row-locks.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addMember, API, bearer, createOrganization, registerUser, type TestUser } from './tenancy-helpers.js';

/**
 * Two workspace owners changing each other's membership at once (docs/tenancy.md, "Workspace members"): like the
 * organization's member changes, they run one after the other and each checks its caller's role as the other left
 * it, so the second finds its caller no longer an owner (403) instead of both succeeding. The test holds both target
 * member rows from its own connection, so both requests have passed their access check before either writes
 * unless the second waits for the first before it checks.
 */
describe('tenancy: workspace owners changing each other at once', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await registerUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  /** A private workspace with two workspace owners who are plain organization members. */
  async function twoOwners(): Promise<{ path: string; first: TestUser; second: TestUser; firstId: string; secondId: string }> {
    const org = await createOrganization(t.http, owner);
    const [first, second] = [await registerUser(t.http), await registerUser(t.http)];
    await addMember(t.http, owner, org.id, first);
    await addMember(t.http, owner, org.id, second);
    const ws = await request(t.http).post(`${API}/organizations/${org.id}/workspaces`).set(bearer(owner)).send({ name: 'Shared', slug: `s-${first.id.slice(0, 8)}`, visibility: 'private' }).expect(201);
    const path = `${API}/organizations/${org.id}/workspaces/${ws.body.payload.id}/members`;
    const firstId = (await request(t.http).post(path).set(bearer(owner)).send({ userId: first.id, role: 'owner' }).expect(201)).body.payload.id;
    const secondId = (await request(t.http).post(path).set(bearer(owner)).send({ userId: second.id, role: 'owner' }).expect(201)).body.payload.id;
    return { path, first, second, firstId, secondId };
  }

  async function atOnce(ids: string[], a: () => request.Test, b: () => request.Test): Promise<number[]> {
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM workspace_members WHERE id = ANY($1::uuid[]) FOR UPDATE`, [ids]);
    const first = Promise.resolve(a());
    await blockedSessions(t.dataSource, 1);
    const second = Promise.resolve(b());
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    return (await Promise.all([first, second])).map((res) => res.status);
  }

  it('two owners demoting each other: one succeeds, the other is FORBIDDEN, one owner is left', async () => {
    const { path, first, second, firstId, secondId } = await twoOwners();
    const statuses = await atOnce(
      [firstId, secondId],
      () => request(t.http).patch(`${path}/${secondId}`).set(bearer(first)).send({ role: 'viewer' }),
      () => request(t.http).patch(`${path}/${firstId}`).set(bearer(second)).send({ role: 'viewer' }),
    );
    expect(statuses).toEqual([200, 403]);
    const roles = await t.dataSource.query<Array<{ role: string }>>(`SELECT role FROM workspace_members WHERE id = ANY($1::uuid[]) ORDER BY role`, [
      [firstId, secondId],
    ]);
    expect(roles.map((row) => row.role)).toEqual(['owner', 'viewer']);
  });

  it('two owners removing each other: one succeeds, the other is refused, one owner is left', async () => {
    const { path, first, second, firstId, secondId } = await twoOwners();
    const statuses = await atOnce(
      [firstId, secondId],
      () => request(t.http).delete(`${path}/${secondId}`).set(bearer(first)),
      () => request(t.http).delete(`${path}/${firstId}`).set(bearer(second)),
    );
    expect(statuses[0]).toBe(200);
    // The second caller is no longer in the workspace: a private workspace answers it as unknown (404) or FORBIDDEN.
    expect([403, 404]).toContain(statuses[1]);
    const left = await t.dataSource.query<Array<{ id: string }>>(`SELECT id FROM workspace_members WHERE id = ANY($1::uuid[])`, [[firstId, secondId]]);
    expect(left.map((row) => row.id)).toEqual([firstId]);
  });
});
