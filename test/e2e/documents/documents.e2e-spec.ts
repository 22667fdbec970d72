import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, addWorkspace, API, bearer, createDocument, createRow, type DocHandle, newUser, scopedToken } from './documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

describe('documents: documents, bundle, scopes and data-source references', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, { docType: 'orders', properties: [{ id: 'region', name: 'Region', type: 'text' }] });
    await createRow(t.http, owner, doc, { id: 'o1', values: { name: 'First' } });
    await createRow(t.http, owner, doc, { id: 'o2', values: { name: 'Second' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates documents: generated id, validation, duplicates, wrong organization, other tenants, viewers', async () => {
    const created = await request(t.http)
      .post(`${API}/doc/orders`)
      .set(bearer(owner))
      .send({ organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId })
      .expect(201);
    expect(created.body.payload).toMatchObject({ id: expect.any(String), docType: 'orders', version: 0, readOnly: false, createdBy: owner.id });
    const dup = await request(t.http).post(`${API}/doc/orders`).set(bearer(owner)).send({ id: doc.docId, organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId }).expect(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
    const invalid = await request(t.http).post(`${API}/doc/orders`).set(bearer(owner)).send({ organizationId: 'x', workspaceId: owner.defaultWorkspaceId, extra: 1 }).expect(400);
    expect(problemsOf(invalid.body).map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(['organizationId', 'extra']));
    const badFields = await request(t.http)
      .post(`${API}/doc/orders`)
      .set(bearer(owner))
      .send({ organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId, metadata: { fields: [{ id: 'x', name: 'X', type: 'nope' }] } })
      .expect(400);
    expect(badFields.body.details.field).toBe('metadata.fields[0].type');

    const stranger = await newUser(t.http);
    const wrongOrg = await request(t.http).post(`${API}/doc/orders`).set(bearer(stranger)).send({ organizationId: stranger.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId }).expect(404);
    expect(wrongOrg.body.code).toBe('NOT_FOUND');
    const mismatch = await request(t.http).post(`${API}/doc/orders`).set(bearer(owner)).send({ organizationId: stranger.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId }).expect(400);
    expect(mismatch.body.details.field).toBe('organizationId');

    const viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    await request(t.http).post(`${API}/doc/orders`).set(bearer(viewer)).send({ organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId }).expect(403);
  });

  it('creates with the body fields of spec 4.4 it is given: the organization follows the workspace, no context is the default workspace', async () => {
    const inWorkspace = await request(t.http).post(`${API}/doc/memos`).set(bearer(owner)).send({ id: 'm-ws', workspaceId: owner.defaultWorkspaceId }).expect(201);
    expect(inWorkspace.body.payload).toMatchObject({ id: 'm-ws', organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId });
    const inContext = await request(t.http).post(`${API}/doc/memos?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).send({ id: 'm-ctx' }).expect(201);
    expect(inContext.body.payload).toMatchObject({ organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId });
    const plain = await request(t.http).post(`${API}/doc/memos`).set(bearer(owner)).send({ id: 'm-plain' }).expect(201);
    expect(plain.body.payload).toMatchObject({ organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId });
    const orgLevel = await request(t.http).post(`${API}/doc/memos?organizationId=${owner.defaultOrganizationId}`).set(bearer(owner)).send({ id: 'm-org' }).expect(201);
    expect(orgLevel.body.payload).toMatchObject({ organizationId: owner.defaultOrganizationId, workspaceId: null });
    const nowhere = await request(t.http).post(`${API}/doc/memos`).set(bearer(owner)).send({ id: 'm-none', workspaceId: null }).expect(400);
    expect(nowhere.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'organizationId' } });
    const stranger = await newUser(t.http);
    await request(t.http).post(`${API}/doc/memos`).set(bearer(stranger)).send({ id: 'm-x', workspaceId: owner.defaultWorkspaceId }).expect(404);
  });

  it('lists documents of a type in a workspace, paged', async () => {
    const res = await request(t.http).get(`${API}/doc/orders?workspaceId=${owner.defaultWorkspaceId}&pageSize=1`).set(bearer(owner)).expect(200);
    expect(res.body.payload).toMatchObject({ page: 1, pageSize: 1, total: 2, totalPages: 2 });
    expect(res.body.payload.items[0]).toMatchObject({ id: doc.docId, rowCount: 2 });
    // Without a context (the spec writes the path without parameters): the caller's default workspace.
    const plain = await request(t.http).get(`${API}/doc/orders?pageSize=1`).set(bearer(owner)).expect(200);
    expect(plain.body.payload).toEqual(res.body.payload);
    const stranger = await newUser(t.http);
    await request(t.http).get(`${API}/doc/orders?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(stranger)).expect(404);
  });

  it('returns the bundle with the chosen sections; sections not built yet are empty', async () => {
    const all = await request(t.http).get(`${doc.path}?pageSize=1&revisionsLimit=2`).set(bearer(owner)).expect(200);
    const bundle = all.body.payload;
    expect(bundle.document).toMatchObject({ id: doc.docId, docType: 'orders', organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId, version: 3 });
    // Spec 2.5's required, unique and defaultValue are always shown.
    expect(bundle.metadata.properties).toEqual([{ id: 'region', name: 'Region', type: 'text', required: false, unique: false, defaultValue: null }]);
    expect(bundle.views).toEqual([]);
    expect(bundle.comments).toEqual([]);
    expect(bundle.data).toMatchObject({ total: 2, pageSize: 1, totalPages: 2 });
    expect(bundle.data.items[0].id).toBe('o1');
    expect(bundle.revisions.map((r: { version: number }) => r.version)).toEqual([3, 2]);
    expect(bundle.settings).toMatchObject({ permissions: {}, notifications: {}, workflow: {} });
    const some = await request(t.http).get(`${doc.path}?include=metadata,revisions&revisionsLimit=1`).set(bearer(owner)).expect(200);
    expect(Object.keys(some.body.payload).sort()).toEqual(['document', 'metadata', 'revisions']);
    const bad = await request(t.http).get(`${doc.path}?include=metadata,gossip`).set(bearer(owner)).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    const missing = await request(t.http).get(`${API}/doc/orders/missing-doc`).set(bearer(owner)).expect(404);
    expect(missing.body.code).toBe('DOC_NOT_FOUND');
  });

  it('stores settings; PUT needs manage permission', async () => {
    const editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await request(t.http).put(`${doc.path}/settings`).set(bearer(editor)).send({ workflow: { requiresApproval: true } }).expect(403);
    const res = await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ notifications: { onMerge: true } }).expect(200);
    expect(res.body.payload).toMatchObject({ notifications: { onMerge: true }, request: { merged: true } });
    const read = await request(t.http).get(`${doc.path}/settings`).set(bearer(editor)).expect(200);
    expect(read.body.payload.notifications).toEqual({ onMerge: true });
    await request(t.http).put(`${doc.path}/settings`).set(bearer(owner)).send({ workflow: { requiresApproval: 'yes' } }).expect(400);

    // Written into an open request: the answer is the draft's settings; the document keeps its own until the merge.
    const open = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: 'settings draft' }).expect(201);
    const requestId = open.body.payload.id as string;
    const drafted = await request(t.http)
      .put(`${doc.path}/settings?requestId=${requestId}`)
      .set(bearer(owner))
      .send({ notifications: { onMerge: false, onCommentAdd: true } })
      .expect(200);
    expect(drafted.body.payload).toMatchObject({ notifications: { onMerge: false, onCommentAdd: true }, request: { requestId, merged: false } });
    expect((await request(t.http).get(`${doc.path}/settings`).set(bearer(owner)).expect(200)).body.payload.notifications).toEqual({ onMerge: true });
    await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);
    expect((await request(t.http).get(`${doc.path}/settings`).set(bearer(owner)).expect(200)).body.payload.notifications).toEqual({ onMerge: false, onCommentAdd: true });
  });

  it('checks scopes: doc:read, data:read, data:write, doc:write, requests:manage', async () => {
    const docOnly = await scopedToken(t, owner, ['doc:read']);
    await request(t.http).get(`${doc.path}/metadata`).set(bearer(docOnly)).expect(200);
    await request(t.http).get(`${doc.path}?include=metadata`).set(bearer(docOnly)).expect(200);
    const withoutData = await request(t.http).get(`${doc.path}`).set(bearer(docOnly)).expect(200);
    expect(withoutData.body.payload.data).toBeUndefined();
    expect(withoutData.body.payload.metadata).toBeDefined();
    expect((await request(t.http).get(`${doc.path}?include=data`).set(bearer(docOnly)).expect(403)).body.code).toBe('FORBIDDEN');
    await request(t.http).get(`${doc.path}/data`).set(bearer(docOnly)).expect(403);
    const dataRead = await scopedToken(t, owner, ['data:read']);
    await request(t.http).get(`${doc.path}/data`).set(bearer(dataRead)).expect(200);
    await request(t.http).post(`${doc.path}/data/query`).set(bearer(dataRead)).send({}).expect(200);
    await request(t.http).post(`${doc.path}/data`).set(bearer(dataRead)).send({ values: { name: 'x' } }).expect(403);
    await request(t.http).get(`${doc.path}/metadata`).set(bearer(dataRead)).expect(403);
    const dataWrite = await scopedToken(t, owner, ['data:write']);
    await request(t.http).post(`${doc.path}/data`).set(bearer(dataWrite)).send({ id: 'scoped', values: { name: 'x' } }).expect(201);
    await request(t.http).put(`${doc.path}/metadata`).set(bearer(dataWrite)).send({ fields: [] }).expect(403);
    await request(t.http).post(`${doc.path}/requests`).set(bearer(dataWrite)).send({ title: 'x' }).expect(403);
    const manage = await scopedToken(t, owner, ['requests:manage']);
    await request(t.http).post(`${doc.path}/requests`).set(bearer(manage)).send({ title: 'x' }).expect(201);
  });

  it('serves a type replaced by a data-source reference read-only, and locks the hidden local documents', async () => {
    const source = await addWorkspace(t.dataSource, owner);
    const sourceDoc = await createDocument(t.http, owner, { docType: 'catalog', workspaceId: source });
    const localDoc = await createDocument(t.http, owner, { docType: 'catalog' });
    await createRow(t.http, owner, sourceDoc, { id: 's1', values: { name: 'From source' } });
    await t.dataSource.query(
      `INSERT INTO data_source_references (organization_id, workspace_id, source_workspace_id, doc_type, created_by) VALUES ($1, $2, $3, 'catalog', $4)`,
      [owner.defaultOrganizationId, owner.defaultWorkspaceId, source, owner.id],
    );
    const list = await request(t.http).get(`${API}/doc/catalog?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).expect(200);
    expect(list.body.payload.items).toEqual([expect.objectContaining({ id: sourceDoc.docId, workspaceId: source, readOnly: true })]);

    const via = `?workspaceId=${owner.defaultWorkspaceId}`;
    const rows = await request(t.http).get(`${sourceDoc.path}/data${via}`).set(bearer(owner)).expect(200);
    expect(rows.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['s1']);
    const bundle = await request(t.http).get(`${sourceDoc.path}${via}`).set(bearer(owner)).expect(200);
    expect(bundle.body.payload.document.readOnly).toBe(true);
    const write = await request(t.http).put(`${sourceDoc.path}/data/s1${via}`).set(bearer(owner)).send({ values: { name: 'changed' } }).expect(403);
    expect(write.body.code).toBe('FORBIDDEN');
    // The hidden local document is no candidate without a context, and is shadowed in its own workspace.
    await request(t.http).post(`${localDoc.path}/data`).set(bearer(owner)).send({ values: { name: 'local' } }).expect(404);
    await request(t.http).post(`${localDoc.path}/data${via}`).set(bearer(owner)).send({ values: { name: 'local' } }).expect(404);
    await request(t.http).post(`${API}/doc/catalog`).set(bearer(owner)).send({ organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId }).expect(403);
    // Read through a workspace that does not reference this document's workspace: not visible there.
    await request(t.http).get(`${localDoc.path}/data?workspaceId=${source}`).set(bearer(owner)).expect(404);

    // A member of the target workspace without rights on the source workspace cannot read through the reference.
    const member = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, member, 'editor');
    await request(t.http).get(`${API}/doc/catalog?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(member)).expect(403);

    // Pausing the reference shows and unlocks the local documents again.
    await t.dataSource.query(`UPDATE data_source_references SET status = 'inactive' WHERE workspace_id = $1`, [owner.defaultWorkspaceId]);
    const local = await request(t.http).get(`${API}/doc/catalog?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).expect(200);
    expect(local.body.payload.items).toEqual([expect.objectContaining({ id: localDoc.docId, readOnly: false })]);
    await request(t.http).post(`${localDoc.path}/data`).set(bearer(owner)).send({ values: { name: 'local' } }).expect(201);
  });

  it('soft-deletes a document: DOC_NOT_FOUND afterwards, the id can be reused; viewers and strangers cannot delete', async () => {
    const victim = await createDocument(t.http, owner, { docType: 'orders' });
    const viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    await request(t.http).delete(victim.path).set(bearer(viewer)).expect(403);
    const stranger = await newUser(t.http);
    await request(t.http).delete(victim.path).set(bearer(stranger)).expect(404);
    await request(t.http).delete(victim.path).set(bearer(owner)).expect(200);
    expect((await request(t.http).get(victim.path).set(bearer(owner)).expect(404)).body.code).toBe('DOC_NOT_FOUND');
    await request(t.http).get(`${victim.path}/data`).set(bearer(owner)).expect(404);
    const [{ deleted_at }] = await t.dataSource.query(`SELECT deleted_at FROM documents WHERE doc_id = $1`, [victim.docId]);
    expect(deleted_at).not.toBeNull();
    await createDocument(t.http, owner, { docType: 'orders', id: victim.docId });
  });

  it('names metadata errors of a create by their place in the body (metadata.fields, metadata.properties)', async () => {
    const res = await request(t.http)
      .post(`${API}/doc/orders`)
      .set(bearer(owner))
      .send({
        id: 'bad-props',
        organizationId: owner.defaultOrganizationId,
        workspaceId: owner.defaultWorkspaceId,
        metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }], properties: [{ id: 'changed', name: 'Changed', type: 'updated_by' }] },
      })
      .expect(400);
    expect(problemsOf(res.body)).toEqual([expect.objectContaining({ field: 'metadata.properties[0].type', fieldId: 'changed' })]);
  });
});
