import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { lastMessageTo } from '../../factories/notifications.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, bearer, organizationWithRoles, registerUser, type TestUser } from './tenancy-helpers.js';
import { problemsOf } from '../../utils/error-details.js';

describe('tenancy: join requests', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function openOrganization(defaultJoinRole = 'member'): Promise<Awaited<ReturnType<typeof organizationWithRoles>>> {
    const setup = await organizationWithRoles(t.http);
    await request(t.http)
      .patch(`${API}/organizations/${setup.org.id}`)
      .set(bearer(setup.owner))
      .send({ settings: { allowJoinRequests: true, defaultJoinRole } })
      .expect(200);
    return setup;
  }

  async function ask(user: TestUser, organizationId: string, message = 'Let me in'): Promise<string> {
    const res = await request(t.http).post(`${API}/organizations/${organizationId}/join-requests`).set(bearer(user)).send({ message });
    if (res.status !== 201) {
      throw new Error(`join request failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body.payload.id;
  }

  it('accepts requests to an organization created with the spec fields alone (allowJoinRequests defaults to true)', async () => {
    const owner = await registerUser(t.http);
    const created = await request(t.http).post(`${API}/organizations`).set(bearer(owner)).send({ name: 'Plain', slug: `plain-${randomUUID().slice(0, 8)}`, type: 'team' }).expect(201);
    expect(created.body.payload.settings).toMatchObject({ allowJoinRequests: true });
    const applicant = await registerUser(t.http);
    const id = await ask(applicant, created.body.payload.id);
    await request(t.http).post(`${API}/organizations/${created.body.payload.id}/join-requests/${id}/approve`).set(bearer(owner)).send({}).expect(200);
  });

  it('refuses requests when the organization closed them (allowJoinRequests false) exactly as for an unknown organization', async () => {
    const { org, owner, member, outsider } = await organizationWithRoles(t.http);
    await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(owner)).send({ settings: { allowJoinRequests: false } }).expect(200);
    const archived = await openOrganization();
    await request(t.http).delete(`${API}/organizations/${archived.org.id}`).set(bearer(archived.owner)).expect(200);
    const post = (organizationId: string) => request(t.http).post(`${API}/organizations/${organizationId}/join-requests`).set(bearer(outsider)).send({});
    const closed = await post(org.id).expect(404);
    expect(closed.body).toMatchObject({ code: 'NOT_FOUND', payload: null, details: { reason: 'organization not found' } });
    for (const other of [randomUUID(), archived.org.id, 'not-a-uuid']) {
      expect((await post(other).expect(404)).body).toEqual(closed.body);
    }
    // Members learn nothing new: they still get ALREADY_MEMBER first.
    expect((await request(t.http).post(`${API}/organizations/${org.id}/join-requests`).set(bearer(member)).send({}).expect(409)).body.code).toBe('ALREADY_MEMBER');
    const [n] = await t.dataSource.query(`SELECT count(*)::int AS n FROM organization_join_requests WHERE organization_id = $1`, [org.id]);
    expect(n.n).toBe(0);
  });

  it('creates a pending request; a second pending one and requests by members are refused', async () => {
    const { org, member, outsider } = await openOrganization();
    const res = await request(t.http).post(`${API}/organizations/${org.id}/join-requests`).set(bearer(outsider)).send({ message: 'Hi' }).expect(201);
    expect(res.body.payload).toMatchObject({ organizationId: org.id, userId: outsider.id, status: 'pending', message: 'Hi', applicant: { email: outsider.email } });
    const second = await request(t.http).post(`${API}/organizations/${org.id}/join-requests`).set(bearer(outsider)).send({}).expect(409);
    expect(second.body).toMatchObject({ code: 'ALREADY_EXISTS', payload: { joinRequestId: res.body.payload.id } });
    expect((await request(t.http).post(`${API}/organizations/${org.id}/join-requests`).set(bearer(member)).send({}).expect(409)).body.code).toBe('ALREADY_MEMBER');
    const tooLong = await request(t.http).post(`${API}/organizations/${org.id}/join-requests`).set(bearer(await registerUser(t.http))).send({ message: 'x'.repeat(2001) }).expect(400);
    expect(tooLong.body.details.field).toBe('message');
    await request(t.http).post(`${API}/organizations/00000000-0000-4000-8000-000000000000/join-requests`).set(bearer(outsider)).send({}).expect(404);
  });

  it('approves with the default role, creates the member and notifies the applicant', async () => {
    const { org, admin, outsider } = await openOrganization('guest');
    const id = await ask(outsider, org.id);
    const res = await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/approve`).set(bearer(admin)).send({ reviewNote: 'Welcome' }).expect(200);
    expect(res.body.payload).toMatchObject({ status: 'approved', role: 'guest', reviewNote: 'Welcome', reviewedBy: admin.id, reviewedAt: expect.any(String) });
    const detail = await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(outsider)).expect(200);
    expect(detail.body.payload.role).toBe('guest');
    const mail = await lastMessageTo(t.dataSource, outsider.email, 'join_request_approved');
    expect(mail).toMatchObject({ data: { joinRequestId: id, status: 'approved', role: 'guest' } });
    expect(mail?.body).toContain('Welcome');
    const again = await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/approve`).set(bearer(admin)).send({}).expect(409);
    expect(again.body).toMatchObject({ code: 'INVALID_STATE', payload: { status: 'approved' } });
  });

  it('names the organization in decision e-mails even when its stored displayName is blank', async () => {
    const { org, admin, outsider } = await openOrganization();
    // A blank display name stored before the API refused it.
    await t.dataSource.query(`UPDATE organizations SET display_name = '' WHERE id = $1`, [org.id]);
    const id = await ask(outsider, org.id);
    await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/reject`).set(bearer(admin)).send({ reviewNote: 'Not now' }).expect(200);
    const mail = await lastMessageTo(t.dataSource, outsider.email, 'join_request_rejected');
    expect(mail?.subject).toBe('Your request to join Acme was declined');
    expect(mail?.body).toContain('Your request to join Acme was rejected.');
  });

  it('settles a pending request as approved when the applicant is added directly or accepts an invitation', async () => {
    const { org, owner, admin } = await openOrganization();
    const [direct, invited] = await Promise.all([registerUser(t.http), registerUser(t.http)]);
    const directId = await ask(direct, org.id);
    await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(admin)).send({ userId: direct.id, role: 'guest' }).expect(201);
    const settled = await request(t.http).get(`${API}/organizations/${org.id}/join-requests/${directId}`).set(bearer(owner)).expect(200);
    expect(settled.body.payload).toMatchObject({ status: 'approved', role: 'guest', reviewedBy: admin.id, reviewedAt: expect.any(String) });
    expect((await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${directId}/approve`).set(bearer(owner)).send({}).expect(409)).body.code).toBe(
      'INVALID_STATE',
    );

    const invitedId = await ask(invited, org.id);
    const invitation = await request(t.http).post(`${API}/organizations/${org.id}/invitations`).set(bearer(owner)).send({ email: invited.email, role: 'member' }).expect(201);
    await request(t.http).post(`${API}/invitations/${invitation.body.payload.token}/accept`).set(bearer(invited)).expect(200);
    const [row] = await t.dataSource.query(`SELECT status, role, reviewed_by FROM organization_join_requests WHERE id = $1`, [invitedId]);
    expect(row).toEqual({ status: 'approved', role: 'member', reviewed_by: owner.id });
  });

  it('approving a pending request of someone who is already a member settles it without touching the membership', async () => {
    const { org, owner, member } = await openOrganization('guest');
    const applicant = await registerUser(t.http);
    const id = await ask(applicant, org.id);
    // A request left pending from before members added another way settled it.
    const applicantMemberId = (await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(owner)).send({ userId: applicant.id, role: 'admin' }).expect(201)).body.payload.id;
    await t.dataSource.query(`UPDATE organization_join_requests SET status = 'pending', role = NULL, reviewed_by = NULL, reviewed_at = NULL WHERE id = $1`, [id]);
    const res = await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/approve`).set(bearer(owner)).send({ role: 'member' }).expect(200);
    expect(res.body.payload).toMatchObject({ status: 'approved', role: 'admin', reviewedBy: owner.id });
    const kept = await request(t.http).get(`${API}/organizations/${org.id}/members/${applicantMemberId}`).set(bearer(member)).expect(200);
    expect(kept.body.payload).toMatchObject({ role: 'admin', status: 'active' });
  });

  it('approves with an explicit role; an admin cannot grant owner', async () => {
    const { org, owner, admin } = await openOrganization();
    const applicant = await registerUser(t.http);
    const id = await ask(applicant, org.id);
    await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/approve`).set(bearer(admin)).send({ role: 'owner' }).expect(403);
    await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/approve`).set(bearer(owner)).send({ role: 'owner' }).expect(400);
    await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/approve`).set(bearer(owner)).send({ role: 'chief' }).expect(400);
    const [pending] = await t.dataSource.query(`SELECT status FROM organization_join_requests WHERE id = $1`, [id]);
    expect(pending.status).toBe('pending');
    const res = await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/approve`).set(bearer(owner)).send({ role: 'admin' }).expect(200);
    expect(res.body.payload.role).toBe('admin');
  });

  it('rejects with a required review note and notifies the applicant; the applicant may ask again', async () => {
    const { org, owner, outsider } = await openOrganization();
    const id = await ask(outsider, org.id);
    const missing = await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/reject`).set(bearer(owner)).send({}).expect(400);
    expect(missing.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(problemsOf(missing.body)).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'reviewNote' })]));
    // The first reason says what is wrong with a missing note.
    expect(problemsOf(missing.body)[0]).toEqual(expect.objectContaining({ field: 'reviewNote', reason: 'reviewNote is required' }));
    await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/reject`).set(bearer(owner)).send({ reviewNote: '' }).expect(400);
    const blank = await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/reject`).set(bearer(owner)).send({ reviewNote: '   ' }).expect(400);
    expect(problemsOf(blank.body)).toEqual([expect.objectContaining({ field: 'reviewNote', reason: 'reviewNote must not be blank' })]);
    const res = await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/reject`).set(bearer(owner)).send({ reviewNote: 'Not now' }).expect(200);
    expect(res.body.payload).toMatchObject({ status: 'rejected', reviewNote: 'Not now', reviewedBy: owner.id, role: null });
    const mail = await lastMessageTo(t.dataSource, outsider.email, 'join_request_rejected');
    expect(mail).toMatchObject({ data: { joinRequestId: id, status: 'rejected', reviewNote: 'Not now' } });
    await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(outsider)).expect(404);
    expect((await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/approve`).set(bearer(owner)).send({}).expect(409)).body.code).toBe('INVALID_STATE');
    await ask(outsider, org.id, 'Please reconsider');
  });

  it('lets only the applicant cancel, only while pending', async () => {
    const { org, owner, member, outsider } = await openOrganization();
    const id = await ask(outsider, org.id);
    expect((await request(t.http).delete(`${API}/organizations/${org.id}/join-requests/${id}`).set(bearer(owner)).expect(403)).body.code).toBe('FORBIDDEN');
    await request(t.http).delete(`${API}/organizations/${org.id}/join-requests/${id}`).set(bearer(member)).expect(403);
    const stranger = await registerUser(t.http);
    await request(t.http).delete(`${API}/organizations/${org.id}/join-requests/${id}`).set(bearer(stranger)).expect(404);
    const res = await request(t.http).delete(`${API}/organizations/${org.id}/join-requests/${id}`).set(bearer(outsider)).expect(200);
    expect(res.body.payload).toMatchObject({ status: 'cancelled', cancelledAt: expect.any(String) });
    expect((await request(t.http).delete(`${API}/organizations/${org.id}/join-requests/${id}`).set(bearer(outsider)).expect(409)).body.code).toBe('INVALID_STATE');
    expect((await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${id}/approve`).set(bearer(owner)).send({}).expect(409)).body.code).toBe('INVALID_STATE');
  });

  it('lists for owner/admin with status filter; get for owner, admin and the applicant', async () => {
    const { org, owner, admin, member, guest, outsider } = await openOrganization();
    const first = await ask(outsider, org.id);
    const second = await ask(await registerUser(t.http), org.id);
    await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${second}/reject`).set(bearer(owner)).send({ reviewNote: 'no' }).expect(200);
    const all = await request(t.http).get(`${API}/organizations/${org.id}/join-requests`).set(bearer(admin)).expect(200);
    expect(all.body.payload).toMatchObject({ total: 2, page: 1, pageSize: 20, totalPages: 1 });
    const pending = await request(t.http).get(`${API}/organizations/${org.id}/join-requests?status=pending`).set(bearer(owner)).expect(200);
    expect(pending.body.payload.items.map((r: { id: string }) => r.id)).toEqual([first]);
    for (const user of [member, guest]) {
      await request(t.http).get(`${API}/organizations/${org.id}/join-requests`).set(bearer(user)).expect(403);
      await request(t.http).get(`${API}/organizations/${org.id}/join-requests/${first}`).set(bearer(user)).expect(403);
      await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${first}/approve`).set(bearer(user)).send({}).expect(403);
      await request(t.http).post(`${API}/organizations/${org.id}/join-requests/${first}/reject`).set(bearer(user)).send({ reviewNote: 'x' }).expect(403);
    }
    await request(t.http).get(`${API}/organizations/${org.id}/join-requests`).set(bearer(outsider)).expect(404);
    await request(t.http).get(`${API}/organizations/${org.id}/join-requests/${first}`).set(bearer(outsider)).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}/join-requests/${first}`).set(bearer(admin)).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}/join-requests/${second}`).set(bearer(outsider)).expect(404);
  });

  it('answers a join request of another organization with NOT_FOUND', async () => {
    const a = await openOrganization();
    const b = await openOrganization();
    const id = await ask(b.outsider, b.org.id);
    await request(t.http).get(`${API}/organizations/${a.org.id}/join-requests/${id}`).set(bearer(a.owner)).expect(404);
    await request(t.http).post(`${API}/organizations/${a.org.id}/join-requests/${id}/approve`).set(bearer(a.owner)).send({}).expect(404);
    await request(t.http).post(`${API}/organizations/${a.org.id}/join-requests/${id}/reject`).set(bearer(a.owner)).send({ reviewNote: 'x' }).expect(404);
    const [row] = await t.dataSource.query(`SELECT status FROM organization_join_requests WHERE id = $1`, [id]);
    expect(row.status).toBe('pending');
  });

  it('answers a stranger the same NOT_FOUND for any request id, whether or not the organization exists', async () => {
    const { org, outsider } = await openOrganization();
    const id = await ask(outsider, org.id);
    const archived = await openOrganization();
    const archivedId = await ask(archived.outsider, archived.org.id);
    await request(t.http).delete(`${API}/organizations/${archived.org.id}`).set(bearer(archived.owner)).expect(200);
    const stranger = await registerUser(t.http);
    const paths = [
      `${org.id}/join-requests/${id}`,
      `${org.id}/join-requests/${randomUUID()}`,
      `${randomUUID()}/join-requests/${randomUUID()}`,
      `${archived.org.id}/join-requests/${archivedId}`,
      `not-a-uuid/join-requests/${id}`,
    ];
    const expected = { success: false, code: 'NOT_FOUND', message: expect.objectContaining({ en: 'The resource does not exist' }), payload: null, details: { reason: 'join request not found' } };
    const bodies = [];
    for (const path of paths) {
      for (const method of ['get', 'delete'] as const) {
        const res = await request(t.http)[method](`${API}/organizations/${path}`).set(bearer(stranger)).expect(404);
        expect(res.body).toEqual(expected);
        bodies.push(res.body);
      }
    }
    expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
    const [row] = await t.dataSource.query(`SELECT status FROM organization_join_requests WHERE id = $1`, [id]);
    expect(row.status).toBe('pending');
  });

  it('refuses join requests to an archived organization with NOT_FOUND', async () => {
    const { org, owner, outsider } = await openOrganization();
    const id = await ask(outsider, org.id);
    await request(t.http).delete(`${API}/organizations/${org.id}`).set(bearer(owner)).expect(200);
    await request(t.http).post(`${API}/organizations/${org.id}/join-requests`).set(bearer(await registerUser(t.http))).send({}).expect(404);
    await request(t.http).get(`${API}/organizations/${org.id}/join-requests/${id}`).set(bearer(outsider)).expect(404);
    await request(t.http).delete(`${API}/organizations/${org.id}/join-requests/${id}`).set(bearer(outsider)).expect(404);
  });
});
