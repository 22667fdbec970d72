import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

/** The value of one sample line, e.g. `http_requests_total{method="GET",route="/health",status="200"}`. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) {
      continue;
    }
    const labelText = line.slice(name.length + 1, line.indexOf('}'));
    const found = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

describe('GET /metrics', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves Prometheus text with request counts and latency by route and status, and pool stats', async () => {
    await request(t.http).get('/health').expect(200);
    await request(t.http).get('/health').expect(200);
    await request(t.http).get('/api/v1/users/me').expect(401);
    await request(t.http).get('/api/v1/nowhere/123').expect(404);

    const res = await request(t.http).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.text;
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(sample(text, 'http_requests_total', { method: 'GET', route: '/health', status: '200' })).toBe(2);
    expect(
      sample(text, 'http_requests_total', { method: 'GET', route: '/api/v1/users/me', status: '401' }),
    ).toBe(1);
    // Unknown paths are one label, so scanning URLs cannot blow up the series count.
    expect(sample(text, 'http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(text).not.toContain('/api/v1/nowhere/123');

    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(
      sample(text, 'http_request_duration_seconds_bucket', { route: '/health', status: '200', le: '+Inf' }),
    ).toBe(2);
    expect(
      sample(text, 'http_request_duration_seconds_count', { route: '/api/v1/users/me', status: '401' }),
    ).toBe(1);

    expect(text).toContain('# TYPE db_pool_connections gauge');
    expect(sample(text, 'db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'db_pool_connections', { state: 'waiting' })).toBe(0);
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('labels parameterised routes by their pattern, not the raw URL', async () => {
    await request(t.http).get(`/api/v1/organizations/${randomUUID()}`).expect(401);
    await request(t.http).get(`/api/v1/organizations/${randomUUID()}`).expect(401);
    const res = await request(t.http).get('/metrics').expect(200);
    expect(
      sample(res.text, 'http_requests_total', {
        method: 'GET',
        route: '/api/v1/organizations/:organizationId',
        status: '401',
      }),
    ).toBe(2);
    for (const line of res.text.split('\n').filter((l) => l.startsWith('http_requests_total{'))) {
      expect(line).not.toMatch(/route="[^"]*[0-9a-f]{8}-[0-9a-f]{4}/);
    }
  });

  it('is served raw, not in the envelope, and not listed in the OpenAPI document', async () => {
    const res = await request(t.http).get('/metrics').expect(200);
    expect(res.text.startsWith('{')).toBe(false);
    expect(t.openApi.paths['/metrics']).toBeUndefined();
  });
});
