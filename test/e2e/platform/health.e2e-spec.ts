import request from 'supertest';
import { createTestDatabase } from '../../utils/test-database.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

describe('health and readiness', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_PER_MINUTE: '1' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers liveness at the host root, outside /api/v1, and never rate limits it', async () => {
    for (let i = 0; i < 3; i += 1) {
      const res = await request(t.http).get('/health').expect(200);
      expect(res.body).toMatchObject({ success: true, payload: { status: 'ok' } });
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
    await request(t.http).get('/api/v1/health').expect(404);
  });

  it('answers readiness with the database check', async () => {
    const res = await request(t.http).get('/health/ready').expect(200);
    expect(res.body).toMatchObject({
      success: true,
      payload: { status: 'ok', info: { database: { status: 'up' } } },
    });
  });

  it('answers 503 SERVICE_UNAVAILABLE when the database is unreachable, and liveness stays up', async () => {
    const database = await createTestDatabase();
    const lonely = await createTestApp({}, { databaseUrl: database.url });
    try {
      await request(lonely.http).get('/health/ready').expect(200);
      // The database disappears under the running app: its pooled connections are cut and reconnects fail.
      await database.drop();
      const res = await request(lonely.http).get('/health/ready').expect(503);
      expect(res.body).toMatchObject({
        success: false,
        code: 'SERVICE_UNAVAILABLE',
        payload: { status: 'error', details: { database: { status: 'down' } } },
      });
      expect(JSON.stringify(res.body)).not.toMatch(/does not exist|127\.0\.0\.1|password/);
      await request(lonely.http).get('/health').expect(200);
    } finally {
      await lonely.close();
    }
  });
});
