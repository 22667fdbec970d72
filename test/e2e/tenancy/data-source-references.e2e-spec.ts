import request from 'supertest';
import { DocumentSourceService } from '../../../src/modules/tenancy/services/document-source.service.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addMember, API, bearer, organizationWithRoles, registerUser, type TestUser } from './tenancy-helpers.js';
import { problemsOf } from '../../utils/error-details.js';
import { blockedSessions, holdLock } from '../../utils/row-locks.js';

describe('tenancy: data-source references', () => {
  let t: TestApp;
  let sources: DocumentSourceService;

  beforeAll(async () => {
    t = await createTestApp();
    sources = t.app.get(DocumentSourceService);
  });
  afterAll(async () => {
    await t.close();
  });

  async function createWorkspace(by: TestUser, organizationId: string, body: Record<string, unknown> = {}): Promise<string> {
    const slug = `ws-${Math.random().toString(36).slice(2, 8)}`;
    const res = await request(t.http).post(`${API}/organizations/${organizationId}/workspaces`).set(bearer(by)).send({ name: slug, slug, ...body });
    if (res.status !== 201) {
      throw new Error(`create workspace failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body.payload.id;
  }

  /** An organization with a source and a target workspace; `member` owns the target and can read the source. */
  async function setup(): Promise<Awaited<ReturnType<typeof organizationWithRoles>> & { source: string; target: string; base: string }> {
    const roles = await organizationWithRoles(t.http);
    const source = await createWorkspace(roles.owner, roles.org.id);
    const target = await createWorkspace(roles.owner, roles.org.id);
    await request(t.http).post(`${API}/organizations/${roles.org.id}/workspaces/${source}/members`).set(bearer(roles.owner)).send({ userId: roles.member.id, role: 'viewer' }).expect(201);
    await request(t.http).post(`${API}/organizations/${roles.org.id}/workspaces/${target}/members`).set(bearer(roles.owner)).send({ userId: roles.member.id, role: 'owner' }).expect(201);
    return { ...roles, source, target, base: `${API}/organizations/${roles.org.id}/workspaces/${target}/data-source-references` };
  }

  it('adds a reference; while active the source serves the document type read-only; pause, enable and delete restore local data', async () => {
    const { member, source, target, base } = await setup();
    expect(await sources.resolve(target, 'catalog')).toEqual({ workspaceId: target, readOnly: false, referenceId: null });

    const created = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: source, docType: 'catalog' }).expect(201);
    const ref = created.body.payload;
    expect(ref).toMatchObject({ workspaceId: target, sourceWorkspaceId: source, docType: 'catalog', status: 'active', createdBy: member.id });
    expect(await sources.resolve(target, 'catalog')).toEqual({ workspaceId: source, readOnly: true, referenceId: ref.id });
    // Other document types and the source itself are untouched.
    expect(await sources.resolve(target, 'orders')).toEqual({ workspaceId: target, readOnly: false, referenceId: null });
    expect(await sources.resolve(source, 'catalog')).toEqual({ workspaceId: source, readOnly: false, referenceId: null });

    const paused = await request(t.http).patch(`${base}/${ref.id}`).set(bearer(member)).send({ status: 'inactive' }).expect(200);
    expect(paused.body.payload).toMatchObject({ status: 'inactive', updatedBy: member.id });
    expect(await sources.resolve(target, 'catalog')).toEqual({ workspaceId: target, readOnly: false, referenceId: null });

    await request(t.http).patch(`${base}/${ref.id}`).set(bearer(member)).send({ status: 'active' }).expect(200);
    expect((await sources.resolve(target, 'catalog')).readOnly).toBe(true);

    const got = await request(t.http).get(`${base}/${ref.id}`).set(bearer(member)).expect(200);
    expect(got.body.payload.status).toBe('active');
    const list = await request(t.http).get(base).set(bearer(member)).expect(200);
    expect(list.body.payload).toMatchObject({ total: 1, items: [expect.objectContaining({ id: ref.id })] });

    await request(t.http).delete(`${base}/${ref.id}`).set(bearer(member)).expect(200);
    await request(t.http).get(`${base}/${ref.id}`).set(bearer(member)).expect(404);
    expect(await sources.resolve(target, 'catalog')).toEqual({ workspaceId: target, readOnly: false, referenceId: null });
  });

  it('needs read permission on the source workspace (FORBIDDEN) and workspace ownership of the target', async () => {
    const { org, owner, member, guest, target, base } = await setup();
    const secret = await createWorkspace(owner, org.id);
    const denied = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: secret, docType: 'catalog' }).expect(403);
    expect(denied.body).toMatchObject({ code: 'FORBIDDEN', details: { reason: expect.stringContaining('source') } });

    // An editor of the target cannot add, pause or delete.
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${target}/members`).set(bearer(owner)).send({ userId: guest.id, role: 'editor' }).expect(201);
    await request(t.http).post(base).set(bearer(guest)).send({ sourceWorkspaceId: org.defaultWorkspaceId, docType: 'catalog' }).expect(403);
    const ok = await request(t.http).post(base).set(bearer(owner)).send({ sourceWorkspaceId: secret, docType: 'catalog' }).expect(201);
    await request(t.http).patch(`${base}/${ok.body.payload.id}`).set(bearer(guest)).send({ status: 'inactive' }).expect(403);
    await request(t.http).delete(`${base}/${ok.body.payload.id}`).set(bearer(guest)).expect(403);
    // One reference is for the workspace owner (spec 4.3); readers list them (they are part of the workspace record).
    const viewer = await registerUser(t.http);
    await addMember(t.http, owner, org.id, viewer);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${target}/members`).set(bearer(owner)).send({ userId: viewer.id, role: 'viewer' }).expect(201);
    for (const reader of [viewer, guest]) {
      const refused = await request(t.http).get(`${base}/${ok.body.payload.id}`).set(bearer(reader)).expect(403);
      expect(refused.body).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'manage permission required' } });
      expect((await request(t.http).get(base).set(bearer(reader)).expect(200)).body.payload.total).toBe(1);
    }
    await request(t.http).get(`${base}/${ok.body.payload.id}`).set(bearer(member)).expect(200);
    await request(t.http).get(`${base}/${ok.body.payload.id}`).set(bearer(owner)).expect(200);
    const [n] = await t.dataSource.query(`SELECT count(*)::int AS n, min(status) AS status FROM data_source_references WHERE workspace_id = $1`, [target]);
    expect(n).toEqual({ n: 1, status: 'active' });
  });

  it('allows one active reference per document type; organization owner/admin may force a replacement', async () => {
    const { org, owner, admin, member, source, target, base } = await setup();
    const other = await createWorkspace(owner, org.id, { visibility: 'public' });
    const first = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: source, docType: 'catalog' }).expect(201);
    const clash = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: other, docType: 'catalog' }).expect(409);
    expect(clash.body).toMatchObject({ code: 'ALREADY_EXISTS', payload: { referenceId: first.body.payload.id } });
    const sameAgain = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: source, docType: 'catalog', status: 'inactive' }).expect(409);
    expect(sameAgain.body.code).toBe('ALREADY_EXISTS');
    expect((await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: other, docType: 'catalog', force: true }).expect(403)).body.code).toBe('FORBIDDEN');
    // A paused second reference is allowed, but cannot be enabled while the first is active.
    const paused = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: other, docType: 'catalog', status: 'inactive' }).expect(201);
    expect((await request(t.http).patch(`${base}/${paused.body.payload.id}`).set(bearer(member)).send({ status: 'active' }).expect(409)).body.code).toBe('ALREADY_EXISTS');
    await request(t.http).delete(`${base}/${paused.body.payload.id}`).set(bearer(member)).expect(200);

    const forced = await request(t.http).post(base).set(bearer(admin)).send({ sourceWorkspaceId: other, docType: 'catalog', force: true }).expect(201);
    expect(await sources.resolve(target, 'catalog')).toEqual({ workspaceId: other, readOnly: true, referenceId: forced.body.payload.id });
    const old = await request(t.http).get(`${base}/${first.body.payload.id}`).set(bearer(owner)).expect(200);
    expect(old.body.payload.status).toBe('inactive');
  });

  it('two active references of one type added at once: one 201, the other ALREADY_EXISTS naming the winner', async () => {
    const { org, owner, source, target, base } = await setup();
    const other = await createWorkspace(owner, org.id, { visibility: 'public' });
    // Holding the target's row lets both creates pass their checks and queue at the insert's foreign-key check.
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE`, [target]);
    const first = request(t.http).post(base).set(bearer(owner)).send({ sourceWorkspaceId: source, docType: 'catalog' }).then((r) => r);
    await blockedSessions(t.dataSource, 1);
    const second = request(t.http).post(base).set(bearer(owner)).send({ sourceWorkspaceId: other, docType: 'catalog' }).then((r) => r);
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    const results = await Promise.all([first, second]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 409]);
    const winner = results.find((r) => r.status === 201)!.body.payload;
    expect(results.find((r) => r.status === 409)!.body).toMatchObject({
      code: 'ALREADY_EXISTS',
      details: { field: 'docType', reason: expect.stringContaining('pause it first') },
      payload: { referenceId: winner.id },
    });
    expect(await sources.resolve(target, 'catalog')).toEqual({ workspaceId: winner.sourceWorkspaceId, readOnly: true, referenceId: winner.id });
  });

  it('validates the body: self reference, unknown or foreign source, bad docType and status', async () => {
    const { member, target, base } = await setup();
    const other = await organizationWithRoles(t.http);
    const self = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: target, docType: 'catalog' }).expect(400);
    expect(self.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'sourceWorkspaceId' } });
    // UUIDs are case-insensitive: the target's id in upper case is a self reference too (it used to reach the
    // database's CHECK and answer 500), here and in the workspace's set.
    const selfUpper = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: target.toUpperCase(), docType: 'catalog' }).expect(400);
    expect(selfUpper.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'sourceWorkspaceId' } });
    const workspace = base.replace(/\/data-source-references$/, '');
    const selfInSet = await request(t.http).patch(workspace).set(bearer(member)).send({ dataSourceReferences: [{ sourceWorkspaceId: target.toUpperCase(), docType: 'catalog' }] }).expect(400);
    expect(selfInSet.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'sourceWorkspaceId' } });
    const foreign = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: other.org.defaultWorkspaceId, docType: 'catalog' }).expect(404);
    expect(foreign.body.code).toBe('NOT_FOUND');
    await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: '00000000-0000-4000-8000-000000000000', docType: 'catalog' }).expect(404);
    const bad = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: 'x', docType: '../etc', status: 'on' }).expect(400);
    expect(problemsOf(bad.body).map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['sourceWorkspaceId', 'docType', 'status']));
    await request(t.http).patch(`${base}/00000000-0000-4000-8000-000000000000`).set(bearer(member)).send({ status: 'inactive' }).expect(404);
    const [n] = await t.dataSource.query(`SELECT count(*)::int AS n FROM data_source_references WHERE workspace_id = $1`, [target]);
    expect(n.n).toBe(0);
  });

  it('takes and answers mode "replacement", the one mode spec 2.3 and 4.3 name; any other mode is VALIDATION_ERROR', async () => {
    const { org, owner, member, source, target, base } = await setup();
    const created = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: source, docType: 'catalog', mode: 'replacement' }).expect(201);
    expect(created.body.payload).toMatchObject({ docType: 'catalog', mode: 'replacement', status: 'active' });
    expect(await sources.resolve(target, 'catalog')).toEqual({ workspaceId: source, readOnly: true, referenceId: created.body.payload.id });
    // The record as read goes back on PATCH, mode included.
    const paused = await request(t.http).patch(`${base}/${created.body.payload.id}`).set(bearer(member)).send({ ...created.body.payload, status: 'inactive' }).expect(200);
    expect(paused.body.payload).toMatchObject({ mode: 'replacement', status: 'inactive' });
    const merge = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: source, docType: 'orders', mode: 'merge' }).expect(400);
    expect(merge.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'mode' } });
    const ws = await request(t.http)
      .patch(`${API}/organizations/${org.id}/workspaces/${target}`)
      .set(bearer(owner))
      .send({ dataSourceReferences: [{ sourceWorkspaceId: source, docType: 'catalog', mode: 'replacement', status: 'active' }] })
      .expect(200);
    expect(ws.body.payload.dataSourceReferences).toEqual([expect.objectContaining({ id: created.body.payload.id, mode: 'replacement', status: 'active' })]);
  });

  it('writes the whole set through the workspace PATCH (dataSourceReferences) and shows it on the workspace', async () => {
    const { org, owner, member, source, target } = await setup();
    const other = await createWorkspace(owner, org.id, { visibility: 'public' });
    const wsPath = `${API}/organizations/${org.id}/workspaces/${target}`;
    const res = await request(t.http)
      .patch(wsPath)
      .set(bearer(member))
      .send({ dataSourceReferences: [{ sourceWorkspaceId: source, docType: 'catalog' }, { sourceWorkspaceId: other, docType: 'orders', status: 'inactive' }] })
      .expect(200);
    expect(res.body.payload.dataSourceReferences).toEqual([
      expect.objectContaining({ sourceWorkspaceId: source, docType: 'catalog', status: 'active' }),
      expect.objectContaining({ sourceWorkspaceId: other, docType: 'orders', status: 'inactive' }),
    ]);
    expect((await sources.resolve(target, 'catalog')).workspaceId).toBe(source);
    expect((await sources.resolve(target, 'orders')).workspaceId).toBe(target);

    // Swap: catalog paused, orders enabled; then an empty list removes everything.
    const swapped = await request(t.http)
      .patch(wsPath)
      .set(bearer(member))
      .send({ dataSourceReferences: [{ sourceWorkspaceId: source, docType: 'catalog', status: 'inactive' }, { sourceWorkspaceId: other, docType: 'orders' }] })
      .expect(200);
    expect(swapped.body.payload.dataSourceReferences.map((r: { status: string }) => r.status)).toEqual(['inactive', 'active']);
    expect((await sources.resolve(target, 'orders')).workspaceId).toBe(other);

    const twoActive = await request(t.http)
      .patch(wsPath)
      .set(bearer(member))
      .send({ name: 'Changed', dataSourceReferences: [{ sourceWorkspaceId: source, docType: 'orders' }, { sourceWorkspaceId: other, docType: 'orders' }] })
      .expect(400);
    expect(twoActive.body.code).toBe('VALIDATION_ERROR');
    const secret = await createWorkspace(owner, org.id);
    await request(t.http).patch(wsPath).set(bearer(member)).send({ name: 'Changed', dataSourceReferences: [{ sourceWorkspaceId: secret, docType: 'catalog' }] }).expect(403);
    // Nothing half-applied: the name and the references are unchanged after the failed PATCHes.
    const unchanged = await request(t.http).get(wsPath).set(bearer(member)).expect(200);
    expect(unchanged.body.payload.name).not.toBe('Changed');
    expect(unchanged.body.payload.dataSourceReferences).toHaveLength(2);

    const cleared = await request(t.http).patch(wsPath).set(bearer(member)).send({ dataSourceReferences: [] }).expect(200);
    expect(cleared.body.payload.dataSourceReferences).toEqual([]);
    expect(await sources.resolve(target, 'orders')).toEqual({ workspaceId: target, readOnly: false, referenceId: null });

    // Also accepted on create.
    const created = await request(t.http)
      .post(`${API}/organizations/${org.id}/workspaces`)
      .set(bearer(owner))
      .send({ name: 'Mirror', slug: 'mirror', dataSourceReferences: [{ sourceWorkspaceId: source, docType: 'catalog' }] })
      .expect(201);
    expect(created.body.payload.dataSourceReferences).toEqual([expect.objectContaining({ sourceWorkspaceId: source, status: 'active' })]);
  });

  it('ignores a reference whose source workspace was deleted, and refuses changes on an archived target', async () => {
    const { org, owner, member, source, target, base } = await setup();
    const ref = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: source, docType: 'catalog' }).expect(201);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${target}/archive`).set(bearer(owner)).expect(200);
    expect((await request(t.http).patch(`${base}/${ref.body.payload.id}`).set(bearer(member)).send({ status: 'inactive' }).expect(403)).body.code).toBe('FORBIDDEN');
    await request(t.http).get(base).set(bearer(member)).expect(200);
    await request(t.http).post(`${API}/organizations/${org.id}/workspaces/${target}/restore`).set(bearer(owner)).expect(200);

    await request(t.http).delete(`${API}/organizations/${org.id}/workspaces/${source}`).set(bearer(owner)).expect(200);
    expect(await sources.resolve(target, 'catalog')).toEqual({ workspaceId: target, readOnly: false, referenceId: null });
  });

  it('answers a reference of another workspace or organization with NOT_FOUND', async () => {
    const a = await setup();
    const b = await setup();
    const ref = await request(t.http).post(b.base).set(bearer(b.member)).send({ sourceWorkspaceId: b.source, docType: 'catalog' }).expect(201);
    await request(t.http).get(`${a.base}/${ref.body.payload.id}`).set(bearer(a.owner)).expect(404);
    await request(t.http).delete(`${a.base}/${ref.body.payload.id}`).set(bearer(a.owner)).expect(404);
    await request(t.http).get(`${b.base}/${ref.body.payload.id}`).set(bearer(a.owner)).expect(404);
    const sameOrgOtherWs = `${API}/organizations/${b.org.id}/workspaces/${b.source}/data-source-references/${ref.body.payload.id}`;
    await request(t.http).get(sameOrgOtherWs).set(bearer(b.owner)).expect(404);
    await request(t.http).get(`${b.base}/${ref.body.payload.id}`).set(bearer(b.owner)).expect(200);
  });

  it('takes a reference as read back on PATCH …/data-source-references/{refId}; its id, source and type cannot change', async () => {
    const { member, source, target, base } = await setup();
    const created = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: source, docType: 'catalog' }).expect(201);
    const read = (await request(t.http).get(`${base}/${created.body.payload.id}`).set(bearer(member)).expect(200)).body.payload;
    const paused = await request(t.http).patch(`${base}/${read.id}`).set(bearer(member)).send({ ...read, status: 'inactive' }).expect(200);
    expect(paused.body.payload).toMatchObject({ id: read.id, sourceWorkspaceId: source, docType: 'catalog', status: 'inactive', createdAt: read.createdAt });
    // The read-only keys are ignored, whatever they say; the record read again goes back unchanged.
    await request(t.http)
      .patch(`${base}/${read.id}`)
      .set(bearer(member))
      .send({ ...paused.body.payload, workspaceId: source, organizationId: 'x', createdBy: null, updatedAt: 1 })
      .expect(200);
    expect((await sources.resolve(target, 'catalog')).readOnly).toBe(false);

    for (const [change, field] of [
      [{ id: '00000000-0000-4000-8000-000000000000' }, 'id'],
      [{ sourceWorkspaceId: target }, 'sourceWorkspaceId'],
      [{ docType: 'orders' }, 'docType'],
    ] as const) {
      const refused = await request(t.http).patch(`${base}/${read.id}`).set(bearer(member)).send({ ...read, status: 'active', ...change }).expect(400);
      expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    }
    // Nothing applied by the refused PATCHes; keys a reference never has are still refused.
    expect((await request(t.http).get(`${base}/${read.id}`).set(bearer(member)).expect(200)).body.payload.status).toBe('inactive');
    await request(t.http).patch(`${base}/${read.id}`).set(bearer(member)).send({ ...read, force: true }).expect(400);
  });

  it("takes the workspace as read back on PATCH, dataSourceReferences included: a listed reference keeps its id", async () => {
    const { org, owner, member, source, target } = await setup();
    const other = await createWorkspace(owner, org.id, { visibility: 'public' });
    const wsPath = `${API}/organizations/${org.id}/workspaces/${target}`;
    await request(t.http)
      .patch(wsPath)
      .set(bearer(member))
      .send({ dataSourceReferences: [{ sourceWorkspaceId: source, docType: 'catalog' }, { sourceWorkspaceId: other, docType: 'orders', status: 'inactive' }] })
      .expect(200);
    const read = (await request(t.http).get(wsPath).set(bearer(member)).expect(200)).body.payload;
    const [catalog, orders] = read.dataSourceReferences;

    // A settings screen: pause one reference, enable the other, rename, save the record as read.
    const edited = [{ ...catalog, status: 'inactive' }, { ...orders, status: 'active' }];
    const saved = await request(t.http).patch(wsPath).set(bearer(member)).send({ ...read, name: 'Edited', dataSourceReferences: edited }).expect(200);
    expect(saved.body.payload.name).toBe('Edited');
    expect(saved.body.payload.dataSourceReferences).toEqual([
      expect.objectContaining({ id: catalog.id, docType: 'catalog', status: 'inactive', createdAt: catalog.createdAt, createdBy: member.id }),
      expect.objectContaining({ id: orders.id, docType: 'orders', status: 'active', createdAt: orders.createdAt }),
    ]);
    expect(await sources.resolve(target, 'orders')).toEqual({ workspaceId: other, readOnly: true, referenceId: orders.id });
    // The answer itself goes back unchanged.
    const again = await request(t.http).patch(wsPath).set(bearer(member)).send(saved.body.payload).expect(200);
    expect(again.body.payload.dataSourceReferences.map((r: { id: string }) => r.id)).toEqual([catalog.id, orders.id]);

    // The workspace's id and slug, when sent, must be its own; keys a workspace never has are still refused.
    for (const [change, field] of [
      [{ id: other }, 'id'],
      [{ slug: 'renamed' }, 'slug'],
    ] as const) {
      const refused = await request(t.http).patch(wsPath).set(bearer(member)).send({ ...read, name: 'Refused', ...change }).expect(400);
      expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    }
    await request(t.http).patch(wsPath).set(bearer(member)).send({ ...read, nmae: 'typo' }).expect(400);
    expect((await request(t.http).get(wsPath).set(bearer(member)).expect(200)).body.payload.name).toBe('Edited');
  });

  it("reads an item's id among this workspace's references only: its own must keep its pair, another workspace's is ignored", async () => {
    const a = await setup();
    const b = await setup();
    const aPath = `${API}/organizations/${a.org.id}/workspaces/${a.target}`;
    const own = await request(t.http).post(a.base).set(bearer(a.member)).send({ sourceWorkspaceId: a.source, docType: 'catalog' }).expect(201);
    const foreign = await request(t.http).post(b.base).set(bearer(b.member)).send({ sourceWorkspaceId: b.source, docType: 'catalog' }).expect(201);
    const sameOrg = await request(t.http)
      .post(`${API}/organizations/${a.org.id}/workspaces/${a.source}/data-source-references`)
      .set(bearer(a.owner))
      .send({ sourceWorkspaceId: a.org.defaultWorkspaceId, docType: 'catalog' })
      .expect(201);

    // An id of this workspace's reference with another pair: refused, not turned into "remove it, add another".
    const moved = await request(t.http)
      .patch(aPath)
      .set(bearer(a.member))
      .send({ dataSourceReferences: [{ ...own.body.payload, docType: 'orders' }] })
      .expect(400);
    expect(moved.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'dataSourceReferences[0].id' } });

    // Ids of other workspaces' references (another organization, the same organization) and unknown ids are
    // ignored: the items count by their pair here, and those references stay exactly as they were.
    for (const id of [foreign.body.payload.id, sameOrg.body.payload.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await request(t.http)
        .patch(aPath)
        .set(bearer(a.member))
        .send({ dataSourceReferences: [{ id, sourceWorkspaceId: a.source, docType: 'catalog', status: 'inactive' }] })
        .expect(200);
      expect(res.body.payload.dataSourceReferences).toEqual([expect.objectContaining({ id: own.body.payload.id, status: 'inactive' })]);
      await request(t.http).patch(aPath).set(bearer(a.member)).send({ dataSourceReferences: [{ id, sourceWorkspaceId: a.source, docType: 'catalog' }] }).expect(200);
    }
    const others = await t.dataSource.query(`SELECT id, workspace_id, status, doc_type FROM data_source_references WHERE id = ANY($1) ORDER BY id`, [
      [foreign.body.payload.id, sameOrg.body.payload.id],
    ]);
    expect(others).toEqual(
      expect.arrayContaining([
        { id: foreign.body.payload.id, workspace_id: b.target, status: 'active', doc_type: 'catalog' },
        { id: sameOrg.body.payload.id, workspace_id: a.source, status: 'active', doc_type: 'catalog' },
      ]),
    );
    expect(others).toHaveLength(2);
    // Copying the references read from one workspace into a new one creates that workspace's own references.
    const copied = await request(t.http)
      .post(`${API}/organizations/${a.org.id}/workspaces`)
      .set(bearer(a.owner))
      .send({ name: 'Copy', slug: 'copy', dataSourceReferences: [own.body.payload] })
      .expect(201);
    expect(copied.body.payload.dataSourceReferences).toEqual([expect.objectContaining({ sourceWorkspaceId: a.source, docType: 'catalog', status: 'active' })]);
    expect(copied.body.payload.dataSourceReferences[0].id).not.toBe(own.body.payload.id);
  });

  it('references every document type /doc accepts (order.v2, 2024-report), and refuses "." and ".." as /doc does', async () => {
    const { org, owner, member, source, target, base } = await setup();
    for (const docType of ['order.v2', '2024-report', 'v1.2', '_x']) {
      const doc = await request(t.http)
        .post(`${API}/doc/${docType}`)
        .set(bearer(owner))
        .send({ id: 'shared', organizationId: org.id, workspaceId: source, title: 'Shared', metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] } })
        .expect(201);
      expect(doc.body.payload).toMatchObject({ docType });
      const ref = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: source, docType }).expect(201);
      expect(ref.body.payload.docType).toBe(docType);
      expect(await sources.resolve(target, docType)).toEqual({ workspaceId: source, readOnly: true, referenceId: ref.body.payload.id });
      // The document that exists in the source is now served, read-only, in the target.
      const served = await request(t.http).get(`${API}/doc/${docType}/shared?workspaceId=${target}`).set(bearer(member)).expect(200);
      expect(served.body.payload.document).toMatchObject({ docType, workspaceId: source, readOnly: true });
    }
    // The same rule on the workspace PATCH.
    const wsPath = `${API}/organizations/${org.id}/workspaces/${target}`;
    await request(t.http).patch(wsPath).set(bearer(member)).send({ dataSourceReferences: [{ sourceWorkspaceId: source, docType: 'order.v3' }] }).expect(200);
    for (const docType of ['.', '..', 'a/b', 'x'.repeat(65), '']) {
      const refused = await request(t.http).post(base).set(bearer(member)).send({ sourceWorkspaceId: source, docType }).expect(400);
      expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'docType' } });
      const inSet = await request(t.http).patch(wsPath).set(bearer(member)).send({ dataSourceReferences: [{ sourceWorkspaceId: source, docType }] }).expect(400);
      expect(inSet.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'dataSourceReferences[0].docType' } });
    }
  });

  it('declares the 409 ALREADY_EXISTS answers of create and enable in the OpenAPI document', async () => {
    const doc = (await request(t.http).get('/api/docs-json').expect(200)).body as {
      paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>>;
    };
    const base = '/api/v1/organizations/{organizationId}/workspaces/{workspaceId}/data-source-references';
    for (const operation of [doc.paths[base].post, doc.paths[`${base}/{refId}`].patch]) {
      expect(operation.responses['409']?.description).toContain('ALREADY_EXISTS');
    }
  });
});
