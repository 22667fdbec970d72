import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser, valueOf } from './documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

interface RowBody {
  id: string;
  version: number;
  values: { fieldId: string; value: Record<string, unknown> }[];
}

describe('documents: row changes of POST /requests in the Row shape (spec 2.6)', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner);
    await createRow(t.http, owner, doc, { id: 'base', values: { name: 'Base', qty: 1 } });
  });
  afterAll(async () => {
    await t.close();
  });

  async function createRequest(changes: unknown[], target: DocHandle = doc) {
    return request(t.http).post(`${target.path}/requests`).set(bearer(owner)).send({ title: 'Rows', changes });
  }

  async function merge(requestId: string, target: DocHandle = doc) {
    return request(t.http).post(`${target.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);
  }

  async function readRow(rowId: string, target: DocHandle = doc): Promise<RowBody> {
    const res = await request(t.http).get(`${target.path}/data/${rowId}`).set(bearer(owner)).expect(200);
    return res.body.payload;
  }

  it('creates and updates rows given as Rows, ignoring read-only keys, and merges them', async () => {
    const base = await readRow('base');
    const res = await createRequest([
      {
        type: 'row-create',
        target: { kind: 'row', rowId: 'r1' },
        newValue: {
          id: 'r1',
          values: [
            { fieldId: 'name', value: { text: 'Widget' } },
            { fieldId: 'qty', value: { number: 3 } },
            { fieldId: 'status', value: { selectOption: { id: 'doing' } } },
          ],
          version: 7,
          createdAt: '2020-01-01T00:00:00.000Z',
          createdBy: 'someone-else',
          updatedAt: '2020-01-01T00:00:00.000Z',
          updatedBy: 'someone-else',
        },
      },
      // Only newValue.id names the row.
      { type: 'row-create', target: { kind: 'row' }, newValue: { id: 'r2', values: [{ fieldId: 'name', value: { text: 'Gadget' } }] } },
      // Only target.rowId names it; values as an object also work inside a Row.
      { type: 'row-create', target: { kind: 'row', rowId: 'r3' }, newValue: { values: { name: { text: 'Gizmo' }, active: { boolean: true } } } },
      // A Row read with GET /data/{rowId}, changed and sent back: its version is the optimistic lock.
      {
        type: 'row-update',
        target: { kind: 'row', rowId: 'base' },
        newValue: { ...base, values: [{ fieldId: 'qty', value: { number: 9 } }] },
      },
      // A row created earlier in the same request can be updated by its Row.
      { type: 'row-update', target: { kind: 'row' }, newValue: { id: 'r2', values: [{ fieldId: 'qty', value: { number: 5 } }] } },
    ]);
    expect(res.status).toBe(201);
    expect(res.body.payload.changes.map((change: { type: string; targetId: string }) => `${change.type}:${change.targetId}`)).toEqual([
      'row-create:r1',
      'row-create:r2',
      'row-create:r3',
      'row-update:base',
      'row-update:r2',
    ]);

    const merged = await merge(res.body.payload.id);
    expect(merged.body.payload.revision.stats).toMatchObject({ rowsCreated: 3, rowsUpdated: 1 });

    const r1 = await readRow('r1');
    expect(r1.values).toEqual([
      { fieldId: 'name', value: { text: 'Widget' } },
      { fieldId: 'qty', value: { number: 3 } },
      { fieldId: 'status', value: { selectOption: expect.objectContaining({ id: 'doing' }) } },
    ]);
    // Read-only keys of the Row were not taken over.
    expect(r1).toMatchObject({ version: 1, createdBy: owner.id, updatedBy: owner.id });
    expect(r1).not.toMatchObject({ createdAt: '2020-01-01T00:00:00.000Z' });
    expect(valueOf(await readRow('r2'), 'name')).toEqual({ text: 'Gadget' });
    expect(valueOf(await readRow('r2'), 'qty')).toEqual({ number: 5 });
    expect(valueOf(await readRow('r3'), 'active')).toEqual({ boolean: true });
    const updated = await readRow('base');
    expect(updated.version).toBe(base.version + 1);
    expect(valueOf(updated, 'qty')).toEqual({ number: 9 });
    expect(valueOf(updated, 'name')).toEqual({ text: 'Base' });
  });

  it('keeps the ValueEntry array, object and single-Value forms', async () => {
    const res = await createRequest([
      { type: 'row-create', target: { kind: 'row', rowId: 'o1' }, newValue: [{ fieldId: 'name', value: { text: 'Array' } }] },
      { type: 'row-create', target: { kind: 'row', rowId: 'o2' }, newValue: { name: { text: 'Object' }, qty: 2 } },
      { type: 'row-update', target: { kind: 'row', rowId: 'o2', fieldId: 'qty' }, newValue: { number: 4 } },
      { type: 'row-update', target: { kind: 'row', rowId: 'o1' }, newValue: { qty: { number: 6 } } },
    ]);
    expect(res.status).toBe(201);
    await merge(res.body.payload.id);
    expect(valueOf(await readRow('o1'), 'qty')).toEqual({ number: 6 });
    expect(valueOf(await readRow('o2'), 'name')).toEqual({ text: 'Object' });
    expect(valueOf(await readRow('o2'), 'qty')).toEqual({ number: 4 });
  });

  it('keeps reading an object as field id → Value when its keys are all fields, even fields named values and id', async () => {
    const odd = await createDocument(t.http, owner, {
      fields: [
        { id: 'values', name: 'Values', type: 'text' },
        { id: 'id', name: 'Id', type: 'text' },
      ],
    });
    const res = await createRequest([{ type: 'row-create', target: { kind: 'row', rowId: 'w1' }, newValue: { values: { text: 'v' }, id: 'i' } }], odd);
    expect(res.status).toBe(201);
    await merge(res.body.payload.id, odd);
    const row = await readRow('w1', odd);
    expect(row.values).toEqual([
      { fieldId: 'values', value: { text: 'v' } },
      { fieldId: 'id', value: { text: 'i' } },
    ]);
  });

  it('refuses bad Rows with VALIDATION_ERROR naming the change and the key, and records nothing', async () => {
    const cases: { change: Record<string, unknown>; detail: Record<string, unknown> }[] = [
      {
        change: { type: 'row-create', target: { kind: 'row', rowId: 'x1' }, newValue: { id: 'x2', values: [] } },
        detail: { field: 'changes[1].newValue.id', reason: 'id "x2" differs from target.rowId "x1"' },
      },
      {
        change: { type: 'row-create', target: { kind: 'row' }, newValue: { id: 5, values: [] } },
        detail: { field: 'changes[1].newValue.id', reason: 'id must be a string' },
      },
      {
        change: { type: 'row-create', target: { kind: 'row' }, newValue: { id: 'x3', values: 'nope' } },
        detail: { field: 'changes[1].newValue.values', reason: expect.stringContaining('values must be an array') },
      },
      {
        change: { type: 'row-create', target: { kind: 'row' }, newValue: { id: 'x4', values: [], colour: 'red' } },
        detail: { field: 'changes[1].newValue.colour', reason: expect.stringContaining('unknown Row key') },
      },
      {
        change: { type: 'row-create', target: { kind: 'row' }, newValue: { id: 'x5', values: [{ value: { text: 'no field' } }] } },
        detail: { field: 'changes[1].newValue.values[0].fieldId' },
      },
      {
        change: {
          type: 'row-create',
          target: { kind: 'row' },
          newValue: { id: 'x6', values: [{ fieldId: 'name', value: { text: 'N' } }, { fieldId: 'qty', value: { number: 'many' } }] },
        },
        detail: { fieldId: 'qty', field: 'changes[1].newValue.values[1].value', reason: expect.stringContaining('expected a finite number') },
      },
      {
        change: { type: 'row-create', target: { kind: 'row' }, newValue: { id: 'x7', values: [{ fieldId: 'nope', value: { text: 'N' } }] } },
        detail: { fieldId: 'nope', field: 'changes[1].newValue.values[0].value', reason: 'unknown field' },
      },
      {
        change: { type: 'row-create', target: { kind: 'row' }, newValue: { id: 'bad id!', values: [{ fieldId: 'name', value: { text: 'N' } }] } },
        detail: { field: 'changes[1].newValue.id', reason: expect.stringContaining('row id must match') },
      },
      {
        change: { type: 'row-update', target: { kind: 'row' }, newValue: { values: [{ fieldId: 'qty', value: { number: 1 } }] } },
        detail: { field: 'changes[1].target.rowId', reason: 'rowId is required' },
      },
      {
        change: { type: 'row-update', target: { kind: 'row', rowId: 'base' }, newValue: { id: 'base' } },
        detail: { field: 'changes[1].newValue.values', reason: 'values is required' },
      },
      {
        change: { type: 'row-update', target: { kind: 'row', rowId: 'base' }, newValue: { id: 'base', values: [], version: -1 } },
        detail: { field: 'changes[1].newValue.version', reason: 'version must be a non-negative integer' },
      },
    ];
    for (const { change, detail } of cases) {
      // The first change is valid: a failed call must leave nothing behind, not even it.
      const res = await createRequest([
        { type: 'row-create', target: { kind: 'row', rowId: 'never' }, newValue: { id: 'never', values: [{ fieldId: 'name', value: { text: 'Never' } }] } },
        change,
      ]);
      expect({ change, status: res.status, code: res.body.code }).toEqual({ change, status: 400, code: 'VALIDATION_ERROR' });
      expect(problemsOf(res.body)).toEqual(expect.arrayContaining([expect.objectContaining(detail)]));
    }
    const list = await request(t.http).get(`${doc.path}/requests?status=open`).set(bearer(owner)).expect(200);
    expect(list.body.payload.items).toEqual([]);
    const draftless = await request(t.http).get(`${doc.path}/data/never`).set(bearer(owner));
    expect(draftless.status).toBe(404);
  });

  it('checks the version of an updating Row like PUT /data/{rowId}', async () => {
    const row = await createRow(t.http, owner, doc, { id: 'v1', values: { name: 'V', qty: 1 } });
    await request(t.http).put(`${doc.path}/data/v1`).set(bearer(owner)).send({ values: { qty: 2 } }).expect(200);
    const stale = await createRequest([
      { type: 'row-update', target: { kind: 'row', rowId: 'v1' }, newValue: { id: 'v1', version: row.version, values: [{ fieldId: 'qty', value: { number: 3 } }] } },
    ]);
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: 'VERSION_CONFLICT', payload: { currentVersion: 2, yourVersion: 1 } });
    expect(valueOf(await readRow('v1'), 'qty')).toEqual({ number: 2 });
  });

  it('reads an updating Row version given as a decimal string (int64 in proto3 JSON)', async () => {
    await createRow(t.http, owner, doc, { id: 'vstr', values: { name: 'V', qty: 1 } });
    await request(t.http).put(`${doc.path}/data/vstr`).set(bearer(owner)).send({ values: { qty: 2 } }).expect(200);
    const stale = await createRequest([
      { type: 'row-update', target: { kind: 'row', rowId: 'vstr' }, newValue: { id: 'vstr', version: '1', values: [{ fieldId: 'qty', value: { number: 3 } }] } },
    ]);
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: 'VERSION_CONFLICT', payload: { currentVersion: 2, yourVersion: 1 } });
    const bad = await createRequest([
      { type: 'row-update', target: { kind: 'row', rowId: 'vstr' }, newValue: { id: 'vstr', version: 'two', values: [{ fieldId: 'qty', value: { number: 3 } }] } },
    ]);
    expect(bad.status).toBe(400);
  });
});
