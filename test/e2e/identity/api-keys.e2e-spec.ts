import { createHash } from 'node:crypto';
import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

describe('API keys', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function createKey(
    user: TestUser,
    body: Record<string, unknown> = {},
  ): Promise<{ id: string; key: string; prefix: string }> {
    const res = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(user))
      .send({ name: 'CI', scopes: ['openid', 'email'], ...body })
      .expect(201);
    return res.body.payload;
  }

  it('creates a key shown once, stored hashed, recognisable by its prefix', async () => {
    const user = await registerUser(t.http);
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const res = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(user))
      .send({
        name: 'CI',
        scopes: ['doc:read', 'openid'],
        expiresAt,
        ipAllowlist: ['127.0.0.1', '10.0.0.0/8'],
      })
      .expect(201);
    const created = res.body.payload;
    expect(created).toMatchObject({
      name: 'CI',
      key: expect.stringMatching(/^qk_[A-Za-z0-9_-]{43}$/),
      scopes: ['doc:read', 'openid'],
      ipAllowlist: ['127.0.0.1', '10.0.0.0/8'],
      expiresAt,
      status: 'active',
      lastUsedAt: null,
    });
    expect(created.key.startsWith(created.prefix)).toBe(true);

    const [row] = await t.dataSource.query<Array<{ key_hash: string }>>(
      'SELECT key_hash FROM api_keys WHERE id = $1',
      [created.id],
    );
    expect(row.key_hash).toBe(createHash('sha256').update(created.key).digest('hex'));

    const list = await request(t.http).get('/api/v1/api-keys').set(bearer(user)).expect(200);
    expect(list.body.payload).toMatchObject({
      total: 1,
      items: [expect.objectContaining({ id: created.id, prefix: created.prefix })],
    });
    expect(JSON.stringify(list.body)).not.toContain(created.key);
  });

  it('authenticates as Bearer and as X-API-Key, with only the key scopes, and logs each use', async () => {
    const user = await registerUser(t.http);
    const withOpenId = await createKey(user, { scopes: ['openid', 'email'] });
    const withoutOpenId = await createKey(user, { scopes: ['doc:read'] });

    const info = await request(t.http)
      .get('/userinfo')
      .set('Authorization', `Bearer ${withOpenId.key}`)
      .expect(200);
    expect(info.body).toMatchObject({ sub: user.id, email: user.email });
    expect(info.body.name).toBeUndefined();
    await request(t.http).get('/api/v1/auth/userinfo').set('X-API-Key', withOpenId.key).expect(200);

    const denied = await request(t.http).get('/userinfo').set('X-API-Key', withoutOpenId.key).expect(403);
    expect(denied.body.code).toBe('FORBIDDEN');
    // Any-credential routes accept a key; it acts for its owner.
    expect(
      (await request(t.http).get('/api/v1/users/me').set('X-API-Key', withoutOpenId.key).expect(200)).body
        .payload.id,
    ).toBe(user.id);
    // Changing the profile needs the `profile` scope: a doc:read key cannot rename its owner.
    const rename = await request(t.http)
      .patch('/api/v1/users/me')
      .set('X-API-Key', withoutOpenId.key)
      .send({ displayName: 'Renamed by a key' })
      .expect(403);
    expect(rename.body.code).toBe('FORBIDDEN');
    const profileKey = await createKey(user, { scopes: ['profile'] });
    await request(t.http).patch('/api/v1/users/me').set('X-API-Key', profileKey.key).send({ displayName: 'Renamed' }).expect(200);
    expect((await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(200)).body.payload.displayName).toBe('Renamed');

    const list = await request(t.http).get('/api/v1/api-keys').set(bearer(user)).expect(200);
    const used = list.body.payload.items.find((k: { id: string }) => k.id === withOpenId.id);
    expect(used.lastUsedAt).toEqual(expect.any(String));
    const usage = await request(t.http)
      .get(`/api/v1/api-keys/${withOpenId.id}/usage`)
      .set(bearer(user))
      .expect(200);
    expect(usage.body.payload.total).toBe(2);
    expect(usage.body.payload.items.map((u: { path: string }) => u.path)).toEqual([
      '/api/v1/auth/userinfo',
      '/userinfo',
    ]);
  });

  it('cannot mint credentials: a key may not create keys, clients or manage sessions and 2FA', async () => {
    const user = await registerUser(t.http);
    const key = await createKey(user, { scopes: ['doc:read'] });
    const headers = { 'X-API-Key': key.key };
    for (const [method, path, body] of [
      ['post', '/api/v1/api-keys', { name: 'escalate', scopes: ['doc:write'] }],
      [
        'post',
        '/api/v1/oauth/clients',
        { name: 'x', allowedScopes: ['doc:write'], grantTypes: ['client_credentials'] },
      ],
      ['get', '/api/v1/auth/sessions', undefined],
      ['post', '/api/v1/auth/2fa/enable', { method: 'totp' }],
    ] as const) {
      const res = await request(t.http)[method](path).set(headers).send(body);
      expect({ path, status: res.status, code: res.body.code }).toEqual({
        path,
        status: 403,
        code: 'FORBIDDEN',
      });
    }
    expect(
      (await t.dataSource.query('SELECT count(*)::int AS n FROM api_keys WHERE user_id = $1', [user.id]))[0]
        .n,
    ).toBe(1);
  });

  it('revokes a key: 401 INVALID_TOKEN from then on; revoking is idempotent', async () => {
    const user = await registerUser(t.http);
    const key = await createKey(user);
    await request(t.http).get('/userinfo').set('X-API-Key', key.key).expect(200);
    const res = await request(t.http).post(`/api/v1/api-keys/${key.id}/revoke`).set(bearer(user)).expect(200);
    expect(res.body.payload).toMatchObject({ status: 'revoked', revokedAt: expect.any(String) });
    expect((await request(t.http).get('/userinfo').set('X-API-Key', key.key).expect(401)).body.code).toBe(
      'INVALID_TOKEN',
    );
    expect(
      (await request(t.http).get('/userinfo').set('Authorization', `Bearer ${key.key}`).expect(401)).body
        .code,
    ).toBe('INVALID_TOKEN');
    await request(t.http).post(`/api/v1/api-keys/${key.id}/revoke`).set(bearer(user)).expect(200);
  });

  it('refuses an expired key with 401 INVALID_TOKEN', async () => {
    const user = await registerUser(t.http);
    const key = await createKey(user, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    await request(t.http).get('/userinfo').set('X-API-Key', key.key).expect(200);
    await t.dataSource.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      key.id,
    ]);
    expect((await request(t.http).get('/userinfo').set('X-API-Key', key.key).expect(401)).body.code).toBe(
      'INVALID_TOKEN',
    );
    const list = await request(t.http).get('/api/v1/api-keys').set(bearer(user)).expect(200);
    expect(list.body.payload.items[0].status).toBe('expired');
  });

  it('enforces the IP allow-list (403 outside it)', async () => {
    const user = await registerUser(t.http);
    const key = await createKey(user, { ipAllowlist: ['203.0.113.0/24'] });
    await request(t.http)
      .get('/userinfo')
      .set('X-API-Key', key.key)
      .set('X-Forwarded-For', '203.0.113.9')
      .expect(200);
    const outside = await request(t.http)
      .get('/userinfo')
      .set('X-API-Key', key.key)
      .set('X-Forwarded-For', '198.51.100.9')
      .expect(403);
    expect(outside.body.code).toBe('FORBIDDEN');
  });

  it('rejects unknown scopes, past expiry and bad allow-list entries, creating nothing', async () => {
    const user = await registerUser(t.http);
    const unknownScope = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(user))
      .send({ name: 'x', scopes: ['doc:read', 'root'] })
      .expect(400);
    expect(unknownScope.body.code).toBe('INVALID_SCOPE');
    const past = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(user))
      .send({ name: 'x', scopes: ['doc:read'], expiresAt: '2001-01-01T00:00:00Z' })
      .expect(400);
    expect(past.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: expect.objectContaining({ field: 'expiresAt' }),
    });
    const badIp = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(user))
      .send({ name: 'x', scopes: ['doc:read'], ipAllowlist: ['10.0.0.0/99'] })
      .expect(400);
    expect(badIp.body.details.field).toBe('ipAllowlist[0]');
    const noScopes = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(user))
      .send({ name: 'x', scopes: [] })
      .expect(400);
    expect(noScopes.body.code).toBe('VALIDATION_ERROR');
    expect((await request(t.http).get('/api/v1/api-keys').set(bearer(user))).body.payload.total).toBe(0);
  });

  it('refuses ISO 8601 forms that name no readable instant (week dates, basic format, ordinal dates) as VALIDATION_ERROR on expiresAt', async () => {
    const user = await registerUser(t.http);
    for (const expiresAt of ['2030-W01-1', '20300101T000000Z', '20300101', '2030-012', '2030-01']) {
      const res = await request(t.http)
        .post('/api/v1/api-keys')
        .set(bearer(user))
        .send({ name: 'x', scopes: ['doc:read'], expiresAt })
        .expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'expiresAt' } });
    }
    expect((await request(t.http).get('/api/v1/api-keys').set(bearer(user))).body.payload.total).toBe(0);
  });

  it('refuses a key name made only of whitespace exactly like the empty name, and stores names trimmed', async () => {
    const user = await registerUser(t.http);
    const post = (name: string) => request(t.http).post('/api/v1/api-keys').set(bearer(user)).send({ name, scopes: ['doc:read'] });
    const empty = await post('').expect(400);
    const blank = await post('   ').expect(400);
    expect(blank.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'name' } });
    expect(blank.body.details).toEqual(empty.body.details);
    expect((await post('  CI  ').expect(201)).body.payload.name).toBe('CI');
  });

  it("does not show or revoke another user's keys (404)", async () => {
    const alice = await registerUser(t.http);
    const bob = await registerUser(t.http);
    const key = await createKey(bob);
    expect(
      (await request(t.http).post(`/api/v1/api-keys/${key.id}/revoke`).set(bearer(alice)).expect(404)).body
        .code,
    ).toBe('NOT_FOUND');
    await request(t.http).get(`/api/v1/api-keys/${key.id}/usage`).set(bearer(alice)).expect(404);
    expect((await request(t.http).get('/api/v1/api-keys').set(bearer(alice))).body.payload.total).toBe(0);
    await request(t.http).get('/userinfo').set('X-API-Key', key.key).expect(200);
  });

  it('answers an unknown key like any bad credential', async () => {
    const res = await request(t.http)
      .get('/api/v1/users/me')
      .set('X-API-Key', 'qk_not-a-real-key')
      .expect(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
  });
});
