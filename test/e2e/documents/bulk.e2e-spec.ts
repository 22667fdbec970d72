import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, type DocHandle, newUser, scopedToken, seedRows, valueOf } from './documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

describe('documents: bulk writes', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, {
      properties: [
        { id: 'supplier', name: 'Supplier', type: 'text' },
        { id: 'budget', name: 'Budget', type: 'currency' },
      ],
    });
    await seedRows(
      t.dataSource,
      doc,
      Array.from({ length: 1000 }, (_, i) => ({ id: `b${i}`, values: { name: `Row ${i}`, qty: i } })),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  async function rowsWhere(field: string, value: unknown): Promise<number> {
    const res = await request(t.http)
      .post(`${doc.path}/data/query`)
      .set(bearer(owner))
      .send({ filters: { logic: 'and', conditions: [{ field, operator: 'eq', value }], groups: [] } })
      .expect(200);
    return res.body.payload.total;
  }

  it('applies every target form in one revision', async () => {
    const res = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([
        { target: { row: 'b1', field: 'price' }, value: { number: 1.5 } },
        { target: { row: 'b2' }, value: { price: 2, status: 'done' } },
        { target: { row: 'b3' }, value: [{ fieldId: 'price', value: { number: 3 } }] },
        { target: { rows: ['b4', 'b5'], field: 'status' }, value: { selectOption: { id: 'doing' } } },
        { target: { property: 'supplier' }, value: { text: 'ACME' } },
        { target: { properties: true }, value: { budget: 1000 } },
      ])
      .expect(200);
    expect(res.body.payload).toMatchObject({ merged: true, requestStatus: 'merged', rowsUpdated: 5, propertiesUpdated: true });
    const revision = await request(t.http).get(`${doc.path}/revisions/${res.body.payload.revisionId}`).set(bearer(owner)).expect(200);
    expect(revision.body.payload.stats).toMatchObject({ rowsUpdated: 5, rowsCreated: 0 });
    const b2 = await request(t.http).get(`${doc.path}/data/b2`).set(bearer(owner)).expect(200);
    expect(valueOf(b2.body.payload, 'price')).toEqual({ number: 2 });
    expect(valueOf(b2.body.payload, 'name')).toEqual({ text: 'Row 2' });
    expect(b2.body.payload.version).toBe(2);
    expect(await rowsWhere('status', 'doing')).toBe(2);
    const props = await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200);
    expect(props.body.payload.properties).toEqual([
      { fieldId: 'supplier', value: { text: 'ACME' } },
      { fieldId: 'budget', value: { number: 1000 } },
    ]);
    const batch = await request(t.http).post(`${doc.path}/rows/batch-update`).set(bearer(owner)).send([{ target: { row: 'b6', field: 'qty' }, value: 66 }]).expect(200);
    expect(batch.body.payload.rowsUpdated).toBe(1);
  });

  it('writes 1000 rows in one call, all merged', async () => {
    const body = Array.from({ length: 1000 }, (_, i) => ({ target: { row: `b${i}`, field: 'sku' }, value: { text: `SKU-${i}` } }));
    const res = await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send(body).expect(200);
    expect(res.body.payload.rowsUpdated).toBe(1000);
    expect(await rowsWhere('sku', 'SKU-999')).toBe(1);
    // Its 1000 operations each have their own id (derived from the revision's id and their ordinal), in order.
    const ids: string[] = [];
    for (let page = 1; page <= 10; page += 1) {
      const ops = await request(t.http)
        .get(`${doc.path}/revisions/${res.body.payload.revisionId}/operations?page=${page}&pageSize=100`)
        .set(bearer(owner))
        .expect(200);
      ids.push(...ops.body.payload.items.map((op: { id: string; target: { rowId: string } }, i: number) => {
        expect(op.target.rowId).toBe(`b${(page - 1) * 100 + i}`);
        return op.id;
      }));
    }
    expect(ids).toHaveLength(1000);
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('is all or nothing: a bad cell in row 999 leaves nothing applied', async () => {
    const body = Array.from({ length: 1000 }, (_, i) => ({ target: { row: `b${i}`, field: 'qty' }, value: i === 999 ? { number: 'many' } : { number: 7 } }));
    const res = await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send(body).expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(res.body)).toEqual([expect.objectContaining({ fieldId: 'qty', rowId: 'b999', field: '[999].value' })]);
    expect(await rowsWhere('qty', 7)).toBe(1);
  });

  it('reports unknown rows (without judging their values) and bad values of known rows, in body order', async () => {
    // Values are checked while the rows are read: what is reported must not depend on which finished first.
    const res = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([
        { target: { row: 'b21', field: 'qty' }, value: { number: 'lots' } },
        { target: { row: 'nowhere', field: 'qty' }, value: { number: 'many' } },
        { target: { row: 'b20', field: 'qty' }, value: 5 },
        { target: { row: 'b22', field: 'qty' }, value: { number: 'plenty' } },
      ])
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(res.body)).toEqual([
      expect.objectContaining({ rowId: 'b21', fieldId: 'qty', field: '[0].value' }),
      expect.objectContaining({ rowId: 'nowhere', field: '[1].target', reason: 'row nowhere not found' }),
      expect.objectContaining({ rowId: 'b22', fieldId: 'qty', field: '[3].value' }),
    ]);
    expect(await rowsWhere('qty', 5)).toBe(1);
  });

  it('is all or nothing for unknown rows, unique clashes inside the batch and bad properties', async () => {
    const unknownRow = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([{ target: { row: 'b10', field: 'qty' }, value: 12345 }, { target: { row: 'missing', field: 'qty' }, value: 12345 }])
      .expect(400);
    expect(unknownRow.body.details).toMatchObject({ rowId: 'missing' });
    const clash = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([{ target: { rows: ['b11', 'b12'], field: 'sku' }, value: 'SAME' }, { target: { row: 'b10', field: 'qty' }, value: 12345 }])
      .expect(400);
    expect(clash.body.details).toMatchObject({ fieldId: 'sku' });
    const badProperty = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([{ target: { row: 'b10', field: 'qty' }, value: 12345 }, { target: { property: 'budget' }, value: 'lots' }])
      .expect(400);
    expect(badProperty.body.details).toMatchObject({ fieldId: 'budget', field: '[1].value' });
    // A bad value stays bad when a later item of the call overrides the same cell (it answered 200).
    const overridden = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([{ target: { row: 'b10', field: 'qty' }, value: 'many' }, { target: { row: 'b10', field: 'qty' }, value: 12345 }])
      .expect(400);
    expect(overridden.body.details).toMatchObject({ rowId: 'b10', fieldId: 'qty', field: '[0].value' });
    const overriddenProperty = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([{ target: { property: 'budget' }, value: 'lots' }, { target: { property: 'budget' }, value: 5 }, { target: { row: 'b10', field: 'qty' }, value: 12345 }])
      .expect(400);
    expect(overriddenProperty.body.details).toMatchObject({ fieldId: 'budget', field: '[0].value' });
    expect(await rowsWhere('qty', 12345)).toBe(0);
  });

  it('refuses more than 1000 rows, malformed targets and empty bodies with VALIDATION_ERROR', async () => {
    const tooMany = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([{ target: { rows: Array.from({ length: 1001 }, (_, i) => `x${i}`), field: 'qty' }, value: 1 }])
      .expect(400);
    expect(tooMany.body.details.reason).toContain('1000');
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send([{ target: { cell: 'x' }, value: 1 }]).expect(400);
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send([]).expect(400);
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send({ nothing: true }).expect(400);
    // Unknown keys of an item or its target are refused, not ignored: a `version` suggested a check that never ran.
    const before = (await request(t.http).get(`${doc.path}/revisions`).set(bearer(owner)).expect(200)).body.payload.total;
    const versioned = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([
        { target: { row: 'b1', field: 'qty' }, value: 3, version: 999 },
        { target: { row: 'b2', field: 'qty', colour: 'red' }, value: 4 },
      ])
      .expect(400);
    expect(problemsOf(versioned.body)).toEqual([
      expect.objectContaining({ field: '[0].version', reason: expect.stringContaining('no row version') }),
      expect.objectContaining({ field: '[1].target.colour', reason: expect.stringContaining('unknown key') }),
    ]);
    const orderBookForm = await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send({ rows: [{ target: { row: 'b1' }, values: { qty: 3 }, note: 'x' }] }).expect(400);
    expect(problemsOf(orderBookForm.body)).toEqual([expect.objectContaining({ field: 'rows[0].note' })]);
    // Spec 4.4's order-book form carries `metadata` per row: accepted (not stored).
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send({ rows: [{ target: { row: 'nope' }, values: { qty: 3 }, metadata: { source: 'x' } }] }).expect((res) => expect(problemsOf(res.body).map((p: { field?: string }) => p.field)).not.toContain('rows[0].metadata'));
    // Errors of the order-book form name the key sent (`values`), and both keys at once are refused.
    const missing = await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send({ rows: [{ target: { row: 'b1' }, values: [{ fieldId: 'qty' }] }] }).expect(400);
    expect(problemsOf(missing.body)).toEqual([expect.objectContaining({ field: 'rows[0].values[0].value' })]);
    const both = await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send({ rows: [{ target: { row: 'b1' }, values: { qty: 3 }, value: { qty: 4 } }] }).expect(400);
    expect(problemsOf(both.body)).toEqual([expect.objectContaining({ field: 'rows[0].value' })]);
    expect((await request(t.http).get(`${doc.path}/revisions`).set(bearer(owner)).expect(200)).body.payload.total).toBe(before);
  });

  it('records a bulk write on an open request and raises one data_bulk_operation on merge', async () => {
    const open = await request(t.http).post(`${doc.path}/requests`).set(bearer(owner)).send({ title: 'bulk draft' }).expect(201);
    const reqId = open.body.payload.id;
    const res = await request(t.http)
      .post(`${doc.path}/data/bulk?requestId=${reqId}`)
      .set(bearer(owner))
      .send([{ target: { rows: ['b20', 'b21', 'b22'], field: 'qty' }, value: 99999 }])
      .expect(200);
    expect(res.body.payload).toMatchObject({ requestId: reqId, merged: false });
    expect(await rowsWhere('qty', 99999)).toBe(0);
    await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(200);
    expect(await rowsWhere('qty', 99999)).toBe(3);
    const events = await t.dataSource.query<{ event_type: string; payload: { rowsUpdated: number; requestId: string } }[]>(
      `SELECT event_type, payload FROM outbox WHERE doc_id = $1 AND payload->>'requestId' = $2 ORDER BY seq`,
      [doc.docId, reqId],
    );
    const types = events.map((event) => event.event_type);
    expect(types).toEqual(expect.arrayContaining(['request_created', 'request_merged', 'data_bulk_operation', 'revision_created']));
    expect(types).not.toContain('data_row_updated');
    expect(events.find((event) => event.event_type === 'data_bulk_operation')?.payload.rowsUpdated).toBe(3);
  });

  it('carries the committed rows in data_bulk_operation up to 100 rows, and only their ids past that', async () => {
    const outboxOf = async (bulkRequestId: string) =>
      (
        await t.dataSource.query<{ payload: { rowIds: string[]; rows: Array<{ rowId: string; version: number; values?: Array<{ fieldId: string; value: unknown }>; deleted?: boolean }> | null } }[]>(
          `SELECT payload FROM outbox WHERE doc_id = $1 AND event_type = 'data_bulk_operation' AND payload->>'requestId' = $2`,
          [doc.docId, bulkRequestId],
        )
      )[0].payload;
    const small = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([{ target: { rows: ['b30', 'b31'], field: 'qty' }, value: 4242 }])
      .expect(200);
    const smallPayload = await outboxOf(small.body.payload.requestId);
    expect(smallPayload.rowIds).toEqual(['b30', 'b31']);
    expect(smallPayload.rows).toHaveLength(2);
    for (const [i, row] of (smallPayload.rows ?? []).entries()) {
      const read = (await request(t.http).get(`${doc.path}/data/${row.rowId}`).set(bearer(owner)).expect(200)).body.payload;
      expect(row).toEqual({ rowId: `b3${i}`, version: read.version, values: read.values });
      expect(row.values).toContainEqual({ fieldId: 'qty', value: { number: 4242 } });
    }
    const ids = Array.from({ length: 101 }, (_, i) => `b${500 + i}`);
    const large = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([{ target: { rows: ids, field: 'qty' }, value: 4343 }])
      .expect(200);
    const largePayload = await outboxOf(large.body.payload.requestId);
    expect(largePayload.rows).toBeNull();
    expect(largePayload.rowIds).toEqual(ids);
  });

  it('needs doc:write for property targets, as PATCH /properties does', async () => {
    const dataOnly = await scopedToken(t, owner, ['data:read', 'data:write']);
    await request(t.http).patch(`${doc.path}/properties`).set(bearer(dataOnly)).send({ properties: { supplier: 'x' } }).expect(403);
    for (const item of [
      { target: { property: 'supplier' }, value: 'scoped' },
      { target: { properties: true }, value: { supplier: 'scoped' } },
    ]) {
      const refused = await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(dataOnly)).send([item]).expect(403);
      expect(refused.body).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'missing scope doc:write' } });
    }
    const props = await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200);
    expect(JSON.stringify(props.body.payload.properties)).not.toContain('scoped');
    // Row targets still need data:write only.
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(dataOnly)).send([{ target: { row: 'b30', field: 'qty' }, value: 30 }]).expect(200);
    const both = await scopedToken(t, owner, ['data:write', 'doc:write']);
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(both)).send([{ target: { property: 'supplier' }, value: 'allowed' }]).expect(200);
  });

  it('refuses an item or ValueEntry without value instead of clearing the cell (null still clears)', async () => {
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send([{ target: { row: 'b40', field: 'qty' }, value: 40 }]).expect(200);
    const missing = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([
        { target: { row: 'b40', field: 'qty' } },
        { target: { rows: ['b40'], field: 'qty' } },
        { target: { property: 'supplier' } },
        { target: { row: 'b40' }, value: [{ fieldId: 'qty' }] },
      ])
      .expect(400);
    expect(missing.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(missing.body).map((p: { field: string }) => p.field)).toEqual(['[0].value', '[1].value', '[2].value', '[3].value[0].value']);
    expect(valueOf((await request(t.http).get(`${doc.path}/data/b40`).set(bearer(owner)).expect(200)).body.payload, 'qty')).toEqual({ number: 40 });
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(owner)).send([{ target: { row: 'b40', field: 'qty' }, value: null }]).expect(200);
    expect(valueOf((await request(t.http).get(`${doc.path}/data/b40`).set(bearer(owner)).expect(200)).body.payload, 'qty')).toBeUndefined();
  });

  it('refuses a target mixing forms rather than applying part of it', async () => {
    const before = (await request(t.http).get(`${doc.path}/revisions`).set(bearer(owner)).expect(200)).body.payload.total;
    const mixed = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([
        { target: { row: 'b50', property: 'supplier' }, value: 'x' },
        { target: { rows: ['b50'], row: 'b51', field: 'qty' }, value: 1 },
        { target: { properties: true, property: 'supplier' }, value: { supplier: 'x' } },
        { target: { rows: ['b50'] }, value: 1 },
        { target: { properties: false }, value: {} },
      ])
      .expect(400);
    expect(problemsOf(mixed.body).map((p: { field: string }) => p.field)).toEqual(['[0].target', '[1].target', '[2].target', '[3].target', '[4].target.properties']);
    expect((await request(t.http).get(`${doc.path}/revisions`).set(bearer(owner)).expect(200)).body.payload.total).toBe(before);
  });

  it('refuses a viewer and other tenants', async () => {
    const viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(viewer)).send([{ target: { row: 'b1', field: 'qty' }, value: 5 }]).expect(403);
    const stranger = await newUser(t.http);
    await request(t.http).post(`${doc.path}/data/bulk`).set(bearer(stranger)).send([{ target: { row: 'b1', field: 'qty' }, value: 5 }]).expect(404);
    expect(await rowsWhere('qty', 5)).toBe(1);
  });
});
