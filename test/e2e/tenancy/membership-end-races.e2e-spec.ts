import request from 'supertest';
import { blockedSessions, holdLock } from '../../utils/row-locks.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addMember, API, bearer, createOrganization, registerUser, type TestUser } from './tenancy-helpers.js';

/**
 * Writes that check a membership and then store something the membership change cleans up, racing that change.
 * A user's defaults stay places they may use (docs/tenancy.md, "Users' defaults"), and a person who becomes a member
 * has no pending invitation left ("Join requests"): the change clears them, so a write checked before the change
 * must not store them after it. Each test makes the write wait between its check and its insert (a lock held from
 * the test's own connection) while the membership changes; without the write holding what it checked, the change
 * commits meanwhile and the write stores what it cleared.
 */
describe('tenancy: writes racing the membership change that clears them', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await registerUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  async function defaultsOf(userId: string): Promise<{ org: string | null; ws: string | null }> {
    const [row] = await t.dataSource.query<Array<{ org: string | null; ws: string | null }>>(
      `SELECT default_organization_id AS org, default_workspace_id AS ws FROM users WHERE id = $1`,
      [userId],
    );
    return row;
  }

  /** Sends `patch`, waits until it queues behind the held user row, then `ending`; releases once both wait or `ending` is done. */
  async function patchWhile(
    user: TestUser,
    patch: () => Promise<request.Response>,
    ending: () => Promise<request.Response>,
  ): Promise<[request.Response, request.Response]> {
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, [user.id]);
    // A supertest request starts when it is awaited: Promise.resolve sends it now.
    const patched = Promise.resolve(patch());
    await blockedSessions(t.dataSource, 1);
    let ended = false;
    const end = ending().then((res) => {
      ended = true;
      return res;
    });
    await blockedSessions(t.dataSource, 2, () => ended);
    await lock.release();
    return Promise.all([patched, end]);
  }

  it('leaving the organization while it is made the default leaves no default pointing into it', async () => {
    const org = await createOrganization(t.http, owner);
    const member = await registerUser(t.http);
    await addMember(t.http, owner, org.id, member);

    const [patched, left] = await patchWhile(
      member,
      () => request(t.http).patch(`${API}/users/me`).set(bearer(member)).send({ defaultOrganizationId: org.id }),
      () => request(t.http).post(`${API}/organizations/${org.id}/leave`).set(bearer(member)),
    );

    expect(left.status).toBe(200);
    expect([200, 400]).toContain(patched.status);
    const defaults = await defaultsOf(member.id);
    expect(defaults.org).not.toBe(org.id);
    expect(defaults.ws).not.toBe(org.defaultWorkspaceId);
  });

  it('removal from a private workspace while it is made the default leaves no default pointing at it', async () => {
    const org = await createOrganization(t.http, owner);
    const member = await registerUser(t.http);
    await addMember(t.http, owner, org.id, member);
    const wsPath = `${API}/organizations/${org.id}/workspaces`;
    const ws = await request(t.http).post(wsPath).set(bearer(owner)).send({ name: 'Private', slug: `p-${member.id.slice(0, 8)}`, visibility: 'private' }).expect(201);
    const workspaceId: string = ws.body.payload.id;
    const added = await request(t.http).post(`${wsPath}/${workspaceId}/members`).set(bearer(owner)).send({ userId: member.id, role: 'editor' }).expect(201);
    await request(t.http).patch(`${API}/users/me`).set(bearer(member)).send({ defaultOrganizationId: org.id, defaultWorkspaceId: null }).expect(200);

    const [patched, removed] = await patchWhile(
      member,
      () => request(t.http).patch(`${API}/users/me`).set(bearer(member)).send({ defaultWorkspaceId: workspaceId }),
      () => request(t.http).delete(`${wsPath}/${workspaceId}/members/${added.body.payload.id}`).set(bearer(owner)),
    );

    expect(removed.status).toBe(200);
    expect([200, 400]).toContain(patched.status);
    expect((await defaultsOf(member.id)).ws).not.toBe(workspaceId);
  });

  it('an invitation created while its invitee is added directly is not left pending for a member', async () => {
    const org = await createOrganization(t.http, owner);
    const invitee = await registerUser(t.http);
    // An uncommitted pending invitation for the same e-mail: the invitation below passes its checks (it cannot see
    // this one) and then waits on the pending-invitation unique index until the test rolls it back.
    const blocker = t.dataSource.createQueryRunner();
    await blocker.connect();
    await blocker.startTransaction();
    await blocker.query(
      `INSERT INTO organization_invitations (organization_id, email, role, status, token_hash, invited_by, expires_at)
       VALUES ($1, $2, 'member', 'pending', md5(random()::text), $3, now() + interval '1 day')`,
      [org.id, invitee.email, owner.id],
    );
    const invited = Promise.resolve(request(t.http).post(`${API}/organizations/${org.id}/invitations`).set(bearer(owner)).send({ email: invitee.email }));
    await blockedSessions(t.dataSource, 1);
    let addDone = false;
    const added = Promise.resolve(request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(owner)).send({ userId: invitee.id })).then((res) => {
      addDone = true;
      return res;
    });
    await blockedSessions(t.dataSource, 2, () => addDone);
    await blocker.rollbackTransaction();
    await blocker.release();
    const [invitation, member] = await Promise.all([invited, added]);

    expect(member.status).toBe(201);
    expect([201, 409]).toContain(invitation.status);
    const pending = await t.dataSource.query(`SELECT id FROM organization_invitations WHERE organization_id = $1 AND status = 'pending'`, [org.id]);
    expect(pending).toEqual([]);
  });
});
