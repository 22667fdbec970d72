import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  bearer,
  createDocument,
  createRow,
  type DocHandle,
  newUser,
  seedRows,
  valueOf,
} from './documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

interface RowDto {
  id: string;
  version: number;
  values: { fieldId: string; value: Record<string, unknown> }[];
}

describe('documents: computed fields (formulas, lookups, rollups)', () => {
  let t: TestApp;
  let owner: TestUser;
  let orders: DocHandle;
  let products: DocHandle;

  const PRODUCT_FIELDS = [
    { id: 'name', name: 'Name', type: 'text' },
    { id: 'price', name: 'Price', type: 'number' },
    { id: 'label', name: 'Label', type: 'formula', formula: 'UPPER({name}) & " @ " & {price}' },
  ];
  const ORDER_FIELDS = [
    { id: 'title', name: 'Title', type: 'text' },
    { id: 'qty', name: 'Qty', type: 'number' },
    { id: 'due', name: 'Due', type: 'date' },
    { id: 'items', name: 'Items', type: 'relation' },
    {
      id: 'prices',
      name: 'Prices',
      type: 'lookup',
      lookup: { relationFieldId: 'items', targetFieldId: 'price' },
    },
    {
      id: 'total',
      name: 'Total',
      type: 'rollup',
      rollup: { relationFieldId: 'items', targetFieldId: 'price', agg: 'sum' },
    },
    {
      id: 'lines',
      name: 'Lines',
      type: 'rollup',
      rollup: { relationFieldId: 'items', targetFieldId: 'price', agg: 'count' },
    },
    { id: 'amount', name: 'Amount', type: 'formula', formula: '{qty} * {total}' },
    { id: 'big', name: 'Big', type: 'formula', formula: 'IF({amount} >= 100, "big", "small")' },
    // Spec 2.5's form: fields by their plain id (the others use the braced form).
    { id: 'ratio', name: 'Ratio', type: 'formula', formula: 'total / qty' },
    { id: 'late', name: 'Late', type: 'formula', formula: 'DATEDIFF({due}, TODAY())' },
  ];

  const putMetadata = (doc: DocHandle, fields: unknown[], properties?: unknown[]): request.Test =>
    request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ fields, ...(properties ? { properties } : {}) });
  const row = async (doc: DocHandle, id: string): Promise<RowDto> =>
    (await request(t.http).get(`${doc.path}/data/${id}`).set(bearer(owner)).expect(200)).body
      .payload as RowDto;
  const value = async (doc: DocHandle, id: string, fieldId: string): Promise<unknown> => {
    const found = valueOf(await row(doc, id), fieldId);
    return found === undefined ? undefined : Object.values(found)[0];
  };
  const query = async (
    doc: DocHandle,
    body: Record<string, unknown>,
  ): Promise<{ items: RowDto[]; groups?: unknown[] }> =>
    (await request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send(body).expect(200)).body
      .payload;
  const ref = (rowId: string): Record<string, string> => ({
    docType: products.docType,
    docId: products.docId,
    rowId,
  });

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'error' });
    owner = await newUser(t.http);
    products = await createDocument(t.http, owner, { docType: 'cf-products', fields: PRODUCT_FIELDS });
    orders = await createDocument(t.http, owner, { docType: 'cf-orders', fields: ORDER_FIELDS });
    await createRow(t.http, owner, products, { id: 'p1', values: { name: 'apple', price: 10 } });
    await createRow(t.http, owner, products, { id: 'p2', values: { name: 'pear', price: 25 } });
    await createRow(t.http, owner, products, { id: 'p3', values: { name: 'fig' } });
    await createRow(t.http, owner, orders, {
      id: 'o1',
      values: { title: 'one', qty: 2, due: '2020-01-01', items: [ref('p1'), ref('p2')] },
    });
    await createRow(t.http, owner, orders, {
      id: 'o2',
      values: { title: 'two', qty: 10, items: [ref('p1')] },
    });
    await createRow(t.http, owner, orders, { id: 'o3', values: { title: 'three', qty: 0 } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('stores the inferred result type and computes formulas on write', async () => {
    const metadata = (await request(t.http).get(`${orders.path}/metadata`).set(bearer(owner)).expect(200))
      .body.payload;
    const types = Object.fromEntries(
      metadata.fields.map((field: { id: string; resultType?: string }) => [field.id, field.resultType]),
    );
    expect(types).toMatchObject({ amount: 'number', big: 'text', ratio: 'number', late: 'number' });
    expect(await value(products, 'p1', 'label')).toBe('APPLE @ 10');
    expect(await value(products, 'p3', 'label')).toBe('FIG @ ');
  });

  it('computes lookups and rollups across two documents, and formulas over them; runtime errors leave the cell empty', async () => {
    const o1 = await row(orders, 'o1');
    expect(valueOf(o1, 'prices')).toEqual({ list: [10, 25] });
    expect(valueOf(o1, 'total')).toEqual({ number: 35 });
    expect(valueOf(o1, 'lines')).toEqual({ number: 2 });
    expect(valueOf(o1, 'amount')).toEqual({ number: 70 });
    expect(valueOf(o1, 'big')).toEqual({ text: 'small' });
    expect(valueOf(o1, 'ratio')).toEqual({ number: 17.5 });
    expect(await value(orders, 'o2', 'amount')).toBe(100);
    expect(await value(orders, 'o2', 'big')).toBe('big');
    // o3: no links, qty 0: total 0, ratio = 0 / 0 → empty cell, not a failed request.
    expect(await value(orders, 'o3', 'total')).toBe(0);
    expect(await value(orders, 'o3', 'prices')).toBeUndefined();
    expect(await value(orders, 'o3', 'ratio')).toBeUndefined();
    // NOW()/TODAY() formulas are evaluated at read time.
    const late = (await value(orders, 'o1', 'late')) as number;
    expect(late).toBeGreaterThan(2000);
  });

  it('recomputes after a change on either side, without a revision of the dependent document', async () => {
    const revisionsBefore = (
      await request(t.http).get(`${orders.path}/revisions`).set(bearer(owner)).expect(200)
    ).body.payload;
    const versionBefore = (await row(orders, 'o1')).version;
    await request(t.http)
      .put(`${products.path}/data/p2`)
      .set(bearer(owner))
      .send({ values: { price: 90 } })
      .expect(200);
    expect(await value(orders, 'o1', 'total')).toBe(100);
    expect(await value(orders, 'o1', 'amount')).toBe(200);
    expect(await value(orders, 'o1', 'big')).toBe('big');
    expect((await row(orders, 'o1')).version).toBe(versionBefore);
    const revisionsAfter = (
      await request(t.http).get(`${orders.path}/revisions`).set(bearer(owner)).expect(200)
    ).body.payload;
    expect(JSON.stringify(revisionsAfter)).toBe(JSON.stringify(revisionsBefore));
    // The source side: relinking and changing inputs.
    await request(t.http)
      .put(`${orders.path}/data/o3`)
      .set(bearer(owner))
      .send({ values: { qty: 3, items: [ref('p2'), ref('p3')] } })
      .expect(200);
    expect(await value(orders, 'o3', 'prices')).toEqual([90]);
    expect(await value(orders, 'o3', 'lines')).toBe(1);
    expect(await value(orders, 'o3', 'amount')).toBe(270);
    // Deleting a target row takes it out of the lookups.
    await request(t.http).delete(`${products.path}/data/p2`).set(bearer(owner)).expect(200);
    expect(await value(orders, 'o1', 'prices')).toEqual([10]);
    expect(await value(orders, 'o3', 'total')).toBe(0);
  });

  it('filters, sorts and groups by formulas, lookups and rollups in both query shapes', async () => {
    const ids = (items: RowDto[]): string[] => items.map((item) => item.id);
    expect(ids((await query(orders, { sorts: [{ field: 'amount', direction: 'desc' }] })).items)).toEqual([
      'o2',
      'o1',
      'o3',
    ]);
    expect(ids((await query(orders, { sort: [{ field: 'total', order: 'asc' }] })).items)).toEqual([
      'o3',
      'o1',
      'o2',
    ]);
    expect(
      ids(
        (
          await query(orders, {
            filter: { and: [{ field: 'amount', op: 'gte', value: 20 }] },
            sort: [{ field: 'id', order: 'asc' }],
          })
        ).items,
      ),
    ).toEqual(['o1', 'o2']);
    expect(
      ids(
        (
          await query(orders, {
            filters: {
              logic: 'and',
              conditions: [{ field: 'big', operator: 'eq', value: 'big' }],
              groups: [],
            },
          })
        ).items,
      ),
    ).toEqual(['o2']);
    expect(
      ids(
        (
          await query(orders, {
            filters: {
              logic: 'and',
              conditions: [{ field: 'prices', operator: 'eq', value: 10 }],
              groups: [],
            },
            sorts: [{ field: 'id', direction: 'asc' }],
          })
        ).items,
      ),
    ).toEqual(['o1', 'o2']);
    expect(
      ids((await query(orders, { filter: { and: [{ field: 'late', op: 'gt', value: 100 }] } })).items),
    ).toEqual(['o1']);
    expect(
      ids(
        (
          await query(orders, {
            sort: [
              { field: 'late', order: 'desc' },
              { field: 'id', order: 'asc' },
            ],
          })
        ).items,
      ),
    ).toEqual(['o2', 'o3', 'o1']);
    const grouped = await query(orders, {
      groupBy: { fields: ['big'], aggregations: [{ kind: 'count' }, { kind: 'sum', field: 'amount' }] },
    });
    expect(grouped.groups).toHaveLength(2);
    const list = await request(t.http)
      .get(`${orders.path}/data?sort=amount:asc`)
      .set(bearer(owner))
      .expect(200);
    expect(ids(list.body.payload.items)).toEqual(['o3', 'o1', 'o2']);
    const byRollup = await query(orders, {
      groupBy: { fields: ['lines'], aggregations: [{ kind: 'count' }] },
    });
    expect(byRollup.groups).toHaveLength(2);
    // Lookups (lists) sort and group by their JSON value; empty lists last.
    const byPrices = await query(orders, {
      sort: [
        { field: 'prices', order: 'asc' },
        { field: 'id', order: 'asc' },
      ],
    });
    expect(ids(byPrices.items)).toEqual(['o1', 'o2', 'o3']);
    const byLookup = await query(orders, {
      groupBy: { fields: ['prices'], aggregations: [{ kind: 'count' }] },
    });
    expect(byLookup.groups).toHaveLength(2);
    const config = {
      filters: { logic: 'and', conditions: [{ field: 'total', operator: 'gt', value: 0 }], groups: [] },
      sorts: [{ field: 'amount', direction: 'asc' }],
    };
    await request(t.http)
      .post(`${orders.path}/views`)
      .set(bearer(owner))
      .send({ id: 'cf-view', name: 'Computed', type: 'table', config })
      .expect(201);
    const viewed = await request(t.http)
      .get(`${orders.path}/data?viewId=cf-view`)
      .set(bearer(owner))
      .expect(200);
    expect(ids(viewed.body.payload.items)).toEqual(['o1', 'o2']);
  });

  it('refuses bad formulas, cycles and removing what a computed field depends on, naming field and position', async () => {
    const refuse = async (fields: unknown[], properties?: unknown[]): Promise<Record<string, unknown>[]> => {
      const res = await putMetadata(orders, fields, properties).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      return problemsOf(res.body);
    };
    const base = ORDER_FIELDS.filter((field) => field.id !== 'late');
    expect(await refuse([...base, { id: 'bad', name: 'Bad', type: 'formula', formula: '{qty} +' }])).toEqual([
      expect.objectContaining({ field: 'fields[10].formula', fieldId: 'bad', position: 7 }),
    ]);
    expect(
      (await refuse([...base, { id: 'bad', name: 'Bad', type: 'formula', formula: '1 + {nope}' }]))[0],
    ).toMatchObject({ fieldId: 'bad', position: 4, reason: expect.stringContaining('unknown field {nope}') });
    expect(
      (await refuse([...base, { id: 'bad', name: 'Bad', type: 'formula', formula: 'FROB(1)' }]))[0],
    ).toMatchObject({ position: 0, reason: expect.stringContaining('unknown function FROB') });
    expect(
      (await refuse([...base, { id: 'bad', name: 'Bad', type: 'formula', formula: 'ROUND(1, 2, 3)' }]))[0]
        .reason,
    ).toMatch(/ROUND expects 1 to 2 arguments/);
    expect(
      (await refuse([...base, { id: 'bad', name: 'Bad', type: 'formula', formula: '{title} * 2' }]))[0],
    ).toMatchObject({ position: 0, reason: expect.stringContaining('expects numbers, got text') });
    const cycle = await refuse([
      ...base,
      { id: 'a', name: 'A', type: 'formula', formula: '{b} + 1' },
      { id: 'b', name: 'B', type: 'formula', formula: '{a} * 2' },
    ]);
    expect(cycle[0].reason).toMatch(/circular reference: a → b → a/);
    const self = await refuse([...base, { id: 'a', name: 'A', type: 'formula', formula: '{a} + 1' }]);
    expect(self[0].reason).toMatch(/circular/);
    // Through a lookup on a self relation: c looks up d over `rel`, d reads c.
    const viaLookup = await refuse([
      ...base,
      { id: 'rel', name: 'Rel', type: 'relation' },
      { id: 'c', name: 'C', type: 'lookup', lookup: { relationFieldId: 'rel', targetFieldId: 'd' } },
      { id: 'd', name: 'D', type: 'formula', formula: 'COUNT({c})' },
    ]);
    expect(viaLookup[0].reason).toMatch(/circular reference/);
    const deleted = await refuse(base.filter((field) => field.id !== 'qty'));
    expect(deleted[0]).toMatchObject({ fieldId: 'qty', dependents: ['amount', 'ratio'] });
    const retyped = await refuse(
      base.map((field) => (field.id === 'qty' ? { ...field, type: 'text' } : field)),
    );
    expect(retyped[0]).toMatchObject({ fieldId: 'qty', dependents: ['amount', 'ratio'] });
    const relationGone = await refuse(base.filter((field) => field.id !== 'items'));
    expect(relationGone[0]).toMatchObject({ fieldId: 'items', dependents: ['prices', 'total', 'lines'] });
    // A field that lookups of another document read.
    const external = await putMetadata(
      products,
      PRODUCT_FIELDS.filter((field) => field.id === 'name'),
    ).expect(400);
    expect(external.body.details).toMatchObject({
      fieldId: 'price',
      dependents: [
        `cf-orders/${orders.docId}:prices`,
        `cf-orders/${orders.docId}:total`,
        `cf-orders/${orders.docId}:lines`,
      ],
    });
  });

  it('checks readers in other documents when a request records a metadata change, and again when it merges', async () => {
    const metadataChange = (fields: unknown[]): Record<string, unknown> => ({
      type: 'metadata-update',
      target: { kind: 'metadata' },
      newValue: { fields },
    });
    // Recorded through POST /requests: refused like PUT /metadata.
    const refused = await request(t.http)
      .post(`${products.path}/requests`)
      .set(bearer(owner))
      .send({
        title: 'Drop price',
        changes: [metadataChange(PRODUCT_FIELDS.filter((field) => field.id === 'name'))],
      })
      .expect(400);
    expect(refused.body.details).toMatchObject({
      fieldId: 'price',
      dependents: expect.arrayContaining([`cf-orders/${orders.docId}:prices`]),
    });

    // Recorded while nothing read the field; a lookup starts reading it before the merge.
    const parts = await createDocument(t.http, owner, {
      docType: 'cf-parts',
      fields: [
        { id: 'name', name: 'Name', type: 'text' },
        { id: 'weight', name: 'Weight', type: 'number' },
      ],
    });
    await createRow(t.http, owner, parts, { id: 'w1', values: { name: 'bolt', weight: 3 } });
    const drop = await request(t.http)
      .post(`${parts.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'Drop weight', changes: [metadataChange([{ id: 'name', name: 'Name', type: 'text' }])] })
      .expect(201);
    const kits = await createDocument(t.http, owner, {
      docType: 'cf-kits',
      fields: [
        { id: 'parts', name: 'Parts', type: 'relation' },
        {
          id: 'weights',
          name: 'Weights',
          type: 'lookup',
          lookup: { relationFieldId: 'parts', targetFieldId: 'weight' },
        },
      ],
    });
    await createRow(t.http, owner, kits, {
      id: 'k1',
      values: { parts: [{ docType: parts.docType, docId: parts.docId, rowId: 'w1' }] },
    });
    expect(valueOf(await row(kits, 'k1'), 'weights')).toEqual({ list: [3] });

    const conflicts = (
      await request(t.http)
        .get(`${parts.path}/requests/${drop.body.payload.id}/conflicts`)
        .set(bearer(owner))
        .expect(200)
    ).body.payload;
    expect(conflicts.mergeable).toBe(false);
    expect(conflicts.conflicts).toEqual([
      expect.objectContaining({
        type: 'field-read-elsewhere',
        fieldId: 'weight',
        details: [expect.objectContaining({ dependents: [`cf-kits/${kits.docId}:weights`] })],
      }),
    ]);
    const merge = await request(t.http)
      .post(`${parts.path}/requests/${drop.body.payload.id}/merge`)
      .set(bearer(owner))
      .expect(409);
    expect(merge.body.payload.conflicts[0]).toMatchObject({
      type: 'field-read-elsewhere',
      fieldId: 'weight',
    });
    // Nothing applied: the field and the lookup's value are still there.
    const fields = (await request(t.http).get(`${parts.path}/metadata`).set(bearer(owner)).expect(200)).body
      .payload.fields as { id: string }[];
    expect(fields.map((field) => field.id)).toEqual(['name', 'weight']);
    expect(valueOf(await row(kits, 'k1'), 'weights')).toEqual({ list: [3] });
  });

  it('recomputes every row when a formula is added or changed', async () => {
    const fields = [
      ...ORDER_FIELDS,
      { id: 'half', name: 'Half', type: 'formula', formula: 'ROUND({amount} / 2)' },
    ];
    await putMetadata(orders, fields).expect(200);
    expect(await value(orders, 'o2', 'half')).toBe(50);
    await putMetadata(
      orders,
      fields.map((field) => (field.id === 'half' ? { ...field, formula: '{amount} & "!"' } : field)),
    ).expect(200);
    expect(await value(orders, 'o2', 'half')).toBe('100!');
  });

  it('computes property formulas that aggregate rows and read other properties', async () => {
    await putMetadata(orders, ORDER_FIELDS, [
      { id: 'budget', name: 'Budget', type: 'number' },
      { id: 'spent', name: 'Spent', type: 'formula', formula: 'SUM({amount})' },
      { id: 'left', name: 'Left', type: 'formula', formula: '{budget} - {spent}' },
      { id: 'rows', name: 'Rows', type: 'formula', formula: 'COUNT(*) & " rows, avg qty " & AVG({qty})' },
    ]).expect(200);
    const bad = await putMetadata(orders, ORDER_FIELDS, [
      { id: 'x', name: 'X', type: 'formula', formula: '{qty} + 1' },
    ]).expect(400);
    expect(bad.body.details).toMatchObject({ field: 'properties[0].formula', fieldId: 'x', position: 0 });
    await request(t.http)
      .patch(`${orders.path}/properties`)
      .set(bearer(owner))
      .send({ properties: { budget: 1000 } })
      .expect(200);
    const props = (await request(t.http).get(`${orders.path}/properties`).set(bearer(owner)).expect(200)).body
      .payload;
    const byId = Object.fromEntries(
      props.properties.map((entry: { fieldId: string; value: Record<string, unknown> }) => [
        entry.fieldId,
        Object.values(entry.value)[0],
      ]),
    );
    // amounts: o1 2*10 = 20, o2 10*10 = 100, o3 3*0 = 0
    expect(byId).toMatchObject({ budget: 1000, spent: 120, left: 880, rows: '3 rows, avg qty 5' });
  });

  it('recomputes a target row linked from many rows, tells webhooks, and hides targets the reader cannot read', async () => {
    const viewer = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    const secret = await createDocument(t.http, owner, {
      docType: 'cf-secret',
      fields: [{ id: 'price', name: 'Price', type: 'number' }],
      settings: { permissions: { view: ['role:editor'] } },
    });
    await createRow(t.http, owner, secret, { id: 's1', values: { price: 7 } });
    const notes = await createDocument(t.http, owner, {
      docType: 'cf-notes',
      fields: [
        { id: 'title', name: 'Title', type: 'text' },
        { id: 'link', name: 'Link', type: 'relation' },
        {
          id: 'spend',
          name: 'Spend',
          type: 'rollup',
          rollup: { relationFieldId: 'link', targetFieldId: 'price', agg: 'max' },
        },
        { id: 'double', name: 'Double', type: 'formula', formula: '{spend} * 2' },
      ],
    });
    const count = 150;
    await seedRows(
      t.dataSource,
      notes,
      Array.from({ length: count }, (_, i) => ({ id: `n${i}`, values: { title: `note ${i}` } })),
    );
    const link = [{ docType: secret.docType, docId: secret.docId, rowId: 's1' }];
    await request(t.http)
      .post(`${notes.path}/data/bulk`)
      .set(bearer(owner))
      .send([
        {
          target: { rows: Array.from({ length: count }, (_, i) => `n${i}`), field: 'link' },
          value: { relation: link },
        },
      ])
      .expect(200);
    expect(await value(notes, 'n149', 'double')).toBe(14);
    await request(t.http)
      .put(`${secret.path}/data/s1`)
      .set(bearer(owner))
      .send({ values: { price: 8 } })
      .expect(200);
    const stale = await t.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM document_rows r JOIN documents d ON d.id = r.document_id
        WHERE d.doc_id = $1 AND NOT (r."values" @> '{"spend": 8, "double": 16}'::jsonb)`,
      [notes.docId],
    );
    expect(stale[0].n).toBe(0);
    const events = await t.dataSource.query<{ event: string; payload: Record<string, unknown> }[]>(
      `SELECT event_type AS event, payload FROM outbox WHERE doc_id = $1 AND payload->>'computed' = 'true'`,
      [notes.docId],
    );
    expect(events).toEqual([
      expect.objectContaining({
        event: 'data_bulk_operation',
        payload: expect.objectContaining({ rowsUpdated: count, revisionId: null }),
      }),
    ]);
    // One more edit to a single linked row: a row event with the values.
    await request(t.http)
      .put(`${notes.path}/data/n0`)
      .set(bearer(owner))
      .send({ values: { link: null } })
      .expect(200);
    expect(await value(notes, 'n0', 'spend')).toBeUndefined();
    // A viewer who cannot read cf-secret sees neither the rollup nor the formula over it, and cannot query them.
    const asViewer = (await request(t.http).get(`${notes.path}/data/n1`).set(bearer(viewer)).expect(200)).body
      .payload as RowDto;
    expect(valueOf(asViewer, 'title')).toEqual({ text: 'note 1' });
    expect(valueOf(asViewer, 'spend')).toBeUndefined();
    expect(valueOf(asViewer, 'double')).toBeUndefined();
    await request(t.http)
      .post(`${notes.path}/data/query`)
      .set(bearer(viewer))
      .send({ sort: [{ field: 'double', order: 'asc' }] })
      .expect(400);
    expect(await value(notes, 'n1', 'double')).toBe(16);
  });

  it('shows computed values of a draft (open request) without touching the merged rows', async () => {
    const open = await request(t.http)
      .post(`${orders.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'draft' })
      .expect(201);
    const reqId = open.body.payload.id as string;
    const before = (await value(orders, 'o2', 'amount')) as number;
    await request(t.http)
      .put(`${orders.path}/data/o2?requestId=${reqId}`)
      .set(bearer(owner))
      .send({ values: { qty: 1 } })
      .expect(200);
    await request(t.http)
      .post(`${orders.path}/data?requestId=${reqId}`)
      .set(bearer(owner))
      .send({ id: 'o9', values: { qty: 4, items: [ref('p1')] } })
      .expect(201);
    const draftRow = (
      await request(t.http).get(`${orders.path}/data/o2?requestId=${reqId}`).set(bearer(owner)).expect(200)
    ).body.payload as RowDto;
    expect(valueOf(draftRow, 'amount')).toEqual({ number: before / 10 });
    const created = (
      await request(t.http).get(`${orders.path}/data/o9?requestId=${reqId}`).set(bearer(owner)).expect(200)
    ).body.payload as RowDto;
    expect(valueOf(created, 'amount')).toEqual({ number: 40 });
    const sorted = await request(t.http)
      .post(`${orders.path}/data/query?requestId=${reqId}`)
      .set(bearer(owner))
      .send({ sort: [{ field: 'amount', order: 'desc' }] })
      .expect(200);
    expect(sorted.body.payload.items[0].id).toBe('o9');
    // The request's diff shows the added row as the draft does, with its computed values.
    const diff = (
      await request(t.http).get(`${orders.path}/requests/${reqId}/diff`).set(bearer(owner)).expect(200)
    ).body.payload;
    const added = (diff.addedRows as RowDto[]).find((row) => row.id === 'o9') as RowDto;
    expect(valueOf(added, 'amount')).toEqual({ number: 40 });
    expect(valueOf(added, 'qty')).toEqual({ number: 4 });
    expect(await value(orders, 'o2', 'amount')).toBe(before);
  });

  it('shows a draft row looking up rows of the same draft with their draft values', async () => {
    const doc = await createDocument(t.http, owner, {
      docType: 'cf-draft-self',
      fields: [
        { id: 'a', name: 'A', type: 'number' },
        { id: 'b', name: 'B', type: 'number' },
        { id: 'f', name: 'F', type: 'formula', formula: '{a} * 2' },
        { id: 'self', name: 'Self', type: 'relation' },
        { id: 'l', name: 'L', type: 'lookup', lookup: { relationFieldId: 'self', targetFieldId: 'f' } },
        { id: 'ls', name: 'LS', type: 'lookup', lookup: { relationFieldId: 'self', targetFieldId: 'a' } },
      ],
    });
    await createRow(t.http, owner, doc, { id: 'r1', values: { a: 1 } });
    await createRow(t.http, owner, doc, { id: 'r2', values: { self: [{ rowId: 'r1' }] } });
    const reqId = (
      await request(t.http)
        .post(`${doc.path}/requests`)
        .set(bearer(owner))
        .send({ title: 'draft' })
        .expect(201)
    ).body.payload.id as string;
    const write = (method: 'put' | 'post', path: string, body: Record<string, unknown>) =>
      request(t.http)[method](`${doc.path}${path}?requestId=${reqId}`).set(bearer(owner)).send(body);
    await write('put', '/data/r1', { values: { a: 5 } }).expect(200);
    await write('put', '/data/r2', { values: { b: 1 } }).expect(200);
    await write('post', '/data', { id: 'r3', values: { a: 7 } }).expect(201);
    // A reference naming only the document id is this document's too (the type defaults to its own).
    await write('post', '/data', { id: 'r4', values: { self: [{ docId: doc.docId, rowId: 'r3' }] } }).expect(201);
    const draft = async (rowId: string): Promise<RowDto> =>
      (
        await request(t.http)
          .get(`${doc.path}/data/${rowId}?requestId=${reqId}`)
          .set(bearer(owner))
          .expect(200)
      ).body.payload as RowDto;
    // The draft's r1 (a = 5, f = 10) and r3 (created: a = 7, f = 14), not the merged r1 or nothing.
    expect(valueOf(await draft('r2'), 'ls')).toEqual({ list: [5] });
    expect(valueOf(await draft('r2'), 'l')).toEqual({ list: [10] });
    expect(valueOf(await draft('r4'), 'ls')).toEqual({ list: [7] });
    expect(valueOf(await draft('r4'), 'l')).toEqual({ list: [14] });
    // As the merge computes them.
    await request(t.http).post(`${doc.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(200);
    expect(await value(doc, 'r2', 'l')).toEqual([10]);
    expect(await value(doc, 'r4', 'l')).toEqual([14]);
  });

  it('refuses a cycle of lookups through another document', async () => {
    const orderRef = { docType: orders.docType, docId: orders.docId, rowId: 'o1' };
    await putMetadata(products, [
      ...PRODUCT_FIELDS,
      { id: 'ord', name: 'Orders', type: 'relation' },
      { id: 'back', name: 'Back', type: 'lookup', lookup: { relationFieldId: 'ord', targetFieldId: 'bk' } },
    ]).expect(200);
    await request(t.http)
      .put(`${products.path}/data/p1`)
      .set(bearer(owner))
      .send({ values: { ord: [orderRef] } })
      .expect(200);
    const bk = {
      id: 'bk',
      name: 'Bk',
      type: 'rollup',
      rollup: { relationFieldId: 'items', targetFieldId: 'back', agg: 'count' },
    };
    const res = await putMetadata(orders, [...ORDER_FIELDS, bk]).expect(400);
    expect(res.body.details).toMatchObject({
      fieldId: 'bk',
      reason: `circular reference through other documents: cf-orders/${orders.docId}:bk → cf-products/${products.docId}:back → cf-orders/${orders.docId}:bk`,
    });
  });

  // A lookup over a relation into its own document reads the field of that id here: deleting the field is refused
  // like deleting a formula's input, once such a link exists (it used to be accepted, the lookup keeping a stale
  // value). A lookup whose links reach only another document's field of that id does not block it.
  it('refuses deleting a field that a lookup reads through links into its own document, naming the lookup', async () => {
    const fields = [
      { id: 'qty', name: 'Qty', type: 'number' },
      { id: 'name', name: 'Name', type: 'text' },
      { id: 'up', name: 'Up', type: 'relation' },
      {
        id: 'upQty',
        name: 'Up qty',
        type: 'lookup',
        lookup: { relationFieldId: 'up', targetFieldId: 'qty' },
      },
      { id: 'items', name: 'Items', type: 'relation' },
      {
        id: 'names',
        name: 'Names',
        type: 'lookup',
        lookup: { relationFieldId: 'items', targetFieldId: 'name' },
      },
    ];
    const tree = await createDocument(t.http, owner, { docType: 'cf-tree', fields });
    await createRow(t.http, owner, tree, { id: 'root', values: { qty: 5 } });
    const productRef = { docType: products.docType, docId: products.docId, rowId: 'p1' };
    await createRow(t.http, owner, tree, {
      id: 'leaf',
      values: { qty: 1, up: ['root'], items: [productRef] },
    });
    expect(await value(tree, 'leaf', 'upQty')).toEqual([5]);

    const res = await putMetadata(
      tree,
      fields.filter((field) => field.id !== 'qty'),
    ).expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details).toMatchObject({ fieldId: 'qty', dependents: ['upQty'] });
    expect(await value(tree, 'leaf', 'upQty')).toEqual([5]);
    // Removing the lookup in the same write is allowed; so is deleting `name`, which `names` reads elsewhere.
    await putMetadata(
      tree,
      fields.filter((field) => field.id !== 'name'),
    ).expect(200);
    await putMetadata(
      tree,
      fields.filter((field) => !['qty', 'name', 'upQty'].includes(field.id)),
    ).expect(200);
  });

  it('empties lookups and rollups over a document that is deleted', async () => {
    const gone = await createDocument(t.http, owner, { docType: 'cf-gone', fields: PRODUCT_FIELDS });
    const reader = await createDocument(t.http, owner, { docType: 'cf-reader', fields: ORDER_FIELDS });
    await createRow(t.http, owner, gone, { id: 'g1', values: { name: 'gone', price: 7 } });
    await createRow(t.http, owner, reader, {
      id: 'r1',
      values: {
        title: 'reads gone',
        qty: 2,
        items: [{ docType: gone.docType, docId: gone.docId, rowId: 'g1' }],
      },
    });
    expect(await value(reader, 'r1', 'prices')).toEqual([7]);
    expect(await value(reader, 'r1', 'amount')).toBe(14);
    await request(t.http).delete(gone.path).set(bearer(owner)).expect(200);
    // As if the row linked to nothing.
    await createRow(t.http, owner, reader, { id: 'r2', values: { title: 'reads nothing', qty: 2 } });
    for (const fieldId of ['prices', 'total', 'lines', 'amount']) {
      expect([fieldId, await value(reader, 'r1', fieldId)]).toEqual([
        fieldId,
        await value(reader, 'r2', fieldId),
      ]);
    }
    expect(await value(reader, 'r1', 'prices')).toBeUndefined();
  });

  it('reverts the deletion of a row and of computed fields: computed values are computed again, not restored', async () => {
    const fields = [
      { id: 'price', name: 'Price', type: 'number' },
      { id: 'qty', name: 'Qty', type: 'number' },
      { id: 'total', name: 'Total', type: 'formula', formula: 'price * qty' },
      { id: 'no', name: 'No.', type: 'auto_number' },
    ];
    const doc = await createDocument(t.http, owner, { docType: 'cf-revert', fields });
    await createRow(t.http, owner, doc, { id: 'x1', values: { price: 2, qty: 3 } });
    await createRow(t.http, owner, doc, { id: 'x2', values: { price: 5, qty: 1 } });
    const deleted = await request(t.http).delete(`${doc.path}/data/x1`).set(bearer(owner)).expect(200);
    const revert = (revisionId: string) =>
      request(t.http).post(`${doc.path}/revisions/${revisionId}/revert`).set(bearer(owner)).expect(200);
    await revert(deleted.body.payload.request.revisionId as string);
    expect(await value(doc, 'x1', 'price')).toBe(2);
    expect(await value(doc, 'x1', 'total')).toBe(6);
    expect(typeof (await value(doc, 'x1', 'no'))).toBe('number');

    // The computed fields go with a metadata update, and come back with their values by a revert.
    const trimmed = await putMetadata(doc, fields.slice(0, 2)).expect(200);
    expect(await value(doc, 'x2', 'total')).toBeUndefined();
    await revert(trimmed.body.payload.request.revisionId as string);
    expect(await value(doc, 'x2', 'total')).toBe(5);
    expect(await value(doc, 'x1', 'total')).toBe(6);
    expect(typeof (await value(doc, 'x2', 'no'))).toBe('number');
  });

  it('computes a lookup of a formula of a row written in the same merge, in a bulk, a request and a metadata change', async () => {
    // r2 looks up f of r1 in the same document; f is computed by the same merge that writes r2, which read f's old
    // (or missing) value and was never recomputed.
    const fields = [
      { id: 'a', name: 'A', type: 'number' },
      { id: 'b', name: 'B', type: 'number' },
      { id: 'self', name: 'Self', type: 'relation' },
    ];
    const computed = [
      { id: 'f', name: 'F', type: 'formula', formula: '{a} * 2' },
      { id: 'l', name: 'L', type: 'lookup', lookup: { relationFieldId: 'self', targetFieldId: 'f' } },
      { id: 'g', name: 'G', type: 'formula', formula: 'SUM({l}) + 1' },
    ];
    const doc = await createDocument(t.http, owner, {
      docType: 'cf-same-merge',
      fields: [...fields, ...computed],
    });
    const requestId = (
      await request(t.http)
        .post(`${doc.path}/requests`)
        .set(bearer(owner))
        .send({ title: 'two rows' })
        .expect(201)
    ).body.payload.id as string;
    await request(t.http)
      .post(`${doc.path}/data?requestId=${requestId}`)
      .set(bearer(owner))
      .send({ id: 'r2', values: { self: [{ rowId: 'r1' }] } })
      .expect(201);
    await request(t.http)
      .post(`${doc.path}/data?requestId=${requestId}`)
      .set(bearer(owner))
      .send({ id: 'r1', values: { a: 1 } })
      .expect(201);
    await request(t.http).post(`${doc.path}/requests/${requestId}/merge`).set(bearer(owner)).expect(200);
    expect(await value(doc, 'r2', 'l')).toEqual([2]);
    expect(await value(doc, 'r2', 'g')).toBe(3);

    await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([
        { target: { row: 'r2', field: 'b' }, value: 7 },
        { target: { row: 'r1', field: 'a' }, value: 5 },
      ])
      .expect(200);
    expect(await value(doc, 'r2', 'l')).toEqual([10]);
    expect(await value(doc, 'r2', 'g')).toBe(11);
    // The bulk's own event carries r2 as committed.
    const events = (
      await request(t.http)
        .get(`/realtime/doc/${doc.docType}/${doc.docId}/events?pageSize=20`)
        .set(bearer(owner))
        .expect(200)
    ).body.payload.items as {
      event: string;
      payload: { bulkId?: string; rows?: { rowId: string; values: unknown }[] };
    }[];
    const bulkEvent = events.find((event) => event.event === 'data_bulk_operation');
    expect(bulkEvent?.payload.rows?.find((row) => row.rowId === 'r2')?.values).toEqual(
      expect.arrayContaining([{ fieldId: 'g', value: { number: 11 } }]),
    );

    // Adding the computed fields to a document that has the rows computes them over each other's new values.
    const later = await createDocument(t.http, owner, { docType: 'cf-same-meta', fields });
    await createRow(t.http, owner, later, { id: 'r1', values: { a: 1 } });
    await createRow(t.http, owner, later, { id: 'r3', values: { a: 3, self: [{ rowId: 'r1' }] } });
    await putMetadata(later, [...fields, ...computed]).expect(200);
    expect(await value(later, 'r3', 'l')).toEqual([2]);
    expect(await value(later, 'r3', 'g')).toBe(3);
  });

  it('recomputes the written row when its lookup reads a rollup of its own value in another document', async () => {
    // o1 → p1 (prod), p1 rolls up qty of its orders, o1 looks up that sum: writing o1.qty changes p1's sum, which
    // o1 itself reads. o2 was recomputed as a dependent of p1; o1, the row the merge wrote, kept the old sum.
    const link = (doc: DocHandle, rowId: string) => ({ docType: doc.docType, docId: doc.docId, rowId });
    const stock = await createDocument(t.http, owner, {
      docType: 'cf-inv-products',
      fields: [{ id: 'orders', name: 'Orders', type: 'relation' }],
    });
    const lines = await createDocument(t.http, owner, {
      docType: 'cf-inv-orders',
      fields: [
        { id: 'qty', name: 'Qty', type: 'number' },
        { id: 'prod', name: 'Product', type: 'relation' },
        {
          id: 'ordered',
          name: 'Ordered',
          type: 'lookup',
          lookup: { relationFieldId: 'prod', targetFieldId: 'sumQty' },
        },
      ],
    });
    await putMetadata(stock, [
      { id: 'orders', name: 'Orders', type: 'relation' },
      {
        id: 'sumQty',
        name: 'Sum',
        type: 'rollup',
        rollup: { relationFieldId: 'orders', targetFieldId: 'qty', agg: 'sum' },
      },
    ]).expect(200);
    await createRow(t.http, owner, lines, { id: 'o1', values: { qty: 2 } });
    await createRow(t.http, owner, lines, { id: 'o2', values: { qty: 3 } });
    await createRow(t.http, owner, stock, {
      id: 'p1',
      values: { orders: [link(lines, 'o1'), link(lines, 'o2')] },
    });
    for (const id of ['o1', 'o2']) {
      await request(t.http)
        .put(`${lines.path}/data/${id}`)
        .set(bearer(owner))
        .send({ values: { prod: [link(stock, 'p1')] } })
        .expect(200);
    }
    expect(await value(lines, 'o1', 'ordered')).toEqual([5]);
    const eventsOf = async (): Promise<
      { event: string; payload: { rowId?: string; computed?: boolean; values?: unknown } }[]
    > =>
      (
        await request(t.http)
          .get(`/realtime/doc/${lines.docType}/${lines.docId}/events?pageSize=100`)
          .set(bearer(owner))
          .expect(200)
      ).body.payload.items;
    const before = (await eventsOf()).length;

    const written = await request(t.http)
      .put(`${lines.path}/data/o1`)
      .set(bearer(owner))
      .send({ values: { qty: 10 } })
      .expect(200);
    expect(await value(stock, 'p1', 'sumQty')).toBe(13);
    expect(await value(lines, 'o2', 'ordered')).toEqual([13]);
    expect(await value(lines, 'o1', 'ordered')).toEqual([13]);
    // The write's answer and its own event carry it; no second (computed) event for o1.
    expect(valueOf(written.body.payload as RowDto, 'ordered')).toEqual({ list: [13] });
    const after = await eventsOf();
    const o1Events = after
      .slice(0, after.length - before)
      .filter((event) => event.event === 'data_row_updated' && event.payload.rowId === 'o1');
    expect(o1Events).toHaveLength(1);
    expect(o1Events[0].payload.computed).toBeFalsy();
    expect(o1Events[0].payload.values).toEqual(
      expect.arrayContaining([{ fieldId: 'ordered', value: { list: [13] } }]),
    );

    // The same through a merge that also adds a formula (every row recomputed): the merge's own event for o1
    // carries the final lookup and the new formula.
    const reqId = (
      await request(t.http).post(`${lines.path}/requests`).set(bearer(owner)).send({ title: 'meta and row' }).expect(201)
    ).body.payload.id as string;
    await request(t.http)
      .put(`${lines.path}/metadata?requestId=${reqId}`)
      .set(bearer(owner))
      .send({
        fields: [
          { id: 'qty', name: 'Qty', type: 'number' },
          { id: 'prod', name: 'Product', type: 'relation' },
          { id: 'ordered', name: 'Ordered', type: 'lookup', lookup: { relationFieldId: 'prod', targetFieldId: 'sumQty' } },
          { id: 'dbl', name: 'Double', type: 'formula', formula: '{qty} * 2' },
        ],
      })
      .expect(200);
    await request(t.http).put(`${lines.path}/data/o1?requestId=${reqId}`).set(bearer(owner)).send({ values: { qty: 20 } }).expect(200);
    const mid = (await eventsOf()).length;
    await request(t.http).post(`${lines.path}/requests/${reqId}/merge`).set(bearer(owner)).expect(200);
    expect(await value(lines, 'o1', 'ordered')).toEqual([23]);
    expect(await value(lines, 'o2', 'ordered')).toEqual([23]);
    const merged = (await eventsOf())
      .slice(0, (await eventsOf()).length - mid)
      .filter((event) => event.event === 'data_row_updated' && event.payload.rowId === 'o1');
    expect(merged).toHaveLength(1);
    expect(merged[0].payload.values).toEqual(
      expect.arrayContaining([
        { fieldId: 'ordered', value: { list: [23] } },
        { fieldId: 'dbl', value: { number: 40 } },
      ]),
    );
  });

  it("recomputes a row reached by two paths of different lengths with both paths' new values, announced once", async () => {
    // w ← y (rollup of w) ← z (rollup of y) and x rolls up both w (one step) and z (three steps): x was recomputed
    // on the first step, when z still held its old value, and the second path skipped it as already visited.
    const link = (doc: DocHandle, rowId: string) => ({ docType: doc.docType, docId: doc.docId, rowId });
    const rollup = (id: string, relationFieldId: string, targetFieldId: string) => ({
      id,
      name: id,
      type: 'rollup',
      rollup: { relationFieldId, targetFieldId, agg: 'sum' },
    });
    const w = await createDocument(t.http, owner, {
      docType: 'cf-dia-w',
      fields: [{ id: 'w', name: 'W', type: 'number' }],
    });
    const y = await createDocument(t.http, owner, {
      docType: 'cf-dia-y',
      fields: [{ id: 'toW', name: 'To W', type: 'relation' }, rollup('yw', 'toW', 'w')],
    });
    const z = await createDocument(t.http, owner, {
      docType: 'cf-dia-z',
      fields: [{ id: 'toY', name: 'To Y', type: 'relation' }, rollup('zw', 'toY', 'yw')],
    });
    const x = await createDocument(t.http, owner, {
      docType: 'cf-dia-x',
      fields: [
        { id: 'toW', name: 'To W', type: 'relation' },
        { id: 'toZ', name: 'To Z', type: 'relation' },
        rollup('near', 'toW', 'w'),
        rollup('far', 'toZ', 'zw'),
        { id: 'both', name: 'Both', type: 'formula', formula: '{near} + {far}' },
      ],
    });
    await createRow(t.http, owner, w, { id: 'w1', values: { w: 1 } });
    await createRow(t.http, owner, y, { id: 'y1', values: { toW: [link(w, 'w1')] } });
    await createRow(t.http, owner, z, { id: 'z1', values: { toY: [link(y, 'y1')] } });
    await createRow(t.http, owner, x, { id: 'x1', values: { toW: [link(w, 'w1')], toZ: [link(z, 'z1')] } });
    expect(await value(x, 'x1', 'both')).toBe(2);
    const eventsOfX = async (): Promise<{ event: string; payload: { rowId?: string; values?: unknown } }[]> =>
      (
        await request(t.http)
          .get(`/realtime/doc/${x.docType}/${x.docId}/events?pageSize=100`)
          .set(bearer(owner))
          .expect(200)
      ).body.payload.items;
    const before = (await eventsOfX()).length;

    await request(t.http)
      .put(`${w.path}/data/w1`)
      .set(bearer(owner))
      .send({ values: { w: 5 } })
      .expect(200);
    expect(await value(z, 'z1', 'zw')).toBe(5);
    expect(await value(x, 'x1', 'near')).toBe(5);
    expect(await value(x, 'x1', 'far')).toBe(5);
    expect(await value(x, 'x1', 'both')).toBe(10);
    // One event for x1, carrying the final values.
    const after = await eventsOfX();
    const added = after.slice(0, after.length - before);
    const rowEvents = added.filter((event) => event.event === 'data_row_updated');
    expect(rowEvents).toHaveLength(1);
    expect(rowEvents[0].payload.values).toEqual(
      expect.arrayContaining([{ fieldId: 'both', value: { number: 10 } }]),
    );
  });
});
