import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, bearer, createOrganization, organizationWithRoles, registerUser, uniqueSlug } from './tenancy-helpers.js';
import { problemsOf } from '../../utils/error-details.js';

describe('tenancy: organizations', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('registration creates a personal organization with a default workspace, set as the user defaults', async () => {
    const user = await registerUser(t.http);
    expect(user.defaultOrganizationId).toEqual(expect.any(String));
    const res = await request(t.http).get(`${API}/organizations/${user.defaultOrganizationId}`).set(bearer(user)).expect(200);
    expect(res.body.payload).toMatchObject({
      type: 'personal',
      role: 'owner',
      ownerId: user.id,
      defaultWorkspaceId: user.defaultWorkspaceId,
      statistics: { memberCount: 1, workspaceCount: 1, documentCount: 0 },
    });
  });

  it('creates an organization: creator is owner, one default workspace, detail with statistics', async () => {
    const owner = await registerUser(t.http);
    const slug = uniqueSlug();
    const res = await request(t.http)
      .post(`${API}/organizations`)
      .set(bearer(owner))
      .send({ name: 'Acme', slug, displayName: 'Acme Inc.', description: 'We make things', type: 'enterprise', settings: { allowJoinRequests: true, theme: 'dark' } })
      .expect(201);
    const org = res.body.payload;
    expect(org).toMatchObject({
      name: 'Acme',
      slug,
      displayName: 'Acme Inc.',
      type: 'enterprise',
      role: 'owner',
      ownerId: owner.id,
      createdBy: owner.id,
      logoUrl: null,
      settings: { allowJoinRequests: true, defaultJoinRole: 'member', theme: 'dark' },
      statistics: { memberCount: 1, activeMemberCount: 1, workspaceCount: 1, documentCount: 0 },
    });
    const ws = await request(t.http).get(`${API}/organizations/${org.id}/workspaces`).set(bearer(owner)).expect(200);
    expect(ws.body.payload.items).toHaveLength(1);
    expect(ws.body.payload.items[0]).toMatchObject({ id: org.defaultWorkspaceId, isDefault: true, role: 'owner' });
  });

  it('refuses a duplicate slug (any case) with ALREADY_EXISTS on field slug, creating nothing', async () => {
    const [a, b] = await Promise.all([registerUser(t.http), registerUser(t.http)]);
    const org = await createOrganization(t.http, a);
    const before = await t.dataSource.query(`SELECT count(*)::int AS n FROM organizations`);
    const res = await request(t.http).post(`${API}/organizations`).set(bearer(b)).send({ name: 'Copy', slug: org.slug, type: 'team' }).expect(409);
    expect(res.body).toMatchObject({ success: false, code: 'ALREADY_EXISTS', details: { field: 'slug' } });
    const after = await t.dataSource.query(`SELECT count(*)::int AS n FROM organizations`);
    expect(after[0].n).toBe(before[0].n);
  });

  it('validates the create body with VALIDATION_ERROR naming each field', async () => {
    const user = await registerUser(t.http);
    const res = await request(t.http)
      .post(`${API}/organizations`)
      .set(bearer(user))
      .send({ name: '', slug: 'Bad Slug!', type: 'club', settings: { defaultJoinRole: 'owner' } })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const fields = problemsOf(res.body).map((d: { field: string }) => d.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'slug', 'type', 'settings']));
  });

  it('lets owner and admin PATCH, merging settings; member and guest get FORBIDDEN', async () => {
    const { org, owner, admin, member, guest } = await organizationWithRoles(t.http);
    await request(t.http)
      .patch(`${API}/organizations/${org.id}`)
      .set(bearer(owner))
      .send({ settings: { allowJoinRequests: true, color: 'blue' } })
      .expect(200);
    const res = await request(t.http)
      .patch(`${API}/organizations/${org.id}`)
      .set(bearer(admin))
      .send({ name: 'Renamed', displayName: 'Renamed Inc', logoUrl: 'https://cdn.example.com/logo.png', settings: { color: null, defaultJoinRole: 'guest' } })
      .expect(200);
    expect(res.body.payload).toMatchObject({
      name: 'Renamed',
      displayName: 'Renamed Inc',
      logoUrl: 'https://cdn.example.com/logo.png',
      role: 'admin',
      settings: { allowJoinRequests: true, defaultJoinRole: 'guest' },
    });
    expect(res.body.payload.settings).not.toHaveProperty('color');
    for (const user of [member, guest]) {
      const denied = await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(user)).send({ name: 'Hijack' }).expect(403);
      expect(denied.body.code).toBe('FORBIDDEN');
    }
    const bad = await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(owner)).send({ name: null, website: 'x' }).expect(400);
    expect(problemsOf(bad.body).map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['name', 'website']));
    const detail = await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(guest)).expect(200);
    expect(detail.body.payload).toMatchObject({ name: 'Renamed', role: 'guest', statistics: { memberCount: 4 } });
  });

  it('PATCH takes the organization as read: id, slug and type must be its own, the other read-only keys are ignored', async () => {
    const { org, owner, admin } = await organizationWithRoles(t.http);
    const url = `${API}/organizations/${org.id}`;
    const read = (await request(t.http).get(url).set(bearer(admin)).expect(200)).body.payload;
    // Sent back with one change (identity keys in another letter case; stale or wrong read-only values are ignored).
    const res = await request(t.http)
      .patch(url)
      .set(bearer(admin))
      .send({ ...read, name: 'Round trip', id: read.id.toUpperCase(), slug: read.slug.toUpperCase(), ownerId: admin.id, role: 'owner', statistics: { memberCount: 99 } })
      .expect(200);
    expect(res.body.payload).toMatchObject({ ...read, name: 'Round trip', updatedAt: expect.any(String) });
    for (const [key, value] of [
      ['id', org.defaultWorkspaceId],
      ['slug', `${read.slug}-moved`],
      ['type', 'enterprise'],
    ] as const) {
      const moved = await request(t.http).patch(url).set(bearer(owner)).send({ ...read, name: 'Moved', [key]: value }).expect(400);
      expect(moved.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(moved.body)).toEqual([{ field: key, reason: expect.stringMatching(/must be the id in the path|cannot change/) }]);
    }
    const [row] = await t.dataSource.query(`SELECT name, slug, type, owner_id FROM organizations WHERE id = $1`, [org.id]);
    expect(row).toEqual({ name: 'Round trip', slug: read.slug, type: 'team', owner_id: owner.id });
  });

  it('hides an organization from non-members and unknown ids with NOT_FOUND, and never leaks its data', async () => {
    const { org, outsider } = await organizationWithRoles(t.http);
    for (const path of ['', '/members', '/workspaces', '/invitations', '/join-requests']) {
      const res = await request(t.http).get(`${API}/organizations/${org.id}${path}`).set(bearer(outsider)).expect(404);
      expect(res.body).toMatchObject({ success: false, code: 'NOT_FOUND', payload: null });
      expect(JSON.stringify(res.body)).not.toContain('Acme');
    }
    await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(outsider)).send({ name: 'x' }).expect(404);
    await request(t.http).delete(`${API}/organizations/${org.id}`).set(bearer(outsider)).expect(404);
    await request(t.http).get(`${API}/organizations/00000000-0000-4000-8000-000000000000`).set(bearer(outsider)).expect(404);
    await request(t.http).get(`${API}/organizations/not-a-uuid`).set(bearer(outsider)).expect(404);
  });

  it('refuses everything but leaving to a suspended member with FORBIDDEN', async () => {
    const { org, owner, admin, memberIds } = await organizationWithRoles(t.http);
    await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.admin}`).set(bearer(owner)).send({ status: 'suspended' }).expect(200);
    for (const [method, path] of [
      ['get', ''],
      ['patch', ''],
      ['get', '/members'],
      ['get', '/workspaces'],
      ['post', '/invitations'],
    ] as const) {
      const res = await request(t.http)[method](`${API}/organizations/${org.id}${path}`).set(bearer(admin)).send({ email: 'x@example.test', name: 'x' });
      expect([path, res.status, res.body.code]).toEqual([path, 403, 'FORBIDDEN']);
    }
    await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${org.defaultWorkspaceId}`).set(bearer(admin)).expect(403);
    await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.admin}`).set(bearer(owner)).send({ status: 'active' }).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(admin)).expect(200);
  });

  it('archives on DELETE by the owner only; afterwards it is hidden and refused to everyone', async () => {
    const { org, owner, admin, member } = await organizationWithRoles(t.http);
    expect((await request(t.http).delete(`${API}/organizations/${org.id}`).set(bearer(admin)).expect(403)).body.code).toBe('FORBIDDEN');
    await request(t.http).delete(`${API}/organizations/${org.id}`).set(bearer(member)).expect(403);
    await request(t.http).patch(`${API}/users/me`).set(bearer(owner)).send({ defaultOrganizationId: org.id, defaultWorkspaceId: org.defaultWorkspaceId }).expect(200);
    const res = await request(t.http).delete(`${API}/organizations/${org.id}`).set(bearer(owner)).expect(200);
    expect(res.body).toMatchObject({ success: true, payload: null });
    const [row] = await t.dataSource.query(`SELECT archived_at FROM organizations WHERE id = $1`, [org.id]);
    expect(row.archived_at).not.toBeNull();
    for (const user of [owner, admin, member]) {
      await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(user)).expect(404);
      await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${org.defaultWorkspaceId}`).set(bearer(user)).expect(404);
    }
    await request(t.http).delete(`${API}/organizations/${org.id}`).set(bearer(owner)).expect(404);
    const me = await request(t.http).get(`${API}/users/me`).set(bearer(owner)).expect(200);
    expect(me.body.payload).toMatchObject({ defaultOrganizationId: null, defaultWorkspaceId: null });
  });

  it('lets a member leave (memberships gone), refuses the owner until ownership is transferred', async () => {
    const { org, owner, admin, member } = await organizationWithRoles(t.http);
    await request(t.http)
      .post(`${API}/organizations/${org.id}/workspaces/${org.defaultWorkspaceId}/members`)
      .set(bearer(owner))
      .send({ userId: member.id, role: 'viewer' })
      .expect(201);
    await request(t.http).post(`${API}/organizations/${org.id}/leave`).set(bearer(member)).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(member)).expect(404);
    const ws = await t.dataSource.query(`SELECT count(*)::int AS n FROM workspace_members WHERE user_id = $1 AND organization_id = $2`, [member.id, org.id]);
    expect(ws[0].n).toBe(0);

    const refused = await request(t.http).post(`${API}/organizations/${org.id}/leave`).set(bearer(owner)).expect(403);
    expect(refused.body.code).toBe('FORBIDDEN');

    // Only the owner transfers, only to an active member.
    await request(t.http).post(`${API}/organizations/${org.id}/transfer-ownership`).set(bearer(admin)).send({ userId: admin.id }).expect(403);
    const notMember = await request(t.http).post(`${API}/organizations/${org.id}/transfer-ownership`).set(bearer(owner)).send({ userId: member.id }).expect(400);
    expect(notMember.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'userId' } });
    // The owner's own id in upper case is still the owner: it used to pass the check and demote the owner to admin,
    // leaving the organization without an owner-role member.
    const toSelf = await request(t.http).post(`${API}/organizations/${org.id}/transfer-ownership`).set(bearer(owner)).send({ userId: owner.id.toUpperCase() }).expect(400);
    expect(toSelf.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'userId', reason: 'you already own this organization' } });
    expect(await t.dataSource.query(`SELECT user_id FROM organization_members WHERE organization_id = $1 AND role = 'owner'`, [org.id])).toEqual([{ user_id: owner.id }]);
    const moved = await request(t.http).post(`${API}/organizations/${org.id}/transfer-ownership`).set(bearer(owner)).send({ userId: admin.id }).expect(200);
    expect(moved.body.payload).toMatchObject({ ownerId: admin.id, role: 'admin' });
    const asNewOwner = await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(admin)).expect(200);
    expect(asNewOwner.body.payload.role).toBe('owner');

    await request(t.http).post(`${API}/organizations/${org.id}/leave`).set(bearer(owner)).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(owner)).expect(404);
  });

  it('lets a suspended member leave; a non-member gets the same NOT_FOUND as for an unknown organization', async () => {
    const { org, owner, member, outsider, memberIds } = await organizationWithRoles(t.http);
    await request(t.http)
      .post(`${API}/organizations/${org.id}/workspaces/${org.defaultWorkspaceId}/members`)
      .set(bearer(owner))
      .send({ userId: member.id, role: 'viewer' })
      .expect(201);
    await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.member}`).set(bearer(owner)).send({ status: 'suspended' }).expect(200);
    await request(t.http).post(`${API}/organizations/${org.id}/leave`).set(bearer(member)).expect(200);
    const rows = await t.dataSource.query(
      `SELECT (SELECT count(*)::int FROM organization_members WHERE organization_id = $1 AND user_id = $2) AS org,
              (SELECT count(*)::int FROM workspace_members WHERE organization_id = $1 AND user_id = $2) AS ws`,
      [org.id, member.id],
    );
    expect(rows).toEqual([{ org: 0, ws: 0 }]);
    const [event] = await t.dataSource.query(`SELECT payload->>'reason' AS reason FROM outbox WHERE event_type = 'member_removed' AND payload->>'userId' = $1`, [member.id]);
    expect(event.reason).toBe('left');

    const unknown = await request(t.http).post(`${API}/organizations/00000000-0000-4000-8000-000000000000/leave`).set(bearer(outsider)).expect(404);
    expect(unknown.body).toMatchObject({ code: 'NOT_FOUND', details: { reason: 'organization not found' } });
    for (const user of [outsider, member]) {
      expect((await request(t.http).post(`${API}/organizations/${org.id}/leave`).set(bearer(user)).expect(404)).body).toEqual(unknown.body);
    }
  });

  it('checks membership when PATCH /users/me sets default organization and workspace', async () => {
    const { org, owner, member, outsider } = await organizationWithRoles(t.http);
    const other = await createOrganization(t.http, outsider);
    const ok = await request(t.http).patch(`${API}/users/me`).set(bearer(owner)).send({ defaultOrganizationId: org.id, defaultWorkspaceId: org.defaultWorkspaceId }).expect(200);
    expect(ok.body.payload).toMatchObject({ defaultOrganizationId: org.id, defaultWorkspaceId: org.defaultWorkspaceId });
    // UUIDs in upper case name the same organization and workspace (they used to be "another organization").
    const upper = await request(t.http)
      .patch(`${API}/users/me`)
      .set(bearer(owner))
      .send({ defaultOrganizationId: org.id.toUpperCase(), defaultWorkspaceId: org.defaultWorkspaceId.toUpperCase() })
      .expect(200);
    expect(upper.body.payload).toMatchObject({ defaultOrganizationId: org.id, defaultWorkspaceId: org.defaultWorkspaceId });
    await request(t.http).patch(`${API}/users/me`).set(bearer(owner)).send({ defaultWorkspaceId: org.defaultWorkspaceId.toUpperCase() }).expect(200);

    const foreign = await request(t.http).patch(`${API}/users/me`).set(bearer(member)).send({ defaultOrganizationId: other.id }).expect(400);
    expect(foreign.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'defaultOrganizationId' } });
    // A private workspace the member is not in.
    const privateWs = await request(t.http).patch(`${API}/users/me`).set(bearer(member)).send({ defaultOrganizationId: org.id, defaultWorkspaceId: org.defaultWorkspaceId }).expect(400);
    expect(privateWs.body.details.field).toBe('defaultWorkspaceId');
    // Workspace of another organization than the default one.
    const mismatch = await request(t.http)
      .patch(`${API}/users/me`)
      .set(bearer(owner))
      .send({ defaultOrganizationId: owner.defaultOrganizationId, defaultWorkspaceId: org.defaultWorkspaceId })
      .expect(400);
    expect(mismatch.body.details.field).toBe('defaultWorkspaceId');
    const me = await request(t.http).get(`${API}/users/me`).set(bearer(member)).expect(200);
    expect(me.body.payload.defaultOrganizationId).toBe(member.defaultOrganizationId);

    // A default organization sent alone brings a workspace of its own: the pair never spans two organizations.
    const switched = await request(t.http).patch(`${API}/users/me`).set(bearer(owner)).send({ defaultOrganizationId: owner.defaultOrganizationId }).expect(200);
    expect(switched.body.payload).toMatchObject({ defaultOrganizationId: owner.defaultOrganizationId, defaultWorkspaceId: owner.defaultWorkspaceId });
    const back = await request(t.http).patch(`${API}/users/me`).set(bearer(owner)).send({ defaultOrganizationId: org.id }).expect(200);
    expect(back.body.payload).toMatchObject({ defaultOrganizationId: org.id, defaultWorkspaceId: org.defaultWorkspaceId });
    // The member cannot use the organization's (private) default workspace: no default workspace rather than a foreign one.
    const memberSwitch = await request(t.http).patch(`${API}/users/me`).set(bearer(member)).send({ defaultOrganizationId: org.id }).expect(200);
    expect(memberSwitch.body.payload).toMatchObject({ defaultOrganizationId: org.id, defaultWorkspaceId: null });
  });

  it('PATCH /users/me with a null default clears it; a null organization clears the workspace with it', async () => {
    const owner = await registerUser(t.http);
    const noWorkspace = await request(t.http).patch(`${API}/users/me`).set(bearer(owner)).send({ defaultWorkspaceId: null }).expect(200);
    expect(noWorkspace.body.payload).toMatchObject({ defaultOrganizationId: owner.defaultOrganizationId, defaultWorkspaceId: null });
    await request(t.http).patch(`${API}/users/me`).set(bearer(owner)).send({ defaultWorkspaceId: owner.defaultWorkspaceId }).expect(200);
    const none = await request(t.http).patch(`${API}/users/me`).set(bearer(owner)).send({ defaultOrganizationId: null }).expect(200);
    expect(none.body.payload).toMatchObject({ defaultOrganizationId: null, defaultWorkspaceId: null });
    // A workspace cannot be the default without its organization.
    const orphan = await request(t.http)
      .patch(`${API}/users/me`)
      .set(bearer(owner))
      .send({ defaultOrganizationId: null, defaultWorkspaceId: owner.defaultWorkspaceId })
      .expect(400);
    expect(orphan.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'defaultWorkspaceId' } });
    const both = await request(t.http)
      .patch(`${API}/users/me`)
      .set(bearer(owner))
      .send({ defaultOrganizationId: owner.defaultOrganizationId, defaultWorkspaceId: null })
      .expect(200);
    expect(both.body.payload).toMatchObject({ defaultOrganizationId: owner.defaultOrganizationId, defaultWorkspaceId: null });
  });

  it('refuses organization names made only of whitespace exactly like the empty name, and stores names trimmed', async () => {
    const owner = await registerUser(t.http);
    const empty = await request(t.http).post(`${API}/organizations`).set(bearer(owner)).send({ name: '', slug: uniqueSlug(), type: 'team' }).expect(400);
    const blank = await request(t.http).post(`${API}/organizations`).set(bearer(owner)).send({ name: '   ', slug: uniqueSlug(), type: 'team' }).expect(400);
    expect(blank.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(blank.body)).toEqual(problemsOf(empty.body));
    expect(problemsOf(blank.body)[0].field).toBe('name');
    const org = await createOrganization(t.http, owner, { name: '  Acme  ' });
    const patched = await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(owner)).send({ name: '\t ' }).expect(400);
    expect(problemsOf(patched.body)[0]).toMatchObject({ field: 'name' });
    const detail = await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(owner)).expect(200);
    expect(detail.body.payload.name).toBe('Acme');
  });

  it('refuses an empty or blank displayName on create and PATCH; null still clears it', async () => {
    const owner = await registerUser(t.http);
    for (const displayName of ['', '   ']) {
      const res = await request(t.http)
        .post(`${API}/organizations`)
        .set(bearer(owner))
        .send({ name: 'Beta Corp', slug: uniqueSlug(), type: 'team', displayName })
        .expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(res.body).map((p: { field: string }) => p.field)).toEqual(['displayName']);
    }
    const org = await createOrganization(t.http, owner, { displayName: '  Beta  ' });
    for (const displayName of ['', '\t ']) {
      const res = await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(owner)).send({ displayName }).expect(400);
      expect(problemsOf(res.body)[0]).toMatchObject({ field: 'displayName' });
    }
    const detail = await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(owner)).expect(200);
    expect(detail.body.payload.displayName).toBe('Beta');
    const cleared = await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(owner)).send({ displayName: null }).expect(200);
    expect(cleared.body.payload.displayName).toBeNull();
  });

  it('keeps the personal organization name within the 100-character limit, so it can be sent back unchanged', async () => {
    const user = await registerUser(t.http, { displayName: 'L'.repeat(100) });
    const org = (await request(t.http).get(`${API}/organizations/${user.defaultOrganizationId}`).set(bearer(user)).expect(200)).body.payload;
    expect(org.name).toBe(`${'L'.repeat(84)}…'s organization`);
    expect(Array.from(org.name as string)).toHaveLength(100);
    await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(user)).send({ name: org.name, description: 'd' }).expect(200);
    // A name that fits is kept whole.
    const short = await registerUser(t.http, { displayName: 'Ada' });
    const own = await request(t.http).get(`${API}/organizations/${short.defaultOrganizationId}`).set(bearer(short)).expect(200);
    expect(own.body.payload.name).toBe("Ada's organization");
  });

  it('PATCH settings with a known key set to null removes it, so the default applies again', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(owner)).send({ settings: { defaultJoinRole: 'guest', allowJoinRequests: false } }).expect(200);
    const res = await request(t.http)
      .patch(`${API}/organizations/${org.id}`)
      .set(bearer(owner))
      .send({ settings: { defaultJoinRole: null, allowJoinRequests: null } })
      .expect(200);
    expect(res.body.payload.settings).toEqual({ allowJoinRequests: true, defaultJoinRole: 'member' });
    const [row] = await t.dataSource.query(`SELECT settings FROM organizations WHERE id = $1`, [org.id]);
    expect(row.settings).toEqual({});
    // A wrong value is still refused.
    await request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(owner)).send({ settings: { defaultJoinRole: 'owner' } }).expect(400);
  });

  it('bounds settings at 16 KB of JSON after the merge, counted in UTF-8 bytes; nothing is stored past it', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const patch = (settings: Record<string, unknown>): request.Test =>
      request(t.http).patch(`${API}/organizations/${org.id}`).set(bearer(owner)).send({ settings });
    const stored = async (): Promise<Record<string, unknown>> =>
      (await t.dataSource.query(`SELECT settings FROM organizations WHERE id = $1`, [org.id]))[0].settings;
    // Each PATCH alone fits; merged, they would not.
    await patch({ a: 'x'.repeat(10_000) }).expect(200);
    const merged = await patch({ b: 'x'.repeat(10_000) }).expect(400);
    expect(merged.body.code).toBe('VALIDATION_ERROR');
    expect(merged.body.details.field).toBe('settings');
    expect(Object.keys(await stored())).toEqual(['a']);
    // 6,000 three-byte characters are 6,000 characters but 18,000 bytes.
    await patch({ a: null, c: '€'.repeat(6_000) }).expect(400);
    expect(Object.keys(await stored())).toEqual(['a']);
    // Removing a key makes room again.
    await patch({ a: null, b: 'x'.repeat(10_000) }).expect(200);
    expect(Object.keys(await stored())).toEqual(['b']);
  });

  it('counts the live documents of the organization (deleted ones left out)', async () => {
    const owner = await registerUser(t.http);
    const create = (id: string) =>
      request(t.http)
        .post(`${API}/doc/things`)
        .set(bearer(owner))
        .send({ id, organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId })
        .expect(201);
    const suffix = Date.now().toString(36);
    await create(`keep-${suffix}`);
    await create(`gone-${suffix}`);
    await request(t.http).delete(`${API}/doc/things/gone-${suffix}`).set(bearer(owner)).expect(200);
    const res = await request(t.http).get(`${API}/organizations/${owner.defaultOrganizationId}`).set(bearer(owner)).expect(200);
    expect(res.body.payload.statistics.documentCount).toBe(1);
  });

  it('leaves the documents of a deleted workspace out of documentCount (no route reaches them), as workspaceCount does', async () => {
    const owner = await registerUser(t.http);
    const org = await createOrganization(t.http, owner);
    const ws = await request(t.http).post(`${API}/organizations/${org.id}/workspaces`).set(bearer(owner)).send({ name: 'Doomed', slug: 'doomed' }).expect(201);
    const create = (id: string, workspaceId: string) =>
      request(t.http).post(`${API}/doc/things`).set(bearer(owner)).send({ id, organizationId: org.id, workspaceId }).expect(201);
    await create('kept', org.defaultWorkspaceId);
    await create('in-doomed-1', ws.body.payload.id);
    await create('in-doomed-2', ws.body.payload.id);
    const statistics = async () =>
      (await request(t.http).get(`${API}/organizations/${org.id}`).set(bearer(owner)).expect(200)).body.payload.statistics;
    expect(await statistics()).toMatchObject({ workspaceCount: 2, documentCount: 3 });
    // Archived: still readable, still counted.
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws.body.payload.id}/archive`).set(bearer(owner)).expect(200);
    expect(await statistics()).toMatchObject({ workspaceCount: 2, documentCount: 3 });
    await request(t.http).delete(`${API}/organizations/${org.id}/workspaces/${ws.body.payload.id}`).set(bearer(owner)).expect(200);
    expect(await statistics()).toMatchObject({ workspaceCount: 1, documentCount: 1 });
  });

  it('refuses a body on the routes that take none (VALIDATION_ERROR naming its keys), changing nothing; {} is fine', async () => {
    const { org, owner, member, outsider, memberIds } = await organizationWithRoles(t.http);
    const base = `${API}/organizations/${org.id}`;
    const ws = (await request(t.http).post(`${base}/workspaces`).set(bearer(owner)).send({ name: 'W', slug: uniqueSlug('ws') }).expect(201)).body.payload.id;
    const wsMember = (await request(t.http).post(`${base}/workspaces/${ws}/members`).set(bearer(owner)).send({ userId: member.id }).expect(201)).body.payload.id;
    const ref = (await request(t.http).post(`${base}/workspaces/${ws}/data-source-references`).set(bearer(owner)).send({ sourceWorkspaceId: org.defaultWorkspaceId, docType: 'notes' }).expect(201)).body.payload.id;
    const invitation = (await request(t.http).post(`${base}/invitations`).set(bearer(owner)).send({ email: outsider.email }).expect(201)).body.payload;
    const joinRequest = (await request(t.http).post(`${base}/join-requests`).set(bearer(outsider)).send({}).expect(201)).body.payload.id;
    const calls: Array<[method: 'post' | 'delete', path: string, by: typeof owner]> = [
      ['post', `${API}/invitations/${invitation.token}/accept`, outsider],
      ['post', `${API}/invitations/${invitation.token}/decline`, outsider],
      ['delete', `${base}/invitations/${invitation.id}`, owner],
      ['delete', `${base}/join-requests/${joinRequest}`, outsider],
      ['delete', `${base}/workspaces/${ws}/data-source-references/${ref}`, owner],
      ['delete', `${base}/workspaces/${ws}/members/${wsMember}`, owner],
      ['post', `${base}/workspaces/${ws}/archive`, owner],
      ['post', `${base}/workspaces/${ws}/restore`, owner],
      ['delete', `${base}/workspaces/${ws}`, owner],
      ['delete', `${base}/members/${memberIds.member}`, owner],
      ['post', `${base}/leave`, member],
      ['delete', base, owner],
    ];
    for (const [method, path, by] of calls) {
      const res = await request(t.http)[method](path).set(bearer(by)).send({ role: 'owner' });
      expect([`${method} ${path}`, res.status, res.body.code, res.body.details]).toEqual([`${method} ${path}`, 400, 'VALIDATION_ERROR', { field: 'role', reason: 'property role should not exist' }]);
    }
    // Nothing happened: every record is as it was.
    expect((await request(t.http).get(`${base}/invitations/${invitation.id}`).set(bearer(owner)).expect(200)).body.payload.status).toBe('pending');
    expect((await request(t.http).get(`${base}/join-requests/${joinRequest}`).set(bearer(owner)).expect(200)).body.payload.status).toBe('pending');
    await request(t.http).get(`${base}/workspaces/${ws}/data-source-references/${ref}`).set(bearer(owner)).expect(200);
    await request(t.http).get(`${base}/workspaces/${ws}/members/${wsMember}`).set(bearer(owner)).expect(200);
    expect((await request(t.http).get(`${base}/workspaces/${ws}`).set(bearer(owner)).expect(200)).body.payload.archived).toBe(false);
    await request(t.http).get(`${base}/members/${memberIds.member}`).set(bearer(owner)).expect(200);
    // An empty object is no body.
    await request(t.http).post(`${base}/workspaces/${ws}/archive`).set(bearer(owner)).send({}).expect(200);
    await request(t.http).delete(base).set(bearer(owner)).send({}).expect(200);
  });
});
