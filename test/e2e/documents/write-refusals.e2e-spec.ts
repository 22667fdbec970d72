import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  bearer,
  createDocument,
  createRow,
  type DocHandle,
  newUser,
  PRODUCT_FIELDS,
} from './documents.fixtures.js';

const NUL = '\u0000';
const PROPERTIES = [{ id: 'supplier', name: 'Supplier', type: 'text' }];

describe('documents: refused writes (U+0000 in text, 409 on stale versions)', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, { properties: PROPERTIES });
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'One', qty: 1 } });
    await request(t.http)
      .put(`${doc.path}/properties`)
      .set(bearer(owner))
      .send({ properties: { supplier: 'ACME' } })
      .expect(200);
  });
  afterAll(async () => {
    await t.close();
  });

  /** What a refused write must leave as it was. */
  async function state(): Promise<Record<string, unknown>> {
    const rows = await request(t.http).get(`${doc.path}/data?count=exact`).set(bearer(owner)).expect(200);
    const requests = await request(t.http).get(`${doc.path}/requests`).set(bearer(owner)).expect(200);
    const properties = await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200);
    const metadata = await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200);
    return {
      rows: rows.body.payload.items,
      requests: requests.body.payload.total,
      properties: properties.body.payload,
      metadata: metadata.body.payload,
    };
  }

  async function refused(res: request.Response): Promise<Record<string, unknown>[]> {
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    return problemsOf(res.body);
  }

  it('refuses text holding U+0000 with VALIDATION_ERROR naming the field, and writes nothing', async () => {
    const before = await state();
    const reason = expect.stringContaining('NUL character (U+0000)');

    const create = await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(owner))
      .send({ id: 'r2', values: { name: `a${NUL}b` } });
    expect(await refused(create)).toEqual([expect.objectContaining({ fieldId: 'name', reason })]);
    const update = await request(t.http)
      .put(`${doc.path}/data/r1`)
      .set(bearer(owner))
      .send({ values: [{ fieldId: 'name', value: { text: NUL } }] });
    expect(await refused(update)).toEqual([expect.objectContaining({ fieldId: 'name', reason })]);
    const owned = await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(owner))
      .send({ id: 'r3', values: { name: 'x', owner: { user: { id: `u${NUL}` } } } });
    expect(await refused(owned)).toEqual([expect.objectContaining({ fieldId: 'owner', reason })]);
    const bulk = await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([
        { target: { row: 'r1', field: 'qty' }, value: 2 },
        { target: { row: 'r1', field: 'sku' }, value: `S${NUL}` },
      ]);
    expect(await refused(bulk)).toEqual([expect.objectContaining({ fieldId: 'sku', rowId: 'r1', reason })]);
    const properties = await request(t.http)
      .put(`${doc.path}/properties`)
      .set(bearer(owner))
      .send({ properties: { supplier: `A${NUL}` } });
    expect(await refused(properties)).toEqual([expect.objectContaining({ fieldId: 'supplier', reason })]);
    const patched = await request(t.http)
      .patch(`${doc.path}/properties`)
      .set(bearer(owner))
      .send({ properties: [{ fieldId: 'supplier', value: NUL }] });
    expect(await refused(patched)).toEqual([expect.objectContaining({ fieldId: 'supplier', reason })]);
    const fields = PRODUCT_FIELDS.map((field) =>
      field.id === 'qty' ? { ...field, name: `Qty${NUL}` } : field,
    );
    const metadata = await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ fields, properties: PROPERTIES });
    expect(await refused(metadata)).toEqual([{ field: 'fields[3].name', reason }]);
    const option = await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({
        fields: [
          ...PRODUCT_FIELDS,
          {
            id: 'size',
            name: 'Size',
            type: 'single_select',
            selectOptions: [{ id: 's', name: { en: `S${NUL}` } }],
          },
        ],
      });
    expect(await refused(option)).toEqual([{ field: 'fields[11].selectOptions[0].name.en', reason }]);
    const query = await request(t.http)
      .post(`${doc.path}/data/query`)
      .set(bearer(owner))
      .send({
        filters: {
          logic: 'and',
          conditions: [{ field: 'name', operator: 'contains', value: `x${NUL}` }],
          groups: [],
        },
      });
    expect(await refused(query)).toEqual([{ field: 'filters.conditions[0].value', reason }]);

    expect(await state()).toEqual(before);
  });

  it('keeps a request open for writes with U+0000 unchanged', async () => {
    const open = await request(t.http)
      .post(`${doc.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'draft' })
      .expect(201);
    const requestId = open.body.payload.id;
    await request(t.http)
      .post(`${doc.path}/data?requestId=${requestId}`)
      .set(bearer(owner))
      .send({ id: 'd1', values: { name: 'Draft' } })
      .expect(201);
    const nul = await request(t.http)
      .post(`${doc.path}/data?requestId=${requestId}`)
      .set(bearer(owner))
      .send({ id: 'd2', values: { name: NUL } });
    await refused(nul);
    const after = await request(t.http)
      .get(`${doc.path}/requests/${requestId}`)
      .set(bearer(owner))
      .expect(200);
    expect(after.body.payload.changes.map((change: { targetId: string }) => change.targetId)).toEqual(['d1']);
  });

  it('answers 400, not 500, when U+0000 reaches PostgreSQL past validation (row ids in paths)', async () => {
    const read = await request(t.http).get(`${doc.path}/data/r%001`).set(bearer(owner));
    expect(await refused(read)).toEqual([{ reason: 'text must not contain the NUL character (U+0000)' }]);
    const update = await request(t.http)
      .put(`${doc.path}/data/r%001`)
      .set(bearer(owner))
      .send({ values: { qty: 2 } });
    await refused(update);
  });

  it('refuses JavaScript object member names as value keys and as field ids, writing nothing (the key was dropped: an empty revision)', async () => {
    const before = await state();
    for (const key of ['toString', 'constructor', 'valueOf', 'hasOwnProperty']) {
      const put = await request(t.http).put(`${doc.path}/data/r1`).set(bearer(owner)).send({ values: { [key]: '1' } });
      expect(await refused(put)).toEqual([expect.objectContaining({ field: `values.${key}`, reason: expect.stringContaining('is reserved') })]);
    }
    const proto = await request(t.http).put(`${doc.path}/data/r1`).set(bearer(owner)).set('Content-Type', 'application/json').send('{"values":{"__proto__":{"name":"x"}}}');
    expect(await refused(proto)).toEqual([expect.objectContaining({ field: 'values.__proto__' })]);
    const field = await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ fields: [...PRODUCT_FIELDS, { id: 'constructor', name: 'Constructor', type: 'text' }] });
    expect(await refused(field)).toEqual([expect.objectContaining({ field: `fields[${PRODUCT_FIELDS.length}].id`, reason: expect.stringContaining('is reserved') })]);
    expect(await state()).toEqual(before);
  });

  it('answers stale versions with 409 and declares that 409 in OpenAPI', async () => {
    // A body version as a number and as the decimal string proto3 JSON writes an int64 as (spec 2.6).
    for (const stale of [{ version: 99 }, { version: '99' }]) {
      const answers = [
        await request(t.http)
          .put(`${doc.path}/data/r1`)
          .set(bearer(owner))
          .send({ values: { qty: 5 }, ...stale }),
        await request(t.http).delete(`${doc.path}/data/r1?version=99`).set(bearer(owner)),
        await request(t.http)
          .put(`${doc.path}/properties`)
          .set(bearer(owner))
          .send({ properties: { supplier: 'B' }, ...stale }),
        await request(t.http)
          .patch(`${doc.path}/properties?version=99`)
          .set(bearer(owner))
          .send({ properties: { supplier: 'B' } }),
        await request(t.http)
          .post(`${doc.path}/properties`)
          .set(bearer(owner))
          .send({ properties: { supplier: 'B' }, ...stale }),
        await request(t.http)
          .put(`${doc.path}/metadata`)
          .set(bearer(owner))
          .send({ fields: PRODUCT_FIELDS, properties: PROPERTIES, ...stale }),
      ];
      expect(answers.map((res) => [res.status, res.body.code])).toEqual(
        Array(6).fill([409, 'VERSION_CONFLICT']),
      );
    }

    const paths = t.openApi.paths;
    const declared = (path: string, method: 'put' | 'delete' | 'patch' | 'post'): unknown =>
      paths[`/api/v1/doc/{docType}/{docId}${path}`]?.[method]?.responses?.['409'];
    for (const [path, method] of [
      ['/data/{rowId}', 'put'],
      ['/rows/{rowId}', 'put'],
      ['/data/{rowId}', 'delete'],
      ['/rows/{rowId}', 'delete'],
      ['/properties', 'put'],
      ['/properties', 'patch'],
      ['/properties', 'post'],
      ['/metadata', 'put'],
    ] as const) {
      expect({ path, method, declared: declared(path, method) }).toEqual({
        path,
        method,
        declared: expect.objectContaining({ description: expect.stringContaining('VERSION_CONFLICT') }),
      });
    }
  });

  it('refuses a null version with VALIDATION_ERROR naming it (a 409 would send a client reloading forever)', async () => {
    const before = await state();
    const answers = [
      await request(t.http).put(`${doc.path}/data/r1`).set(bearer(owner)).send({ values: { qty: 5 }, version: null }),
      await request(t.http).put(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { supplier: 'B' }, version: null }),
      await request(t.http).patch(`${doc.path}/properties`).set(bearer(owner)).send({ properties: { supplier: 'B' }, version: null }),
      await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields: PRODUCT_FIELDS, properties: PROPERTIES, version: null }),
    ];
    for (const res of answers) {
      expect([res.status, res.body.code]).toEqual([400, 'VALIDATION_ERROR']);
      expect(problemsOf(res.body).map((problem) => problem.field)).toContain('version');
    }
    expect(await state()).toEqual(before);
  });
});
