import request from 'supertest';
import { bearer, registerUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { ProbeModule } from './support/probe.module.js';
import { problemsOf } from '../../utils/error-details.js';

/** Paging, cursors, deprecation and bad numbers, through a test-only controller using the shared DTOs. */
describe('paging, cursors, deprecation and number bounds', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({}, { extraModules: [ProbeModule] });
  });
  afterAll(async () => {
    await t.close();
  });

  const fieldsOf = (body: Parameters<typeof problemsOf>[0]): string[] => problemsOf(body).map((d: { field: string }) => d.field);

  it('defaults to page 1 of 20 with total and totalPages', async () => {
    const res = await request(t.http).get('/api/v1/platform-probe/items').expect(200);
    expect(res.body.payload).toMatchObject({ page: 1, pageSize: 20, total: 45, totalPages: 3 });
    expect(res.body.payload.items).toHaveLength(20);
    expect(res.body.payload.items[0]).toEqual({ n: 1 });
  });

  it('serves a later page and a short last page', async () => {
    const res = await request(t.http).get('/api/v1/platform-probe/items?page=3&pageSize=20').expect(200);
    expect(res.body.payload).toMatchObject({ page: 3, pageSize: 20, total: 45, totalPages: 3 });
    expect(res.body.payload.items.map((i: { n: number }) => i.n)).toEqual([41, 42, 43, 44, 45]);
    const beyond = await request(t.http).get('/api/v1/platform-probe/items?page=9').expect(200);
    expect(beyond.body.payload).toMatchObject({ items: [], page: 9, total: 45 });
  });

  it('accepts pageSize 100 and rejects 101 with VALIDATION_ERROR naming pageSize', async () => {
    await request(t.http).get('/api/v1/platform-probe/items?pageSize=100').expect(200);
    const res = await request(t.http).get('/api/v1/platform-probe/items?pageSize=101').expect(400);
    expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(fieldsOf(res.body)).toEqual(['pageSize']);
  });

  it.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=abc', 'page'],
    ['pageSize=0', 'pageSize'],
    ['pageSize=1.5', 'pageSize'],
    ['pageSize=ten', 'pageSize'],
    ['page=99999999999999999999', 'page'],
  ])('rejects %s with VALIDATION_ERROR', async (query, field) => {
    const res = await request(t.http).get(`/api/v1/platform-probe/items?${query}`).expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(res.body)).toContain(field);
  });

  it('rejects unknown query parameters', async () => {
    const res = await request(t.http).get('/api/v1/platform-probe/items?sort=evil').expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(res.body)).toContain('sort');
  });

  it('applies the same convention on a real list (GET /api/v1/auth/sessions)', async () => {
    const user = await registerUser(t.http);
    await request(t.http)
      .post('/api/v1/auth/login')
      .send({ email: user.email, password: user.password })
      .expect(200);
    const first = await request(t.http).get('/api/v1/auth/sessions').set(bearer(user)).expect(200);
    expect(first.body.payload).toMatchObject({ page: 1, pageSize: 20, total: 2, totalPages: 1 });
    expect(first.body.payload.items).toHaveLength(2);
    const small = await request(t.http)
      .get('/api/v1/auth/sessions?pageSize=1&page=2')
      .set(bearer(user))
      .expect(200);
    expect(small.body.payload).toMatchObject({ page: 2, pageSize: 1, total: 2, totalPages: 2 });
    expect(small.body.payload.items).toHaveLength(1);
    for (const query of ['pageSize=101', 'page=0', 'page=x']) {
      const res = await request(t.http).get(`/api/v1/auth/sessions?${query}`).set(bearer(user)).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('walks a cursor list to its end and refuses a forged cursor', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=20&cursor=${encodeURIComponent(cursor)}` : '?limit=20';
      const res = await request(t.http).get(`/api/v1/platform-probe/cursor${query}`).expect(200);
      seen.push(...res.body.payload.items.map((i: { n: number }) => i.n));
      cursor = res.body.payload.nextCursor;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
    const forged = await request(t.http).get('/api/v1/platform-probe/cursor?cursor=not-a-cursor').expect(400);
    expect(forged.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'cursor' } });
    const tooMany = await request(t.http).get('/api/v1/platform-probe/cursor?limit=1001').expect(400);
    expect(fieldsOf(tooMany.body)).toEqual(['limit']);
  });

  it('marks a deprecated operation with X-API-Deprecated: true and in the OpenAPI document', async () => {
    const res = await request(t.http).get('/api/v1/platform-probe/old').expect(200);
    expect(res.headers['x-api-deprecated']).toBe('true');
    const current = await request(t.http).get('/api/v1/platform-probe/items').expect(200);
    expect(current.headers['x-api-deprecated']).toBeUndefined();
    expect(t.openApi.paths['/api/v1/platform-probe/old']?.get?.deprecated).toBe(true);
  });

  it('sends X-API-Deprecated on the failures of a deprecated operation too', async () => {
    const bad = await request(t.http)
      .post('/api/v1/platform-probe/old-numbers')
      .send({ count: -5 })
      .expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect(bad.headers['x-api-deprecated']).toBe('true');
    const good = await request(t.http)
      .post('/api/v1/platform-probe/old-numbers')
      .send({ count: 5 })
      .expect(200);
    expect(good.headers['x-api-deprecated']).toBe('true');
  });

  describe('numbers out of range never give a 500', () => {
    it.each([
      ['{"count": 1001}', 'count'],
      ['{"count": -1}', 'count'],
      ['{"count": 1e400}', 'count'],
      ['{"count": 12345678901234567890}', 'count'],
      ['{"count": "7"}', 'count'],
      ['{"count": 1, "ratio": 1e400}', 'ratio'],
    ])('%s → VALIDATION_ERROR on %s', async (body, field) => {
      const res = await request(t.http)
        .post('/api/v1/platform-probe/numbers')
        .set('Content-Type', 'application/json')
        .send(body)
        .expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(res.body)).toContain(field);
    });

    it('accepts values inside the bounds', async () => {
      const res = await request(t.http)
        .post('/api/v1/platform-probe/numbers')
        .send({ count: 1000, ratio: 0.5 })
        .expect(200);
      expect(res.body.payload).toEqual({ count: 1000, ratio: 0.5 });
    });

    it('maps a PostgreSQL out-of-range error to VALIDATION_ERROR', async () => {
      await request(t.http).get('/api/v1/platform-probe/int4?value=42').expect(200);
      const res = await request(t.http).get('/api/v1/platform-probe/int4?value=2147483648').expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    });
  });

  it('answers an unexpected error with 500 INTERNAL_ERROR and no stack or internal message', async () => {
    const res = await request(t.http).get('/api/v1/platform-probe/boom').expect(500);
    expect(res.body).toMatchObject({ success: false, code: 'INTERNAL_ERROR', payload: null });
    expect(JSON.stringify(res.body)).not.toMatch(/secret internal detail|at .*\.ts|stack/);
  });
});
