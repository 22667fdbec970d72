import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, bearer, organizationWithRoles, registerUser, type TestUser } from './tenancy-helpers.js';
import { problemsOf } from '../../utils/error-details.js';

describe('tenancy: workspaces', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function createWorkspace(by: TestUser, organizationId: string, body: Record<string, unknown> = {}): Promise<string> {
    const slug = `ws-${Math.random().toString(36).slice(2, 8)}`;
    const res = await request(t.http).post(`${API}/organizations/${organizationId}/workspaces`).set(bearer(by)).send({ name: 'Sales', slug, ...body });
    if (res.status !== 201) {
      throw new Error(`create workspace failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body.payload.id;
  }

  it('creates a workspace (owner/admin only; private by default; creator becomes its owner)', async () => {
    const { org, admin, member, guest } = await organizationWithRoles(t.http);
    const res = await request(t.http)
      .post(`${API}/organizations/${org.id}/workspaces`)
      .set(bearer(admin))
      .send({ name: 'Sales', slug: 'sales', description: 'Pipeline', icon: 'chart', color: '#ff0000' })
      .expect(201);
    expect(res.body.payload).toMatchObject({
      organizationId: org.id,
      name: 'Sales',
      slug: 'sales',
      description: 'Pipeline',
      icon: 'chart',
      color: '#ff0000',
      visibility: 'private',
      isDefault: false,
      archived: false,
      archivedAt: null,
      createdBy: admin.id,
      role: 'owner',
      permissions: { read: true, write: true, manage: true, archive: true, delete: true },
      dataSourceReferences: [],
    });
    for (const user of [member, guest]) {
      expect((await request(t.http).post(`${API}/organizations/${org.id}/workspaces`).set(bearer(user)).send({ name: 'X', slug: 'x' }).expect(403)).body.code).toBe('FORBIDDEN');
    }
    const dup = await request(t.http).post(`${API}/organizations/${org.id}/workspaces`).set(bearer(admin)).send({ name: 'Again', slug: 'SALES'.toLowerCase() }).expect(409);
    expect(dup.body).toMatchObject({ code: 'ALREADY_EXISTS', details: { field: 'slug' } });
    const invalid = await request(t.http).post(`${API}/organizations/${org.id}/workspaces`).set(bearer(admin)).send({ slug: 'Bad Slug', visibility: 'secret' }).expect(400);
    expect(problemsOf(invalid.body).map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['name', 'slug', 'visibility']));
    const [n] = await t.dataSource.query(`SELECT count(*)::int AS n FROM workspaces WHERE organization_id = $1`, [org.id]);
    expect(n.n).toBe(2);
  });

  it('the same slug is fine in another organization', async () => {
    const a = await organizationWithRoles(t.http);
    const b = await organizationWithRoles(t.http);
    await createWorkspace(a.owner, a.org.id, { slug: 'shared' });
    await createWorkspace(b.owner, b.org.id, { slug: 'shared' });
  });

  it('lists only accessible workspaces, with visibility and includeArchived filters', async () => {
    const { org, owner, member, guest } = await organizationWithRoles(t.http);
    const publicWs = await createWorkspace(owner, org.id, { visibility: 'public' });
    const privateWs = await createWorkspace(owner, org.id);
    const joined = await createWorkspace(owner, org.id);
    const archived = await createWorkspace(owner, org.id, { visibility: 'public' });
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${joined}/members`).set(bearer(owner)).send({ userId: member.id, role: 'viewer' }).expect(201);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${archived}/archive`).set(bearer(owner)).expect(200);

    const ids = async (user: TestUser, query = ''): Promise<string[]> =>
      (await request(t.http).get(`${API}/organizations/${org.id}/workspaces${query}`).set(bearer(user)).expect(200)).body.payload.items.map((w: { id: string }) => w.id);

    expect(await ids(owner)).toEqual([org.defaultWorkspaceId, publicWs, privateWs, joined]);
    expect(await ids(owner, '?includeArchived=true')).toEqual([org.defaultWorkspaceId, publicWs, privateWs, joined, archived]);
    expect(await ids(owner, '?visibility=public&includeArchived=true')).toEqual([publicWs, archived]);
    expect(await ids(member)).toEqual([publicWs, joined]);
    expect(await ids(member, '?includeArchived=true')).toEqual([publicWs, joined, archived]);
    expect(await ids(guest)).toEqual([publicWs]);
    expect(await ids(owner, '?page=2&pageSize=3')).toEqual([joined]);

    const listed = await request(t.http).get(`${API}/organizations/${org.id}/workspaces`).set(bearer(member)).expect(200);
    expect(listed.body.payload).toMatchObject({ total: 2, page: 1, pageSize: 20, totalPages: 1 });
    expect(listed.body.payload.items[1]).toMatchObject({ id: joined, role: 'viewer', permissions: { read: true, write: false, manage: false } });
    await request(t.http).get(`${API}/organizations/${org.id}/workspaces?includeArchived=maybe`).set(bearer(owner)).expect(400);
  });

  it('gets a workspace: members and (for public ones) every organization member; others FORBIDDEN, outsiders NOT_FOUND', async () => {
    const { org, owner, admin, member, guest, outsider } = await organizationWithRoles(t.http);
    const privateWs = await createWorkspace(owner, org.id);
    const publicWs = await createWorkspace(owner, org.id, { visibility: 'public' });
    await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${privateWs}`).set(bearer(admin)).expect(200);
    expect((await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${privateWs}`).set(bearer(member)).expect(403)).body.code).toBe('FORBIDDEN');
    const pub = await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${publicWs}`).set(bearer(guest)).expect(200);
    expect(pub.body.payload).toMatchObject({ id: publicWs, role: null, permissions: { read: true, write: false, manage: false } });
    await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${publicWs}`).set(bearer(outsider)).expect(404);
    await request(t.http).get(`${API}/organizations/${org.id}/workspaces/not-a-uuid`).set(bearer(owner)).expect(404);
  });

  it('answers a workspace of another organization with NOT_FOUND on every route, changing nothing', async () => {
    const a = await organizationWithRoles(t.http);
    const b = await organizationWithRoles(t.http);
    const foreign = await createWorkspace(b.owner, b.org.id, { visibility: 'public' });
    // Even a user who belongs to both organizations cannot mix them in one path.
    await request(t.http).post(`${API}/organizations/${a.org.id}/members`).set(bearer(a.owner)).send({ userId: b.owner.id, role: 'admin' }).expect(201);
    for (const user of [a.owner, b.owner]) {
      for (const [method, suffix] of [
        ['get', ''],
        ['patch', ''],
        ['delete', ''],
        ['post', '/archive'],
        ['get', '/members'],
        ['post', '/members'],
        ['get', '/data-source-references'],
      ] as const) {
        const res = await request(t.http)[method](`${API}/organizations/${a.org.id}/workspaces/${foreign}${suffix}`).set(bearer(user)).send({ name: 'X', userId: user.id });
        expect([suffix, method, res.status, res.body.code]).toEqual([suffix, method, 404, 'NOT_FOUND']);
      }
    }
    const [row] = await t.dataSource.query(`SELECT name, archived_at, deleted_at FROM workspaces WHERE id = $1`, [foreign]);
    expect(row).toEqual({ name: 'Sales', archived_at: null, deleted_at: null });
  });

  it('PATCHes by workspace owner or organization owner/admin; editors and viewers get FORBIDDEN', async () => {
    const { org, owner, admin, member, guest } = await organizationWithRoles(t.http);
    const ws = await createWorkspace(owner, org.id);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/members`).set(bearer(owner)).send({ userId: member.id, role: 'owner' }).expect(201);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/members`).set(bearer(owner)).send({ userId: guest.id }).expect(201);
    const res = await request(t.http)
      .patch(`${API}/organizations/${org.id}/workspaces/${ws}`)
      .set(bearer(member))
      .send({ name: 'Renamed', description: null, icon: 'star', color: 'blue', visibility: 'public' })
      .expect(200);
    expect(res.body.payload).toMatchObject({ name: 'Renamed', description: null, icon: 'star', color: 'blue', visibility: 'public', role: 'owner' });
    await request(t.http).patch(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(admin)).send({ color: 'green' }).expect(200);
    expect((await request(t.http).patch(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(guest)).send({ name: 'Editor' }).expect(403)).body.code).toBe('FORBIDDEN');
    const bad = await request(t.http).patch(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(owner)).send({ name: null, visibility: 'open' }).expect(400);
    expect(problemsOf(bad.body).map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['name', 'visibility']));
    // The slug is fixed: sent (a workspace as read), it must be the current one.
    const renamed = await request(t.http).patch(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(owner)).send({ name: 'Moved', slug: 'new' }).expect(400);
    expect(renamed.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'slug' } });
    const [row] = await t.dataSource.query(`SELECT name, color FROM workspaces WHERE id = $1`, [ws]);
    expect(row).toEqual({ name: 'Renamed', color: 'green' });
  });

  it('refuses workspace names made only of whitespace exactly like the empty name, on create and PATCH', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const post = (name: string) => request(t.http).post(`${API}/organizations/${org.id}/workspaces`).set(bearer(owner)).send({ name, slug: 'blank' });
    const empty = await post('').expect(400);
    const blank = await post('   ').expect(400);
    expect(blank.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(blank.body)).toEqual(problemsOf(empty.body));
    const ws = await createWorkspace(owner, org.id, { name: ' Sales ' });
    const patched = await request(t.http).patch(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(owner)).send({ name: '  ' }).expect(400);
    expect(problemsOf(patched.body)[0]).toMatchObject({ field: 'name' });
    const [row] = await t.dataSource.query(`SELECT name FROM workspaces WHERE id = $1`, [ws]);
    expect(row.name).toBe('Sales');
  });

  it('archives and restores (workspace owner, organization owner/admin); archived workspaces are read-only', async () => {
    const { org, owner, admin, member, guest } = await organizationWithRoles(t.http);
    const ws = await createWorkspace(owner, org.id);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/members`).set(bearer(owner)).send({ userId: member.id, role: 'editor' }).expect(201);
    expect((await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/archive`).set(bearer(member)).expect(403)).body.code).toBe('FORBIDDEN');
    const archived = await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/archive`).set(bearer(admin)).expect(200);
    expect(archived.body.payload).toMatchObject({ archived: true, archivedAt: expect.any(String), permissions: { read: true, write: false, manage: false, archive: true } });
    expect((await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/archive`).set(bearer(owner)).expect(409)).body.code).toBe('INVALID_STATE');

    // Read-only: reads work, changes are refused even to the organization owner.
    await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(member)).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${ws}/members`).set(bearer(member)).expect(200);
    const patch = await request(t.http).patch(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(owner)).send({ name: 'Nope' }).expect(403);
    expect(patch.body).toMatchObject({ code: 'FORBIDDEN', details: { reason: expect.stringContaining('archived') } });
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/members`).set(bearer(owner)).send({ userId: guest.id }).expect(403);
    const { WorkspaceAccessService } = await import('../../../src/modules/tenancy/services/workspace-access.service.js');
    const access = t.app.get(WorkspaceAccessService);
    await expect(access.require(owner.id, ws, 'write')).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(access.require(member.id, ws, 'read')).resolves.toMatchObject({ archived: true, canRead: true, canWrite: false });

    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/restore`).set(bearer(guest)).expect(403);
    const restored = await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/restore`).set(bearer(owner)).expect(200);
    expect(restored.body.payload).toMatchObject({ archived: false, archivedAt: null });
    expect((await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/restore`).set(bearer(owner)).expect(409)).body.code).toBe('INVALID_STATE');
    await expect(access.require(member.id, ws, 'write')).resolves.toMatchObject({ canWrite: true });
  });

  it('soft-deletes by workspace owner or organization owner (not an organization admin)', async () => {
    const { org, owner, admin, member } = await organizationWithRoles(t.http);
    const ws = await createWorkspace(owner, org.id);
    expect((await request(t.http).delete(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(admin)).expect(403)).body.code).toBe('FORBIDDEN');
    const own = await createWorkspace(admin, org.id);
    await request(t.http).delete(`${API}/organizations/${org.id}/workspaces/${own}`).set(bearer(admin)).expect(200);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/members`).set(bearer(owner)).send({ userId: member.id, role: 'editor' }).expect(201);
    await request(t.http).delete(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(member)).expect(403);
    await request(t.http).delete(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(owner)).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(owner)).expect(404);
    const list = await request(t.http).get(`${API}/organizations/${org.id}/workspaces?includeArchived=true`).set(bearer(owner)).expect(200);
    expect(list.body.payload.items.map((w: { id: string }) => w.id)).toEqual([org.defaultWorkspaceId]);
    const [row] = await t.dataSource.query(`SELECT deleted_at FROM workspaces WHERE id = $1`, [ws]);
    expect(row.deleted_at).not.toBeNull();
    // The slug is free again.
    const [{ slug }] = await t.dataSource.query(`SELECT slug FROM workspaces WHERE id = $1`, [ws]);
    await createWorkspace(owner, org.id, { slug });
  });

  it('deletes an archived workspace too (spec 3: delete from any state)', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const ws = await createWorkspace(owner, org.id);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws}/archive`).set(bearer(owner)).expect(200);
    await request(t.http).delete(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(owner)).expect(200);
    await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(owner)).expect(404);
    const list = await request(t.http).get(`${API}/organizations/${org.id}/workspaces?includeArchived=true`).set(bearer(owner)).expect(200);
    expect(list.body.payload.items.map((w: { id: string }) => w.id)).not.toContain(ws);
  });

  it('archives, restores and deletes once when the same call arrives several times at once', async () => {
    const { org, owner } = await organizationWithRoles(t.http);
    const ws = await createWorkspace(owner, org.id);
    const base = `${API}/organizations/${org.id}/workspaces/${ws}`;
    const burst = async (method: 'post' | 'delete', path: string): Promise<number[]> =>
      (await Promise.all([1, 2, 3, 4].map(() => request(t.http)[method](path).set(bearer(owner))))).map((res) => res.status).sort();
    expect(await burst('post', `${base}/archive`)).toEqual([200, 409, 409, 409]);
    expect(await burst('post', `${base}/restore`)).toEqual([200, 409, 409, 409]);
    expect(await burst('delete', base)).toEqual([200, 404, 404, 404]);
    const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM outbox WHERE event_type = 'workspace_deleted' AND payload->>'workspaceId' = $1`, [ws]);
    expect(n).toBe(1);
  });

  it('clears default workspaces their users can no longer read (made private, suspended, demoted), keeping the others', async () => {
    const { org, owner, admin, member, guest, memberIds } = await organizationWithRoles(t.http);
    const ws = await createWorkspace(owner, org.id, { visibility: 'public' });
    const base = `${API}/organizations/${org.id}/workspaces/${ws}`;
    await request(t.http).post(`${base}/members`).set(bearer(owner)).send({ userId: guest.id, role: 'viewer' }).expect(201);
    const defaultOf = async (user: TestUser): Promise<string | null> =>
      (await request(t.http).get(`${API}/users/me`).set(bearer(user)).expect(200)).body.payload.defaultWorkspaceId;
    for (const user of [admin, member, guest]) {
      await request(t.http).patch(`${API}/users/me`).set(bearer(user)).send({ defaultOrganizationId: org.id, defaultWorkspaceId: ws }).expect(200);
    }

    await request(t.http).patch(base).set(bearer(owner)).send({ visibility: 'private' }).expect(200);
    // The org member outside the workspace lost read access: no default, so no-context routes ask for a context
    // (VALIDATION_ERROR) instead of answering FORBIDDEN for a workspace the user cannot see.
    expect(await defaultOf(member)).toBeNull();
    const noContext = await request(t.http).get(`${API}/doc/notes/setting`).set(bearer(member)).expect(400);
    expect(noContext.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(noContext.body)[0]).toMatchObject({ field: 'workspaceId' });
    // Readers still reading keep theirs: the workspace's viewer and the organization admin.
    expect(await defaultOf(guest)).toBe(ws);
    expect(await defaultOf(admin)).toBe(ws);

    // An organization admin demoted to member (not in the private workspace) loses it too.
    await request(t.http).patch(`${API}/organizations/${org.id}/members/${memberIds.admin}`).set(bearer(owner)).send({ role: 'member' }).expect(200);
    expect(await defaultOf(admin)).toBeNull();
    // So does a workspace member who is suspended there.
    const viewer = (await request(t.http).get(`${base}/members`).set(bearer(owner)).expect(200)).body.payload.items.find(
      (m: { userId: string }) => m.userId === guest.id,
    );
    await request(t.http).patch(`${base}/members/${viewer.id}`).set(bearer(owner)).send({ status: 'suspended' }).expect(200);
    expect(await defaultOf(guest)).toBeNull();
    const me = (await request(t.http).get(`${API}/users/me`).set(bearer(guest)).expect(200)).body.payload;
    expect(me.defaultOrganizationId).toBe(org.id);
  });

  describe('workspace members', () => {
    it('adds organization members only (default editor), lists with role filter, gets, updates and removes', async () => {
      const { org, owner, member, guest, outsider } = await organizationWithRoles(t.http);
      const ws = await createWorkspace(owner, org.id);
      const base = `${API}/organizations/${org.id}/workspaces/${ws}/members`;
      const added = await request(t.http).post(base).set(bearer(owner)).send({ userId: member.id }).expect(201);
      expect(added.body.payload).toMatchObject({ workspaceId: ws, organizationId: org.id, userId: member.id, role: 'editor', status: 'active', user: { email: member.email } });
      await request(t.http).post(base).set(bearer(owner)).send({ userId: guest.id, role: 'viewer' }).expect(201);

      const notInOrg = await request(t.http).post(base).set(bearer(owner)).send({ userId: outsider.id }).expect(400);
      expect(notInOrg.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'userId' } });
      expect((await request(t.http).post(base).set(bearer(owner)).send({ userId: member.id }).expect(409)).body.code).toBe('ALREADY_MEMBER');
      await request(t.http).post(base).set(bearer(owner)).send({ userId: member.id, role: 'admin' }).expect(400);

      const all = await request(t.http).get(base).set(bearer(guest)).expect(200);
      expect(all.body.payload).toMatchObject({ total: 3, page: 1, pageSize: 20 });
      const viewers = await request(t.http).get(`${base}?role=viewer`).set(bearer(member)).expect(200);
      expect(viewers.body.payload.items.map((m: { userId: string }) => m.userId)).toEqual([guest.id]);
      await request(t.http).get(`${base}/${added.body.payload.id}`).set(bearer(guest)).expect(200);

      const updated = await request(t.http).patch(`${base}/${added.body.payload.id}`).set(bearer(owner)).send({ role: 'viewer', status: 'suspended' }).expect(200);
      expect(updated.body.payload).toMatchObject({ role: 'viewer', status: 'suspended' });
      // A suspended workspace member has no access to the private workspace.
      await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(member)).expect(403);
      await request(t.http).patch(`${base}/${added.body.payload.id}`).set(bearer(owner)).send({ status: 'active' }).expect(200);
      await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(member)).expect(200);

      await request(t.http).delete(`${base}/${added.body.payload.id}`).set(bearer(owner)).expect(200);
      await request(t.http).get(`${base}/${added.body.payload.id}`).set(bearer(owner)).expect(404);
      await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${ws}`).set(bearer(member)).expect(403);
    });

    it('only the workspace owner or organization owner/admin manages members; editors and viewers get FORBIDDEN', async () => {
      const { org, owner, admin, member, guest } = await organizationWithRoles(t.http);
      const ws = await createWorkspace(owner, org.id);
      const base = `${API}/organizations/${org.id}/workspaces/${ws}/members`;
      const editor = await request(t.http).post(base).set(bearer(admin)).send({ userId: member.id, role: 'editor' }).expect(201);
      const newcomer = await registerUser(t.http);
      await request(t.http).post(`${API}/organizations/${org.id}/members`).set(bearer(owner)).send({ userId: newcomer.id }).expect(201);
      expect((await request(t.http).post(base).set(bearer(member)).send({ userId: guest.id }).expect(403)).body.code).toBe('FORBIDDEN');
      await request(t.http).patch(`${base}/${editor.body.payload.id}`).set(bearer(member)).send({ role: 'owner' }).expect(403);
      await request(t.http).delete(`${base}/${editor.body.payload.id}`).set(bearer(member)).expect(403);
      await request(t.http).get(base).set(bearer(guest)).expect(403);
      // A workspace owner who is a plain organization member manages members.
      await request(t.http).patch(`${base}/${editor.body.payload.id}`).set(bearer(owner)).send({ role: 'owner' }).expect(200);
      await request(t.http).post(base).set(bearer(member)).send({ userId: newcomer.id, role: 'viewer' }).expect(201);
      const [n] = await t.dataSource.query(`SELECT count(*)::int AS n FROM workspace_members WHERE workspace_id = $1`, [ws]);
      expect(n.n).toBe(3);
    });

    it('PATCH takes the workspace member as read: id and userId must be its own, the other read-only keys are ignored', async () => {
      const { org, owner, admin, member } = await organizationWithRoles(t.http);
      const ws = await createWorkspace(owner, org.id);
      const base = `${API}/organizations/${org.id}/workspaces/${ws}/members`;
      const added = await request(t.http).post(base).set(bearer(owner)).send({ userId: member.id, role: 'editor' }).expect(201);
      const url = `${base}/${added.body.payload.id}`;
      const read = (await request(t.http).get(url).set(bearer(admin)).expect(200)).body.payload;
      const res = await request(t.http)
        .patch(url)
        .set(bearer(admin))
        .send({ ...read, role: 'viewer', userId: read.userId.toUpperCase(), user: { ...read.user, email: 'other@example.test' }, joinedAt: '2000-01-01T00:00:00.000Z' })
        .expect(200);
      expect(res.body.payload).toMatchObject({ ...read, role: 'viewer', updatedAt: expect.any(String) });
      const ownerMembership = (await request(t.http).get(base).set(bearer(owner)).expect(200)).body.payload.items.find((m: { userId: string }) => m.userId === owner.id);
      for (const [key, value] of [
        ['id', ownerMembership.id],
        ['userId', owner.id],
      ] as const) {
        const moved = await request(t.http).patch(url).set(bearer(admin)).send({ ...read, role: 'owner', [key]: value }).expect(400);
        expect(moved.body.code).toBe('VALIDATION_ERROR');
        expect(problemsOf(moved.body)).toEqual([{ field: key, reason: expect.stringMatching(/must be/) }]);
      }
      const rows = await t.dataSource.query(`SELECT user_id, role FROM workspace_members WHERE workspace_id = $1 ORDER BY role`, [ws]);
      expect(rows).toEqual([
        { user_id: owner.id, role: 'owner' },
        { user_id: member.id, role: 'viewer' },
      ]);
    });

    it('editors write and viewers only read (document rights through WorkspaceAccessService)', async () => {
      const { org, owner, admin, member, guest } = await organizationWithRoles(t.http);
      const ws = await createWorkspace(owner, org.id);
      const base = `${API}/organizations/${org.id}/workspaces/${ws}/members`;
      await request(t.http).post(base).set(bearer(owner)).send({ userId: member.id, role: 'editor' }).expect(201);
      await request(t.http).post(base).set(bearer(owner)).send({ userId: guest.id, role: 'viewer' }).expect(201);
      const { WorkspaceAccessService } = await import('../../../src/modules/tenancy/services/workspace-access.service.js');
      const access = t.app.get(WorkspaceAccessService);
      await expect(access.require(member.id, ws, 'write')).resolves.toMatchObject({ workspaceRole: 'editor', canWrite: true, canManage: false });
      await expect(access.require(guest.id, ws, 'read')).resolves.toMatchObject({ workspaceRole: 'viewer', canWrite: false });
      await expect(access.require(guest.id, ws, 'write')).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(access.require(admin.id, ws, 'manage')).resolves.toMatchObject({ organizationRole: 'admin', canManage: true });
      await expect(access.require((await registerUser(t.http)).id, ws, 'read')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('answers a workspace member id of another workspace with NOT_FOUND', async () => {
      const { org, owner, member } = await organizationWithRoles(t.http);
      const ws1 = await createWorkspace(owner, org.id);
      const ws2 = await createWorkspace(owner, org.id);
      const m = await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${ws1}/members`).set(bearer(owner)).send({ userId: member.id }).expect(201);
      await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${ws2}/members/${m.body.payload.id}`).set(bearer(owner)).expect(404);
      await request(t.http).delete(`${API}/organizations/${org.id}/workspaces/${ws2}/members/${m.body.payload.id}`).set(bearer(owner)).expect(404);
      await request(t.http).get(`${API}/organizations/${org.id}/workspaces/${ws1}/members/${m.body.payload.id}`).set(bearer(owner)).expect(200);
    });
  });
});
