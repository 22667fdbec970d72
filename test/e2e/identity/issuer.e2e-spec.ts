import {
  type CryptoKey,
  decodeJwt,
  decodeProtectedHeader,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
  UnsecuredJWT,
} from 'jose';
import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  authorizeWithForms,
  createClient,
  formFields,
  pkcePair,
  type TestClient,
  tokenRequest,
} from './identity-helpers.js';

const REDIRECT = 'http://127.0.0.1/callback';

describe('token issuer: authorization endpoint, code and refresh grants, token verification', () => {
  let t: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    t = await createTestApp({ ADMIN_EMAILS: 'issuer-admin@example.test' });
    admin = await registerUser(t.http, { email: 'issuer-admin@example.test' });
  });
  afterAll(async () => {
    await t.close();
  });

  async function codeFor(
    client: TestClient,
    user: TestUser,
    extra: Record<string, string> = {},
  ): Promise<{ code: string; verifier: string }> {
    const { verifier, challenge } = pkcePair();
    const location = await authorizeWithForms(
      t.http,
      {
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: REDIRECT,
        scope: 'openid email doc:read',
        state: 'st-1',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        ...extra,
      },
      user,
    );
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('st-1');
    return { code: location.searchParams.get('code') ?? '', verifier };
  }

  it('serves discovery and JWKS at the host root and under /api/v1/auth, listing exactly what is supported', async () => {
    const root = await request(t.http).get('/.well-known/openid-configuration').expect(200);
    const api = await request(t.http).get('/api/v1/auth/.well-known/openid-configuration').expect(200);
    expect(api.body.issuer).toBe(root.body.issuer);
    const issuer = t.config.authIssuerUrl;
    expect(root.body).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      jwks_uri: `${issuer}/jwks.json`,
      response_types_supported: ['code', 'token'],
      grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: expect.arrayContaining(['doc:read', 'webhooks:manage', 'openid', 'profile', 'email']),
      success: true,
    });
    expect(root.body.payload.issuer).toBe(issuer);
    for (const path of ['/jwks.json', '/api/v1/auth/jwks.json']) {
      const jwks = await request(t.http).get(path).expect(200);
      expect(jwks.body.keys[0]).toMatchObject({
        kty: 'RSA',
        alg: 'RS256',
        use: 'sig',
        kid: expect.any(String),
      });
      expect(jwks.body.keys[0].d).toBeUndefined();
    }
  });

  it('runs the code flow with PKCE: single-use code, ID token, rotating refresh token, family revoked on reuse', async () => {
    const user = await registerUser(t.http);
    const client = await createClient(t.http, admin);
    const { code, verifier } = await codeFor(client, user, { nonce: 'n-123' });

    const wrongVerifier = await tokenRequest(
      t.http,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: pkcePair().verifier },
      client,
    ).expect(401);
    expect(wrongVerifier.body).toMatchObject({ error: 'invalid_grant', code: 'INVALID_TOKEN' });
    const wrongRedirect = await tokenRequest(
      t.http,
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://127.0.0.1/other',
        code_verifier: verifier,
      },
      client,
    ).expect(401);
    expect(wrongRedirect.body.error).toBe('invalid_grant');
    const otherClient = await createClient(t.http, admin);
    await tokenRequest(
      t.http,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      otherClient,
    ).expect(401);

    const res = await tokenRequest(t.http, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      client_id: client.clientId,
      client_secret: client.clientSecret,
    }).expect(200);
    expect(res.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid email doc:read',
      refresh_token: expect.stringMatching(/^qrt_/),
      id_token: expect.any(String),
    });
    const access = decodeJwt(res.body.access_token);
    expect(access).toMatchObject({
      sub: user.id,
      aud: client.clientId,
      client_id: client.clientId,
      scope: 'openid email doc:read',
      iss: t.config.authIssuerUrl,
    });
    expect(decodeProtectedHeader(res.body.access_token)).toMatchObject({
      alg: 'RS256',
      typ: 'at+jwt',
      kid: expect.any(String),
    });
    expect(decodeJwt(res.body.id_token)).toMatchObject({
      sub: user.id,
      aud: client.clientId,
      nonce: 'n-123',
      email: user.email,
    });
    const byGet = await request(t.http)
      .get('/userinfo')
      .set('Authorization', `Bearer ${res.body.access_token}`)
      .expect(200);
    // OIDC Core 5.3.1: POST answers as GET does (a relying party may send an empty form).
    const byPost = await request(t.http)
      .post('/userinfo')
      .type('form')
      .send('')
      .set('Authorization', `Bearer ${res.body.access_token}`)
      .expect(200);
    expect(byPost.body.sub).toBe(user.id);
    expect(byPost.body.email).toBe(user.email);
    expect(byPost.body.sub).toEqual(byGet.body.sub);
    // On both mounts, with a form body (OIDC Core 5.3.1 sends the POST form-encoded).
    await request(t.http)
      .post('/api/v1/auth/userinfo')
      .type('form')
      .send('foo=bar')
      .set('Authorization', `Bearer ${res.body.access_token}`)
      .expect(200);
    await request(t.http).post('/userinfo').expect(401);

    // The code is single use; replaying it revokes what it produced.
    const replay = await tokenRequest(
      t.http,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      client,
    ).expect(401);
    expect(replay.body.error).toBe('invalid_grant');
    expect(
      (
        await request(t.http)
          .get('/userinfo')
          .set('Authorization', `Bearer ${res.body.access_token}`)
          .expect(401)
      ).body.code,
    ).toBe('INVALID_TOKEN');

    // A fresh authorization: refresh rotates, and a rotated token's reuse revokes the family.
    const again = await codeFor(client, user);
    const tokens = (
      await tokenRequest(
        t.http,
        {
          grant_type: 'authorization_code',
          code: again.code,
          redirect_uri: REDIRECT,
          code_verifier: again.verifier,
        },
        client,
      ).expect(200)
    ).body;
    const refreshed = (
      await tokenRequest(
        t.http,
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, scope: 'doc:read' },
        client,
      ).expect(200)
    ).body;
    expect(refreshed.scope).toBe('doc:read');
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const widen = await tokenRequest(
      t.http,
      { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token, scope: 'doc:write' },
      client,
    ).expect(400);
    expect(widen.body).toMatchObject({ error: 'invalid_scope', code: 'INVALID_SCOPE' });
    // A refused scope spends nothing: the same refresh token still works, and the session lives on.
    const retried = (
      await tokenRequest(
        t.http,
        { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token },
        client,
      ).expect(200)
    ).body;
    expect(retried.refresh_token).not.toBe(refreshed.refresh_token);
    // Another client cannot use this client's refresh token.
    await tokenRequest(
      t.http,
      { grant_type: 'refresh_token', refresh_token: retried.refresh_token },
      otherClient,
    ).expect(401);
    const reuse = await tokenRequest(
      t.http,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      client,
    ).expect(401);
    expect(reuse.body).toMatchObject({ error: 'invalid_grant', code: 'INVALID_TOKEN' });
    await tokenRequest(
      t.http,
      { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token },
      client,
    ).expect(401);
    await request(t.http)
      .get('/api/v1/users/me')
      .set('Authorization', `Bearer ${refreshed.access_token}`)
      .expect(401);
  });

  it('a first-party token narrowed at /token still reads, but cannot mint credentials or reach account security', async () => {
    const user = await registerUser(t.http);
    const narrowed = (
      await tokenRequest(t.http, {
        grant_type: 'refresh_token',
        client_id: 'quire',
        refresh_token: user.refreshToken,
        scope: 'doc:read',
      }).expect(200)
    ).body;
    expect(narrowed.scope).toBe('doc:read');
    const bearerOf = { Authorization: `Bearer ${narrowed.access_token as string}` };
    await request(t.http).get('/api/v1/users/me').set(bearerOf).expect(200);
    const key = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearerOf)
      .send({ name: 'wider', scopes: ['data:write'] })
      .expect(403);
    expect(key.body.code).toBe('FORBIDDEN');
    await request(t.http)
      .post('/api/v1/oauth/clients')
      .set(bearerOf)
      .send({ name: 'wider', redirectUris: [REDIRECT], allowedScopes: ['doc:write'] })
      .expect(403);
    await request(t.http).get('/api/v1/auth/sessions').set(bearerOf).expect(403);
    // The full first-party token keeps them.
    await request(t.http)
      .post('/api/v1/api-keys')
      .set('Authorization', `Bearer ${user.token}`)
      .send({ name: 'mine', scopes: ['data:write'] })
      .expect(201);
  });

  it('an administrator’s first-party token narrowed at /token cannot administer (providers, signing keys)', async () => {
    const signedIn = await request(t.http)
      .post('/api/v1/auth/login')
      .send({ email: admin.email, password: admin.password })
      .expect(200);
    const narrowed = (
      await tokenRequest(t.http, {
        grant_type: 'refresh_token',
        client_id: 'quire',
        refresh_token: signedIn.body.payload.refreshToken,
        scope: 'doc:read',
      }).expect(200)
    ).body;
    const bearerOf = { Authorization: `Bearer ${narrowed.access_token as string}` };
    const kid = decodeProtectedHeader(admin.token).kid;
    for (const [method, path, body] of [
      ['get', '/api/v1/admin/oidc/providers', undefined],
      ['post', '/api/v1/admin/oidc/providers', { provider: 'github', issuer: 'https://github.com', clientId: 'x' }],
      ['post', '/api/v1/admin/signing-keys/rotate', undefined],
    ] as const) {
      const res = await request(t.http)[method](path).set(bearerOf).send(body);
      expect({ path, status: res.status, code: res.body.code, reason: res.body.details?.reason }).toEqual({
        path,
        status: 403,
        code: 'FORBIDDEN',
        reason: expect.stringContaining('every scope'),
      });
    }
    // Nothing was rotated: the key that signed the admin's token still signs new ones.
    const fresh = await request(t.http)
      .post('/api/v1/auth/login')
      .send({ email: admin.email, password: admin.password })
      .expect(200);
    expect(decodeProtectedHeader(fresh.body.payload.accessToken).kid).toBe(kid);
    // The administrator's full session still administers.
    await request(t.http).get('/api/v1/admin/oidc/providers').set(bearer(admin)).expect(200);
  });

  it('lists an OAuth authorization among the user’s sessions; ending it stops the client', async () => {
    const user = await registerUser(t.http);
    const client = await createClient(t.http, admin);
    const { code, verifier } = await codeFor(client, user);
    const tokens = (
      await tokenRequest(
        t.http,
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
        client,
      ).expect(200)
    ).body;
    const sessions = await request(t.http).get('/api/v1/auth/sessions').set(bearer(user)).expect(200);
    const granted = sessions.body.payload.items.find(
      (s: { clientId: string }) => s.clientId === client.clientId,
    );
    expect(granted).toMatchObject({ authMethod: 'authorization_code', current: false });
    await request(t.http).delete(`/api/v1/auth/sessions/${granted.id}`).set(bearer(user)).expect(200);
    await request(t.http).get('/userinfo').set('Authorization', `Bearer ${tokens.access_token}`).expect(401);
    await tokenRequest(
      t.http,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      client,
    ).expect(401);
  });

  it('redirects request errors and denials back to the client per RFC 6749, and never to an unregistered URI', async () => {
    const user = await registerUser(t.http);
    const client = await createClient(t.http, admin, { allowedScopes: ['doc:read', 'openid'] });
    const base = { client_id: client.clientId, redirect_uri: REDIRECT, state: 'xyz' };
    const cases: Array<[Record<string, string>, string]> = [
      [{ response_type: 'code', scope: 'doc:write' }, 'invalid_scope'],
      [{ response_type: 'id_token' }, 'unsupported_response_type'],
      [
        { response_type: 'code', code_challenge: pkcePair().challenge, code_challenge_method: 'plain' },
        'invalid_request',
      ],
      [{ response_type: 'code', prompt: 'none' }, 'login_required'],
    ];
    for (const [query, error] of cases) {
      const res = await request(t.http)
        .get('/authorize')
        .query({ ...base, ...query })
        .expect(303);
      const location = new URL(res.headers.location);
      expect({
        error: location.searchParams.get('error'),
        state: location.searchParams.get('state'),
      }).toEqual({ error, state: 'xyz' });
    }
    const unknownRedirect = await request(t.http)
      .get('/authorize')
      .query({ ...base, response_type: 'code', redirect_uri: 'https://evil.example/cb' })
      .expect(400);
    expect(unknownRedirect.headers['content-type']).toMatch(/text\/html/);
    expect(unknownRedirect.headers.location).toBeUndefined();
    await request(t.http)
      .get('/authorize')
      .query({ ...base, client_id: 'qc_unknown', response_type: 'code' })
      .expect(400);

    const denied = await authorizeWithForms(
      t.http,
      { ...base, response_type: 'code', scope: 'doc:read' },
      user,
      'deny',
    );
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('xyz');
    expect(denied.searchParams.get('code')).toBeNull();
  });

  it('honours response_mode as discovery lists it (query, fragment) and refuses the modes it does not support', async () => {
    const user = await registerUser(t.http);
    const client = await createClient(t.http, admin, { allowedScopes: ['doc:read', 'openid'] });
    const base = { client_id: client.clientId, redirect_uri: REDIRECT, scope: 'openid', state: 'rm' };
    // A code asked for in the fragment comes back in the fragment, and exchanges as usual.
    const inFragment = await authorizeWithForms(
      t.http,
      { ...base, response_type: 'code', response_mode: 'fragment' },
      user,
    );
    const fragment = new URLSearchParams(inFragment.hash.slice(1));
    expect({
      query: inFragment.searchParams.get('code'),
      fragment: fragment.get('code'),
      state: fragment.get('state'),
    }).toEqual({
      query: null,
      fragment: expect.stringMatching(/^qac_/),
      state: 'rm',
    });
    await tokenRequest(
      t.http,
      { grant_type: 'authorization_code', code: fragment.get('code') as string, redirect_uri: REDIRECT },
      client,
    ).expect(200);
    const inQuery = await authorizeWithForms(
      t.http,
      { ...base, response_type: 'code', response_mode: 'query' },
      user,
    );
    expect(inQuery.searchParams.get('code')).toMatch(/^qac_/);
    // Modes discovery does not list are refused, never answered silently in another mode; a token is never put in a query.
    for (const [query, where] of [
      [{ response_type: 'code', response_mode: 'form_post' }, 'query'],
      [{ response_type: 'code', response_mode: 'bogus' }, 'query'],
      [{ response_type: 'token', response_mode: 'query' }, 'fragment'],
    ] as const) {
      const res = await request(t.http)
        .get('/authorize')
        .query({ ...base, ...query })
        .expect(303);
      const location = new URL(res.headers.location);
      const params = where === 'query' ? location.searchParams : new URLSearchParams(location.hash.slice(1));
      expect({ query, error: params.get('error'), state: params.get('state') }).toEqual({
        query,
        error: 'invalid_request',
        state: 'rm',
      });
    }
  });

  it('shows the sign-in page again on a wrong password, and supports the implicit token response', async () => {
    const user = await registerUser(t.http);
    const client = await createClient(t.http, admin, { allowedScopes: ['doc:read', 'openid'] });
    const page = await request(t.http)
      .get('/api/v1/auth/authorize')
      .query({
        response_type: 'token',
        client_id: client.clientId,
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 's',
      })
      .expect(200);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const wrong = await request(t.http)
      .post('/authorize')
      .type('form')
      .send({ step: 'login', request: formFields(page.text).request, email: user.email, password: 'nope' })
      .expect(401);
    expect(wrong.text).toContain('not correct');
    const forged = await request(t.http)
      .post('/authorize')
      .type('form')
      .send({ step: 'login', request: 'forged', email: user.email, password: user.password })
      .expect(400);
    expect(forged.text).toContain('expired');
    // A post without a form (another content type, or none) is an incomplete form, not a 500.
    for (const type of ['text/plain', undefined]) {
      const call = request(t.http).post('/authorize');
      const bare = await (type ? call.set('Content-Type', type).send('step=login') : call);
      expect({ type, status: bare.status }).toEqual({ type, status: 400 });
    }

    const location = await authorizeWithForms(
      t.http,
      {
        response_type: 'token',
        client_id: client.clientId,
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 's',
      },
      user,
    );
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get('token_type')).toBe('Bearer');
    expect(fragment.get('state')).toBe('s');
    expect(location.searchParams.get('access_token')).toBeNull();
    await request(t.http)
      .get('/userinfo')
      .set('Authorization', `Bearer ${fragment.get('access_token')}`)
      .expect(200);
    // The implicit grant is one of the user's sessions (no refresh token), which the user can end.
    const sessions = await request(t.http)
      .get('/api/v1/auth/sessions')
      .set('Authorization', `Bearer ${user.token}`)
      .expect(200);
    expect(sessions.body.payload.items.map((item: { clientId: string }) => item.clientId)).toContain(
      client.clientId,
    );
    await request(t.http)
      .post('/api/v1/auth/sessions/logout-all')
      .set('Authorization', `Bearer ${user.token}`)
      .expect(200);
    await request(t.http)
      .get('/userinfo')
      .set('Authorization', `Bearer ${fragment.get('access_token')}`)
      .expect(401);
  });

  describe('access-token verification', () => {
    async function signingKey(): Promise<{ kid: string; key: CryptoKey }> {
      const [row] = await t.dataSource.query<Array<{ kid: string; private_jwk: JWK }>>(
        'SELECT kid, private_jwk FROM signing_keys WHERE retired_at IS NULL',
      );
      return { kid: row.kid, key: (await importJWK(row.private_jwk, 'RS256')) as CryptoKey };
    }

    async function forge(
      claims: Record<string, unknown>,
      options: { kid?: string; key?: CryptoKey; issuer?: string; exp?: number } = {},
    ): Promise<string> {
      const real = await signingKey();
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ client_id: 'quire', scope: 'openid', jti: 'x', ...claims })
        .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: options.kid ?? real.kid })
        .setIssuer(options.issuer ?? t.config.authIssuerUrl)
        .setSubject(String(claims.sub))
        .setAudience(String(claims.aud ?? 'quire'))
        .setIssuedAt(now - 7200)
        .setExpirationTime(options.exp ?? now + 600)
        .sign(options.key ?? real.key);
    }

    it('accepts a well-formed token signed with the served key (control)', async () => {
      const user = await registerUser(t.http);
      await request(t.http)
        .get('/userinfo')
        .set('Authorization', `Bearer ${await forge({ sub: user.id })}`)
        .expect(200);
    });

    it.each([
      ['bad signature', async (sub: string) => `${(await forge({ sub })).slice(0, -6)}AAAAAA`],
      [
        'alg none',
        async (sub: string) =>
          new UnsecuredJWT({ sub, client_id: 'quire', scope: 'openid', jti: 'x', aud: 'quire' })
            .setIssuer(t.config.authIssuerUrl)
            .setExpirationTime('10m')
            .encode(),
      ],
      ['wrong issuer', async (sub: string) => forge({ sub }, { issuer: 'https://evil.example' })],
      ['wrong audience', async (sub: string) => forge({ sub, aud: 'someone-else' })],
      ['expired', async (sub: string) => forge({ sub }, { exp: Math.floor(Date.now() / 1000) - 60 })],
      ['unknown kid', async (sub: string) => forge({ sub }, { kid: 'no-such-key' })],
      [
        'foreign key',
        async (sub: string) => {
          const pair = await generateKeyPair('RS256');
          return forge({ sub }, { key: pair.privateKey as CryptoKey });
        },
      ],
    ])('refuses a token with %s (401)', async (_name, make) => {
      const user = await registerUser(t.http);
      const token = await make(user.id);
      const res = await request(t.http).get('/userinfo').set('Authorization', `Bearer ${token}`).expect(401);
      expect(['UNAUTHORIZED', 'INVALID_TOKEN']).toContain(res.body.code);
    });

    it('rotates the signing key: old tokens keep verifying until they expire, new ones use the new kid', async () => {
      const user = await registerUser(t.http);
      const before = (await request(t.http).get('/jwks.json')).body.keys.map((k: JWK) => k.kid);
      const oldKid = decodeProtectedHeader(user.token).kid;

      const outsider = await registerUser(t.http);
      expect(
        (await request(t.http).post('/api/v1/admin/signing-keys/rotate').set(bearer(outsider)).expect(403))
          .body.code,
      ).toBe('FORBIDDEN');

      const rotated = await request(t.http)
        .post('/api/v1/admin/signing-keys/rotate')
        .set(bearer(admin))
        .expect(200);
      const newKid = rotated.body.payload.kid;
      expect(newKid).not.toBe(oldKid);
      const after = (await request(t.http).get('/jwks.json')).body.keys.map((k: JWK) => k.kid);
      expect(after).toEqual(expect.arrayContaining([...before, newKid]));

      await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(200);
      const fresh = await request(t.http)
        .post('/api/v1/auth/refresh')
        .send({ refreshToken: user.refreshToken })
        .expect(200);
      expect(decodeProtectedHeader(fresh.body.payload.accessToken).kid).toBe(newKid);

      // Once the old key is retired longer than a token lifetime, it leaves the set and its tokens fail.
      await t.dataSource.query(
        `UPDATE signing_keys SET retired_at = now() - interval '1 day' WHERE kid = $1`,
        [oldKid],
      );
      expect((await request(t.http).get('/jwks.json')).body.keys.map((k: JWK) => k.kid)).not.toContain(
        oldKid,
      );
      expect((await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(401)).body.code).toBe(
        'INVALID_TOKEN',
      );
    });
  });
});
