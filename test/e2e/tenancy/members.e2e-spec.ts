import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addMember, API, bearer, createOrganization, organizationWithRoles, registerUser } from './tenancy-helpers.js';
import { problemsOf } from '../../utils/error-details.js';

describe('tenancy: organization members', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists members with paging and role, status and name/e-mail search filters', async () => {
    const { org, owner, admin, member, guest, memberIds } = await organizationWithRoles(t.http);
    const all = await request(t.http).get(`${API}/organizations/${org.id}/members?page=1&pageSize=2`).set(bearer(member)).expect(200);
    expect(all.body.payload).toMatchObject({ page: 1, pageSize: 2, total: 4, totalPages: 2 });
    expect(all.body.payload.items[0]).toMatchObject({ userId: owner.id, role: 'owner', status: 'active', organizationId: org.id, user: { id: owner.id, email: owner.email } });
    const second = await request(t.http).get(`${API}/organizations/${org.id}/members?page=2&pageSize=2`).set(bearer(member)).expect(200);
    expect(second.body.payload.items.map((m: { userId: string }) => m.userId)).toEqual([member.id, guest.id]);

    // Without paging parameters: page 1 of 20 (spec 8).
    const defaults = await request(t.http).get(`${API}/organizations/${org.id}/members`).set(bearer(member)).expect(200);
    expect(defaults.body.payload).toMatchObject({ page: 1, pageSize: 20, total: 4, totalPages: 1 });

    const admins = await request(t.http).get(`${API}/organizations/${org.id}/members?role=admin`).set(bearer(owner)).expect(200);
    expect(admins.body.payload.items.map((m: { id: string }) => m.id)).toEqual([memberIds.admin]);

    const byEmail = await request(t.http).get(`${API}/organizations/${org.id}/members`).query({ search: guest.email.toUpperCase().slice(0, 12) }).set(bearer(owner)).expect(200);
    expect(byEmail.body.payload.items.map((m: { userId: string }) => m.userId)).toEqual([guest.id]);
    const byName = await request(t.http).get(`${API}/organizations/${org.id}/members`).query({ search: admin.displayName }).set(bearer(owner)).expect(200);
    expect(byName.body.payload.items.map((m: { userId: string }) => m.userId)).toEqual([admin.id]);
    const wildcard = await request(t.http).get(`${API}/organizations/${org.id}/members`).query({ search: '%' }).set(bearer(owner)).expect(200);
    expect(wildcard.body.payload.total).toBe(0);

    await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.guest}`).set(bearer(owner)).send({ status: 'suspended' }).expect(200);
    const suspended = await request(t.http).get(`${API}/organizations/${org.id}/members?status=suspended`).set(bearer(owner)).expect(200);
    expect(suspended.body.payload.items.map((m: { userId: string }) => m.userId)).toEqual([guest.id]);

    const bad = await request(t.http).get(`${API}/organizations/${org.id}/members?role=king&status=x&pageSize=500`).set(bearer(owner)).expect(400);
    expect(problemsOf(bad.body).map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['role', 'status', 'pageSize']));
  });

  it('refuses the member list to guests (FORBIDDEN) and to outsiders (NOT_FOUND)', async () => {
    const { org, guest, outsider } = await organizationWithRoles(t.http);
    expect((await request(t.http).get(`${API}/organizations/${org.id}/members`).set(bearer(guest)).expect(403)).body.code).toBe('FORBIDDEN');
    expect((await request(t.http).get(`${API}/organizations/${org.id}/members`).set(bearer(outsider)).expect(404)).body.code).toBe('NOT_FOUND');
  });

  it('adds a member (default role member), gets it, and refuses duplicates and unknown users', async () => {
    const { org, admin } = await organizationWithRoles(t.http);
    const newcomer = await registerUser(t.http);
    const added = await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(admin)).send({ userId: newcomer.id }).expect(201);
    expect(added.body.payload).toMatchObject({ userId: newcomer.id, role: 'member', status: 'active', user: { email: newcomer.email, displayName: newcomer.displayName } });
    const got = await request(t.http).get(`${API}/organizations/${org.id}/members/${added.body.payload.id}`).set(bearer(admin)).expect(200);
    expect(got.body.payload.id).toBe(added.body.payload.id);

    const again = await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(admin)).send({ userId: newcomer.id, role: 'guest' }).expect(409);
    expect(again.body.code).toBe('ALREADY_MEMBER');
    const ghost = await request(t.http)
      .post(`${API}/organizations/${org.id}/members`)
      .set(bearer(admin))
      .send({ userId: '00000000-0000-4000-8000-000000000000' })
      .expect(400);
    expect(ghost.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'userId' } });
    const invalid = await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(admin)).send({ userId: 'nope', role: 'boss', extra: 1 }).expect(400);
    expect(problemsOf(invalid.body).map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['userId', 'role', 'extra']));
    const [count] = await t.dataSource.query(`SELECT count(*)::int AS n FROM organization_members WHERE organization_id = $1`, [org.id]);
    expect(count.n).toBe(5);
    const [event] = await t.dataSource.query(`SELECT payload FROM outbox WHERE event_type = 'member_added' AND payload->>'userId' = $1`, [newcomer.id]);
    expect(event.payload).toMatchObject({ userId: newcomer.id, role: 'member', via: 'direct' });
  });

  it('lets only owner and admin add, update and remove members', async () => {
    const { org, member, guest, memberIds } = await organizationWithRoles(t.http);
    const newcomer = await registerUser(t.http);
    for (const user of [member, guest]) {
      await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(user)).send({ userId: newcomer.id }).expect(403);
      await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.guest}`).set(bearer(user)).send({ role: 'admin' }).expect(403);
      await request(t.http).delete(`${API}/organizations/${org.id}/members/${memberIds.guest}`).set(bearer(user)).expect(403);
    }
    const [row] = await t.dataSource.query(`SELECT role FROM organization_members WHERE id = $1`, [memberIds.guest]);
    expect(row.role).toBe('guest');
  });

  it('protects the owner: an admin cannot promote to owner nor change or remove the owner', async () => {
    const { org, owner, admin, memberIds } = await organizationWithRoles(t.http);
    const members = await request(t.http).get(`${API}/organizations/${org.id}/members?role=owner`).set(bearer(owner)).expect(200);
    const ownerMemberId = members.body.payload.items[0].id;

    expect((await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.member}`).set(bearer(admin)).send({ role: 'owner' }).expect(403)).body.code).toBe('FORBIDDEN');
    await request(t.http).patch(`${API}/organizations/${org.id}/members/${ownerMemberId}`).set(bearer(admin)).send({ role: 'member' }).expect(403);
    await request(t.http).patch(`${API}/organizations/${org.id}/members/${ownerMemberId}`).set(bearer(admin)).send({ status: 'suspended' }).expect(403);
    await request(t.http).delete(`${API}/organizations/${org.id}/members/${ownerMemberId}`).set(bearer(admin)).expect(403);
    await request(t.http).delete(`${API}/organizations/${org.id}/members/${ownerMemberId}`).set(bearer(owner)).expect(403);
    const newcomer = await registerUser(t.http);
    await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(admin)).send({ userId: newcomer.id, role: 'owner' }).expect(403);
    // The owner is pointed to the transfer endpoint instead.
    const viaPatch = await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.member}`).set(bearer(owner)).send({ role: 'owner' }).expect(400);
    expect(viaPatch.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'role' } });

    const [ownerRow] = await t.dataSource.query(`SELECT owner_id FROM organizations WHERE id = $1`, [org.id]);
    expect(ownerRow.owner_id).toBe(owner.id);
    const roles = await t.dataSource.query(`SELECT role, count(*)::int AS n FROM organization_members WHERE organization_id = $1 GROUP BY role ORDER BY role`, [org.id]);
    expect(roles).toEqual([
      { role: 'admin', n: 1 },
      { role: 'guest', n: 1 },
      { role: 'member', n: 1 },
      { role: 'owner', n: 1 },
    ]);
  });

  it('updates role and status, and a suspended member can do nothing until reactivated', async () => {
    const { org, owner, admin, member, memberIds } = await organizationWithRoles(t.http);
    const promoted = await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.member}`).set(bearer(admin)).send({ role: 'admin' }).expect(200);
    expect(promoted.body.payload).toMatchObject({ role: 'admin', status: 'active' });
    const newcomer = await registerUser(t.http);
    await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(member)).send({ userId: newcomer.id }).expect(201);

    const suspended = await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.member}`).set(bearer(owner)).send({ status: 'suspended' }).expect(200);
    expect(suspended.body.payload.status).toBe('suspended');
    const other = await registerUser(t.http);
    await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(member)).send({ userId: other.id }).expect(403);
    await request(t.http).get(`${API}/organizations/${org.id}/members/${memberIds.admin}`).set(bearer(member)).expect(403);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces`).set(bearer(member)).send({ name: 'W', slug: 'w' }).expect(403);
    // Refused before anything of the organization is told: a real workspace id and an unknown one answer alike.
    const workspaces = await request(t.http).get(`${API}/organizations/${org.id}/workspaces`).set(bearer(owner)).expect(200);
    const realId = workspaces.body.payload.items[0].id as string;
    for (const suffix of ['', '/members', '/data-source-references']) {
      const [real, unknown] = await Promise.all(
        [realId, '3f0c2a4e-9b1d-4c7e-8a55-0d6f1e2b3c4d'].map((id) => request(t.http).get(`${API}/organizations/${org.id}/workspaces/${id}${suffix}`).set(bearer(member))),
      );
      expect({ suffix, status: unknown.status, code: unknown.body.code, message: unknown.body.message, details: unknown.body.details }).toEqual({
        suffix,
        status: 403,
        code: 'FORBIDDEN',
        message: real.body.message,
        details: real.body.details,
      });
      expect(real.status).toBe(403);
    }

    await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.member}`).set(bearer(admin)).send({ status: 'active' }).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}/members/${memberIds.admin}`).set(bearer(member)).expect(200);
    const bad = await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.member}`).set(bearer(admin)).send({ status: 'banned' }).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });

  it('PATCH takes the member as read: id and userId must be its own, the other read-only keys are ignored', async () => {
    const { org, owner, admin, memberIds } = await organizationWithRoles(t.http);
    const url = `${API}/organizations/${org.id}/members/${memberIds.member}`;
    const read = (await request(t.http).get(url).set(bearer(admin)).expect(200)).body.payload;
    const res = await request(t.http)
      .patch(url)
      .set(bearer(admin))
      .send({ ...read, role: 'guest', id: read.id.toUpperCase(), user: { ...read.user, displayName: 'Someone else' }, joinedAt: '2000-01-01T00:00:00.000Z' })
      .expect(200);
    expect(res.body.payload).toMatchObject({ ...read, role: 'guest', updatedAt: expect.any(String) });
    for (const [key, value] of [
      ['id', memberIds.admin],
      ['userId', admin.id],
    ] as const) {
      const moved = await request(t.http).patch(url).set(bearer(admin)).send({ ...read, role: 'admin', [key]: value }).expect(400);
      expect(moved.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(moved.body)).toEqual([{ field: key, reason: expect.stringMatching(/must be/) }]);
    }
    const rows = await t.dataSource.query(`SELECT id, role FROM organization_members WHERE id = ANY($1) ORDER BY role`, [[memberIds.member, memberIds.admin]]);
    expect(rows).toEqual([
      { id: memberIds.admin, role: 'admin' },
      { id: memberIds.member, role: 'guest' },
    ]);
    // The owner's record as read, sent back as it is, changes nothing (its role and status change only by transfer).
    const ownerRead = (await request(t.http).get(`${API}/organizations/${org.id}/members?role=owner`).set(bearer(owner)).expect(200)).body.payload.items[0];
    const same = await request(t.http).patch(`${API}/organizations/${org.id}/members/${ownerRead.id}`).set(bearer(admin)).send(ownerRead).expect(200);
    expect(same.body.payload).toEqual(ownerRead);
    const demoted = await request(t.http).patch(`${API}/organizations/${org.id}/members/${ownerRead.id}`).set(bearer(owner)).send({ ...ownerRead, role: 'admin' }).expect(403);
    expect(demoted.body.code).toBe('FORBIDDEN');
  });

  it('removes a member together with their workspace memberships', async () => {
    const { org, owner, admin, member, memberIds } = await organizationWithRoles(t.http);
    await request(t.http)
      .post(`${API}/organizations/${org.id}/workspaces/${org.defaultWorkspaceId}/members`)
      .set(bearer(owner))
      .send({ userId: member.id })
      .expect(201);
    await request(t.http).delete(`${API}/organizations/${org.id}/members/${memberIds.member}`).set(bearer(admin)).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}/members/${memberIds.member}`).set(bearer(admin)).expect(404);
    await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(member)).expect(404);
    const [ws] = await t.dataSource.query(`SELECT count(*)::int AS n FROM workspace_members WHERE user_id = $1 AND organization_id = $2`, [member.id, org.id]);
    expect(ws.n).toBe(0);
  });

  it('answers a member id of another organization with NOT_FOUND', async () => {
    const a = await organizationWithRoles(t.http);
    const otherOwner = await registerUser(t.http);
    const other = await createOrganization(t.http, otherOwner);
    const foreignMember = await addMember(t.http, otherOwner, other.id, await registerUser(t.http));
    for (const method of ['get', 'patch', 'delete'] as const) {
      const call = request(t.http)[method](`${API}/organizations/${a.org.id}/members/${foreignMember}`).set(bearer(a.owner));
      // DELETE takes no body (a body there is VALIDATION_ERROR); PATCH carries a valid one.
      const res = await (method === 'patch' ? call.send({ role: 'guest' }) : call);
      expect([method, res.status, res.body.code]).toEqual([method, 404, 'NOT_FOUND']);
    }
    await request(t.http).get(`${API}/organizations/${a.org.id}/members/not-a-uuid`).set(bearer(a.owner)).expect(404);
    const [row] = await t.dataSource.query(`SELECT role FROM organization_members WHERE id = $1`, [foreignMember]);
    expect(row.role).toBe('member');
  });
});
