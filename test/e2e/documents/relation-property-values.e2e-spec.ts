import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, bearer, createDocument, createRow, type DocHandle, newUser, PRODUCT_FIELDS, valueOf } from './documents.fixtures.js';

/**
 * Relation values (docs/values.md, docs/documents.md "Relations"): a relation property names existing rows as a row's
 * relation field does, and a value holds each row once whichever form names it.
 */
describe('documents: relation property values', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  const properties = async (): Promise<unknown> => (await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200)).body.payload.properties;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, {
      docType: 'orders',
      fields: [...PRODUCT_FIELDS, { id: 'links', name: 'Links', type: 'relation' }],
      properties: [{ id: 'rel', name: 'Rel', type: 'relation' }],
    });
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'one' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a relation property naming a missing row or document, as a row relation field does', async () => {
    const missingRow = await request(t.http).post(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { rel: 'zz' } }).expect(400);
    expect(missingRow.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(missingRow.body)).toEqual([expect.objectContaining({ field: 'rel', fieldId: 'rel', reason: 'row zz does not exist' })]);
    const missingDocument = await request(t.http)
      .patch(`${doc.path}/properties`)
      .set(bearer(owner))
      .send({ properties: { rel: [{ docType: 'other', docId: 'nope', rowId: 'zz' }] } })
      .expect(400);
    expect(missingDocument.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(missingDocument.body)).toEqual([expect.objectContaining({ field: 'rel', fieldId: 'rel' })]);
    const bulk = await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send([{ target: { property: 'rel' }, value: 'zz' }]).expect(400);
    expect(bulk.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(bulk.body)).toEqual([expect.objectContaining({ fieldId: 'rel', reason: 'row zz does not exist' })]);
    const viaRequest = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ changes: [{ type: 'property-update', target: { kind: 'property', fieldId: 'rel' }, newValue: { relation: [{ rowId: 'zz' }] } }] })
      .expect(400);
    expect(problemsOf(viaRequest.body)).toEqual([expect.objectContaining({ reason: 'row zz does not exist' })]);
    expect(await properties()).toEqual([]);

    const stored = await request(t.http).post(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { rel: 'r1' } }).expect(201);
    expect(stored.body.payload.properties).toEqual([{ fieldId: 'rel', value: { relation: [{ rowId: 'r1' }] } }]);
  });

  it('lets a request link its property to a row the same request creates', async () => {
    const opened = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'new row and link' })
      .expect(201);
    const requestId = opened.body.payload.id as string;
    await request(t.http).post(`${doc.path}/data?requestId=${requestId}`).set(bearer(owner)).send({ id: 'r2', values: { name: 'two' } }).expect(201);
    await request(t.http).patch(`${doc.path}/properties?requestId=${requestId}`).set(bearer(owner)).send({ properties: { rel: ['r1', 'r2'] } }).expect(200);
    await request(t.http).patch(`${doc.path}/properties?requestId=${requestId}`).set(bearer(owner)).send({ properties: { rel: ['ghost'] } }).expect(400);
  });

  it('checks a request\'s relation property again when it is merged, as a row relation field is', async () => {
    await createRow(t.http, owner, doc, { id: 'r3', values: { name: 'three' } });
    const opened = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: 'link r3' }).expect(201);
    const requestId = opened.body.payload.id as string;
    await request(t.http).patch(`${doc.path}/properties?requestId=${requestId}`).set(bearer(owner)).send({ properties: { rel: ['r3'] } }).expect(200);
    const before = await properties();
    await request(t.http).delete(`${doc.path}/data/r3`).set(bearer(owner)).expect(200);
    const merged = await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(400);
    expect(merged.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(merged.body)).toEqual([expect.objectContaining({ fieldId: 'rel', reason: 'row r3 does not exist' })]);
    expect(await properties()).toEqual(before);
  });

  it('keeps one reference to a row named both without and with this document', async () => {
    const same = [{ rowId: 'r1' }, { rowId: 'r1' }];
    const mixed = [{ rowId: 'r1' }, { docType: doc.docType, docId: doc.docId, rowId: 'r1' }];
    const sameRow = await request(t.http).post(`${API}/doc/${doc.docType}/${doc.docId}/data`).set(bearer(owner)).send({ id: 'd1', values: { name: 'd1', links: same } }).expect(201);
    expect(valueOf(sameRow.body.payload, 'links')).toEqual({ relation: [{ rowId: 'r1' }] });
    const mixedRow = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'd2', values: { name: 'd2', links: mixed } }).expect(201);
    expect(valueOf(mixedRow.body.payload, 'links')).toEqual({ relation: [{ rowId: 'r1' }] });
    const updated = await request(t.http).put(`${doc.path}/data/d1`).set(bearer(owner)).send({ values: { links: [...mixed].reverse() } }).expect(200);
    expect((valueOf(updated.body.payload, 'links') as { relation: unknown[] }).relation).toHaveLength(1);
    const property = await request(t.http).patch(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { rel: mixed } }).expect(200);
    expect(property.body.payload.properties).toEqual([{ fieldId: 'rel', value: { relation: [{ rowId: 'r1' }] } }]);
  });
});
