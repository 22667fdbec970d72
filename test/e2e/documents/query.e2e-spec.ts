import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser, seedRows } from './documents.fixtures.js';

const ROWS = [
  { id: 'q1', values: { name: 'Apple', price: 10, due: '2024-01-05', active: true, status: 'todo', tags: ['red'], owner: 'user-a' } },
  { id: 'q2', values: { name: 'Banana', price: 20, due: '2024-02-05', active: false, status: 'doing', tags: ['blue'], owner: 'user-b' } },
  { id: 'q3', values: { name: 'Cherry', price: 30, due: '2024-03-05', active: true, status: 'done', tags: ['red', 'blue'], owner: 'user-a' } },
  { id: 'q4', values: { name: 'apricot', price: 40, due: '2024-04-05', status: 'todo' } },
  { id: 'q5', values: { name: 'Elder 100%', active: false, tags: ['blue'], owner: 'user-b' } },
  { id: 'q6', values: { name: 'Fig_Tree', price: 5.5, due: '2023-12-31', active: true, status: 'done', tags: ['red'], owner: 'user-a' } },
];

describe('documents: query engine', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner);
    await seedRows(t.dataSource, doc, ROWS);
  });
  afterAll(async () => {
    await t.close();
  });

  async function ids(body: Record<string, unknown>): Promise<string[]> {
    const res = await request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send(body);
    if (res.status !== 200) {
      throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body.payload.items.map((row: { id: string }) => row.id);
  }
  const where = (field: string, operator: string, value?: unknown, extra: Record<string, unknown> = {}) =>
    ids({ filters: { logic: 'and', conditions: [{ field, operator, value, ...extra }], groups: [] }, sorts: [{ field: 'id', direction: 'asc' }] });
  const short = (field: string, op: string, value: unknown) => ids({ filter: { and: [{ field, op, value }] }, sort: [{ field: 'id', order: 'asc' }] });

  it('text family: eq, ne, in, notIn, contains, startsWith, endsWith (case-insensitive, literal % and _), is_empty, is_not_empty', async () => {
    expect(await where('name', 'eq', 'Apple')).toEqual(['q1']);
    expect(await where('name', 'ne', 'Apple')).toEqual(['q2', 'q3', 'q4', 'q5', 'q6']);
    expect(await where('name', 'in', ['Apple', 'Cherry'])).toEqual(['q1', 'q3']);
    expect(await where('name', 'notIn', ['Apple', 'Cherry'])).toEqual(['q2', 'q4', 'q5', 'q6']);
    expect(await where('name', 'contains', 'AN')).toEqual(['q2']);
    expect(await where('name', 'startsWith', 'ap')).toEqual(['q1', 'q4']);
    expect(await where('name', 'endsWith', 'RY')).toEqual(['q3']);
    expect(await where('name', 'contains', '100%')).toEqual(['q5']);
    expect(await where('name', 'contains', '_')).toEqual(['q6']);
    expect(await where('owner', 'is_empty')).toEqual(['q4']);
    expect(await where('owner', 'is_not_empty')).toEqual(['q1', 'q2', 'q3', 'q5', 'q6']);
  });

  it('number family: numeric comparison (not text order), range, in, notIn, gt/gte/lt/lte in the short form', async () => {
    expect(await short('price', 'gt', 9)).toEqual(['q1', 'q2', 'q3', 'q4']);
    expect(await short('price', 'gte', 20)).toEqual(['q2', 'q3', 'q4']);
    expect(await short('price', 'lt', 10)).toEqual(['q6']);
    expect(await short('price', 'lte', 10)).toEqual(['q1', 'q6']);
    expect(await where('price', 'range', undefined, { rangeStart: 10, rangeEnd: 30 })).toEqual(['q1', 'q2', 'q3']);
    expect(await where('price', 'in', [5.5, 40])).toEqual(['q4', 'q6']);
    expect(await where('price', 'notIn', [5.5, 40])).toEqual(['q1', 'q2', 'q3', 'q5']);
    expect(await where('price', 'eq', '20')).toEqual(['q2']);
    expect(await where('price', 'is_empty')).toEqual(['q5']);
  });

  it('date family: date comparison and ranges', async () => {
    expect(await where('due', 'range', undefined, { rangeStart: '2024-01-01', rangeEnd: '2024-02-29' })).toEqual(['q1', 'q2']);
    expect(await short('due', 'lt', '2024-01-01')).toEqual(['q6']);
    expect(await short('due', 'gte', '2024-03-05')).toEqual(['q3', 'q4']);
    expect(await where('due', 'eq', '2024-04-05')).toEqual(['q4']);
  });

  it('boolean family: a missing value counts as false', async () => {
    expect(await where('active', 'eq', true)).toEqual(['q1', 'q3', 'q6']);
    expect(await where('active', 'eq', false)).toEqual(['q2', 'q4', 'q5']);
  });

  it('select families: option ids for single_select, set operators for multi_select, ids for users', async () => {
    expect(await where('status', 'eq', 'todo')).toEqual(['q1', 'q4']);
    expect(await where('status', 'in', ['doing', 'done'])).toEqual(['q2', 'q3', 'q6']);
    expect(await where('status', 'notIn', ['todo'])).toEqual(['q2', 'q3', 'q5', 'q6']);
    expect(await where('status', 'ne', 'todo')).toEqual(['q2', 'q3', 'q5', 'q6']);
    expect(await where('tags', 'contains', 'red')).toEqual(['q1', 'q3', 'q6']);
    expect(await where('tags', 'contains', ['red', 'blue'])).toEqual(['q3']);
    expect(await where('tags', 'in', ['blue'])).toEqual(['q2', 'q3', 'q5']);
    expect(await where('tags', 'is_empty')).toEqual(['q4']);
    expect(await where('owner', 'eq', 'user-b')).toEqual(['q2', 'q5']);
    expect(await where('owner', 'in', [{ id: 'user-a' }])).toEqual(['q1', 'q3', 'q6']);
  });

  it('nests and/or groups', async () => {
    const result = await ids({
      filters: {
        logic: 'or',
        conditions: [{ field: 'status', operator: 'eq', value: 'doing' }],
        groups: [{ logic: 'and', conditions: [{ field: 'active', operator: 'eq', value: true }, { field: 'price', operator: 'gt', value: 20 }], groups: [] }],
      },
      sorts: [{ field: 'id', direction: 'asc' }],
    });
    expect(result).toEqual(['q2', 'q3']);
    expect(await ids({ filter: { or: [{ field: 'name', op: 'eq', value: 'Apple' }, { field: 'price', op: 'gte', value: 40 }] }, sort: [{ field: 'id', order: 'asc' }] })).toEqual(['q1', 'q4']);
  });

  it('sorts numerically, by option order, with empty values last, and pages with totals', async () => {
    expect(await ids({ sorts: [{ field: 'price', direction: 'desc' }] })).toEqual(['q5', 'q4', 'q3', 'q2', 'q1', 'q6']);
    expect(await ids({ sorts: [{ field: 'price', direction: 'asc' }] })).toEqual(['q6', 'q1', 'q2', 'q3', 'q4', 'q5']);
    expect(await ids({ sorts: [{ field: 'status', direction: 'asc' }, { field: 'id', direction: 'desc' }] })).toEqual(['q4', 'q1', 'q2', 'q6', 'q3', 'q5']);
    const res = await request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send({ sorts: [{ field: 'price', direction: 'asc' }], page: 2, pageSize: 4 }).expect(200);
    expect(res.body.payload).toMatchObject({ page: 2, pageSize: 4, total: 6, totalPages: 2 });
    expect(res.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['q4', 'q5']);
    const list = await request(t.http).get(`${doc.path}/data?sort=price:desc&page=1&pageSize=2`).set(bearer(owner)).expect(200);
    expect(list.body.payload).toMatchObject({ total: 6, totalPages: 3 });
    expect(list.body.payload.items.map((row: { id: string }) => row.id)).toEqual(['q5', 'q4']);
    // Several keys: a comma list, or the parameter repeated (it used to be refused: "sort must be a string").
    const byStatusThenId = ['q4', 'q1', 'q2', 'q6', 'q3', 'q5'];
    const listIds = async (query: string): Promise<string[]> =>
      (await request(t.http).get(`${doc.path}/data?${query}`).set(bearer(owner)).expect(200)).body.payload.items.map((row: { id: string }) => row.id);
    expect(await listIds('sort=status:asc,id:desc')).toEqual(byStatusThenId);
    expect(await listIds('sort=status:asc&sort=id:desc')).toEqual(byStatusThenId);
    expect(await listIds('sort=status:asc&sort=id:desc&limit=10')).toEqual(byStatusThenId);
    await request(t.http).get(`${doc.path}/data?sort[field]=status`).set(bearer(owner)).expect(400);
  });

  it('groups with count, sum, avg, min and max in SQL', async () => {
    const res = await request(t.http)
      .post(`${doc.path}/data/query`)
      .set(bearer(owner))
      .send({
        filters: { logic: 'and', conditions: [{ field: 'status', operator: 'is_not_empty' }], groups: [] },
        groupBy: {
          fields: ['status'],
          aggregations: [{ kind: 'count' }, { kind: 'sum', field: 'price' }, { kind: 'avg', field: 'price' }, { kind: 'min', field: 'due' }, { kind: 'max', field: 'price' }],
        },
      })
      .expect(200);
    const groups = res.body.payload.groups;
    const byStatus = Object.fromEntries(groups.map((g: { keys: { value: { selectOption: { id: string } } }[] }) => [g.keys[0]?.value.selectOption.id, g]));
    expect(Object.keys(byStatus).sort()).toEqual(['doing', 'done', 'todo']);
    expect(byStatus.todo.aggregations.map((a: { value: unknown }) => a.value)).toEqual([2, 50, 25, '2024-01-05', 40]);
    expect(byStatus.done.aggregations[1].value).toBe(35.5);
    const bad = await request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send({ groupBy: { fields: ['status'], aggregations: [{ kind: 'sum', field: 'name' }] } }).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });

  it('pages with keyset cursors through every row exactly once, stable under concurrent inserts', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let inserted = false;
    do {
      const url: string = `${doc.path}/data?sort=price:asc&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await request(t.http).get(url).set(bearer(owner)).expect(200);
      expect(res.body.payload.limit).toBe(2);
      seen.push(...res.body.payload.items.map((row: { id: string }) => row.id));
      cursor = res.body.payload.nextCursor;
      if (!inserted) {
        // A row inserted before the cursor position does not shift the following pages.
        await seedRows(t.dataSource, doc, [{ id: 'q0', values: { name: 'Cheap', price: 1 } }]);
        inserted = true;
      }
    } while (cursor);
    expect(seen).toEqual(['q6', 'q1', 'q2', 'q3', 'q4', 'q5']);
    const forged = await request(t.http).get(`${doc.path}/data?limit=2&cursor=abc`).set(bearer(owner)).expect(400);
    expect(forged.body.code).toBe('VALIDATION_ERROR');
    const otherSort = await request(t.http).get(`${doc.path}/data?limit=1&sort=name:asc`).set(bearer(owner)).expect(200);
    const mismatch = await request(t.http)
      .get(`${doc.path}/data?limit=1&sort=price:asc&cursor=${encodeURIComponent(otherSort.body.payload.nextCursor)}`)
      .set(bearer(owner))
      .expect(400);
    expect(mismatch.body.details.field).toBe('cursor');
    await t.dataSource.query(`DELETE FROM document_rows WHERE id = 'q0'`);
    await t.dataSource.query(`UPDATE documents SET row_count = row_count - 1 WHERE doc_id = $1`, [doc.docId]);
  });

  it('seals cursors: no global seq to read, no forging, and a same-named document elsewhere refuses them', async () => {
    const page = await request(t.http).get(`${doc.path}/data?limit=1`).set(bearer(owner)).expect(200);
    const cursor: string = page.body.payload.nextCursor;
    // The position (…, seq) was readable base64url JSON, `{"k":"rows","p":[…, seq]}`: the row count of the whole service.
    for (const part of [cursor, ...cursor.split('.')]) {
      expect(Buffer.from(part, 'base64url').toString('latin1')).not.toMatch(/"[kp]":/);
    }
    const next = await request(t.http).get(`${doc.path}/data?limit=1&cursor=${encodeURIComponent(cursor)}`).set(bearer(owner)).expect(200);
    expect(next.body.payload.items[0].id).not.toBe(page.body.payload.items[0].id);
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('A') ? 'B' : 'A'}${cursor.slice(-1)}`;
    expect((await request(t.http).get(`${doc.path}/data?limit=1&cursor=${encodeURIComponent(tampered)}`).set(bearer(owner)).expect(400)).body.details).toMatchObject({ field: 'cursor' });
    // Another tenant's document with the same type and id: its cursors do not apply here, nor ours there.
    const stranger = await newUser(t.http);
    const twin = await createDocument(t.http, stranger, { id: doc.docId });
    // Through the API: seedRows picks documents by type and id, which would write into both twins.
    await createRow(t.http, stranger, twin, { id: 't1', values: { name: 'A' } });
    await createRow(t.http, stranger, twin, { id: 't2', values: { name: 'B' } });
    const theirs = await request(t.http).get(`${twin.path}/data?limit=1`).set(bearer(stranger)).expect(200);
    await request(t.http).get(`${doc.path}/data?limit=1&cursor=${encodeURIComponent(theirs.body.payload.nextCursor)}`).set(bearer(owner)).expect(400);
    await request(t.http).get(`${twin.path}/data?limit=1&cursor=${encodeURIComponent(cursor)}`).set(bearer(stranger)).expect(400);
  });

  it('datetime, duration, collaborator, relation and attachment families', async () => {
    const other = await createDocument(t.http, owner, {
      docType: 'events',
      fields: [
        { id: 'title', name: 'Title', type: 'text' },
        { id: 'at', name: 'At', type: 'datetime' },
        { id: 'mins', name: 'Duration', type: 'duration' },
        { id: 'people', name: 'People', type: 'collaborator' },
        { id: 'links', name: 'Links', type: 'relation' },
        { id: 'files', name: 'Files', type: 'attachment' },
      ],
    });
    await seedRows(t.dataSource, other, [
      { id: 'e1', values: { title: 'one', at: '2024-05-01T08:00:00.000Z', mins: 60000, people: ['u1', 'u2'], links: [{ rowId: 'x' }], files: [{ name: 'a.pdf', url: 'https://f/a.pdf' }] } },
      { id: 'e2', values: { title: 'two', at: '2024-05-01T18:30:00.000Z', mins: 3600000, people: ['u2'], links: [{ rowId: 'y' }] } },
      { id: 'e3', values: { title: 'three', at: '2024-05-02T00:00:00.000Z' } },
    ]);
    const run = async (conditions: unknown[]): Promise<string[]> => {
      const res = await request(t.http)
        .post(`${other.path}/rows/query`)
        .set(bearer(owner))
        .send({ filters: { logic: 'and', conditions, groups: [] }, sorts: [{ field: 'id', direction: 'asc' }] })
        .expect(200);
      return res.body.payload.items.map((row: { id: string }) => row.id);
    };
    expect(await run([{ field: 'at', operator: 'range', rangeStart: '2024-05-01T10:00:01+02:00', rangeEnd: '2024-05-01T23:59:59Z' }])).toEqual(['e2']);
    expect(await run([{ field: 'at', operator: 'gte', value: '2024-05-01T12:00:00Z' }])).toEqual(['e2', 'e3']);
    expect(await run([{ field: 'mins', operator: 'gt', value: 60000 }])).toEqual(['e2']);
    expect(await run([{ field: 'people', operator: 'contains', value: 'u1' }])).toEqual(['e1']);
    expect(await run([{ field: 'people', operator: 'in', value: ['u2'] }])).toEqual(['e1', 'e2']);
    expect(await run([{ field: 'people', operator: 'is_empty' }])).toEqual(['e3']);
    expect(await run([{ field: 'links', operator: 'contains', value: 'y' }])).toEqual(['e2']);
    expect(await run([{ field: 'links', operator: 'notIn', value: ['x'] }])).toEqual(['e2', 'e3']);
    expect(await run([{ field: 'files', operator: 'is_not_empty' }])).toEqual(['e1']);
    expect(await run([{ field: 'createdAt', operator: 'is_not_empty' }])).toEqual(['e1', 'e2', 'e3']);
    const wrong = await request(t.http)
      .post(`${other.path}/rows/query`)
      .set(bearer(owner))
      .send({ filters: { logic: 'and', conditions: [{ field: 'files', operator: 'eq', value: 'a.pdf' }], groups: [] } })
      .expect(400);
    expect(wrong.body.details.field).toBe('filters.conditions[0].operator');
  });

  it('refuses unknown fields, operators that do not fit the type and bad operands with VALIDATION_ERROR (never 500)', async () => {
    const cases: Record<string, unknown>[] = [
      { filters: { logic: 'and', conditions: [{ field: 'nope', operator: 'eq', value: 1 }], groups: [] } },
      { filters: { logic: 'and', conditions: [{ field: 'price', operator: 'contains', value: '1' }], groups: [] } },
      { filters: { logic: 'and', conditions: [{ field: 'price', operator: 'gt', value: 'abc' }], groups: [] } },
      { filters: { logic: 'and', conditions: [{ field: 'active', operator: 'gt', value: true }], groups: [] } },
      { filters: { logic: 'and', conditions: [{ field: 'due', operator: 'lt', value: 'yesterday' }], groups: [] } },
      { filters: { logic: 'xor', conditions: [], groups: [] } },
      { filter: { and: [{ field: "name'; DROP TABLE documents; --", op: 'eq', value: 1 }] } },
      { sorts: [{ field: 'name', direction: 'sideways' }] },
      { pageSize: 1000 },
      // A misspelt key would have queried everything.
      { filterz: { logic: 'and', conditions: [{ field: 'price', operator: 'eq', value: 1 }], groups: [] } },
      { orderBy: [{ field: 'name', direction: 'asc' }] },
      // … and so would one inside: a group, a condition, a sort or groupBy.
      { filter: { and: [{ field: 'price', op: 'gt', value: 50 }], orr: [{ field: 'price', op: 'lt', value: 5 }] } },
      { filters: { logic: 'and', conditions: [], grups: [] } },
      { filters: { logic: 'and', conditions: [{ field: 'price', operator: 'eq', value: 1, bogus: 2 }], groups: [] } },
      { sorts: [{ field: 'name', dir: 'desc' }] },
      { groupBy: { fields: ['status'], aggregate: [] } },
    ];
    for (const body of cases) {
      const res = await request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send(body);
      expect({ body, status: res.status, code: res.body.code }).toEqual({ body, status: 400, code: 'VALIDATION_ERROR' });
    }
    await request(t.http).get(`${doc.path}/data?sort=nope:asc`).set(bearer(owner)).expect(400);
    await request(t.http).get(`${doc.path}/data?pageSize=101`).set(bearer(owner)).expect(400);
    const still = await request(t.http).get(`${doc.path}/data`).set(bearer(owner)).expect(200);
    expect(still.body.payload.total).toBe(6);
  });
});
