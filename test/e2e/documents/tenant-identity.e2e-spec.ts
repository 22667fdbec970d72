import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, addWorkspace, API, bearer, createRow, newUser } from './documents.fixtures.js';

const FIELDS = [{ id: 'name', name: 'Name', type: 'text' }];

/** Strips what differs between any two answers (request id, timing) so the rest can be compared verbatim. */
function answer(res: request.Response): unknown {
  return { status: res.status, body: res.body };
}

describe('documents belong to their tenant: per-scope ids, workspace context, replacement with the same id', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  async function create(user: TestUser, docId: string, body: Record<string, unknown> = {}, docType = 'table'): Promise<request.Response> {
    return request(t.http)
      .post(`${API}/doc/${docType}`)
      .set(bearer(user))
      .send({ id: docId, organizationId: user.defaultOrganizationId, workspaceId: user.defaultWorkspaceId, metadata: { fields: FIELDS }, ...body });
  }

  beforeAll(async () => {
    t = await createTestApp();
    alice = await newUser(t.http);
    bob = await newUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  it('lets two tenants use the same document id, each seeing only its own rows', async () => {
    expect((await create(alice, 'orders')).status).toBe(201);
    expect((await create(bob, 'orders')).status).toBe(201);
    await createRow(t.http, alice, { docType: 'table', docId: 'orders', path: `${API}/doc/table/orders` }, { id: 'a1', values: { name: 'Alice row' } });
    await createRow(t.http, bob, { docType: 'table', docId: 'orders', path: `${API}/doc/table/orders` }, { id: 'b1', values: { name: 'Bob row' } });

    const aliceRows = await request(t.http).get(`${API}/doc/table/orders/data`).set(bearer(alice)).expect(200);
    expect(aliceRows.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['a1']);
    const bobRows = await request(t.http).get(`${API}/doc/table/orders/data?workspaceId=${bob.defaultWorkspaceId}`).set(bearer(bob)).expect(200);
    expect(bobRows.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['b1']);
    const bobDoc = await request(t.http).get(`${API}/doc/table/orders`).set(bearer(bob)).expect(200);
    expect(bobDoc.body.payload.document).toMatchObject({ id: 'orders', organizationId: bob.defaultOrganizationId, workspaceId: bob.defaultWorkspaceId });

    // Bob naming Alice's workspace learns nothing: the same answer as for a workspace that does not exist.
    const foreign = await request(t.http).get(`${API}/doc/table/orders/data?workspaceId=${alice.defaultWorkspaceId}`).set(bearer(bob));
    const unknown = await request(t.http).get(`${API}/doc/table/orders/data?workspaceId=00000000-0000-4000-8000-000000000000`).set(bearer(bob));
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('DOC_NOT_FOUND');
    expect(answer(foreign)).toEqual(answer(unknown));

    // Events tell same-id documents of different tenants apart.
    const events = await t.dataSource.query<Array<{ organization_id: string; workspace_id: string }>>(
      `SELECT DISTINCT organization_id, workspace_id FROM outbox WHERE doc_type = 'table' AND doc_id = 'orders' AND event_type = 'data_row_created'`,
    );
    expect(events).toEqual(
      expect.arrayContaining([
        { organization_id: alice.defaultOrganizationId, workspace_id: alice.defaultWorkspaceId },
        { organization_id: bob.defaultOrganizationId, workspace_id: bob.defaultWorkspaceId },
      ]),
    );
    expect(events).toHaveLength(2);
  });

  it('answers a stranger the same for an id taken elsewhere and a free one', async () => {
    expect((await create(alice, 'taken-id')).status).toBe(201);
    const stranger = await newUser(t.http);
    const takenRead = await request(t.http).get(`${API}/doc/table/taken-id`).set(bearer(stranger));
    const freeRead = await request(t.http).get(`${API}/doc/table/free-id-${Date.now()}`).set(bearer(stranger));
    expect(takenRead.status).toBe(404);
    expect(takenRead.body).toEqual(freeRead.body);
    const takenCreate = await create(stranger, 'taken-id');
    const freeCreate = await create(stranger, `free-${Date.now()}`);
    expect(takenCreate.status).toBe(201);
    expect(freeCreate.status).toBe(201);
    expect(Object.keys(takenCreate.body.payload).sort()).toEqual(Object.keys(freeCreate.body.payload).sort());
    // Inside one workspace the id is still unique.
    const dup = await create(alice, 'taken-id');
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
  });

  it('applies each context rule: query, header, both, neither with one match, neither with several', async () => {
    const second = await addWorkspace(t.dataSource, alice);
    expect((await create(alice, 'twin')).status).toBe(201);
    expect((await create(alice, 'twin', { workspaceId: second })).status).toBe(201);
    await request(t.http).post(`${API}/doc/table/twin/data?workspaceId=${second}`).set(bearer(alice)).send({ id: 'in-second', values: { name: 'x' } }).expect(201);

    const byQuery = await request(t.http).get(`${API}/doc/table/twin/data?workspaceId=${second}`).set(bearer(alice)).expect(200);
    expect(byQuery.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['in-second']);
    const byHeader = await request(t.http).get(`${API}/doc/table/twin/data`).set(bearer(alice)).set('X-Workspace-Id', second).expect(200);
    expect(byHeader.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['in-second']);
    const home = await request(t.http).get(`${API}/doc/table/twin/data`).set(bearer(alice)).set('X-Workspace-Id', alice.defaultWorkspaceId).expect(200);
    expect(home.body.payload.items).toEqual([]);
    await request(t.http).get(`${API}/doc/table/twin/data?workspaceId=${second}`).set(bearer(alice)).set('X-Workspace-Id', second).expect(200);

    const both = await request(t.http).get(`${API}/doc/table/twin/data?workspaceId=${second}`).set(bearer(alice)).set('X-Workspace-Id', alice.defaultWorkspaceId);
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('VALIDATION_ERROR');
    expect(both.body.details.field).toBe('x-workspace-id');
    const badHeader = await request(t.http).get(`${API}/doc/table/twin/data`).set(bearer(alice)).set('X-Workspace-Id', 'not-a-uuid');
    expect(badHeader.status).toBe(400);

    const ambiguous = await request(t.http).get(`${API}/doc/table/twin`).set(bearer(alice));
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.code).toBe('AMBIGUOUS_DOCUMENT');
    expect(ambiguous.body.payload.candidates).toEqual(
      expect.arrayContaining([
        { organizationId: alice.defaultOrganizationId, workspaceId: alice.defaultWorkspaceId },
        { organizationId: alice.defaultOrganizationId, workspaceId: second },
      ]),
    );
    expect(ambiguous.body.payload.candidates).toHaveLength(2);

    // A member who can read only one of the two sees exactly one match: no ambiguity, nothing leaked.
    const viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, alice, viewer, 'viewer', second);
    const single = await request(t.http).get(`${API}/doc/table/twin/data`).set(bearer(viewer)).expect(200);
    expect(single.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['in-second']);
    // Writes go to the document the context names.
    await request(t.http).post(`${API}/doc/table/twin/data`).set(bearer(alice)).send({ id: 'x', values: { name: 'x' } }).expect(409);
    await request(t.http).post(`${API}/doc/table/twin/data`).set(bearer(alice)).set('X-Workspace-Id', alice.defaultWorkspaceId).send({ id: 'home-row', values: { name: 'x' } }).expect(201);
  });

  it('finds the one readable match without a context however many same-id documents the caller cannot read', async () => {
    // 105 older documents with the id in workspaces of the organization the member cannot read (more than one batch
    // of candidates): they must neither hide the member's one readable document nor change the answer (it used to be
    // DOC_NOT_FOUND past 25 of them).
    for (let i = 0; i < 105; i += 1) {
      const hidden = await addWorkspace(t.dataSource, alice);
      expect((await create(alice, 'crowded', { workspaceId: hidden })).status).toBe(201);
    }
    expect((await create(alice, 'crowded')).status).toBe(201);
    const member = await newUser(t.http);
    await addToWorkspace(t.dataSource, alice, member, 'editor');

    const found = await request(t.http).get(`${API}/doc/table/crowded`).set(bearer(member)).expect(200);
    expect(found.body.payload.document).toMatchObject({ id: 'crowded', workspaceId: alice.defaultWorkspaceId });
    // The owner reads all 106: ambiguous, listing at most 25 candidates.
    const ambiguous = await request(t.http).get(`${API}/doc/table/crowded`).set(bearer(alice));
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.code).toBe('AMBIGUOUS_DOCUMENT');
    expect(ambiguous.body.payload.candidates).toHaveLength(25);
  });

  it('replaces a type with a source workspace of the same ids: read-only source, local hidden and back after pause and delete', async () => {
    const owner = await newUser(t.http);
    const local = owner.defaultWorkspaceId;
    const source = await addWorkspace(t.dataSource, owner);
    expect((await create(owner, 'orders', {}, 'sales')).status).toBe(201);
    expect((await create(owner, 'orders', { workspaceId: source }, 'sales')).status).toBe(201);
    expect((await create(owner, 'only-in-source', { workspaceId: source }, 'sales')).status).toBe(201);
    const inLocal = `${API}/doc/sales/orders?workspaceId=${local}`;
    const path = (suffix: string, ws = local): string => `${API}/doc/sales/orders${suffix}?workspaceId=${ws}`;
    await request(t.http).post(path('/data')).set(bearer(owner)).send({ id: 'local-row', values: { name: 'local' } }).expect(201);
    await request(t.http).post(path('/data', source)).set(bearer(owner)).send({ id: 'source-row', values: { name: 'source' } }).expect(201);

    const ref = await request(t.http)
      .post(`${API}/organizations/${owner.defaultOrganizationId}/workspaces/${local}/data-source-references`)
      .set(bearer(owner))
      .send({ sourceWorkspaceId: source, docType: 'sales' })
      .expect(201);
    const refPath = `${API}/organizations/${owner.defaultOrganizationId}/workspaces/${local}/data-source-references/${ref.body.payload.id}`;

    const served = await request(t.http).get(inLocal).set(bearer(owner)).expect(200);
    expect(served.body.payload.document).toMatchObject({ workspaceId: source, readOnly: true });
    const rows = await request(t.http).get(path('/data')).set(bearer(owner)).expect(200);
    expect(rows.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['source-row']);
    // Spec 2.3: the source's data is marked read-only on every row read.
    expect(rows.body.payload.readOnly).toBe(true);
    const query = await request(t.http).post(path('/data/query')).set(bearer(owner)).send({}).expect(200);
    expect(query.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['source-row']);
    expect(query.body.payload.readOnly).toBe(true);
    const grouped = await request(t.http).post(path('/data/query')).set(bearer(owner)).send({ groupBy: { fields: [], aggregations: [{ kind: 'count' }] } }).expect(200);
    expect(grouped.body.payload.readOnly).toBe(true);
    expect((await request(t.http).get(`${path('/data')}&limit=10`).set(bearer(owner)).expect(200)).body.payload.readOnly).toBe(true);
    expect((await request(t.http).get(path('/data/source-row')).set(bearer(owner)).expect(200)).body.payload).toMatchObject({ id: 'source-row', readOnly: true });
    expect((await request(t.http).get(`${inLocal}&include=data`).set(bearer(owner)).expect(200)).body.payload.data.readOnly).toBe(true);
    expect((await request(t.http).get(path('/data', source)).set(bearer(owner)).expect(200)).body.payload.readOnly).toBe(false);
    const list = await request(t.http).get(`${API}/doc/sales?workspaceId=${local}`).set(bearer(owner)).expect(200);
    expect(list.body.payload.items.map((doc: { id: string; workspaceId: string; readOnly: boolean }) => [doc.id, doc.workspaceId, doc.readOnly])).toEqual([
      ['orders', source, true],
      ['only-in-source', source, true],
    ]);
    const onlyInSource = await request(t.http).get(`${API}/doc/sales/only-in-source?workspaceId=${local}`).set(bearer(owner)).expect(200);
    expect(onlyInSource.body.payload.document).toMatchObject({ workspaceId: source, readOnly: true });

    const write = await request(t.http).put(path('/data/source-row')).set(bearer(owner)).send({ values: { name: 'changed' } });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('FORBIDDEN');
    await request(t.http).post(path('/data')).set(bearer(owner)).send({ values: { name: 'new' } }).expect(403);
    await request(t.http).delete(inLocal).set(bearer(owner)).expect(403);
    await request(t.http).post(`${API}/doc/sales`).set(bearer(owner)).send({ id: 'new-local', organizationId: owner.defaultOrganizationId, workspaceId: local }).expect(403);
    // The source stays editable in its own workspace.
    await request(t.http).put(path('/data/source-row', source)).set(bearer(owner)).send({ values: { name: 'edited at source' } }).expect(200);
    // Without a context, the hidden local document is not a candidate: the source's is the one match.
    const noContext = await request(t.http).get(`${API}/doc/sales/orders`).set(bearer(owner)).expect(200);
    expect(noContext.body.payload.document).toMatchObject({ workspaceId: source, readOnly: false });

    // Pause: the local document again, editable, its data untouched.
    await request(t.http).patch(refPath).set(bearer(owner)).send({ status: 'inactive' }).expect(200);
    const paused = await request(t.http).get(path('/data')).set(bearer(owner)).expect(200);
    expect(paused.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['local-row']);
    expect(paused.body.payload.readOnly).toBe(false);
    await request(t.http).post(path('/data')).set(bearer(owner)).send({ id: 'after-pause', values: { name: 'x' } }).expect(201);
    await request(t.http).get(`${API}/doc/sales/only-in-source?workspaceId=${local}`).set(bearer(owner)).expect(404);

    // Enable, then delete: the source again, then the local document again.
    await request(t.http).patch(refPath).set(bearer(owner)).send({ status: 'active' }).expect(200);
    const again = await request(t.http).get(path('/data')).set(bearer(owner)).expect(200);
    expect(again.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['source-row']);
    await request(t.http).delete(refPath).set(bearer(owner)).expect(200);
    const back = await request(t.http).get(path('/data')).set(bearer(owner)).expect(200);
    expect(back.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['local-row', 'after-pause']);
    const listBack = await request(t.http).get(`${API}/doc/sales?workspaceId=${local}`).set(bearer(owner)).expect(200);
    expect(listBack.body.payload.items).toEqual([expect.objectContaining({ id: 'orders', workspaceId: local, readOnly: false })]);
  });

  it('keeps organization-level documents (workspaceId null) per organization, visible from each workspace', async () => {
    const created = await create(alice, 'catalog-1', { workspaceId: null }, 'catalog');
    expect(created.status).toBe(201);
    expect(created.body.payload).toMatchObject({ id: 'catalog-1', organizationId: alice.defaultOrganizationId, workspaceId: null });
    expect((await create(bob, 'catalog-1', { workspaceId: null }, 'catalog')).status).toBe(201);
    expect((await create(alice, 'catalog-1', { workspaceId: null }, 'catalog')).body.code).toBe('ALREADY_EXISTS');

    const inOrg = `${API}/doc/catalog/catalog-1/data?organizationId=${alice.defaultOrganizationId}`;
    await request(t.http).post(inOrg).set(bearer(alice)).send({ id: 'p1', values: { name: 'Bolt' } }).expect(201);
    const viaWorkspace = await request(t.http).get(`${API}/doc/catalog/catalog-1/data`).set(bearer(alice)).set('X-Workspace-Id', alice.defaultWorkspaceId).expect(200);
    expect(viaWorkspace.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['p1']);
    const bobs = await request(t.http).get(`${API}/doc/catalog/catalog-1/data`).set(bearer(bob)).expect(200);
    expect(bobs.body.payload.items).toEqual([]);
    await request(t.http).get(`${API}/doc/catalog/catalog-1/data?organizationId=${alice.defaultOrganizationId}`).set(bearer(bob)).expect(404);

    const listed = await request(t.http).get(`${API}/doc/catalog?organizationId=${alice.defaultOrganizationId}`).set(bearer(alice)).expect(200);
    expect(listed.body.payload.items).toEqual([expect.objectContaining({ id: 'catalog-1', workspaceId: null })]);
    const fromWorkspace = await request(t.http).get(`${API}/doc/catalog?workspaceId=${alice.defaultWorkspaceId}`).set(bearer(alice)).expect(200);
    expect(fromWorkspace.body.payload.items.map((doc: { id: string }) => doc.id)).toEqual(['catalog-1']);
    // Without a context, the default workspace's list: the same documents.
    expect((await request(t.http).get(`${API}/doc/catalog`).set(bearer(alice)).expect(200)).body.payload.items.map((doc: { id: string }) => doc.id)).toEqual(['catalog-1']);

    // A workspace member who is a plain organization member writes rows but does not manage metadata.
    const member = await newUser(t.http);
    await addToWorkspace(t.dataSource, alice, member, 'viewer');
    await request(t.http).post(inOrg).set(bearer(member)).send({ id: 'p2', values: { name: 'Nut' } }).expect(201);
    await request(t.http).put(`${API}/doc/catalog/catalog-1/metadata?organizationId=${alice.defaultOrganizationId}`).set(bearer(member)).send({ fields: FIELDS }).expect(403);
  });

  it('refuses a suspended member naming the organization before any document is looked up, as a workspace context does', async () => {
    const owner = await newUser(t.http);
    const suspended = await newUser(t.http);
    const org = owner.defaultOrganizationId;
    await request(t.http).post(`${API}/doc/catalog`).set(bearer(owner)).send({ id: 'org-level', organizationId: org, workspaceId: null, metadata: { fields: FIELDS } }).expect(201);
    const added = await request(t.http).post(`${API}/organizations/${org}/members`).set(bearer(owner)).send({ userId: suspended.id, role: 'member' }).expect(201);
    await request(t.http).patch(`${API}/organizations/${org}/members/${added.body.payload.id}`).set(bearer(owner)).send({ status: 'suspended' }).expect(200);

    // The organization-level document that exists and an id that exists nowhere get the same answer (the one the
    // workspace context gives such a member: FORBIDDEN, read permission required), by query and by header, on the
    // document's routes and on the realtime ones.
    for (const suffix of ['', '/data', '/metadata', '/settings', '/views', '/comments', '/revisions']) {
      const taken = await request(t.http).get(`${API}/doc/catalog/org-level${suffix}?organizationId=${org}`).set(bearer(suspended));
      const free = await request(t.http).get(`${API}/doc/catalog/free-${Date.now()}${suffix}?organizationId=${org}`).set(bearer(suspended));
      expect({ suffix, ...(answer(taken) as object) }).toEqual({ suffix, ...(answer(free) as object) });
      expect(taken.status).toBe(403);
    }
    const byHeader = await request(t.http).get(`${API}/doc/catalog/org-level/data`).set(bearer(suspended)).set('X-Organization-Id', org);
    const freeByHeader = await request(t.http).get(`${API}/doc/catalog/free-id/data`).set(bearer(suspended)).set('X-Organization-Id', org);
    expect(answer(byHeader)).toEqual(answer(freeByHeader));
    const deleted = await request(t.http).delete(`${API}/doc/catalog/org-level?organizationId=${org}`).set(bearer(suspended));
    const deletedFree = await request(t.http).delete(`${API}/doc/catalog/free-id?organizationId=${org}`).set(bearer(suspended));
    expect(answer(deleted)).toEqual(answer(deletedFree));
    const users = await request(t.http).get(`/realtime/doc/catalog/org-level/users?organizationId=${org}`).set(bearer(suspended));
    const usersFree = await request(t.http).get(`/realtime/doc/catalog/free-id/users?organizationId=${org}`).set(bearer(suspended));
    expect(answer(users)).toEqual(answer(usersFree));
    // Nothing was deleted, and the document still answers its owner.
    await request(t.http).get(`${API}/doc/catalog/org-level?organizationId=${org}`).set(bearer(owner)).expect(200);
  });

  it('documents the context parameters once in the OpenAPI document', () => {
    const parameters = t.openApi.components?.parameters ?? {};
    expect(Object.keys(parameters)).toEqual(expect.arrayContaining(['WorkspaceContext', 'WorkspaceContextHeader', 'OrganizationContext', 'OrganizationContextHeader']));
    const operation = t.openApi.paths['/api/v1/doc/{docType}/{docId}/data']?.get;
    expect(operation?.parameters).toEqual(expect.arrayContaining([{ $ref: '#/components/parameters/WorkspaceContextHeader' }]));
    const inline = (operation?.parameters ?? []).filter((p) => 'name' in p && p.name === 'workspaceId');
    expect(inline).toEqual([]);
  });

  it('declares 409 AMBIGUOUS_DOCUMENT on every operation that opens one document by id', () => {
    const undeclared: string[] = [];
    for (const [path, item] of Object.entries(t.openApi.paths)) {
      if (!path.includes('/{docId}') && path !== `${API}/relations`) {
        continue;
      }
      for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
        const operation = item[method];
        const conflict = operation?.responses?.['409'] as { description?: string } | undefined;
        if (operation && !conflict?.description?.includes('AMBIGUOUS_DOCUMENT')) {
          undeclared.push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
    expect(undeclared).toEqual([]);
  });
});
