import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, createRow, type DocHandle, newUser, valueOf } from './documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

describe('documents: rows', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner);
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a row with lenient values and returns canonical Values, merged in its own revision', async () => {
    const res = await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(owner))
      .send({ id: 'r1', values: [
        { fieldId: 'name', value: { text: 'Widget' } },
        { fieldId: 'price', value: '12.5' },
        { fieldId: 'status', value: { selectOption: 'todo' } },
        { fieldId: 'tags', value: ['red', { id: 'blue' }] },
        { fieldId: 'due', value: { date: '2024-05-01' } },
      ] })
      .expect(201);
    const row = res.body.payload;
    expect(row).toMatchObject({ id: 'r1', version: 1, createdBy: owner.id, request: { merged: true, requestStatus: 'merged', pendingApproval: false } });
    expect(row.request.revisionId).toEqual(expect.any(String));
    expect(valueOf(row, 'name')).toEqual({ text: 'Widget' });
    expect(valueOf(row, 'price')).toEqual({ number: 12.5 });
    expect(valueOf(row, 'status')).toMatchObject({ selectOption: { id: 'todo' } });
    expect(valueOf(row, 'tags')).toMatchObject({ multiSelect: [{ id: 'red' }, { id: 'blue' }] });
    expect(valueOf(row, 'due')).toEqual({ date: '2024-05-01' });

    const read = await request(t.http).get(`${doc.path}/data/r1`).set(bearer(owner)).expect(200);
    expect(read.body.payload).toMatchObject({ id: 'r1', version: 1 });
    const viaRows = await request(t.http).get(`${doc.path}/rows/r1`).set(bearer(owner)).expect(200);
    expect(viaRows.body.payload.id).toBe('r1');
  });

  it('rejects invalid values with VALIDATION_ERROR details {fieldId, reason} and the rule message', async () => {
    const res = await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(owner))
      .send({ values: { name: 'x', price: -3, code: 'abc', status: 'nope', rating: 9, due: 'not a date', unknownField: 1 } })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const byField = Object.fromEntries(problemsOf(res.body).map((d: { fieldId: string; message?: Record<string, string> }) => [d.fieldId, d]));
    expect(Object.keys(byField)).toEqual(expect.arrayContaining(['price', 'code', 'status', 'rating', 'due', 'unknownField']));
    expect(byField.price.message).toMatchObject({ en: 'Price must not be negative', de: 'Preis darf nicht negativ sein' });
    expect(byField.code.message).toMatchObject({ en: 'Three capitals' });
  });

  it('keeps durations within the exact JSON integers and says so when refusing a larger integer', async () => {
    const timed = await createDocument(t.http, owner, { fields: [{ id: 'took', name: 'Took', type: 'duration' }] });
    const max = Number.MAX_SAFE_INTEGER;
    const ok = await request(t.http).post(`${timed.path}/data`).set(bearer(owner)).send({ values: { took: { duration: max } } }).expect(201);
    expect(valueOf(ok.body.payload, 'took')).toEqual({ duration: max });
    // 1e18 is an integer (spec 2.5's int64), but past 2^53 − 1 a JSON number is not exact: the reason must say that,
    // not "must be an integer … got 1000000000000000000".
    const big = await request(t.http).post(`${timed.path}/data`).set(bearer(owner)).send({ values: { took: 1e18 } }).expect(400);
    expect(big.body.details).toMatchObject({ fieldId: 'took', reason: expect.stringContaining(`at most ${max} milliseconds`) });
    const fraction = await request(t.http).post(`${timed.path}/data`).set(bearer(owner)).send({ values: { took: 1.5 } }).expect(400);
    expect(fraction.body.details).toMatchObject({ fieldId: 'took', reason: 'duration must be an integer number of milliseconds, got 1.5' });
  });

  it('requires required fields on create and refuses a duplicate row id', async () => {
    const missing = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ values: { price: 1 } }).expect(400);
    // Spec 7's details are {field, reason}: a value's problem carries both field and fieldId.
    expect(problemsOf(missing.body)).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'name', fieldId: 'name', reason: 'field is required' })]));
    const dup = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'r1', values: { name: 'again' } }).expect(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');
  });

  it('enforces unique values', async () => {
    await createRow(t.http, owner, doc, { id: 'u1', values: { name: 'A', sku: 'SKU-1' } });
    const res = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'u2', values: { name: 'B', sku: 'SKU-1' } }).expect(400);
    expect(res.body.details).toMatchObject({ field: 'sku', fieldId: 'sku', reason: expect.stringContaining('unique') });
    await request(t.http).get(`${doc.path}/data/u2`).set(bearer(owner)).expect(404);
  });

  it('updates with optimistic locking: the version increments and a stale version is 409 VERSION_CONFLICT', async () => {
    const created = await createRow(t.http, owner, doc, { id: 'v1', values: { name: 'V', qty: 1 } });
    expect(created.version).toBe(1);
    const updated = await request(t.http).put(`${doc.path}/data/v1`).set(bearer(owner)).send({ values: { qty: 2 }, version: 1 }).expect(200);
    expect(updated.body.payload).toMatchObject({ version: 2 });
    expect(valueOf(updated.body.payload, 'qty')).toEqual({ number: 2 });
    expect(valueOf(updated.body.payload, 'name')).toEqual({ text: 'V' });
    const stale = await request(t.http).put(`${doc.path}/data/v1`).set(bearer(owner)).send({ values: { qty: 3 }, version: 1 }).expect(409);
    expect(stale.body).toMatchObject({ success: false, code: 'VERSION_CONFLICT', payload: { currentVersion: 2, yourVersion: 1 } });
    const after = await request(t.http).get(`${doc.path}/data/v1`).set(bearer(owner)).expect(200);
    expect(valueOf(after.body.payload, 'qty')).toEqual({ number: 2 });
  });

  it('takes a version written as int64 in proto3 JSON (a decimal string), and refuses any other string', async () => {
    await createRow(t.http, owner, doc, { id: 'vs', values: { name: 'V', qty: 1 } });
    const updated = await request(t.http).put(`${doc.path}/data/vs`).set(bearer(owner)).send({ values: { qty: 2 }, version: '1' }).expect(200);
    expect(updated.body.payload).toMatchObject({ version: 2 });
    const stale = await request(t.http).put(`${doc.path}/data/vs`).set(bearer(owner)).send({ values: { qty: 3 }, version: '1' }).expect(409);
    expect(stale.body).toMatchObject({ code: 'VERSION_CONFLICT', payload: { currentVersion: 2, yourVersion: 1 } });
    for (const version of ['two', '2.0', '', ' 2']) {
      const bad = await request(t.http).put(`${doc.path}/data/vs`).set(bearer(owner)).send({ values: { qty: 3 }, version }).expect(400);
      expect(bad.body.code).toBe('VALIDATION_ERROR');
    }
    const after = await request(t.http).get(`${doc.path}/data/vs`).set(bearer(owner)).expect(200);
    expect(after.body.payload.version).toBe(2);
  });

  it('lets exactly one of two concurrent writers of the same version win', async () => {
    await createRow(t.http, owner, doc, { id: 'c1', values: { name: 'C', qty: 0 } });
    const [a, b] = await Promise.all([
      request(t.http).put(`${doc.path}/data/c1`).set(bearer(owner)).send({ values: { qty: 10 }, version: 1 }),
      request(t.http).put(`${doc.path}/data/c1`).set(bearer(owner)).send({ values: { qty: 20 }, version: 1 }),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const loser = a.status === 409 ? a : b;
    const winner = a.status === 200 ? a : b;
    expect(loser.body).toMatchObject({ code: 'VERSION_CONFLICT', payload: { currentVersion: 2, yourVersion: 1 } });
    const after = await request(t.http).get(`${doc.path}/data/c1`).set(bearer(owner)).expect(200);
    expect(after.body.payload.version).toBe(2);
    expect(valueOf(after.body.payload, 'qty')).toEqual(valueOf(winner.body.payload, 'qty'));
  });

  it('clears a field with null and deletes a row (404 afterwards, values kept in the revision)', async () => {
    await createRow(t.http, owner, doc, { id: 'd1', values: { name: 'D', qty: 5 } });
    const cleared = await request(t.http).put(`${doc.path}/data/d1`).set(bearer(owner)).send({ values: [{ fieldId: 'qty', value: null }] }).expect(200);
    expect(valueOf(cleared.body.payload, 'qty')).toBeUndefined();
    const del = await request(t.http).delete(`${doc.path}/data/d1`).set(bearer(owner)).expect(200);
    expect(del.body.payload).toMatchObject({ id: 'd1', deleted: true, request: { merged: true } });
    await request(t.http).get(`${doc.path}/data/d1`).set(bearer(owner)).expect(404);
    const ops = await request(t.http).get(`${doc.path}/revisions/${del.body.payload.request.revisionId}/operations`).set(bearer(owner)).expect(200);
    expect(ops.body.payload.items[0]).toMatchObject({ type: 'row-delete', target: { kind: 'row', rowId: 'd1' }, newValue: null });
    expect(ops.body.payload.items[0].oldValue.values).toEqual([{ fieldId: 'name', value: { text: 'D' } }]);
    await request(t.http).delete(`${doc.path}/data/d1`).set(bearer(owner)).expect(404);
  });

  it('refuses a ValueEntry without value instead of clearing the field (null still clears)', async () => {
    await createRow(t.http, owner, doc, { id: 's7', values: { name: 'S', qty: 7 } });
    const missing = await request(t.http).put(`${doc.path}/data/s7`).set(bearer(owner)).send({ values: [{ fieldId: 'qty' }] }).expect(400);
    expect(missing.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { fieldId: 'qty', field: 'values[0].value' } });
    await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 's8', values: [{ fieldId: 'name', value: 'S8' }, { fieldId: 'qty' }] }).expect(400);
    const row = await request(t.http).get(`${doc.path}/data/s7`).set(bearer(owner)).expect(200);
    expect(valueOf(row.body.payload, 'qty')).toEqual({ number: 7 });
  });

  it('refuses a Value carrying several keys rather than letting one win', async () => {
    await createRow(t.http, owner, doc, { id: 'mk1', values: { name: 'V', qty: 1, status: 'todo' } });
    for (const [fieldId, value] of [
      ['qty', { number: 1, text: 'x' }],
      ['status', { select: 'todo', selectOption: 'doing' }],
      ['name', { text: 'x', bogus: 1 }],
    ] as const) {
      const res = await request(t.http).put(`${doc.path}/data/mk1`).set(bearer(owner)).send({ values: [{ fieldId, value }] }).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { fieldId, reason: expect.stringContaining('one typed key') } });
    }
    // Lenient object forms naming no typed key are still accepted.
    await request(t.http).put(`${doc.path}/data/mk1`).set(bearer(owner)).send({ values: { status: { id: 'doing' } } }).expect(200);
  });

  it('accepts a row sent back as GET answered it, ignoring its read-only keys; another id is refused', async () => {
    await createRow(t.http, owner, doc, { id: 'e1', values: { name: 'Echo', qty: 1 } });
    const read = (await request(t.http).get(`${doc.path}/data/e1`).set(bearer(owner)).expect(200)).body.payload;
    const echoed = { ...read, values: read.values.map((entry: { fieldId: string; value: unknown }) => (entry.fieldId === 'qty' ? { fieldId: 'qty', value: { number: 2 } } : entry)) };
    const res = await request(t.http).put(`${doc.path}/data/e1`).set(bearer(owner)).send(echoed).expect(200);
    expect(res.body.payload).toMatchObject({ id: 'e1', version: read.version + 1, createdAt: read.createdAt });
    expect(valueOf(res.body.payload, 'qty')).toEqual({ number: 2 });
    const other = await request(t.http).put(`${doc.path}/data/e1`).set(bearer(owner)).send({ ...echoed, id: 'e2', version: read.version + 1 }).expect(400);
    expect(other.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'id' } });
    await request(t.http).put(`${doc.path}/data/e1`).set(bearer(owner)).send({ values: [], unknownKey: 1 }).expect(400);
  });

  it('answers the deprecated apply parameter with X-API-Deprecated: true', async () => {
    const res = await request(t.http).post(`${doc.path}/data?apply=true`).set(bearer(owner)).send({ id: 'ap1', values: { name: 'Direct' } }).expect(201);
    expect(res.headers['x-api-deprecated']).toBe('true');
    expect(res.body.payload.request.merged).toBe(true);
    const plain = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'ap2', values: { name: 'Plain' } }).expect(201);
    expect(plain.headers['x-api-deprecated']).toBeUndefined();
    // Failures too, whichever step refuses: the credential, the document, the body.
    const unauthenticated = await request(t.http).post(`${doc.path}/data?apply=true`).send({ id: 'ap3', values: {} }).expect(401);
    const missing = await request(t.http).post(`${doc.path}-missing/data?apply=true`).set(bearer(owner)).send({ id: 'ap3', values: {} }).expect(404);
    const invalid = await request(t.http).post(`${doc.path}/data?apply=true`).set(bearer(owner)).send({ id: 'ap3', values: { name: 5 } }).expect(400);
    expect([unauthenticated, missing, invalid].map((r) => r.headers['x-api-deprecated'])).toEqual(['true', 'true', 'true']);
  });

  it('lets a viewer read but not write, and hides the document from another tenant', async () => {
    const viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    await request(t.http).get(`${doc.path}/data/r1`).set(bearer(viewer)).expect(200);
    const write = await request(t.http).put(`${doc.path}/data/r1`).set(bearer(viewer)).send({ values: { qty: 1 } }).expect(403);
    expect(write.body.code).toBe('FORBIDDEN');
    await request(t.http).post(`${doc.path}/data`).set(bearer(viewer)).send({ values: { name: 'no' } }).expect(403);

    const stranger = await newUser(t.http);
    const hidden = await request(t.http).get(`${doc.path}/data/r1`).set(bearer(stranger)).expect(404);
    expect(hidden.body).toMatchObject({ code: 'DOC_NOT_FOUND', payload: null });
    expect(JSON.stringify(hidden.body)).not.toContain('Widget');
    await request(t.http).put(`${doc.path}/data/r1`).set(bearer(stranger)).send({ values: { qty: 1 } }).expect(404);
    await request(t.http).get(`${doc.path}/data`).set(bearer(stranger)).expect(404);
  });

  it('answers DOC_NOT_FOUND for an unknown document', async () => {
    const res = await request(t.http).get(`/api/v1/doc/products/nope/data`).set(bearer(owner)).expect(404);
    expect(res.body.code).toBe('DOC_NOT_FOUND');
  });
});
