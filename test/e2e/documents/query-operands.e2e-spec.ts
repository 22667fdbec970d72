import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  bearer,
  createDocument,
  type DocHandle,
  newUser,
  PRODUCT_FIELDS,
  seedRows,
} from './documents.fixtures.js';

const FIELDS = [...PRODUCT_FIELDS, { id: 'links', name: 'Links', type: 'relation' }];

const ROWS = [
  {
    id: 'q1',
    values: {
      name: 'Apple',
      price: 10,
      active: true,
      status: 'todo',
      tags: ['red'],
      owner: 'user-a',
      rating: 5,
      links: [{ rowId: 'x' }],
    },
  },
  {
    id: 'q2',
    values: {
      name: 'Banana',
      price: 20,
      active: false,
      status: 'doing',
      tags: ['blue'],
      owner: 'user-b',
      rating: 2,
      links: [{ rowId: 'x' }, { rowId: 'y' }],
    },
  },
  {
    id: 'q3',
    values: {
      name: 'Cherry',
      price: 30,
      active: true,
      status: 'done',
      tags: ['red', 'blue'],
      owner: 'user-a',
      links: [{ docType: 'parts', docId: 'p1', rowId: 'y' }],
    },
  },
  { id: 'q4', values: { name: 'apricot', price: 40, status: 'todo' } },
  { id: 'q5', values: { name: 'Elder', active: false, tags: ['blue'], owner: 'user-b' } },
  {
    id: 'q6',
    values: {
      name: 'Fig',
      price: 5.5,
      active: true,
      status: 'done',
      tags: ['red'],
      owner: 'user-a',
      rating: 4,
    },
  },
];
const ALL = ['q1', 'q2', 'q3', 'q4', 'q5', 'q6'];

describe('documents: query operands (empty lists, Value forms, relation and boolean sets) and grouped pages', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, { fields: FIELDS });
    await seedRows(t.dataSource, doc, ROWS);
  });
  afterAll(async () => {
    await t.close();
  });

  async function query(body: Record<string, unknown>, path = doc.path): Promise<Record<string, unknown>> {
    const res = await request(t.http).post(`${path}/data/query`).set(bearer(owner)).send(body);
    expect({ status: res.status, body, details: res.body.details }).toEqual({
      status: 200,
      body,
      details: undefined,
    });
    return res.body.payload;
  }
  const idsOf = (payload: Record<string, unknown>): string[] =>
    (payload.items as { id: string }[]).map((row) => row.id);
  const where = async (field: string, operator: string, value: unknown): Promise<string[]> =>
    idsOf(
      await query({
        filters: { logic: 'and', conditions: [{ field, operator, value }], groups: [] },
        sorts: [{ field: 'id', direction: 'asc' }],
      }),
    );
  const condition = (field: string, operator: string, value?: unknown) => ({ field, operator, value });

  it('answers empty in / notIn / contains lists: in [] matches nothing, notIn [] and contains [] everything', async () => {
    expect(await where('price', 'in', [])).toEqual([]);
    expect(await where('price', 'notIn', [])).toEqual(ALL);
    expect(await where('name', 'in', [])).toEqual([]);
    expect(await where('status', 'notIn', [])).toEqual(ALL);
    expect(await where('tags', 'contains', [])).toEqual(ALL);
    expect(await where('tags', 'in', [])).toEqual([]);
    expect(await where('tags', 'notIn', [])).toEqual(ALL);
    expect(await where('links', 'in', [])).toEqual([]);
    expect(await where('createdAt', 'in', [])).toEqual([]);
    const short = await query({ filter: { field: 'price', op: 'in', value: [] } });
    expect(short).toMatchObject({ items: [], total: 0 });
  });

  it('answers empty lists nested in groups, beside other conditions, with every count mode, cursor paging and groupBy', async () => {
    const nested = {
      logic: 'and',
      conditions: [condition('name', 'is_not_empty')],
      groups: [{ logic: 'and', conditions: [condition('price', 'in', [])], groups: [] }],
    };
    expect(idsOf(await query({ filters: nested }))).toEqual([]);
    const either = {
      logic: 'or',
      conditions: [condition('price', 'in', []), condition('name', 'eq', 'Apple')],
      groups: [],
    };
    expect(idsOf(await query({ filters: either }))).toEqual(['q1']);
    const everything = {
      logic: 'and',
      conditions: [condition('price', 'notIn', []), condition('tags', 'contains', [])],
      groups: [],
    };
    expect(await query({ filters: everything, count: 'none' })).toMatchObject({
      total: null,
      countMode: 'none',
    });
    expect(await query({ filters: everything, count: 'exact' })).toMatchObject({
      total: 6,
      totalExact: true,
    });
    expect(await query({ filters: everything, count: 'estimated', pageSize: 2, page: 2 })).toMatchObject({
      total: 6,
    });
    const cursor = await query({
      filters: everything,
      limit: 4,
      sorts: [{ field: 'price', direction: 'asc' }],
    });
    expect(cursor).toMatchObject({ limit: 4, nextCursor: expect.any(String) });
    expect(idsOf(await query({ filters: nested, limit: 4 }))).toEqual([]);
    const grouped = await query({
      filters: nested,
      groupBy: { fields: ['status'], aggregations: [{ kind: 'sum', field: 'price' }] },
    });
    expect(grouped).toMatchObject({ groups: [], total: 0 });
    const all = await query({ filters: everything, groupBy: { fields: ['active'] } });
    expect(all.total).toBe(3);
  });

  it('answers empty lists through GET /data with a view filter, paged and with a cursor', async () => {
    for (const [id, operator] of [
      ['none-in', 'in'],
      ['all-not-in', 'notIn'],
    ]) {
      await request(t.http)
        .post(`${doc.path}/views`)
        .set(bearer(owner))
        .send({
          id,
          name: id,
          type: 'table',
          config: { filters: { logic: 'and', conditions: [condition('price', operator, [])], groups: [] } },
        })
        .expect(201);
    }
    const none = await request(t.http)
      .get(`${doc.path}/data?viewId=none-in&count=exact`)
      .set(bearer(owner))
      .expect(200);
    expect(none.body.payload).toMatchObject({ items: [], total: 0 });
    const all = await request(t.http)
      .get(`${doc.path}/data?viewId=all-not-in&sort=id:asc`)
      .set(bearer(owner))
      .expect(200);
    expect(all.body.payload.items.map((row: { id: string }) => row.id)).toEqual(ALL);
    const cursor = await request(t.http)
      .get(`${doc.path}/data?viewId=none-in&limit=2`)
      .set(bearer(owner))
      .expect(200);
    expect(cursor.body.payload).toMatchObject({ items: [], nextCursor: null });
  });

  it('reads filter values in the Value form the field writes accept', async () => {
    expect(await where('price', 'eq', { number: 20 })).toEqual(['q2']);
    expect(await where('status', 'eq', { selectOption: { id: 'todo' } })).toEqual(['q1', 'q4']);
    expect(await where('status', 'ne', { selectOption: 'todo' })).toEqual(['q2', 'q3', 'q5', 'q6']);
    expect(await where('status', 'in', [{ selectOption: { id: 'doing' } }, { select: 'done' }])).toEqual([
      'q2',
      'q3',
      'q6',
    ]);
    expect(await where('tags', 'contains', { multiSelect: { id: 'blue' } })).toEqual(['q2', 'q3', 'q5']);
    expect(await where('tags', 'in', [{ selectOption: { id: 'red' } }])).toEqual(['q1', 'q3', 'q6']);
    expect(await where('owner', 'eq', { user: { id: 'user-a' } })).toEqual(['q1', 'q3', 'q6']);
    expect(await where('owner', 'notIn', [{ user: 'user-a' }])).toEqual(['q2', 'q4', 'q5']);
    expect(await where('createdBy', 'eq', { user: { id: 'seed' } })).toEqual(ALL);
    expect(await where('rating', 'gte', { rating: 4 })).toEqual(['q1', 'q6']);
    expect(await where('active', 'eq', { boolean: true })).toEqual(['q1', 'q3', 'q6']);
    expect(await where('links', 'contains', { relation: { rowId: 'y' } })).toEqual(['q2', 'q3']);
    const unknown = await request(t.http)
      .post(`${doc.path}/data/query`)
      .set(bearer(owner))
      .send({
        filters: {
          logic: 'and',
          conditions: [condition('status', 'eq', { selectOption: { id: 'nope' } })],
          groups: [],
        },
      })
      .expect(400);
    expect(unknown.body.details).toMatchObject({
      field: 'filters.conditions[0].value',
      reason: 'unknown select option "nope"',
    });
  });

  it('filters set fields by the Value a read answers (multiSelect, collaborators, relation arrays)', async () => {
    expect(await where('tags', 'eq', { multiSelect: [{ id: 'red' }, { id: 'blue' }] })).toEqual(['q3']);
    expect(await where('tags', 'contains', { multiSelect: [{ id: 'blue' }] })).toEqual(['q2', 'q3', 'q5']);
    expect(await where('tags', 'in', { multiSelect: [{ id: 'red', label: 'Red' }] })).toEqual(['q1', 'q3', 'q6']);
    expect(await where('links', 'eq', { relation: [{ rowId: 'x' }, { rowId: 'y' }] })).toEqual(['q2']);
    expect(await where('links', 'contains', { relation: [{ docType: 'parts', docId: 'p1', rowId: 'y' }] })).toEqual(['q2', 'q3']);
    const people = await createDocument(t.http, owner, { docType: 'people', fields: [{ id: 'team', name: 'Team', type: 'collaborator' }] });
    await seedRows(t.dataSource, people, [
      { id: 'p1', values: { team: ['u1', 'u2'] } },
      { id: 'p2', values: { team: ['u2'] } },
    ]);
    const team = await request(t.http).get(`${people.path}/data/p1`).set(bearer(owner)).expect(200);
    const value = team.body.payload.values[0].value;
    expect(value).toEqual({ collaborators: [{ id: 'u1' }, { id: 'u2' }] });
    const found = await query({ filters: { logic: 'and', conditions: [{ field: 'team', operator: 'eq', value }], groups: [] } }, people.path);
    expect(idsOf(found)).toEqual(['p1']);
    // Still checked like a write: an unknown option, or a key the field does not take, is refused.
    for (const bad of [{ multiSelect: [{ id: 'nope' }] }, { colours: ['red'] }]) {
      const res = await request(t.http)
        .post(`${doc.path}/data/query`)
        .set(bearer(owner))
        .send({ filters: { logic: 'and', conditions: [condition('tags', 'eq', bad)], groups: [] } })
        .expect(400);
      expect(res.body.details).toMatchObject({ field: 'filters.conditions[0].value' });
    }
  });

  it('answers a sum or average beyond the double range as null instead of failing the query', async () => {
    const huge = await createDocument(t.http, owner, { docType: 'huge', fields: [{ id: 'qty', name: 'Qty', type: 'number' }, { id: 'kind', name: 'Kind', type: 'text' }] });
    await seedRows(t.dataSource, huge, [
      { id: 'h1', values: { qty: 1e308, kind: 'big' } },
      { id: 'h2', values: { qty: 1e308, kind: 'big' } },
      { id: 'h3', values: { qty: 1.5, kind: 'small' } },
      { id: 'h4', values: { qty: 2, kind: 'small' } },
    ]);
    const grouped = await query(
      { groupBy: { fields: ['kind'], aggregations: [{ kind: 'sum', field: 'qty' }, { kind: 'avg', field: 'qty' }, { kind: 'max', field: 'qty' }] } },
      huge.path,
    );
    const byKind = Object.fromEntries(
      (grouped.groups as { keys: { value: { text: string } }[]; aggregations: { value: unknown }[] }[]).map((group) => [group.keys[0]?.value.text, group.aggregations.map((a) => a.value)]),
    );
    expect(byKind).toEqual({ big: [null, 1e308, 1e308], small: [3.5, 1.75, 2] });
  });

  it('filters relations with eq / ne as the same set of linked row ids', async () => {
    expect(await where('links', 'eq', 'x')).toEqual(['q1']);
    expect(await where('links', 'eq', ['y', 'x'])).toEqual(['q2']);
    expect(await where('links', 'eq', [{ rowId: 'y' }])).toEqual(['q3']);
    expect(await where('links', 'ne', 'x')).toEqual(['q2', 'q3', 'q4', 'q5', 'q6']);
    expect(await where('links', 'ne', ['x', 'y'])).toEqual(['q1', 'q3', 'q4', 'q5', 'q6']);
    expect(await where('links', 'eq', [])).toEqual(['q4', 'q5', 'q6']);
  });

  it('filters booleans with in / notIn, a missing value counting as false', async () => {
    expect(await where('active', 'in', [true])).toEqual(['q1', 'q3', 'q6']);
    expect(await where('active', 'in', [false])).toEqual(['q2', 'q4', 'q5']);
    expect(await where('active', 'in', ['true', false])).toEqual(ALL);
    expect(await where('active', 'notIn', [true])).toEqual(['q2', 'q4', 'q5']);
    expect(await where('active', 'notIn', [false])).toEqual(['q1', 'q3', 'q6']);
    const bad = await request(t.http)
      .post(`${doc.path}/data/query`)
      .set(bearer(owner))
      .send({ filters: { logic: 'and', conditions: [condition('active', 'in', ['maybe'])], groups: [] } })
      .expect(400);
    expect(bad.body.details.field).toBe('filters.conditions[0].value[0]');
  });

  // Rows show their timestamps with milliseconds (toISOString) while PostgreSQL keeps microseconds: a filter with
  // the time a row shows must find that row, as it does for a datetime field.
  it('filters createdAt / updatedAt and created_time fields by the millisecond time a row shows', async () => {
    const stamps = await createDocument(t.http, owner, {
      docType: 'stamps',
      fields: [
        { id: 'name', name: 'Name', type: 'text' },
        { id: 'born', name: 'Born', type: 'created_time' },
      ],
    });
    await seedRows(t.dataSource, stamps, [
      { id: 'm1', values: { name: 'a' } },
      { id: 'm2', values: { name: 'b' } },
      { id: 'm3', values: { name: 'c' } },
    ]);
    await t.dataSource.query(
      `UPDATE document_rows r SET created_at = x.at::timestamptz, updated_at = x.at::timestamptz
         FROM documents d, (VALUES ('m1', '2024-05-01T08:00:00.123456Z'), ('m2', '2024-05-01T08:00:00.123999Z'),
                                   ('m3', '2024-05-01T08:00:00.124000Z')) AS x(id, at)
        WHERE d.id = r.document_id AND d.doc_type = 'stamps' AND r.id = x.id`,
    );
    const shown = await request(t.http).get(`${stamps.path}/data/m1`).set(bearer(owner)).expect(200);
    expect(shown.body.payload.createdAt).toBe('2024-05-01T08:00:00.123Z');
    const at = '2024-05-01T08:00:00.123Z';
    const ids = async (field: string, operator: string, value: unknown, extra: Record<string, unknown> = {}) =>
      idsOf(
        await query(
          { filters: [{ field, operator, value, ...extra }], sorts: [{ field: 'id', direction: 'asc' }] },
          stamps.path,
        ),
      );
    for (const field of ['createdAt', 'updatedAt', 'born']) {
      expect({ field, eq: await ids(field, 'eq', at) }).toEqual({ field, eq: ['m1', 'm2'] });
      expect({ field, ne: await ids(field, 'ne', at) }).toEqual({ field, ne: ['m3'] });
      expect({ field, in: await ids(field, 'in', [at, '2024-01-01T00:00:00Z']) }).toEqual({ field, in: ['m1', 'm2'] });
      expect({ field, notIn: await ids(field, 'notIn', [at]) }).toEqual({ field, notIn: ['m3'] });
      expect({ field, gt: await ids(field, 'gt', at) }).toEqual({ field, gt: ['m3'] });
      expect({ field, gte: await ids(field, 'gte', at) }).toEqual({ field, gte: ['m1', 'm2', 'm3'] });
      expect({ field, lt: await ids(field, 'lt', '2024-05-01T08:00:00.124Z') }).toEqual({ field, lt: ['m1', 'm2'] });
      expect({ field, lte: await ids(field, 'lte', at) }).toEqual({ field, lte: ['m1', 'm2'] });
      expect({ field, range: await ids(field, 'range', undefined, { rangeStart: at, rangeEnd: at }) }).toEqual({
        field,
        range: ['m1', 'm2'],
      });
      // Groups agree: one group per time a row shows.
      const grouped = await query({ groupBy: { fields: [field], aggregations: [{ kind: 'count' }] } }, stamps.path);
      expect({
        field,
        groups: (grouped.groups as { keys: { value: unknown }[]; aggregations: { value: number }[] }[]).map(
          (group) => [group.keys[0]?.value, group.aggregations[0]?.value],
        ),
      }).toEqual({
        field,
        groups: [
          [{ date: at }, 2],
          [{ date: '2024-05-01T08:00:00.124Z' }, 1],
        ],
      });
    }
  });

  describe('grouped results', () => {
    let many: DocHandle;

    beforeAll(async () => {
      many = await createDocument(t.http, owner, {
        docType: 'batches',
        fields: [
          { id: 'qty', name: 'Qty', type: 'number' },
          { id: 'kind', name: 'Kind', type: 'text' },
        ],
      });
      // 25 distinct quantities (two rows each for 1..5) and one row without a quantity: 26 groups.
      const rows: { id: string; values: Record<string, unknown> }[] = Array.from(
        { length: 25 },
        (_, index) => ({ id: `b${index + 1}`, values: { qty: index + 1, kind: 'k' } }),
      );
      rows.push(...[1, 2, 3, 4, 5].map((qty) => ({ id: `d${qty}`, values: { qty, kind: 'k' } })), {
        id: 'e1',
        values: { kind: 'k' },
      });
      await seedRows(t.dataSource, many, rows);
    });

    const keyOf = (group: { keys: { value: { number: number } }[] }): number | null =>
      group.keys[0]?.value.number ?? null;

    it('pages groups with page and pageSize (default 20) in a stable key order and reports the number of groups', async () => {
      const first = await query({ groupBy: { fields: ['qty'] } }, many.path);
      expect(first).toMatchObject({ page: 1, pageSize: 20, total: 26, totalPages: 2 });
      expect((first.groups as unknown[]).length).toBe(20);
      const seen: (number | null)[] = [];
      for (let page = 1; page <= 6; page += 1) {
        const payload = await query(
          { groupBy: { fields: ['qty'], aggregations: [{ kind: 'count' }] }, page, pageSize: 5 },
          many.path,
        );
        expect(payload).toMatchObject({ page, pageSize: 5, total: 26, totalPages: 6 });
        seen.push(...(payload.groups as { keys: { value: { number: number } }[] }[]).map(keyOf));
      }
      expect(seen).toEqual([...Array.from({ length: 25 }, (_, index) => index + 1), null]);
      const twice = await query(
        { groupBy: { fields: ['qty'], aggregations: [{ kind: 'count' }] }, page: 1, pageSize: 5 },
        many.path,
      );
      expect(
        (twice.groups as { aggregations: { value: number }[] }[]).map(
          (group) => group.aggregations[0]?.value,
        ),
      ).toEqual([2, 2, 2, 2, 2]);
    });

    it('reports the total past the last page, for aggregations without keys and within filters', async () => {
      expect(await query({ groupBy: { fields: ['qty'] }, page: 9, pageSize: 5 }, many.path)).toMatchObject({
        groups: [],
        page: 9,
        total: 26,
        totalPages: 6,
      });
      const overall = await query(
        { groupBy: { fields: [], aggregations: [{ kind: 'sum', field: 'qty' }] } },
        many.path,
      );
      expect(overall).toMatchObject({
        total: 1,
        totalPages: 1,
        groups: [{ keys: [], aggregations: [{ kind: 'sum', field: 'qty', value: 340 }] }],
      });
      expect(
        await query({ groupBy: { fields: [], aggregations: [{ kind: 'count' }] }, page: 2 }, many.path),
      ).toMatchObject({ groups: [], total: 1 });
      const filtered = await query(
        {
          filters: { logic: 'and', conditions: [condition('qty', 'lte', 3)], groups: [] },
          groupBy: { fields: ['qty', 'kind'] },
          pageSize: 2,
        },
        many.path,
      );
      expect(filtered).toMatchObject({ total: 3, totalPages: 2 });
    });

    it('groups set fields by the set: the same options, users or linked rows in another order are one group', async () => {
      const sets = await createDocument(t.http, owner, {
        docType: 'setgroups',
        fields: [
          {
            id: 'tags',
            name: 'Tags',
            type: 'multi_select',
            selectOptions: [
              { id: 'red', label: 'Red' },
              { id: 'blue', label: 'Blue' },
            ],
          },
          { id: 'people', name: 'People', type: 'collaborator' },
          { id: 'links', name: 'Links', type: 'relation' },
        ],
      });
      await seedRows(t.dataSource, sets, [
        { id: 's1', values: { tags: ['red', 'blue'], people: ['u1', 'u2'], links: [{ rowId: 'x' }, { rowId: 'y' }] } },
        // The same rows named the other way a reference may be written (with the document's type and id).
        { id: 's2', values: { tags: ['blue', 'red'], people: ['u2', 'u1'], links: [{ docType: 'setgroups', docId: sets.docId, rowId: 'y' }, { rowId: 'x' }] } },
        { id: 's3', values: { tags: ['red'], people: ['u1'], links: [{ rowId: 'x' }] } },
      ]);
      // eq already treats both orders as the same set; groups must agree with it.
      expect(
        idsOf(await query({ filters: [condition('tags', 'eq', ['blue', 'red'])], sorts: [{ field: 'id' }] }, sets.path)),
      ).toEqual(['s1', 's2']);
      for (const field of ['tags', 'people', 'links']) {
        const grouped = await query({ groupBy: { fields: [field], aggregations: [{ kind: 'count' }] } }, sets.path);
        expect({ field, total: grouped.total, counts: (grouped.groups as { aggregations: { value: number }[] }[]).map((group) => group.aggregations[0]?.value).sort() }).toEqual({ field, total: 2, counts: [1, 2] });
      }
    });

    it('refuses pageSize above the maximum, and cursor or limit, with VALIDATION_ERROR', async () => {
      for (const [extra, field] of [
        [{ pageSize: 101 }, 'pageSize'],
        [{ limit: 10 }, 'limit'],
        [{ cursor: 'abc' }, 'cursor'],
      ] as const) {
        const res = await request(t.http)
          .post(`${many.path}/data/query`)
          .set(bearer(owner))
          .send({ groupBy: { fields: ['qty'] }, ...extra })
          .expect(400);
        expect({ code: res.body.code, field: res.body.details.field }).toEqual({
          code: 'VALIDATION_ERROR',
          field,
        });
      }
    });
  });
});
