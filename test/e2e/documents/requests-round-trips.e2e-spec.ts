import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { problemsOf } from '../../utils/error-details.js';
import { addToWorkspace, bearer, createDocument, createRow, type DocHandle, newUser } from './documents.fixtures.js';

const API = '/api/v1';
const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'qty', name: 'Quantity', type: 'number' },
];

/**
 * What the regression audit of the request fixes found: a row as read (with `readOnly`) goes back through PUT and a
 * request's row-update; a single-cell change without newValue clears nothing; merging metadata changes needs manage
 * rights as creating them does; a document may not be named after the route `/doc/{docType}/setting`.
 */
describe('requests and rows: round trips and the rights of a merge', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
  });
  afterAll(async () => {
    await t.close();
  });

  async function doc(): Promise<DocHandle> {
    return createDocument(t.http, owner, { fields: FIELDS });
  }

  it('takes a row back as GET answered it (readOnly included) on PUT and in a request row-update', async () => {
    const target = await doc();
    await createRow(t.http, owner, target, { id: 'r1', values: { name: 'One', qty: 1 } });
    const read = await request(t.http).get(`${target.path}/data/r1`).set(bearer(owner)).expect(200);
    expect(read.body.payload.readOnly).toBe(false);
    const changed = { ...read.body.payload, values: [{ fieldId: 'qty', value: { number: 2 } }] };
    const put = await request(t.http).put(`${target.path}/data/r1`).set(bearer(owner)).send(changed).expect(200);
    expect(put.body.payload.values).toEqual(expect.arrayContaining([{ fieldId: 'qty', value: { number: 2 } }]));
    const again = (await request(t.http).get(`${target.path}/data/r1`).set(bearer(owner)).expect(200)).body.payload;
    const viaRequest = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'row-update', target: { kind: 'row', rowId: 'r1' }, newValue: { ...again, values: [{ fieldId: 'qty', value: { number: 3 } }] } }] });
    expect(viaRequest.status).toBe(201);
  });

  it('refuses a single-cell row-update or property-update without newValue (it cleared the value) and keeps the value', async () => {
    const target = await doc();
    await createRow(t.http, owner, target, { id: 'r1', values: { name: 'One', qty: 5 } });
    const refused = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'row-update', target: { kind: 'row', rowId: 'r1', fieldId: 'qty' } }] })
      .expect(400);
    expect(problemsOf(refused.body)).toEqual([expect.objectContaining({ field: 'changes[0].newValue' })]);
    const property = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'property-update', target: { kind: 'property', fieldId: 'owner' } }] })
      .expect(400);
    expect(problemsOf(property.body)).toEqual([expect.objectContaining({ field: 'changes[0].newValue' })]);
    const cleared = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'row-update', target: { kind: 'row', rowId: 'r1', fieldId: 'qty' }, newValue: null }] });
    expect(cleared.status).toBe(201);
    const row = await request(t.http).get(`${target.path}/data/r1`).set(bearer(owner)).expect(200);
    expect(row.body.payload.values).toEqual(expect.arrayContaining([{ fieldId: 'qty', value: { number: 5 } }]));
  });

  it('lets only a manager merge a request with metadata changes, as only a manager may create one', async () => {
    const target = await doc();
    const opened = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'field-create', target: { kind: 'field', fieldId: 'note' }, newValue: { id: 'note', name: 'Note', type: 'text' } }] })
      .expect(201);
    const byEditor = await request(t.http).post(`${target.path}/requests/${opened.body.payload.id}/merge`).set(bearer(editor)).expect(403);
    expect(byEditor.body.code).toBe('FORBIDDEN');
    const metadata = await request(t.http).get(`${target.path}/metadata`).set(bearer(owner)).expect(200);
    expect(metadata.body.payload.fields.map((field: { id: string }) => field.id)).toEqual(['name', 'qty']);
    await request(t.http).post(`${target.path}/requests/${opened.body.payload.id}/merge`).set(bearer(owner)).expect(200);

    // An editor still merges row changes.
    const rows = await request(t.http)
      .post(`${target.path}/requests`)
      .set(bearer(editor))
      .send({ changes: [{ type: 'row-create', target: { kind: 'row', rowId: 'e1' }, newValue: { name: 'By editor' } }] })
      .expect(201);
    await request(t.http).post(`${target.path}/requests/${rows.body.payload.id}/merge`).set(bearer(editor)).expect(200);
  });

  it('refuses the document id "setting", the route of the type settings', async () => {
    const refused = await request(t.http)
      .post(`${API}/doc/products`)
      .set(bearer(owner))
      .send({ id: 'setting', organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId, title: 'x', metadata: { fields: [] } })
      .expect(400);
    expect(refused.body.details).toMatchObject({ field: 'id' });
    await request(t.http).get(`${API}/doc/products/setting`).query({ workspaceId: owner.defaultWorkspaceId }).set(bearer(owner)).expect(200);
  });
});
