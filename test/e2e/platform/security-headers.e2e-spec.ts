import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

const ALLOWED = 'https://app.example.com';

describe('security headers and CORS', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ CORS_ORIGINS: `${ALLOWED}, https://admin.example.com` });
  });
  afterAll(async () => {
    await t.close();
  });

  it('sets helmet headers on API and error responses', async () => {
    for (const path of ['/health', '/api/v1/users/me', '/api/v1/nowhere']) {
      const res = await request(t.http).get(path);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['strict-transport-security']).toMatch(/max-age=/);
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('answers a preflight from an allowed origin', async () => {
    const res = await request(t.http)
      .options('/api/v1/users/me')
      .set('Origin', ALLOWED)
      .set('Access-Control-Request-Method', 'PATCH')
      .set('Access-Control-Request-Headers', 'authorization,content-type');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers['access-control-allow-methods']).toContain('PATCH');
    expect(res.headers['access-control-allow-headers']).toMatch(/authorization/i);
  });

  it('exposes the request id and rate-limit headers to an allowed origin', async () => {
    const res = await request(t.http).get('/health').set('Origin', ALLOWED).expect(200);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers['access-control-expose-headers']).toMatch(/X-Request-Id/);
    expect(res.headers['access-control-expose-headers']).toMatch(/RateLimit-Remaining/);
  });

  it('gives no CORS grant to another origin', async () => {
    const res = await request(t.http)
      .options('/api/v1/users/me')
      .set('Origin', 'https://evil.example.net')
      .set('Access-Control-Request-Method', 'GET');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sends no CORS headers at all when CORS_ORIGINS is empty', async () => {
    const plain = await createTestApp();
    try {
      const res = await request(plain.http).get('/health').set('Origin', ALLOWED).expect(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});
