import { generate } from 'otplib';
import { createHash } from 'node:crypto';
import request from 'supertest';
import { problemsOf } from '../../utils/error-details.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { startTestIdp, type TestIdp } from './test-idp.js';

describe('third-party login through a real OpenID provider', () => {
  let t: TestApp;
  let idp: TestIdp;
  let admin: TestUser;

  beforeAll(async () => {
    idp = await startTestIdp();
    t = await createTestApp({
      ADMIN_EMAILS: 'Platform-Admin@example.test, other-admin@example.test',
      ENCRYPTION_KEY: 'test-encryption-key',
    });
    admin = await registerUser(t.http, { email: 'platform-admin@example.test' });
    idp.accounts.set('alice', { email: 'alice@idp.test', email_verified: true, name: 'Alice Idp' });
    idp.accounts.set('bob', { email: 'bob@idp.test', email_verified: true, name: 'Bob Idp' });
    idp.accounts.set('carol', { email: 'carol@idp.test', email_verified: true, name: 'Carol Idp' });
    await request(t.http)
      .post('/api/v1/admin/oidc/providers')
      .set(bearer(admin))
      .send({
        provider: 'google',
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        scopes: ['openid', 'email', 'profile'],
      })
      .expect(201);
  });
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  async function startLogin(user?: TestUser): Promise<{ authorizationUrl: string; state: string }> {
    const req = request(t.http)
      .get('/api/v1/auth/oauth/google/authorize')
      .query({ redirectUri: idp.redirectUri });
    if (user) {
      req.set(bearer(user));
    }
    return (await req.expect(200)).body.payload;
  }

  async function loginAs(account: string): Promise<request.Response> {
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.signIn(authorizationUrl, account);
    expect(back.searchParams.get('state')).toBe(state);
    return request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({ code: back.searchParams.get('code'), state, iss: back.searchParams.get('iss') ?? undefined });
  }

  describe('provider administration', () => {
    it('is for platform administrators only', async () => {
      const user = await registerUser(t.http);
      for (const [method, path] of [
        ['get', '/api/v1/admin/oidc/providers'],
        ['post', '/api/v1/admin/oidc/providers'],
      ] as const) {
        const body = { provider: 'github', issuer: 'https://github.com', clientId: 'x' };
        const res = await request(t.http)[method](path).set(bearer(user)).send(body);
        expect({ path, status: res.status, code: res.body.code }).toEqual({
          path,
          status: 403,
          code: 'FORBIDDEN',
        });
      }
      await request(t.http).get('/api/v1/admin/oidc/providers').expect(401);
    });

    it('adds, lists, changes and removes providers; the secret is stored encrypted and never shown', async () => {
      const created = await request(t.http)
        .post('/api/v1/admin/oidc/providers')
        .set(bearer(admin))
        .send({
          provider: 'feishu',
          issuer: 'https://open.feishu.example',
          clientId: 'cli_1',
          clientSecret: 'super-secret-value',
        })
        .expect(201);
      const provider = created.body.payload;
      expect(provider).toMatchObject({
        provider: 'feishu',
        displayName: 'Feishu',
        hasClientSecret: true,
        enabled: true,
        scopes: ['openid', 'email', 'profile'],
      });
      expect(JSON.stringify(created.body)).not.toContain('super-secret-value');
      const [row] = await t.dataSource.query<Array<{ client_secret_encrypted: string }>>(
        'SELECT client_secret_encrypted FROM oidc_providers WHERE id = $1',
        [provider.id],
      );
      expect(row.client_secret_encrypted).toMatch(/^v1\./);
      expect(row.client_secret_encrypted).not.toContain('super-secret-value');

      const publicList = await request(t.http).get('/api/v1/oidc/providers').expect(200);
      expect(publicList.body.payload.items.map((p: { provider: string }) => p.provider)).toEqual([
        'feishu',
        'google',
      ]);
      expect(publicList.body.payload.items[0]).toEqual({
        provider: 'feishu',
        displayName: 'Feishu',
        authorizeUrl: '/api/v1/auth/oauth/feishu/authorize',
      });

      const updated = await request(t.http)
        .patch(`/api/v1/admin/oidc/providers/${provider.id}`)
        .set(bearer(admin))
        .send({ displayName: '飞书', enabled: false })
        .expect(200);
      expect(updated.body.payload).toMatchObject({ displayName: '飞书', enabled: false });
      // A non-null setting cannot be cleared with null (was a 500 for issuer and clientSecret).
      for (const key of ['issuer', 'clientSecret', 'scopes', 'clientId', 'displayName', 'enabled']) {
        const cleared = await request(t.http)
          .patch(`/api/v1/admin/oidc/providers/${provider.id}`)
          .set(bearer(admin))
          .send({ [key]: null });
        expect({ key, status: cleared.status, code: cleared.body.code }).toEqual({ key, status: 400, code: 'VALIDATION_ERROR' });
      }
      expect(
        (await request(t.http).get('/api/v1/oidc/providers')).body.payload.items.map(
          (p: { provider: string }) => p.provider,
        ),
      ).toEqual(['google']);
      const disabled = await request(t.http)
        .get('/api/v1/auth/oauth/feishu/authorize')
        .query({ redirectUri: 'https://app.example/cb' })
        .expect(404);
      expect(disabled.body.code).toBe('NOT_FOUND');

      const admins = await request(t.http).get('/api/v1/admin/oidc/providers').set(bearer(admin)).expect(200);
      expect(admins.body.payload.total).toBe(2);
      await request(t.http)
        .delete(`/api/v1/admin/oidc/providers/${provider.id}`)
        .set(bearer(admin))
        .expect(200);
      await request(t.http)
        .delete(`/api/v1/admin/oidc/providers/${provider.id}`)
        .set(bearer(admin))
        .expect(404);
    });

    it('refuses a plain-http issuer or endpoint outside loopback hosts; loopback http and https are accepted', async () => {
      const create = (body: Record<string, unknown>): request.Test =>
        request(t.http)
          .post('/api/v1/admin/oidc/providers')
          .set(bearer(admin))
          .send({ provider: 'github', clientId: 'x', clientSecret: 'y', ...body });
      for (const [field, value] of [
        ['issuer', 'http://evil.example.com'],
        ['issuer', 'http://192.0.2.2:4101'],
        ['issuer', 'ftp://example.com'],
        ['tokenEndpoint', 'http://evil.example.com/token'],
      ] as const) {
        const body =
          field === 'issuer'
            ? { issuer: value }
            : {
                issuer: 'https://github.com',
                authorizationEndpoint: 'https://github.com/login/oauth/authorize',
                [field]: value,
              };
        const res = await create(body).expect(400);
        expect({
          value,
          code: res.body.code,
          fields: problemsOf(res.body).map((p: { field: string }) => p.field),
        }).toEqual({
          value,
          code: 'VALIDATION_ERROR',
          fields: [field],
        });
      }
      expect(
        (await request(t.http).get('/api/v1/oidc/providers')).body.payload.items.map(
          (p: { provider: string }) => p.provider,
        ),
      ).not.toContain('github');

      const loopback = await create({ issuer: 'http://localhost:4101', enabled: false }).expect(201);
      const id = loopback.body.payload.id;
      const patch = (body: Record<string, unknown>): request.Test =>
        request(t.http).patch(`/api/v1/admin/oidc/providers/${id}`).set(bearer(admin)).send(body);
      const changed = await patch({ issuer: 'http://evil.example.com' }).expect(400);
      expect(problemsOf(changed.body)).toEqual([expect.objectContaining({ field: 'issuer' })]);
      await patch({ userinfoEndpoint: 'http://evil.example.com/userinfo' }).expect(400);
      await patch({ issuer: 'http://[::1]:4101' }).expect(200);
      const https = await patch({ issuer: 'https://github.com' }).expect(200);
      expect(https.body.payload.issuer).toBe('https://github.com');
      await request(t.http).delete(`/api/v1/admin/oidc/providers/${id}`).set(bearer(admin)).expect(200);
    });

    it('validates providers: enum values exactly, one configuration per provider', async () => {
      const facebook = await request(t.http)
        .post('/api/v1/admin/oidc/providers')
        .set(bearer(admin))
        .send({ provider: 'facebook', issuer: 'https://fb.example', clientId: 'x' })
        .expect(400);
      expect(facebook.body).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: expect.objectContaining({ field: 'provider' }),
      });
      const duplicate = await request(t.http)
        .post('/api/v1/admin/oidc/providers')
        .set(bearer(admin))
        .send({ provider: 'google', issuer: 'https://accounts.google.com', clientId: 'x' })
        .expect(409);
      expect(duplicate.body.code).toBe('ALREADY_EXISTS');
      expect(
        (await request(t.http).get('/api/v1/admin/oidc/providers').set(bearer(admin))).body.payload.total,
      ).toBe(1);
      await request(t.http)
        .get('/api/v1/auth/oauth/myspace/authorize')
        .query({ redirectUri: idp.redirectUri })
        .expect(400);
      await request(t.http)
        .get('/api/v1/auth/oauth/github/authorize')
        .query({ redirectUri: idp.redirectUri })
        .expect(404);
    });
  });

  /** The address an account made by `google` sign-in gets when the provider shares no e-mail. */
  function placeholderOf(subject: string): string {
    return `google-${createHash('sha256').update(subject).digest('hex').slice(0, 16)}@oauth.quire.invalid`;
  }

  it('refuses the placeholder domain at registration, so no one can take an identity’s address before its first sign-in', async () => {
    idp.accounts.set('dora', { name: 'Dora Nomail' });
    const placeholder = placeholderOf('dora');
    for (const email of [
      placeholder,
      placeholder.toUpperCase(),
      'someone@OAuth.Quire.Invalid',
      'x@sub.oauth.quire.invalid',
    ]) {
      const res = await request(t.http)
        .post('/api/v1/auth/register')
        .send({ email, password: 'correct horse battery' })
        .expect(400);
      expect({
        email,
        code: res.body.code,
        fields: problemsOf(res.body).map((p: { field: string }) => p.field),
      }).toEqual({
        email,
        code: 'VALIDATION_ERROR',
        fields: ['email'],
      });
    }
    const first = await loginAs('dora');
    expect(first.status).toBe(200);
    expect(first.body.payload).toMatchObject({ isNewUser: true, user: { email: placeholder } });

    // A provider that hands out an address in that domain does not take another identity's placeholder either:
    // the address is ignored and the account gets its own.
    idp.accounts.set('erin', { email: placeholderOf('finn'), email_verified: true, name: 'Erin' });
    idp.accounts.set('finn', { name: 'Finn' });
    const erin = await loginAs('erin');
    expect(erin.status).toBe(200);
    expect(erin.body.payload).toMatchObject({ isNewUser: true, user: { email: placeholderOf('erin') } });
    const finn = await loginAs('finn');
    expect(finn.status).toBe(200);
    expect(finn.body.payload).toMatchObject({ isNewUser: true, user: { email: placeholderOf('finn') } });
  });

  it('does not send two-step codes to a placeholder address: e-mail enrolment is refused, the other methods work', async () => {
    idp.accounts.set('gina', { name: 'Gina Nomail' });
    const gina = await loginAs('gina');
    expect(gina.body.payload.user.email).toBe(placeholderOf('gina'));
    const token = { token: gina.body.payload.accessToken as string };
    const refused = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(token))
      .send({ method: 'email' })
      .expect(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR', details: expect.objectContaining({ field: 'method' }) });
    expect(
      (await t.dataSource.query(`SELECT count(*)::int AS n FROM notifications WHERE recipient = $1`, [placeholderOf('gina')]))[0].n,
    ).toBe(0);
    const totp = await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(token)).send({ method: 'totp' }).expect(200);
    expect(totp.body.payload).toMatchObject({ method: 'totp', status: 'pending' });
  });

  it('starts a binding only for a full first-party session: an API key or a token narrowed at /token gets 403', async () => {
    const user = await registerUser(t.http);
    const key = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(user))
      .send({ name: 'every scope', scopes: ['doc:read', 'profile', 'openid', 'email'] })
      .expect(201);
    const narrowed = await request(t.http)
      .post('/token')
      .type('form')
      .send({ grant_type: 'refresh_token', client_id: 'quire', refresh_token: user.refreshToken, scope: 'profile' })
      .expect(200);
    for (const [label, credential] of [
      ['API key', key.body.payload.key as string],
      ['narrowed token', narrowed.body.access_token as string],
    ]) {
      const res = await request(t.http)
        .get('/api/v1/auth/oauth/google/authorize')
        .query({ redirectUri: idp.redirectUri })
        .set('Authorization', `Bearer ${credential}`);
      expect({ label, status: res.status, code: res.body.code }).toEqual({ label, status: 403, code: 'FORBIDDEN' });
    }
    const [{ n }] = await t.dataSource.query<Array<{ n: number }>>(
      'SELECT count(*)::int AS n FROM oauth_login_states WHERE user_id = $1',
      [user.id],
    );
    expect(n).toBe(0);
  });

  it('a bind refused for a state that is not the caller’s leaves the state to its owner', async () => {
    idp.accounts.set('mia', { email: 'mia@idp.test', email_verified: true, name: 'Mia' });
    idp.accounts.set('gus', { email: 'gus@idp.test', email_verified: true, name: 'Gus' });
    const mia = await registerUser(t.http);
    const stranger = await registerUser(t.http);
    const { authorizationUrl, state } = await startLogin(mia);
    const back = await idp.signIn(authorizationUrl, 'mia');
    const refused = await request(t.http)
      .post('/api/v1/users/me/oauth/google')
      .set(bearer(stranger))
      .send({ authorizationCode: 'garbage', state })
      .expect(401);
    expect(refused.body).toMatchObject({
      code: 'INVALID_TOKEN',
      details: expect.objectContaining({ field: 'state' }),
    });
    const [row] = await t.dataSource.query<Array<{ used_at: Date | null }>>(
      'SELECT used_at FROM oauth_login_states WHERE state = $1',
      [state],
    );
    expect(row.used_at).toBeNull();
    // Nor is a bind state a sign-in's: the sign-in callback refuses it (no account is made from Mia's identity)
    // and leaves it to the bind it was started for.
    const notSignIn = await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({ code: back.searchParams.get('code'), state })
      .expect(401);
    expect(notSignIn.body).toMatchObject({ code: 'INVALID_TOKEN', details: expect.objectContaining({ field: 'state' }) });
    expect(
      (await t.dataSource.query(`SELECT count(*)::int AS n FROM users WHERE lower(email) = 'mia@idp.test'`))[0].n,
    ).toBe(0);
    const bound = await request(t.http)
      .post('/api/v1/users/me/oauth/google')
      .set(bearer(mia))
      .send({ authorizationCode: back.searchParams.get('code'), state })
      .expect(201);
    expect(bound.body.payload).toMatchObject({ provider: 'google', subject: 'mia' });

    // The state of someone's sign-in is not a bind state either, and stays theirs.
    const signIn = await startLogin();
    const signInBack = await idp.signIn(signIn.authorizationUrl, 'gus');
    await request(t.http)
      .post('/api/v1/users/me/oauth/google')
      .set(bearer(stranger))
      .send({ authorizationCode: 'garbage', state: signIn.state })
      .expect(401);
    const gus = await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({
        code: signInBack.searchParams.get('code'),
        state: signIn.state,
        iss: signInBack.searchParams.get('iss') ?? undefined,
      })
      .expect(200);
    expect(gus.body.payload).toMatchObject({ isNewUser: true, user: { email: 'gus@idp.test' } });
  });

  it('creates an account on the first sign-in and finds it through the binding later', async () => {
    const first = await loginAs('alice');
    expect(first.status).toBe(200);
    expect(first.body.payload).toMatchObject({
      isNewUser: true,
      accessToken: expect.any(String),
      user: { email: 'alice@idp.test', displayName: 'Alice Idp' },
    });
    const token = { token: first.body.payload.accessToken };
    // A list answers the paged structure of every list (spec 1), with page and pageSize as everywhere.
    const bindings = await request(t.http).get('/api/v1/users/me/oauth').set(bearer(token)).expect(200);
    expect(bindings.body.payload).toEqual({
      items: [expect.objectContaining({ provider: 'google', subject: 'alice', email: 'alice@idp.test' })],
      page: 1,
      pageSize: 20,
      total: 1,
      totalPages: 1,
    });
    const pastTheEnd = await request(t.http).get('/api/v1/users/me/oauth?page=2&pageSize=1').set(bearer(token)).expect(200);
    expect(pastTheEnd.body.payload).toEqual({ items: [], page: 2, pageSize: 1, total: 1, totalPages: 1 });
    const tooLarge = await request(t.http).get('/api/v1/users/me/oauth?pageSize=101').set(bearer(token)).expect(400);
    expect(tooLarge.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'pageSize' } });
    const orgs = await request(t.http).get('/api/v1/users/me/organizations').set(bearer(token)).expect(200);
    expect(orgs.body.payload.items).toEqual([expect.objectContaining({ type: 'personal', role: 'owner' })]);

    const second = await loginAs('alice');
    expect(second.status).toBe(200);
    expect(second.body.payload).toMatchObject({ isNewUser: false, user: { id: first.body.payload.user.id } });
    const sessions = await request(t.http).get('/api/v1/auth/sessions').set(bearer(token)).expect(200);
    expect(
      sessions.body.payload.items.every((s: { authMethod: string }) => s.authMethod === 'oauth:google'),
    ).toBe(true);
  });

  it('a first sign-in whose session cannot be created leaves no account behind; the next one creates it', async () => {
    idp.accounts.set('edna', { email: 'edna@idp.test', email_verified: true, name: 'Edna Idp' });
    await t.dataSource.query(`
      CREATE FUNCTION test_fail_edna_session() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM oauth_connections WHERE user_id = NEW.user_id AND subject = 'edna') THEN
          RAISE EXCEPTION 'session insert failed by the test';
        END IF;
        RETURN NEW;
      END $$`);
    await t.dataSource.query(
      `CREATE TRIGGER test_fail_edna_session BEFORE INSERT ON sessions FOR EACH ROW EXECUTE FUNCTION test_fail_edna_session()`,
    );
    const users = async () => (await t.dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM users`))[0]?.n;
    const before = await users();
    try {
      const failed = await loginAs('edna');
      expect({ status: failed.status, code: failed.body.code }).toEqual({ status: 500, code: 'INTERNAL_ERROR' });
      expect(await users()).toBe(before);
      expect(await t.dataSource.query(`SELECT id FROM oauth_connections WHERE subject = 'edna'`)).toEqual([]);
    } finally {
      await t.dataSource.query(`DROP TRIGGER test_fail_edna_session ON sessions`);
      await t.dataSource.query(`DROP FUNCTION test_fail_edna_session()`);
    }
    const next = await loginAs('edna');
    expect(next.status).toBe(200);
    expect(next.body.payload).toMatchObject({ isNewUser: true });
    expect(await users()).toBe((before ?? 0) + 1);
  });

  it('asks an account with two-step verification for its second step, whose challenge then signs in', async () => {
    idp.accounts.set('fay', { email: 'fay@idp.test', email_verified: true, name: 'Fay Idp' });
    const created = await loginAs('fay');
    expect(created.status).toBe(200);
    const fay = { token: created.body.payload.accessToken as string };
    const enrol = await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(fay)).send({ method: 'totp' }).expect(200);
    const secret: string = enrol.body.payload.secret;
    await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(fay))
      .send({ method: 'totp', code: await generate({ secret }) })
      .expect(200);

    const challenged = await loginAs('fay');
    expect({ status: challenged.status, code: challenged.body.code }).toEqual({ status: 401, code: 'TWO_FACTOR_REQUIRED' });
    const { challengeToken } = challenged.body.payload;
    // The enrolment used the current step, which is not accepted twice: the next one.
    const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    const signedIn = await request(t.http).post('/api/v1/auth/2fa/verify').send({ challengeToken, method: 'totp', code }).expect(200);
    expect(signedIn.body.payload).toMatchObject({ accessToken: expect.any(String), user: { id: created.body.payload.user.id } });
  });

  it('answers 503 SERVICE_UNAVAILABLE, a status the document declares, while a provider cannot be reached', async () => {
    // Loopback plain http is accepted; nothing listens on port 1, so discovery fails at once.
    const created = await request(t.http)
      .post('/api/v1/admin/oidc/providers')
      .set(bearer(admin))
      .send({ provider: 'dingtalk', issuer: 'http://127.0.0.1:1', clientId: 'x' })
      .expect(201);
    try {
      const res = await request(t.http)
        .get('/api/v1/auth/oauth/dingtalk/authorize')
        .query({ redirectUri: 'https://app.example/cb' })
        .expect(503);
      expect(res.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { reason: 'dingtalk is not reachable' } });
      const declared = t.openApi.paths['/api/v1/auth/oauth/{provider}/authorize']?.get?.responses ?? {};
      expect(Object.keys(declared)).toContain('503');
    } finally {
      // The unreachable provider must not outlive this test, whatever it found.
      await request(t.http).delete(`/api/v1/admin/oidc/providers/${created.body.payload.id}`).set(bearer(admin)).expect(200);
    }
  });

  it('refuses a used or unknown state', async () => {
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.signIn(authorizationUrl, 'alice');
    const body = {
      code: back.searchParams.get('code'),
      state,
      iss: back.searchParams.get('iss') ?? undefined,
    };
    await request(t.http).post('/api/v1/auth/oauth/google/callback').send(body).expect(200);
    const again = await request(t.http).post('/api/v1/auth/oauth/google/callback').send(body).expect(401);
    expect(again.body).toMatchObject({
      code: 'INVALID_TOKEN',
      details: expect.objectContaining({ field: 'state' }),
    });
    const missing = await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({ state })
      .expect(400);
    expect(missing.body.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a callback whose code is null under both names without spending its state', async () => {
    const { authorizationUrl, state } = await startLogin();
    const nulls = await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({ code: null, authorizationCode: null, state })
      .expect(400);
    expect(nulls.body.code).toBe('VALIDATION_ERROR');
    const back = await idp.signIn(authorizationUrl, 'alice');
    await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({ code: null, authorizationCode: back.searchParams.get('code'), state, iss: back.searchParams.get('iss') ?? undefined })
      .expect(200);
  });

  it('takes the code as `authorizationCode` (spec 2.1) with the optional `redirectUri` of the authorize step', async () => {
    const first = await startLogin();
    const back = await idp.signIn(first.authorizationUrl, 'alice');
    const signedIn = await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({
        authorizationCode: back.searchParams.get('code'),
        redirectUri: idp.redirectUri,
        state: first.state,
        iss: back.searchParams.get('iss') ?? undefined,
      })
      .expect(200);
    expect(signedIn.body.payload).toMatchObject({
      accessToken: expect.any(String),
      isNewUser: expect.any(Boolean),
    });

    const second = await startLogin();
    const again = await idp.signIn(second.authorizationUrl, 'alice');
    const otherUri = await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({
        authorizationCode: again.searchParams.get('code'),
        redirectUri: 'https://elsewhere.test/cb',
        state: second.state,
      })
      .expect(400);
    expect(problemsOf(otherUri.body)).toEqual([expect.objectContaining({ field: 'redirectUri' })]);
    const twoCodes = await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({ code: 'a', authorizationCode: 'b', state: second.state })
      .expect(400);
    expect(problemsOf(twoCodes.body)).toEqual([expect.objectContaining({ field: 'authorizationCode' })]);
  });

  it('does not take over an existing account with the same e-mail; the owner binds it, then signs in with it', async () => {
    const bob = await registerUser(t.http, { email: 'bob@idp.test' });
    const refused = await loginAs('bob');
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('ALREADY_EXISTS');
    expect(
      (
        await t.dataSource.query(`SELECT count(*)::int AS n FROM users WHERE lower(email) = 'bob@idp.test'`)
      )[0].n,
    ).toBe(1);

    const { authorizationUrl, state } = await startLogin(bob);
    const back = await idp.signIn(authorizationUrl, 'bob');
    const bound = await request(t.http)
      .post('/api/v1/users/me/oauth/google')
      .set(bearer(bob))
      .send({ authorizationCode: back.searchParams.get('code'), state })
      .expect(201);
    expect(bound.body.payload).toMatchObject({ provider: 'google', subject: 'bob', email: 'bob@idp.test' });

    const login = await loginAs('bob');
    expect(login.status).toBe(200);
    expect(login.body.payload).toMatchObject({ isNewUser: false, user: { id: bob.id } });

    // The same identity cannot be bound to a second account.
    const carolAccount = await registerUser(t.http);
    const start = await startLogin(carolAccount);
    const code = (await idp.signIn(start.authorizationUrl, 'bob')).searchParams.get('code');
    const taken = await request(t.http)
      .post('/api/v1/users/me/oauth/google')
      .set(bearer(carolAccount))
      .send({ authorizationCode: code })
      .expect(409);
    expect(taken.body.code).toBe('ALREADY_EXISTS');
    expect(
      (await request(t.http).get('/api/v1/users/me/oauth').set(bearer(carolAccount))).body.payload.items,
    ).toEqual([]);

    // Unbinding: allowed while a password remains.
    await request(t.http).delete('/api/v1/users/me/oauth/google').set(bearer(bob)).expect(200);
    expect((await request(t.http).get('/api/v1/users/me/oauth').set(bearer(bob))).body.payload).toMatchObject({ items: [], total: 0 });
    await request(t.http).delete('/api/v1/users/me/oauth/google').set(bearer(bob)).expect(404);
  });

  it('keeps the last way to sign in: an account made by the provider cannot unbind it', async () => {
    const carol = await loginAs('carol');
    const token = { token: carol.body.payload.accessToken };
    const res = await request(t.http).delete('/api/v1/users/me/oauth/google').set(bearer(token)).expect(409);
    expect(res.body.code).toBe('INVALID_STATE');
    // The way out it names must exist: the API has no way to set a password, so binding another provider it is.
    expect(res.body.details.reason).toBe('this is your only way to sign in; bind another provider first');
    expect(
      (await request(t.http).get('/api/v1/users/me/oauth').set(bearer(token))).body.payload.items,
    ).toHaveLength(1);
    await request(t.http).delete('/api/v1/users/me/oauth/wechat').set(bearer(token)).expect(404);
  });

  it('keeps the last way to sign in when two unbinds race: one of the last two bindings stays', async () => {
    // A second provider on the same test IdP, so one account can hold two bindings.
    const github = await request(t.http)
      .post('/api/v1/admin/oidc/providers')
      .set(bearer(admin))
      .send({ provider: 'github', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret })
      .expect(201);
    try {
      for (const round of [1, 2, 3]) {
        idp.accounts.set(`race-${round}`, { name: `Race ${round}` });
        const made = await loginAs(`race-${round}`);
        expect(made.body.payload.isNewUser).toBe(true);
        const token = { token: made.body.payload.accessToken as string };
        const start = await request(t.http)
          .get('/api/v1/auth/oauth/github/authorize')
          .query({ redirectUri: idp.redirectUri })
          .set(bearer(token))
          .expect(200);
        const back = await idp.signIn(start.body.payload.authorizationUrl, `race-gh-${round}`);
        await request(t.http)
          .post('/api/v1/users/me/oauth/github')
          .set(bearer(token))
          .send({ authorizationCode: back.searchParams.get('code'), state: start.body.payload.state })
          .expect(201);
        // No password, no phone: each binding alone is a way in, but not both may go.
        const answers = await Promise.all(
          ['google', 'github'].map((provider) =>
            request(t.http).delete(`/api/v1/users/me/oauth/${provider}`).set(bearer(token)),
          ),
        );
        expect({ round, statuses: answers.map((res) => res.status).sort() }).toEqual({ round, statuses: [200, 409] });
        expect((await request(t.http).get('/api/v1/users/me/oauth').set(bearer(token))).body.payload.total).toBe(1);
      }
    } finally {
      await request(t.http).delete(`/api/v1/admin/oidc/providers/${github.body.payload.id}`).set(bearer(admin)).expect(200);
    }
  });
});
