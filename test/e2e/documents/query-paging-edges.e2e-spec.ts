import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser, seedQtyRows, seedRows } from './documents.fixtures.js';

/**
 * Edges of the data query surface (docs/documents.md "Queries and indexes"): totals of pages past the end in the
 * estimated count mode, the kind of the body's paging keys, and min/max of the row timestamps.
 */
describe('documents: query paging edges', () => {
  let t: TestApp;
  let owner: TestUser;
  let large: DocHandle;
  const half = { filter: { and: [{ field: 'qty', op: 'gte', value: 100 }] } };

  beforeAll(async () => {
    // Above 50 rows a filtered total is the planner's estimate unless asked for exact.
    t = await createTestApp({ QUERY_EXACT_COUNT_MAX_ROWS: '50' });
    owner = await newUser(t.http);
    large = await createDocument(t.http, owner);
    await seedQtyRows(t.dataSource, large, 200);
  });
  afterAll(async () => {
    await t.close();
  });

  const query = (doc: DocHandle, body: Record<string, unknown>) => request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send(body);

  it('answers the exact total on an empty page past the end, never the offset as a total', async () => {
    // 100 rows match: page 50 of 20 used to answer total 980 (49 pages), page 7 total 120.
    for (const page of [6, 7, 50]) {
      const res = await query(large, { ...half, page }).expect(200);
      expect(res.body.payload).toMatchObject({ items: [], page, total: 100, totalPages: 5, totalExact: true, countMode: 'estimated' });
    }
    // Nothing matches: page 2 used to answer the estimate (rows that do not exist).
    const none = await query(large, { filter: { and: [{ field: 'qty', op: 'lt', value: 0 }] }, page: 2, pageSize: 10 }).expect(200);
    expect(none.body.payload).toMatchObject({ items: [], total: 0, totalPages: 0, totalExact: true });
    // count=none stays without a total.
    const noCount = await query(large, { ...half, page: 50, count: 'none' }).expect(200);
    expect(noCount.body.payload).toMatchObject({ items: [], total: null, totalPages: null, countMode: 'none' });
  });

  it('refuses paging keys of the wrong kind in the body, naming the kind', async () => {
    // Strings were read with Number(): "0x10" paged by 16, "1e1" by 10, "2" went through.
    for (const [key, value] of [
      ['pageSize', '0x10'],
      ['pageSize', '1e1'],
      ['page', '2'],
      ['limit', '5'],
      ['pageSize', 2.5],
      ['pageSize', true],
    ] as const) {
      const res = await query(large, { [key]: value }).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: key, reason: `${key} must be an integer number` } });
    }
    const big = await query(large, { pageSize: 101 }).expect(400);
    expect(big.body.details).toMatchObject({ field: 'pageSize', reason: 'pageSize must not be greater than 100' });
    const zero = await query(large, { page: 0 }).expect(400);
    expect(zero.body.details).toMatchObject({ field: 'page', reason: 'page must not be less than 1' });
    const ok = await query(large, { page: 2, pageSize: 16 }).expect(200);
    expect(ok.body.payload.items).toHaveLength(16);
  });

  it('pages by long sort values with cursors a client can send back, every row once', async () => {
    const doc = await createDocument(t.http, owner);
    const long = (n: number, tail: string) => `${'é'.repeat(n)}${tail}`;
    // Long texts (one of 12,000 characters gave a 21,532-character nextCursor: 431 over GET, refused in a body),
    // ties between long values, short values and empty ones.
    const names = [long(12000, 'a'), long(12000, 'a'), long(3000, 'b'), 'short', null, long(200, 'c'), long(12000, 'a'), 'zz', null];
    await seedRows(t.dataSource, doc, names.map((name, i) => ({ id: `l${i}`, values: name === null ? {} : { name, qty: i } })));
    for (const direction of ['asc', 'desc']) {
      const expected = (await query(doc, { sorts: [{ field: 'name', direction }], pageSize: 100 }).expect(200)).body.payload.items.map((r: { id: string }) => r.id);
      for (const via of ['get', 'post']) {
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let guard = 0; guard < 20; guard += 1) {
          const res: request.Response =
            via === 'get'
              ? await request(t.http).get(`${doc.path}/data?sort=name:${direction}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).set(bearer(owner))
              : await query(doc, { sorts: [{ field: 'name', direction }], limit: 1, ...(cursor ? { cursor } : {}) });
          expect({ via, direction, status: res.status, details: res.body.details }).toEqual({ via, direction, status: 200, details: undefined });
          expect(res.body.payload.items).toHaveLength(1);
          seen.push(...res.body.payload.items.map((r: { id: string }) => r.id));
          cursor = res.body.payload.nextCursor;
          if (!cursor) {
            break;
          }
          expect(cursor.length).toBeLessThanOrEqual(4096);
        }
        expect({ via, direction, seen }).toEqual({ via, direction, seen: expected });
      }
    }
    // The row a long-valued cursor continues after changed: the position is lost, said so, not skipped silently.
    const longest = { filters: { conditions: [{ field: 'name', operator: 'is_not_empty' }] }, sorts: [{ field: 'name', direction: 'desc' }], limit: 1 };
    const first = await query(doc, longest).expect(200);
    const boundary = first.body.payload.items[0].id as string;
    expect(names[Number(boundary.slice(1))]?.length).toBeGreaterThan(1000);
    await t.dataSource.query(`UPDATE document_rows SET "values" = jsonb_set("values", '{name}', '"changed"') WHERE id = $1`, [boundary]);
    const stale = await query(doc, { ...longest, cursor: first.body.payload.nextCursor }).expect(400);
    expect(stale.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'cursor' } });
  });

  it('answers min/max of createdAt and updatedAt as the rows show them', async () => {
    const doc = await createDocument(t.http, owner);
    await createRow(t.http, owner, doc, { id: 'a', values: [{ fieldId: 'name', value: { text: 'A' } }] });
    await createRow(t.http, owner, doc, { id: 'b', values: [{ fieldId: 'name', value: { text: 'B' } }] });
    const rows = await query(doc, { sorts: [{ field: 'createdAt', direction: 'asc' }] }).expect(200);
    const created = rows.body.payload.items.map((row: { createdAt: string }) => row.createdAt);
    const updated = rows.body.payload.items.map((row: { updatedAt: string }) => row.updatedAt).sort();
    const res = await query(doc, {
      groupBy: {
        fields: [],
        aggregations: [
          { kind: 'min', field: 'createdAt' },
          { kind: 'max', field: 'createdAt' },
          { kind: 'max', field: 'updatedAt' },
        ],
      },
    }).expect(200);
    expect(res.body.payload.groups[0].aggregations.map((a: { value: unknown }) => a.value)).toEqual([created[0], created[1], updated[1]]);
    expect(created[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});
