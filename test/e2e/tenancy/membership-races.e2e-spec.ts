import request from 'supertest';
import { blockedSessions, holdLock } from '../../utils/row-locks.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, bearer, organizationWithRoles, registerUser, type TestUser } from './tenancy-helpers.js';

/**
 * Membership changes that race each other. Each test holds a row lock from its own connection so the requests
 * queue up behind it and then run one after another in the worst order, instead of hoping a race happens.
 */
describe('tenancy: concurrent membership changes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function owners(organizationId: string): Promise<{ members: string[]; ownerId: string }> {
    const members = await t.dataSource.query<Array<{ user_id: string }>>(
      `SELECT user_id FROM organization_members WHERE organization_id = $1 AND role = 'owner'`,
      [organizationId],
    );
    const [org] = await t.dataSource.query<Array<{ owner_id: string }>>(
      `SELECT owner_id FROM organizations WHERE id = $1`,
      [organizationId],
    );
    return { members: members.map((m) => m.user_id), ownerId: org.owner_id };
  }

  function send(
    method: 'post' | 'delete',
    path: string,
    by: TestUser,
    body?: object,
  ): Promise<request.Response> {
    const call = request(t.http)[method](`${API}${path}`).set(bearer(by));
    return Promise.resolve(body ? call.send(body) : call);
  }

  /** An organization with its roles and an outsider whose join request to it is pending. */
  async function pendingJoinRequest(): Promise<
    Awaited<ReturnType<typeof organizationWithRoles>> & { applicant: TestUser; requestId: string }
  > {
    const setup = await organizationWithRoles(t.http);
    const applicant = await registerUser(t.http);
    const asked = await send('post', `/organizations/${setup.org.id}/join-requests`, applicant, {});
    expect(asked.status).toBe(201);
    return { ...setup, applicant, requestId: asked.body.payload.id };
  }

  async function memberships(organizationId: string, userId: string): Promise<Array<{ role: string }>> {
    return t.dataSource.query(`SELECT role FROM organization_members WHERE organization_id = $1 AND user_id = $2`, [
      organizationId,
      userId,
    ]);
  }

  async function joinRequests(
    organizationId: string,
    userId: string,
  ): Promise<Array<{ status: string; role: string | null; reviewed_by: string | null }>> {
    return t.dataSource.query(
      `SELECT status, role, reviewed_by FROM organization_join_requests WHERE organization_id = $1 AND user_id = $2`,
      [organizationId, userId],
    );
  }

  /** Starts `first`, waits until it queues behind the held organization lock, then `second`; then releases. */
  async function inOrder(
    organizationId: string,
    first: () => Promise<request.Response>,
    second: () => Promise<request.Response>,
  ): Promise<[request.Response, request.Response]> {
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [organizationId]);
    const a = first();
    await blockedSessions(t.dataSource, 1);
    const b = second();
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    return Promise.all([a, b]);
  }

  it('two concurrent ownership transfers leave exactly one owner; the second is FORBIDDEN', async () => {
    const { org, owner, admin, member } = await organizationWithRoles(t.http);
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [org.id]);
    const toAdmin = send('post', `/organizations/${org.id}/transfer-ownership`, owner, { userId: admin.id });
    const toMember = send('post', `/organizations/${org.id}/transfer-ownership`, owner, {
      userId: member.id,
    });
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    const results = await Promise.all([toAdmin, toMember]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 403]);
    expect(results.find((r) => r.status === 403)?.body.code).toBe('FORBIDDEN');
    const winner = results[0].status === 200 ? admin : member;
    expect(await owners(org.id)).toEqual({ members: [winner.id], ownerId: winner.id });
    const previous = await t.dataSource.query(
      `SELECT role FROM organization_members WHERE organization_id = $1 AND user_id = $2`,
      [org.id, owner.id],
    );
    expect(previous[0].role).toBe('admin');
  });

  it('the previous owner cannot archive the organization once a concurrent transfer committed', async () => {
    const { org, owner, admin } = await organizationWithRoles(t.http);
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [org.id]);
    const transfer = send('post', `/organizations/${org.id}/transfer-ownership`, owner, { userId: admin.id });
    await blockedSessions(t.dataSource, 1);
    const archive = send('delete', `/organizations/${org.id}`, owner);
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    expect((await transfer).status).toBe(200);
    const archived = await archive;
    expect(archived.status).toBe(403);
    expect(archived.body.code).toBe('FORBIDDEN');
    const [row] = await t.dataSource.query(`SELECT archived_at FROM organizations WHERE id = $1`, [org.id]);
    expect(row.archived_at).toBeNull();
  });

  it('the new owner leaving while ownership is transferred to them never leaves the organization without an owner', async () => {
    const { org, owner, admin } = await organizationWithRoles(t.http);
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [org.id]);
    const transfer = send('post', `/organizations/${org.id}/transfer-ownership`, owner, { userId: admin.id });
    await blockedSessions(t.dataSource, 1);
    const leave = send('post', `/organizations/${org.id}/leave`, admin);
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    const [transferred, left] = await Promise.all([transfer, leave]);
    // Whichever runs first wins; the other is refused (owner cannot leave / new owner must be a member).
    expect([transferred.status, left.status].sort()).toEqual(
      transferred.status === 200 ? [200, 403] : [200, 400],
    );
    const now = await owners(org.id);
    expect(now.members).toEqual([now.ownerId]);
  });

  it('leave racing a workspace-member add: the add waits and then finds no organization membership (400)', async () => {
    const { org, owner, member } = await organizationWithRoles(t.http);
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [org.id]);
    const leave = send('post', `/organizations/${org.id}/leave`, member);
    await blockedSessions(t.dataSource, 1);
    const add = send('post', `/organizations/${org.id}/workspaces/${org.defaultWorkspaceId}/members`, owner, {
      userId: member.id,
      role: 'owner',
    });
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    expect((await leave).status).toBe(200);
    const added = await add;
    expect(added.status).toBe(400);
    expect(added.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'userId' } });
    const rows = await t.dataSource.query(
      `SELECT 1 FROM workspace_members WHERE organization_id = $1 AND user_id = $2`,
      [org.id, member.id],
    );
    expect(rows).toEqual([]);
  });

  it('a workspace-member add that got there first is deleted by the leave that waited for it', async () => {
    const { org, owner, member } = await organizationWithRoles(t.http);
    // The add's insert checks its foreign key to the workspace row: hold that row so the add stops right there,
    // after it has checked the organization membership, while the member leaves.
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE`, [
      org.defaultWorkspaceId,
    ]);
    const add = send('post', `/organizations/${org.id}/workspaces/${org.defaultWorkspaceId}/members`, owner, {
      userId: member.id,
      role: 'owner',
    });
    await blockedSessions(t.dataSource, 1);
    let leaveDone = false;
    const leave = send('post', `/organizations/${org.id}/leave`, member).then((res) => {
      leaveDone = true;
      return res;
    });
    await blockedSessions(t.dataSource, 2, () => leaveDone);
    await lock.release();
    const [added, left] = await Promise.all([add, leave]);
    expect(left.status).toBe(200);
    expect([201, 400]).toContain(added.status);
    const orphans = await t.dataSource.query(
      `SELECT wm.id FROM workspace_members wm
        WHERE wm.organization_id = $1
          AND NOT EXISTS (SELECT 1 FROM organization_members om WHERE om.organization_id = wm.organization_id AND om.user_id = wm.user_id)`,
      [org.id],
    );
    expect(orphans).toEqual([]);
  });

  it('removal racing a workspace-member add: the add waits and then finds no organization membership (400)', async () => {
    const { org, owner, member, memberIds } = await organizationWithRoles(t.http);
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [org.id]);
    const remove = send('delete', `/organizations/${org.id}/members/${memberIds.member}`, owner);
    await blockedSessions(t.dataSource, 1);
    const add = send('post', `/organizations/${org.id}/workspaces/${org.defaultWorkspaceId}/members`, owner, {
      userId: member.id,
      role: 'editor',
    });
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    expect((await remove).status).toBe(200);
    const added = await add;
    expect(added.status).toBe(400);
    expect(added.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'userId' } });
    const rows = await t.dataSource.query(
      `SELECT 1 FROM workspace_members WHERE organization_id = $1 AND user_id = $2`,
      [org.id, member.id],
    );
    expect(rows).toEqual([]);
  });

  it('a join-request approval racing a direct add of the applicant: the approval wins, the add answers ALREADY_MEMBER', async () => {
    const { org, owner, admin, applicant, requestId } = await pendingJoinRequest();
    const [approved, added] = await inOrder(
      org.id,
      () => send('post', `/organizations/${org.id}/join-requests/${requestId}/approve`, owner, { role: 'admin' }),
      () => send('post', `/organizations/${org.id}/members`, admin, { userId: applicant.id, role: 'guest' }),
    );
    expect(approved.status).toBe(200);
    expect(approved.body.payload).toMatchObject({ status: 'approved', role: 'admin', reviewedBy: owner.id });
    expect(added.status).toBe(409);
    expect(added.body).toMatchObject({ code: 'ALREADY_MEMBER', details: { field: 'userId' } });
    expect(await memberships(org.id, applicant.id)).toEqual([{ role: 'admin' }]);
  });

  it('a direct add racing the approval of the applicant\'s request: the add wins and settles it, the approval answers INVALID_STATE', async () => {
    const { org, owner, admin, applicant, requestId } = await pendingJoinRequest();
    const [added, approved] = await inOrder(
      org.id,
      () => send('post', `/organizations/${org.id}/members`, admin, { userId: applicant.id, role: 'guest' }),
      () => send('post', `/organizations/${org.id}/join-requests/${requestId}/approve`, owner, { role: 'admin' }),
    );
    expect(added.status).toBe(201);
    expect(approved.status).toBe(409);
    expect(approved.body).toMatchObject({ code: 'INVALID_STATE', payload: { status: 'approved' } });
    expect(await memberships(org.id, applicant.id)).toEqual([{ role: 'guest' }]);
    expect(await joinRequests(org.id, applicant.id)).toEqual([{ status: 'approved', role: 'guest', reviewed_by: admin.id }]);
  });

  it('an invitation acceptance racing a direct add of the invitee: the add answers ALREADY_MEMBER, not a constraint name', async () => {
    const { org, owner, admin } = await organizationWithRoles(t.http);
    const invitee = await registerUser(t.http);
    const invited = await send('post', `/organizations/${org.id}/invitations`, owner, { email: invitee.email, role: 'member' });
    expect(invited.status).toBe(201);
    const [accepted, added] = await inOrder(
      org.id,
      () => send('post', `/invitations/${invited.body.payload.token}/accept`, invitee),
      () => send('post', `/organizations/${org.id}/members`, admin, { userId: invitee.id, role: 'guest' }),
    );
    expect(accepted.status).toBe(200);
    expect(added.status).toBe(409);
    expect(added.body).toMatchObject({ code: 'ALREADY_MEMBER', details: { field: 'userId' } });
    expect(await memberships(org.id, invitee.id)).toEqual([{ role: 'member' }]);
  });

  it('a join request sent while its applicant is being added is settled by the add that waited for it', async () => {
    const { org, admin } = await organizationWithRoles(t.http);
    const applicant = await registerUser(t.http);
    const [asked, added] = await inOrder(
      org.id,
      () => send('post', `/organizations/${org.id}/join-requests`, applicant, {}),
      () => send('post', `/organizations/${org.id}/members`, admin, { userId: applicant.id, role: 'guest' }),
    );
    expect(asked.status).toBe(201);
    expect(added.status).toBe(201);
    expect(await joinRequests(org.id, applicant.id)).toEqual([{ status: 'approved', role: 'guest', reviewed_by: admin.id }]);
  });

  it('two adds of one user to a workspace at once: one 201, the other ALREADY_MEMBER with memberId, not ALREADY_EXISTS', async () => {
    const { org, owner, member } = await organizationWithRoles(t.http);
    const workspaceId = org.defaultWorkspaceId;
    const path = `/organizations/${org.id}/workspaces/${workspaceId}/members`;
    // Holding the workspace row lets both adds pass their checks and queue at the insert's foreign-key check.
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE`, [workspaceId]);
    const first = send('post', path, owner, { userId: member.id });
    await blockedSessions(t.dataSource, 1);
    const second = send('post', path, owner, { userId: member.id, role: 'viewer' });
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    const results = await Promise.all([first, second]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const added = results.find((r) => r.status === 201)!;
    expect(results.find((r) => r.status === 409)!.body).toMatchObject({
      code: 'ALREADY_MEMBER',
      details: { field: 'userId' },
      payload: { memberId: added.body.payload.id },
    });
    const rows = await t.dataSource.query(`SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2`, [workspaceId, member.id]);
    expect(rows).toEqual([{ role: added.body.payload.role }]);
  });

  it('a join request that waited for the add of its applicant answers ALREADY_MEMBER and leaves nothing pending', async () => {
    const { org, admin } = await organizationWithRoles(t.http);
    const applicant = await registerUser(t.http);
    const [added, asked] = await inOrder(
      org.id,
      () => send('post', `/organizations/${org.id}/members`, admin, { userId: applicant.id, role: 'guest' }),
      () => send('post', `/organizations/${org.id}/join-requests`, applicant, {}),
    );
    expect(added.status).toBe(201);
    expect(asked.status).toBe(409);
    expect(asked.body.code).toBe('ALREADY_MEMBER');
    expect(await joinRequests(org.id, applicant.id)).toEqual([]);
  });
});
