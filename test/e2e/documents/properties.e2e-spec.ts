import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, type DocHandle, newUser } from './documents.fixtures.js';

const PROPERTIES = [
  { id: 'supplier', name: 'Supplier', type: 'text', required: true },
  { id: 'budget', name: 'Budget', type: 'currency', defaultValue: { number: 100 } },
  { id: 'region', name: 'Region', type: 'single_select', selectOptions: [{ id: 'eu', label: 'EU' }, { id: 'us', label: 'US' }] },
];

describe('documents: properties', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, { properties: PROPERTIES });
  });
  afterAll(async () => {
    await t.close();
  });

  it('starts empty, then POST sets them with defaults and required enforced', async () => {
    const empty = await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200);
    expect(empty.body.payload).toMatchObject({ docId: doc.docId, docType: doc.docType, properties: [], version: 0, organizationId: owner.defaultOrganizationId });
    const missing = await request(t.http).post(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { region: 'eu' } }).expect(400);
    expect(missing.body.details).toMatchObject({ fieldId: 'supplier', reason: 'field is required' });
    const res = await request(t.http).post(`${doc.path}/properties`).set(bearer(owner)).send({ properties: [{ fieldId: 'supplier', value: { text: 'ACME' } }] }).expect(201);
    expect(res.body.payload).toMatchObject({
      version: 1,
      properties: [
        { fieldId: 'supplier', value: { text: 'ACME' } },
        { fieldId: 'budget', value: { number: 100 } },
      ],
      request: { merged: true },
    });
  });

  it('PATCH merges with optimistic locking; merge=false replaces; stale versions are 409', async () => {
    const patched = await request(t.http).patch(`${doc.path}/properties?version=1`).set(bearer(owner)).send({ properties: { region: { selectOption: 'us' } } }).expect(200);
    expect(patched.body.payload.version).toBe(2);
    expect(patched.body.payload.properties.map((p: { fieldId: string }) => p.fieldId)).toEqual(['supplier', 'budget', 'region']);
    const stale = await request(t.http).patch(`${doc.path}/properties?version=1`).set(bearer(owner)).send({ properties: { budget: 5 } }).expect(409);
    expect(stale.body).toMatchObject({ code: 'VERSION_CONFLICT', payload: { currentVersion: 2, yourVersion: 1 } });
    const replaced = await request(t.http).patch(`${doc.path}/properties?merge=false`).set(bearer(owner)).send({ properties: { supplier: 'Globex' } }).expect(200);
    expect(replaced.body.payload.properties).toEqual([{ fieldId: 'supplier', value: { text: 'Globex' } }]);
    const bad = await request(t.http).patch(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { region: 'mars' } }).expect(400);
    expect(bad.body.details).toMatchObject({ fieldId: 'region' });
    const unknown = await request(t.http).put(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { nope: 1, supplier: 'x' } }).expect(400);
    expect(unknown.body.details).toMatchObject({ fieldId: 'nope' });
  });

  it('takes PATCH with requestId into the request; reading with requestId shows the draft', async () => {
    const open = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: 'props' }).expect(201);
    const reqId = open.body.payload.id;
    await request(t.http).patch(`${doc.path}/properties?requestId=${reqId}`).set(bearer(owner)).send({ properties: { budget: 42 } }).expect(200);
    const live = await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200);
    expect(live.body.payload.properties).toEqual([{ fieldId: 'supplier', value: { text: 'Globex' } }]);
    const draft = await request(t.http).get(`${doc.path}/properties?requestId=${reqId}`).set(bearer(owner)).expect(200);
    expect(draft.body.payload.properties).toEqual([{ fieldId: 'supplier', value: { text: 'Globex' } }, { fieldId: 'budget', value: { number: 42 } }]);
    const diff = await request(t.http).get(`${doc.path}/requests/${reqId}/diff`).set(bearer(owner)).expect(200);
    expect(diff.body.payload.changedProperties).toEqual([{ fieldId: 'budget', oldValue: null, newValue: { number: 42 } }]);
    await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(200);
  });

  it('DELETE clears them; the history lists every merged change, newest first', async () => {
    const del = await request(t.http).delete(`${doc.path}/properties`).set(bearer(owner)).expect(200);
    expect(del.body.payload.properties).toEqual([]);
    const history = await request(t.http).get(`${doc.path}/properties/history`).set(bearer(owner)).expect(200);
    const items = history.body.payload.items;
    expect(items[0]).toMatchObject({ type: 'property-delete', target: { kind: 'property' } });
    expect(items.some((op: { type: string; target: { fieldId?: string }; newValue: { value: unknown } }) => op.type === 'property-update' && op.target.fieldId === 'budget' && JSON.stringify(op.newValue.value) === JSON.stringify({ number: 42 }))).toBe(true);
    expect(history.body.payload.total).toBeGreaterThanOrEqual(5);
  });

  it('refuses a ValueEntry without value (null still clears)', async () => {
    await request(t.http).patch(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { region: 'eu' } }).expect(200);
    const missing = await request(t.http).patch(`${doc.path}/properties`).set(bearer(owner)).send({ properties: [{ fieldId: 'region' }] }).expect(400);
    expect(missing.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { fieldId: 'region', field: 'properties[0].value' } });
    const kept = await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200);
    expect(kept.body.payload.properties).toContainEqual({ fieldId: 'region', value: { selectOption: { id: 'eu', label: 'EU' } } });
    const cleared = await request(t.http).patch(`${doc.path}/properties`).set(bearer(owner)).send({ properties: [{ fieldId: 'region', value: null }] }).expect(200);
    expect(cleared.body.payload.properties.map((p: { fieldId: string }) => p.fieldId)).not.toContain('region');
  });

  it('locks every property write with version: a query and body pair must agree; DELETE takes it too', async () => {
    const current = (await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200)).body.payload.version;
    const pair = await request(t.http).patch(`${doc.path}/properties?version=${current}`).set(bearer(owner)).send({ version: 99, properties: { budget: 7 } }).expect(400);
    expect(pair.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'version' } });
    const same = await request(t.http).patch(`${doc.path}/properties?version=${current}`).set(bearer(owner)).send({ version: current, properties: { budget: 7 } }).expect(200);
    expect(same.body.payload.version).toBe(current + 1);
    const stale = await request(t.http).put(`${doc.path}/properties?version=${current}`).set(bearer(owner)).send({ properties: { supplier: 'x' } }).expect(409);
    expect(stale.body.code).toBe('VERSION_CONFLICT');
    const staleDelete = await request(t.http).delete(`${doc.path}/properties?version=${current}`).set(bearer(owner)).expect(409);
    expect(staleDelete.body).toMatchObject({ code: 'VERSION_CONFLICT', payload: { currentVersion: current + 1, yourVersion: current } });
    const deleted = await request(t.http).delete(`${doc.path}/properties?version=${current + 1}`).set(bearer(owner)).expect(200);
    expect(deleted.body.payload.properties).toEqual([]);
  });

  it('takes the body version as a decimal string (int64 in proto3 JSON)', async () => {
    const current = (await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200)).body.payload;
    const patched = await request(t.http)
      .patch(`${doc.path}/properties`)
      .set(bearer(owner))
      .send({ properties: { budget: 7 }, version: String(current.version) })
      .expect(200);
    expect(patched.body.payload.version).toBe(current.version + 1);
    const stale = await request(t.http)
      .patch(`${doc.path}/properties`)
      .set(bearer(owner))
      .send({ properties: { budget: 8 }, version: String(current.version) })
      .expect(409);
    expect(stale.body).toMatchObject({ code: 'VERSION_CONFLICT', payload: { currentVersion: current.version + 1, yourVersion: current.version } });
  });

  it('refuses a viewer and other tenants', async () => {
    const viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    await request(t.http).get(`${doc.path}/properties`).set(bearer(viewer)).expect(200);
    await request(t.http).patch(`${doc.path}/properties`).set(bearer(viewer)).send({ properties: { budget: 1 } }).expect(403);
    const stranger = await newUser(t.http);
    await request(t.http).get(`${doc.path}/properties`).set(bearer(stranger)).expect(404);
    await request(t.http).delete(`${doc.path}/properties`).set(bearer(stranger)).expect(404);
  });
});
