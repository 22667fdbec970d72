import { randomInt } from 'node:crypto';
import { Socket } from 'node:net';
import request from 'supertest';
import { bearer, registerUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const socket = new Socket();
  try {
    return await new Promise<boolean>((resolve) => {
      socket.setTimeout(500);
      socket.once('connect', () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => resolve(false));
      socket.connect(Number(port || 6379), hostname);
    });
  } finally {
    socket.destroy();
  }
}

const redisUp = await reachable(REDIS_URL);

/** A caller address of its own (the app trusts X-Forwarded-For from loopback), so budgets never collide. */
function address(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
}

function login(http: TestApp['http'], ip: string): request.Test {
  return request(http).post('/api/v1/auth/login').set('X-Forwarded-For', ip).send({});
}

describe('rate limit (RATE_LIMIT_PER_MINUTE=3, in-memory store)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('lets 3 requests through with RateLimit-* headers and refuses the 4th with 429 RATE_LIMIT_EXCEEDED', async () => {
    const ip = address();
    for (let i = 1; i <= 3; i += 1) {
      const res = await login(t.http, ip).expect(400);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe(String(3 - i));
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
    }
    const refused = await login(t.http, ip).expect(429);
    expect(refused.body).toMatchObject({ success: false, code: 'RATE_LIMIT_EXCEEDED', payload: null });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    // Another address still has its own budget.
    await login(t.http, address()).expect(400);
  });

  it('counts an authenticated user by identity, separately from its address', async () => {
    const ip = address();
    const user = await registerUser(t.http);
    // registerUser came from 127.0.0.1 (its own budget); the user now spends the user budget from `ip`.
    for (let i = 0; i < 3; i += 1) {
      await request(t.http).get('/api/v1/users/me').set('X-Forwarded-For', ip).set(bearer(user)).expect(200);
    }
    const refused = await request(t.http)
      .get('/api/v1/users/me')
      .set('X-Forwarded-For', ip)
      .set(bearer(user))
      .expect(429);
    expect(refused.body.code).toBe('RATE_LIMIT_EXCEEDED');
    // Same user from another address: still refused (the budget follows the user).
    await request(t.http)
      .get('/api/v1/users/me')
      .set('X-Forwarded-For', address())
      .set(bearer(user))
      .expect(429);
    // Anonymous calls from the user's address: the address budget is untouched.
    await login(t.http, ip).expect(400);
  });

  it('counts refused credentials against the address, so guessing tokens is limited too', async () => {
    const ip = address();
    for (let i = 0; i < 3; i += 1) {
      const res = await request(t.http)
        .get('/api/v1/users/me')
        .set('X-Forwarded-For', ip)
        .set('Authorization', 'Bearer guess')
        .expect(401);
      expect(['INVALID_TOKEN', 'UNAUTHORIZED']).toContain(res.body.code);
    }
    const refused = await request(t.http).get('/api/v1/users/me').set('X-Forwarded-For', ip).expect(429);
    expect(refused.body.code).toBe('RATE_LIMIT_EXCEEDED');
    await login(t.http, ip).expect(429);
  });

  it('counts requests refused before routing (unknown path, wrong method, unreadable body) against the address', async () => {
    const ip = address();
    const user = await registerUser(t.http);
    const unknown = await request(t.http).get('/api/v1/no-such-route').set('X-Forwarded-For', ip).expect(404);
    expect(unknown.headers['ratelimit-remaining']).toBe('2');
    await request(t.http).patch('/api/v1/users/me/organizations').set('X-Forwarded-For', ip).expect(405);
    // A bearer token is not read before the body is: a malformed body counts against the address too.
    await request(t.http)
      .post('/api/v1/organizations')
      .set('X-Forwarded-For', ip)
      .set(bearer(user))
      .set('Content-Type', 'application/json')
      .send('{broken')
      .expect(400);
    // The budget is spent: whatever the request, the address is now refused before anything else.
    for (const attempt of [
      request(t.http).get('/api/v1/no-such-route').set('X-Forwarded-For', ip),
      request(t.http).post('/api/v1/organizations').set('X-Forwarded-For', ip).set('Content-Type', 'application/json').send('{broken'),
      login(t.http, ip),
    ]) {
      const refused = await attempt.expect(429);
      expect(refused.body).toMatchObject({ success: false, code: 'RATE_LIMIT_EXCEEDED' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
    // The user's own budget is untouched.
    await request(t.http).get('/api/v1/users/me').set('X-Forwarded-For', ip).set(bearer(user)).expect(200);
  });

  it('does not count health probes or metrics scrapes', async () => {
    for (let i = 0; i < 5; i += 1) {
      await request(t.http).get('/health').expect(200);
      await request(t.http).get('/metrics').expect(200);
    }
  });
});

(redisUp ? describe : describe.skip)(`rate limit shared through Redis (${REDIS_URL})`, () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const env = { RATE_LIMIT_PER_MINUTE: '3', REDIS_URL };
    [a, b] = await Promise.all([createTestApp(env), createTestApp(env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('gives two instances one budget per caller', async () => {
    const ip = address();
    await login(a.http, ip).expect(400);
    await login(b.http, ip).expect(400);
    const third = await login(a.http, ip).expect(400);
    expect(third.headers['ratelimit-remaining']).toBe('0');
    const refused = await login(b.http, ip).expect(429);
    expect(refused.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await login(a.http, ip).expect(429);
    await login(b.http, address()).expect(400);
  });
});

describe('rate limit with Redis unreachable', () => {
  it('fails open: requests are served (uncounted) rather than refused', async () => {
    const t = await createTestApp({ RATE_LIMIT_PER_MINUTE: '1', REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const ip = address();
      await login(t.http, ip).expect(400);
      const second = await login(t.http, ip).expect(400);
      expect(second.headers['ratelimit-limit']).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
