import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle, newUser, seedQtyRows, seedRows } from './documents.fixtures.js';

/** Count modes of row lists (docs/performance.md): exact, estimated (default), none; query, body and Prefer header. */
describe('documents: count modes of row lists', () => {
  let t: TestApp;
  let owner: TestUser;
  let large: DocHandle;
  let small: DocHandle;
  const half = { filter: { and: [{ field: 'qty', op: 'gte', value: 100 }] } };

  beforeAll(async () => {
    // Documents above 50 rows count filtered totals by estimate unless asked for exact.
    t = await createTestApp({ QUERY_EXACT_COUNT_MAX_ROWS: '50' });
    owner = await newUser(t.http);
    large = await createDocument(t.http, owner);
    await seedQtyRows(t.dataSource, large, 200);
    small = await createDocument(t.http, owner);
    await seedRows(t.dataSource, small, Array.from({ length: 30 }, (_, i) => ({ id: `s${i}`, values: { name: `n${i}`, qty: i * 10 } })));
  });
  afterAll(async () => {
    await t.close();
  });

  it('counts exactly on request, by parameter, body key or Prefer header', async () => {
    const byBody = await request(t.http).post(`${large.path}/data/query`).set(bearer(owner)).send({ ...half, count: 'exact' }).expect(200);
    expect(byBody.body.payload).toMatchObject({ total: 100, totalPages: 5, totalExact: true, countMode: 'exact' });
    const byHeader = await request(t.http).post(`${large.path}/data/query`).set(bearer(owner)).set('Prefer', 'count=exact').send(half).expect(200);
    expect(byHeader.body.payload).toMatchObject({ total: 100, totalExact: true, countMode: 'exact' });
    const list = await request(t.http).get(`${large.path}/data?count=exact&pageSize=7`).set(bearer(owner)).expect(200);
    expect(list.body.payload).toMatchObject({ total: 200, totalPages: 29, totalExact: true, countMode: 'exact' });
  });

  it('estimates filtered totals of large documents by default, marked as such, and stays exact where it is free', async () => {
    const estimated = await request(t.http).post(`${large.path}/data/query`).set(bearer(owner)).send(half).expect(200);
    expect(estimated.body.payload.countMode).toBe('estimated');
    expect(estimated.body.payload.totalExact).toBe(false);
    expect(estimated.body.payload.items).toHaveLength(20);
    expect(estimated.body.payload.total).toBeGreaterThanOrEqual(21);
    expect(estimated.body.payload.total).toBeLessThanOrEqual(200);
    expect(estimated.body.payload.totalPages).toBe(Math.ceil(estimated.body.payload.total / 20));

    // Nothing filters: the kept row count is exact.
    const unfiltered = await request(t.http).get(`${large.path}/data`).set(bearer(owner)).expect(200);
    expect(unfiltered.body.payload).toMatchObject({ total: 200, totalExact: true, countMode: 'estimated' });
    // The last page knows the exact total by itself.
    const last = await request(t.http).post(`${large.path}/data/query`).set(bearer(owner)).send({ ...half, page: 5, pageSize: 22 }).expect(200);
    expect(last.body.payload).toMatchObject({ total: 100, totalExact: true });
    expect(last.body.payload.items).toHaveLength(12);
    // A small document is counted exactly.
    const smallDoc = await request(t.http).post(`${small.path}/data/query`).set(bearer(owner)).send(half).expect(200);
    expect(smallDoc.body.payload).toMatchObject({ total: 20, totalExact: true, countMode: 'estimated' });
  });

  it('knows the exact total on a last page that is exactly full, so no empty page is promised after it', async () => {
    // 100 matching rows in pages of 20: page 5 is the last and full.
    const last = await request(t.http).post(`${large.path}/data/query`).set(bearer(owner)).send({ ...half, page: 5 }).expect(200);
    expect(last.body.payload.items).toHaveLength(20);
    expect(last.body.payload).toMatchObject({ total: 100, totalPages: 5, totalExact: true, countMode: 'estimated' });
    // A full page that is not the last stays an estimate of at least one more row.
    const before = await request(t.http).post(`${large.path}/data/query`).set(bearer(owner)).send({ ...half, page: 4 }).expect(200);
    expect(before.body.payload.items).toHaveLength(20);
    expect(before.body.payload.totalExact).toBe(false);
    expect(before.body.payload.total).toBeGreaterThanOrEqual(81);
  });

  it('leaves the total out with count=none', async () => {
    const none = await request(t.http).post(`${large.path}/data/query`).set(bearer(owner)).send({ ...half, count: 'none' }).expect(200);
    expect(none.body.payload).toMatchObject({ total: null, totalPages: null, totalExact: false, countMode: 'none', page: 1, pageSize: 20 });
    expect(none.body.payload.items).toHaveLength(20);
    const list = await request(t.http).get(`${large.path}/data`).set(bearer(owner)).set('Prefer', 'return=minimal, count=none').expect(200);
    expect(list.body.payload).toMatchObject({ total: null, countMode: 'none' });
  });

  it('refuses unknown modes and a parameter that contradicts the header', async () => {
    const unknown = await request(t.http).get(`${large.path}/data?count=planned`).set(bearer(owner)).expect(400);
    expect(unknown.body.code).toBe('VALIDATION_ERROR');
    const body = await request(t.http).post(`${large.path}/data/query`).set(bearer(owner)).send({ count: 'all' }).expect(400);
    expect(body.body.details.field).toBe('count');
    const header = await request(t.http).get(`${large.path}/data`).set(bearer(owner)).set('Prefer', 'count=maybe').expect(400);
    expect(header.body.details.field).toBe('prefer');
    const clash = await request(t.http).get(`${large.path}/data?count=exact`).set(bearer(owner)).set('Prefer', 'count=none').expect(400);
    expect(clash.body.code).toBe('VALIDATION_ERROR');
  });
});
