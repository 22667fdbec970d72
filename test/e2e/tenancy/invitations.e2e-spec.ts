import request from 'supertest';
import { lastMessageTo } from '../../factories/notifications.js';
import { InvitationExpiryJob } from '../../../src/modules/tenancy/jobs/invitation-expiry.job.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, bearer, organizationWithRoles, registerUser, type TestUser } from './tenancy-helpers.js';
import { problemsOf } from '../../utils/error-details.js';

describe('tenancy: invitations', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function invite(by: TestUser, organizationId: string, email: string, body: Record<string, unknown> = {}): Promise<{ id: string; token: string }> {
    const res = await request(t.http).post(`${API}/organizations/${organizationId}/invitations`).set(bearer(by)).send({ email, ...body });
    if (res.status !== 201) {
      throw new Error(`invite failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const message = await lastMessageTo(t.dataSource, email, 'invitation');
    return { id: res.body.payload.id, token: String(message?.data.token) };
  }

  it('names the organization in the invitation e-mail: its displayName, or its name when that is blank', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(owner)).send({ displayName: 'Acme Inc.' }).expect(200);
    const first = `named-${Date.now()}@example.test`;
    await invite(owner, org.id, first);
    expect(await lastMessageTo(t.dataSource, first, 'invitation')).toMatchObject({
      subject: expect.stringContaining(' to Acme Inc. on Quire'),
      data: { organizationName: 'Acme Inc.' },
    });
    // A blank display name stored before the API refused it (the API no longer accepts one).
    await t.dataSource.query(`UPDATE organizations SET display_name = '  ' WHERE id = $1`, [org.id]);
    const second = `blank-${Date.now()}@example.test`;
    await invite(owner, org.id, second);
    const mail = await lastMessageTo(t.dataSource, second, 'invitation');
    expect(mail).toMatchObject({ subject: expect.stringContaining(' to Acme on Quire'), data: { organizationName: 'Acme' } });
    expect(mail?.body).toContain('to join Acme as member');
  });

  it('creates an invitation (defaults member, 7 days), e-mails the token and shows it to the invitee', async () => {
    const { org, admin } = await organizationWithRoles(t.http);
    const invitee = await registerUser(t.http);
    const res = await request(t.http)
      .post(`${API}/organizations/${org.id}/invitations`)
      .set(bearer(admin))
      .send({ email: invitee.email.toUpperCase(), message: 'Join us!' })
      .expect(201);
    const invitation = res.body.payload;
    expect(invitation).toMatchObject({ organizationId: org.id, role: 'member', status: 'pending', message: 'Join us!', invitedBy: admin.id, inviter: { id: admin.id } });
    const days = (Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt)) / 86_400_000;
    expect(days).toBeCloseTo(7, 1);

    const mail = await lastMessageTo(t.dataSource, invitee.email, 'invitation');
    expect(mail).toMatchObject({ channel: 'email', kind: 'invitation', data: { invitationId: invitation.id, organizationId: org.id, role: 'member' } });
    const token = String(mail?.data.token);
    expect(mail?.body).toContain(token);
    // Shown once to the inviter too (docs/tenancy.md), never in a read of the invitation.
    expect(invitation).toMatchObject({ token, url: expect.stringMatching(new RegExp(`/api/v1/invitations/${token}$`)) });
    const reread = await request(t.http).get(`${API}/organizations/${org.id}/invitations/${invitation.id}`).set(bearer(admin)).expect(200);
    expect(reread.body.payload).not.toHaveProperty('token');
    const [stored] = await t.dataSource.query(`SELECT token_hash FROM organization_invitations WHERE id = $1`, [invitation.id]);
    expect(stored.token_hash).not.toBe(token);

    const details = await request(t.http).get(`${API}/invitations/${token}`).set(bearer(invitee)).expect(200);
    expect(details.body.payload).toMatchObject({ id: invitation.id, status: 'pending', role: 'member', message: 'Join us!', organization: { id: org.id, slug: org.slug }, invitedByName: admin.displayName });
    const [event] = await t.dataSource.query(`SELECT organization_id FROM outbox WHERE event_type = 'invitation_created' AND payload->>'invitationId' = $1`, [invitation.id]);
    expect(event.organization_id).toBe(org.id);
  });

  it('validates the body, refuses members and pending duplicates, and lets only owner/admin invite', async () => {
    const { org, owner, member, guest } = await organizationWithRoles(t.http);
    const bad = await request(t.http)
      .post(`${API}/organizations/${org.id}/invitations`)
      .set(bearer(owner))
      .send({ email: 'not-mail', role: 'owner', expiresInDays: 0 })
      .expect(400);
    expect(problemsOf(bad.body).map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['email', 'role', 'expiresInDays']));
    const already = await request(t.http).post(`${API}/organizations/${org.id}/invitations`).set(bearer(owner)).send({ email: member.email }).expect(409);
    expect(already.body.code).toBe('ALREADY_MEMBER');
    await invite(owner, org.id, 'dup@example.test');
    const dup = await request(t.http).post(`${API}/organizations/${org.id}/invitations`).set(bearer(owner)).send({ email: 'DUP@example.test' }).expect(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
    for (const user of [member, guest]) {
      expect((await request(t.http).post(`${API}/organizations/${org.id}/invitations`).set(bearer(user)).send({ email: 'x@example.test' }).expect(403)).body.code).toBe('FORBIDDEN');
    }
    const [n] = await t.dataSource.query(`SELECT count(*)::int AS n FROM organization_invitations WHERE organization_id = $1`, [org.id]);
    expect(n.n).toBe(1);
  });

  it('lists with status filter and shows a single invitation to owner, admin and the inviter only', async () => {
    const { org, owner, admin, member, outsider } = await organizationWithRoles(t.http);
    const a = await invite(admin, org.id, 'a@example.test', { role: 'guest' });
    const b = await invite(owner, org.id, 'b@example.test', { expiresInDays: 30 });
    await request(t.http).delete(`${API}/organizations/${org.id}/invitations/${b.id}`).set(bearer(owner)).expect(200);
    const list = await request(t.http).get(`${API}/organizations/${org.id}/invitations?pageSize=10`).set(bearer(admin)).expect(200);
    expect(list.body.payload).toMatchObject({ total: 2, page: 1, pageSize: 10 });
    const pending = await request(t.http).get(`${API}/organizations/${org.id}/invitations?status=pending`).set(bearer(owner)).expect(200);
    expect(pending.body.payload.items.map((i: { id: string }) => i.id)).toEqual([a.id]);
    // Without paging parameters: page 1 of 20 (spec 8).
    expect(pending.body.payload).toMatchObject({ page: 1, pageSize: 20, total: 1, totalPages: 1 });
    const revoked = await request(t.http).get(`${API}/organizations/${org.id}/invitations?status=revoked`).set(bearer(owner)).expect(200);
    expect(revoked.body.payload.items).toEqual([expect.objectContaining({ id: b.id, status: 'revoked', revokedBy: owner.id })]);
    await request(t.http).get(`${API}/organizations/${org.id}/invitations`).set(bearer(member)).expect(403);
    await request(t.http).get(`${API}/organizations/${org.id}/invitations?status=lost`).set(bearer(owner)).expect(400);

    await request(t.http).get(`${API}/organizations/${org.id}/invitations/${a.id}`).set(bearer(admin)).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}/invitations/${a.id}`).set(bearer(owner)).expect(200);
    expect((await request(t.http).get(`${API}/organizations/${org.id}/invitations/${a.id}`).set(bearer(member)).expect(403)).body.code).toBe('FORBIDDEN');
    await request(t.http).get(`${API}/organizations/${org.id}/invitations/${a.id}`).set(bearer(outsider)).expect(404);
  });

  it('accepts by token when the e-mail matches: member created with the invited role; accepting twice is refused', async () => {
    const { org, owner, outsider } = await organizationWithRoles(t.http);
    const invitee = await registerUser(t.http);
    const { id, token } = await invite(owner, org.id, invitee.email, { role: 'admin' });

    const wrong = await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(outsider)).expect(403);
    expect(wrong.body).toMatchObject({ code: 'FORBIDDEN', details: { reason: expect.stringContaining('e-mail') } });
    await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(outsider)).expect(404);

    const res = await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(invitee)).expect(200);
    expect(res.body.payload).toMatchObject({
      invitation: { id, status: 'accepted' },
      member: { userId: invitee.id, role: 'admin', status: 'active', organizationId: org.id },
    });
    const detail = await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(invitee)).expect(200);
    expect(detail.body.payload.role).toBe('admin');
    const record = await request(t.http).get(`${API}/organizations/${org.id}/invitations/${id}`).set(bearer(owner)).expect(200);
    expect(record.body.payload).toMatchObject({ status: 'accepted', acceptedBy: invitee.id, acceptedAt: expect.any(String) });

    const twice = await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(invitee)).expect(409);
    expect(twice.body).toMatchObject({ code: 'INVITATION_ALREADY_ACCEPTED', payload: { status: 'accepted' } });
    expect((await request(t.http).post(`${API}/invitations/${token}/decline`).set(bearer(invitee)).expect(409)).body.code).toBe('INVITATION_ALREADY_ACCEPTED');
    const revokeAccepted = await request(t.http).delete(`${API}/organizations/${org.id}/invitations/${id}`).set(bearer(owner)).expect(409);
    expect(revokeAccepted.body.code).toBe('INVITATION_ALREADY_ACCEPTED');
  });

  it('revokes the invitation of someone who became a member another way: it cannot let them back in after a removal', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const invitee = await registerUser(t.http);
    const { id, token } = await invite(owner, org.id, invitee.email, { role: 'admin' });
    const added = await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(owner)).send({ userId: invitee.id, role: 'guest' }).expect(201);
    const record = await request(t.http).get(`${API}/organizations/${org.id}/invitations/${id}`).set(bearer(owner)).expect(200);
    expect(record.body.payload).toMatchObject({ status: 'revoked', revokedBy: owner.id, revokedAt: expect.any(String) });
    const res = await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(invitee)).expect(410);
    expect(res.body.code).toBe('INVITATION_REVOKED');
    await request(t.http).delete(`${API}/organizations/${org.id}/members/${added.body.payload.id}`).set(bearer(owner)).expect(200);
    expect((await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(invitee)).expect(410)).body.code).toBe('INVITATION_REVOKED');
    const members = await t.dataSource.query(`SELECT role FROM organization_members WHERE organization_id = $1 AND user_id = $2`, [org.id, invitee.id]);
    expect(members).toEqual([]);
  });

  it('an overdue invitation of someone who became a member another way ends expired, not revoked', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const invitee = await registerUser(t.http);
    const { id } = await invite(owner, org.id, invitee.email);
    // Past its expiry, not yet moved to expired by the scheduled job or a read.
    await t.dataSource.query(`UPDATE organization_invitations SET expires_at = now() - interval '1 minute' WHERE id = $1`, [id]);
    await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(owner)).send({ userId: invitee.id, role: 'member' }).expect(201);
    const record = await request(t.http).get(`${API}/organizations/${org.id}/invitations/${id}`).set(bearer(owner)).expect(200);
    expect(record.body.payload).toMatchObject({ status: 'expired', expiredAt: expect.any(String), revokedAt: null, revokedBy: null });
  });

  it('declines (status revoked with declinedAt, no member); a declined invitation cannot be accepted or declined again', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const invitee = await registerUser(t.http);
    const { id, token } = await invite(owner, org.id, invitee.email);
    const res = await request(t.http).post(`${API}/invitations/${token}/decline`).set(bearer(invitee)).expect(200);
    expect(res.body.payload).toMatchObject({ id, status: 'revoked' });
    const record = await request(t.http).get(`${API}/organizations/${org.id}/invitations/${id}`).set(bearer(owner)).expect(200);
    expect(record.body.payload).toMatchObject({ status: 'revoked', declinedAt: expect.any(String), revokedAt: null, revokedBy: null });
    const accept = await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(invitee)).expect(409);
    expect(accept.body).toMatchObject({ code: 'INVITATION_DECLINED', payload: { status: 'revoked', invitationId: id } });
    expect((await request(t.http).post(`${API}/invitations/${token}/decline`).set(bearer(invitee)).expect(409)).body.code).toBe('INVITATION_DECLINED');
    await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(invitee)).expect(404);
    // Revoking a declined invitation changes nothing: it is revoked already, and stays a decline.
    const revoke = await request(t.http).delete(`${API}/organizations/${org.id}/invitations/${id}`).set(bearer(owner)).expect(200);
    expect(revoke.body.payload).toMatchObject({ status: 'revoked', declinedAt: record.body.payload.declinedAt, revokedBy: null });
    expect((await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(invitee)).expect(409)).body.code).toBe('INVITATION_DECLINED');
    const [row] = await t.dataSource.query(`SELECT status FROM organization_invitations WHERE id = $1`, [id]);
    expect(row.status).toBe('revoked');
    const listed = await request(t.http).get(`${API}/organizations/${org.id}/invitations?status=revoked`).set(bearer(owner)).expect(200);
    expect(listed.body.payload.items.map((i: { id: string }) => i.id)).toEqual([id]);
    const unknownStatus = await request(t.http).get(`${API}/organizations/${org.id}/invitations?status=declined`).set(bearer(owner)).expect(400);
    expect(unknownStatus.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'status' } });
  });

  it('revokes (owner, admin or the inviter); a revoked invitation cannot be accepted', async () => {
    const { org, owner, admin, member, memberIds } = await organizationWithRoles(t.http);
    const invitee = await registerUser(t.http);
    const { id, token } = await invite(admin, org.id, invitee.email);
    // A member who is not the inviter may not revoke.
    expect((await request(t.http).delete(`${API}/organizations/${org.id}/invitations/${id}`).set(bearer(member)).expect(403)).body.code).toBe('FORBIDDEN');
    // The inviter may, even after losing the admin role.
    await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.admin}`).set(bearer(owner)).send({ role: 'member' }).expect(200);
    const res = await request(t.http).delete(`${API}/organizations/${org.id}/invitations/${id}`).set(bearer(admin)).expect(200);
    expect(res.body.payload).toMatchObject({ status: 'revoked', revokedBy: admin.id, declinedAt: null });
    const accept = await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(invitee)).expect(410);
    expect(accept.body.code).toBe('INVITATION_REVOKED');
    expect((await request(t.http).post(`${API}/invitations/${token}/decline`).set(bearer(invitee)).expect(410)).body.code).toBe('INVITATION_REVOKED');
    await request(t.http).delete(`${API}/organizations/${org.id}/invitations/${id}`).set(bearer(owner)).expect(200);
  });

  it('expires at accept time (expires_at in the past) with INVITATION_EXPIRED, and the status sticks', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const invitee = await registerUser(t.http);
    const { id, token } = await invite(owner, org.id, invitee.email);
    await t.dataSource.query(`UPDATE organization_invitations SET expires_at = now() - interval '1 minute' WHERE id = $1`, [id]);
    const res = await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(invitee)).expect(410);
    expect(res.body).toMatchObject({ code: 'INVITATION_EXPIRED', payload: { status: 'expired' } });
    const [row] = await t.dataSource.query(`SELECT status, expired_at FROM organization_invitations WHERE id = $1`, [id]);
    expect(row.status).toBe('expired');
    expect(row.expired_at).not.toBeNull();
    await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(invitee)).expect(404);
    const details = await request(t.http).get(`${API}/invitations/${token}`).set(bearer(invitee)).expect(200);
    expect(details.body.payload.status).toBe('expired');
    // A new invitation may be sent once the old one expired.
    await invite(owner, org.id, invitee.email);
  });

  it('expires overdue invitations in the scheduled job', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const due = await invite(owner, org.id, 'due@example.test');
    const fresh = await invite(owner, org.id, 'fresh@example.test');
    await t.dataSource.query(`UPDATE organization_invitations SET expires_at = now() - interval '1 day' WHERE id = $1`, [due.id]);
    expect(await t.app.get(InvitationExpiryJob).run()).toBeGreaterThanOrEqual(1);
    const rows = await t.dataSource.query(`SELECT id, status FROM organization_invitations WHERE organization_id = $1 ORDER BY email`, [org.id]);
    expect(rows).toEqual([
      { id: due.id, status: 'expired' },
      { id: fresh.id, status: 'pending' },
    ]);
  });

  it('answers unknown tokens and invitations of archived organizations with NOT_FOUND, and needs a bearer token', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const invitee = await registerUser(t.http);
    const { token } = await invite(owner, org.id, invitee.email);
    await request(t.http).get(`${API}/invitations/${token}`).expect(401);
    await request(t.http).get(`${API}/invitations/${'x'.repeat(43)}`).set(bearer(invitee)).expect(404);
    await request(t.http).post(`${API}/invitations/short/accept`).set(bearer(invitee)).expect(404);
    await request(t.http).delete(`${API}/organizations/${org.id}`).set(bearer(owner)).expect(200);
    await request(t.http).get(`${API}/invitations/${token}`).set(bearer(invitee)).expect(404);
    await request(t.http).post(`${API}/invitations/${token}/accept`).set(bearer(invitee)).expect(404);
  });

  it('answers an invitation id of another organization with NOT_FOUND', async () => {
    const a = await organizationWithRoles(t.http);
    const b = await organizationWithRoles(t.http);
    const { id } = await invite(b.owner, b.org.id, 'cross@example.test');
    await request(t.http).get(`${API}/organizations/${a.org.id}/invitations/${id}`).set(bearer(a.owner)).expect(404);
    await request(t.http).delete(`${API}/organizations/${a.org.id}/invitations/${id}`).set(bearer(a.owner)).expect(404);
    const [row] = await t.dataSource.query(`SELECT status FROM organization_invitations WHERE id = $1`, [id]);
    expect(row.status).toBe('pending');
  });
});
