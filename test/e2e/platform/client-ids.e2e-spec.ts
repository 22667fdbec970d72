import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createDocument, type DocHandle } from '../documents/documents.fixtures.js';

const API = '/api/v1';

/**
 * Ids a client chooses and later names in a URL path are never `.` or `..`: URL clients collapse those segments,
 * so a DELETE of row `..` would reach the document itself (docs/documents.md, "Ids").
 */
describe('dot-segment ids', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner);
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(['.', '..'])('refuses %j as a document id or a document type, and stores nothing', async (id) => {
    const byId = await request(t.http)
      .post(`${API}/doc/products`)
      .set(bearer(owner))
      .send({ id, organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId, title: 'Dots', metadata: { fields: [] } });
    expect(byId.status).toBe(400);
    expect(byId.body.code).toBe('VALIDATION_ERROR');
    expect(byId.body.details).toMatchObject({ field: 'id' });

    const byType = await request(t.http)
      .post(`${API}/doc/${id.replace(/\./g, '%2E')}`)
      .set(bearer(owner))
      .send({ id: 'plain', organizationId: owner.defaultOrganizationId, workspaceId: owner.defaultWorkspaceId, title: 'Dots', metadata: { fields: [] } });
    expect(byType.status).toBe(400);
    expect(byType.body.details).toMatchObject({ field: 'docType' });

    const list = await request(t.http).get(`${API}/doc/products`).query({ workspaceId: owner.defaultWorkspaceId }).set(bearer(owner));
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body.payload)).not.toContain('"docId":"."');
    expect(JSON.stringify(list.body.payload)).not.toContain('"docId":".."');
  });

  it.each(['.', '..'])('refuses %j as a row id (direct write, bulk, request) and as a view id', async (id) => {
    const direct = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id, values: { name: 'x' } });
    expect(direct.status).toBe(400);
    expect(direct.body.code).toBe('VALIDATION_ERROR');

    const viaRequest = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'dots', changes: [{ type: 'row-create', target: { kind: 'row', rowId: id }, newValue: { name: 'x' } }] });
    expect(viaRequest.status).toBe(400);

    const view = await request(t.http).post(`${doc.path}/views`).set(bearer(owner)).send({ id, name: 'Dots', type: 'table' });
    expect(view.status).toBe(400);
    expect(view.body.details).toMatchObject({ field: 'id' });

    const rows = await request(t.http).get(`${doc.path}/data`).set(bearer(owner));
    expect(rows.body.payload.items).toEqual([]);
  });

  it('still takes ids that merely contain dots', async () => {
    const row = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'a..b', values: { name: 'x' } });
    expect(row.status).toBe(201);
    const read = await request(t.http).get(`${doc.path}/data/a..b`).set(bearer(owner));
    expect(read.status).toBe(200);
    expect(read.body.payload.id).toBe('a..b');
  });
});
