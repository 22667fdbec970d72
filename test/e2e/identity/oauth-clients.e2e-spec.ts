import { createHash } from 'node:crypto';
import request from 'supertest';
import { bearer, registerUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createClient, tokenRequest } from './identity-helpers.js';

describe('OAuth clients and the client-credentials grant', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('registers a client, showing the secret once and storing it hashed', async () => {
    const owner = await registerUser(t.http);
    const res = await request(t.http)
      .post('/api/v1/oauth/clients')
      .set(bearer(owner))
      .send({
        name: 'Dashboard',
        redirectUris: ['https://dash.example.com/cb'],
        allowedScopes: ['doc:read', 'openid'],
      })
      .expect(201);
    const created = res.body.payload;
    expect(created).toMatchObject({
      clientId: expect.stringMatching(/^qc_/),
      clientSecret: expect.stringMatching(/^qcs_/),
      name: 'Dashboard',
      redirectUris: ['https://dash.example.com/cb'],
      allowedScopes: ['doc:read', 'openid'],
      grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
    });
    const [row] = await t.dataSource.query<Array<{ secret_hash: string }>>(
      'SELECT secret_hash FROM oauth_clients WHERE client_id = $1',
      [created.clientId],
    );
    expect(row.secret_hash).toBe(createHash('sha256').update(created.clientSecret).digest('hex'));

    const got = await request(t.http)
      .get(`/api/v1/oauth/clients/${created.clientId}`)
      .set(bearer(owner))
      .expect(200);
    expect(got.body.payload.clientSecret).toBeUndefined();
    const list = await request(t.http).get('/api/v1/oauth/clients').set(bearer(owner)).expect(200);
    expect(list.body.payload).toMatchObject({
      total: 1,
      items: [expect.objectContaining({ clientId: created.clientId })],
    });
    expect(JSON.stringify(list.body)).not.toContain(created.clientSecret);
  });

  it('validates the registration and creates nothing on failure', async () => {
    const owner = await registerUser(t.http);
    const scope = await request(t.http)
      .post('/api/v1/oauth/clients')
      .set(bearer(owner))
      .send({
        name: 'x',
        redirectUris: ['https://a.example/cb'],
        allowedScopes: ['doc:read', 'admin:everything'],
      })
      .expect(400);
    expect(scope.body.code).toBe('INVALID_SCOPE');
    const plainHttp = await request(t.http)
      .post('/api/v1/oauth/clients')
      .set(bearer(owner))
      .send({ name: 'x', redirectUris: ['http://evil.example/cb'], allowedScopes: ['doc:read'] })
      .expect(400);
    expect(plainHttp.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: expect.objectContaining({ field: 'redirectUris[0]' }),
    });
    const noRedirect = await request(t.http)
      .post('/api/v1/oauth/clients')
      .set(bearer(owner))
      .send({ name: 'x', allowedScopes: ['doc:read'], grantTypes: ['authorization_code'] })
      .expect(400);
    expect(noRedirect.body.details.field).toBe('redirectUris');
    const badGrant = await request(t.http)
      .post('/api/v1/oauth/clients')
      .set(bearer(owner))
      .send({ name: 'x', allowedScopes: ['doc:read'], grantTypes: ['password'] })
      .expect(400);
    expect(badGrant.body.code).toBe('VALIDATION_ERROR');
    // Refresh tokens come only from the code flow: refresh_token without authorization_code could never be used.
    for (const body of [
      { scopes: ['doc:read'], grantTypes: ['refresh_token'] },
      { scopes: ['doc:read'], grantTypes: ['client_credentials', 'refresh_token'] },
      { scopes: ['doc:read'], grantTypes: ['refresh_token'], redirectUris: ['https://app.example/cb'] },
    ]) {
      const lonely = await request(t.http)
        .post('/api/v1/oauth/clients')
        .set(bearer(owner))
        .send({ name: 'x', ...body })
        .expect(400);
      expect(lonely.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'grantTypes' } });
    }
    expect((await request(t.http).get('/api/v1/oauth/clients').set(bearer(owner))).body.payload.total).toBe(
      0,
    );
    // The body is not shown in the spec: `scopes` names the scopes too, and a client without redirect URIs gets
    // the one grant it can use.
    const machine = await request(t.http).post('/api/v1/oauth/clients').set(bearer(owner)).send({ name: 'Machine', scopes: ['data:read'] }).expect(201);
    expect(machine.body.payload).toMatchObject({ allowedScopes: ['data:read'], grantTypes: ['client_credentials'], redirectUris: [] });
    await request(t.http).post('/api/v1/oauth/clients').set(bearer(owner)).send({ name: 'None' }).expect(400);
  });

  it('refuses a client name made only of whitespace exactly like the empty name', async () => {
    const owner = await registerUser(t.http);
    const post = (name: string) => request(t.http).post('/api/v1/oauth/clients').set(bearer(owner)).send({ name, scopes: ['data:read'] });
    const empty = await post('').expect(400);
    const blank = await post(' \t ').expect(400);
    expect(blank.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'name' } });
    expect(blank.body.details).toEqual(empty.body.details);
    expect((await request(t.http).get('/api/v1/oauth/clients').set(bearer(owner))).body.payload.total).toBe(0);
  });

  it("hides other users' clients (404) and leaves them untouched", async () => {
    const alice = await registerUser(t.http);
    const bob = await registerUser(t.http);
    const client = await createClient(t.http, bob);
    for (const [method, path] of [
      ['get', `/api/v1/oauth/clients/${client.clientId}`],
      ['delete', `/api/v1/oauth/clients/${client.clientId}`],
      ['post', `/api/v1/oauth/clients/${client.clientId}/regenerate-secret`],
    ] as const) {
      const res = await request(t.http)[method](path).set(bearer(alice));
      expect({ path, status: res.status, code: res.body.code }).toEqual({
        path,
        status: 404,
        code: 'NOT_FOUND',
      });
    }
    await tokenRequest(t.http, {
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    }).expect(200);
  });

  it('issues client-credentials tokens that act for the owner with only the granted scopes (form and Basic auth)', async () => {
    const owner = await registerUser(t.http);
    const client = await createClient(t.http, owner, { allowedScopes: ['openid', 'email', 'doc:read'] });

    const res = await tokenRequest(t.http, {
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      scope: 'openid email',
    }).expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    // RFC 6749 at the top level and the envelope, with the same fields in payload.
    expect(res.body).toMatchObject({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid email',
      success: true,
    });
    expect(res.body.payload).toEqual({
      access_token: res.body.access_token,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid email',
    });
    expect(res.body.refresh_token).toBeUndefined();
    const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({
      sub: owner.id,
      aud: client.clientId,
      client_id: client.clientId,
      scope: 'openid email',
      iss: t.config.authIssuerUrl,
    });

    const info = await request(t.http)
      .get('/userinfo')
      .set('Authorization', `Bearer ${res.body.access_token}`)
      .expect(200);
    expect(info.body).toMatchObject({ sub: owner.id, email: owner.email });
    // Not granted → 403 at a route that needs it (userinfo needs openid).
    const narrow = await tokenRequest(
      t.http,
      { grant_type: 'client_credentials', scope: 'doc:read' },
      client,
    ).expect(200);
    expect(narrow.body.scope).toBe('doc:read');
    expect(
      (
        await request(t.http)
          .get('/userinfo')
          .set('Authorization', `Bearer ${narrow.body.access_token}`)
          .expect(403)
      ).body.code,
    ).toBe('FORBIDDEN');
    // A client token cannot manage credentials either.
    await request(t.http)
      .get('/api/v1/api-keys')
      .set('Authorization', `Bearer ${res.body.access_token}`)
      .expect(403);
    // The same endpoint under /api/v1/auth/.
    await request(t.http)
      .post('/api/v1/auth/token')
      .type('form')
      .send({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
      })
      .expect(200);
    // Default scope: everything the client is allowed.
    const all = await tokenRequest(t.http, { grant_type: 'client_credentials' }, client).expect(200);
    expect(all.body.scope.split(' ').sort()).toEqual(['doc:read', 'email', 'openid']);
  });

  it('answers token-endpoint failures in both formats', async () => {
    const owner = await registerUser(t.http);
    const client = await createClient(t.http, owner, {
      allowedScopes: ['doc:read'],
      grantTypes: ['client_credentials'],
    });

    const wrongSecret = await tokenRequest(t.http, {
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: 'qcs_wrong',
    }).expect(401);
    expect(wrongSecret.body).toMatchObject({
      error: 'invalid_client',
      success: false,
      code: 'INVALID_CLIENT',
      payload: null,
    });
    expect(wrongSecret.headers['www-authenticate']).toBeUndefined();
    const basicWrong = await tokenRequest(
      t.http,
      { grant_type: 'client_credentials' },
      { clientId: client.clientId, clientSecret: 'nope' },
    ).expect(401);
    expect(basicWrong.body).toMatchObject({ error: 'invalid_client', code: 'INVALID_CLIENT' });
    expect(basicWrong.headers['www-authenticate']).toMatch(/^Basic realm="quire"/);
    const noClient = await tokenRequest(t.http, { grant_type: 'client_credentials' }).expect(401);
    expect(noClient.body.error).toBe('invalid_client');

    const scope = await tokenRequest(
      t.http,
      { grant_type: 'client_credentials', scope: 'doc:write' },
      client,
    ).expect(400);
    expect(scope.body).toMatchObject({ error: 'invalid_scope', code: 'INVALID_SCOPE' });
    const unsupported = await tokenRequest(
      t.http,
      { grant_type: 'password', username: 'a', password: 'b' },
      client,
    ).expect(400);
    expect(unsupported.body).toMatchObject({ error: 'unsupported_grant_type', code: 'VALIDATION_ERROR' });
    const missing = await tokenRequest(t.http, {}, client).expect(400);
    expect(missing.body).toMatchObject({
      error: 'invalid_request',
      code: 'VALIDATION_ERROR',
      details: expect.objectContaining({ field: 'grant_type' }),
    });
    const notAllowed = await tokenRequest(
      t.http,
      { grant_type: 'refresh_token', refresh_token: 'x' },
      client,
    ).expect(401);
    expect(notAllowed.body).toMatchObject({ error: 'unauthorized_client', code: 'INVALID_CLIENT' });
    const both = await tokenRequest(
      t.http,
      { grant_type: 'client_credentials', client_secret: client.clientSecret },
      client,
    ).expect(400);
    expect(both.body.error).toBe('invalid_request');
  });

  it('answers a token request whose body cannot be read in both formats too (malformed, too large, another type)', async () => {
    for (const path of ['/token', '/api/v1/auth/token', '/API/V1/AUTH/TOKEN']) {
      const cases = [
        { send: '{', type: 'application/json', status: 400 },
        // Left unread, as the route's own check then says: grant_type is missing.
        { send: '<x/>', type: 'application/xml', status: 400 },
        { send: 'grant_type=client_credentials', type: 'application/x-www-form-urlencoded; charset=latin1', status: 415 },
        { send: `grant_type=client_credentials&pad=${'x'.repeat(6 * 1024 * 1024)}`, type: 'application/x-www-form-urlencoded', status: 413 },
      ];
      for (const { send, type, status } of cases) {
        const res = await request(t.http).post(path).set('Content-Type', type).send(send);
        expect([path, type, res.status]).toEqual([path, type, status]);
        expect(res.body).toMatchObject({ success: false, error: 'invalid_request', error_description: expect.any(String) });
        expect(res.headers['cache-control']).toBe('no-store');
      }
    }
  });

  it('regenerates the secret: the old one stops working at once', async () => {
    const owner = await registerUser(t.http);
    const client = await createClient(t.http, owner);
    const res = await request(t.http)
      .post(`/api/v1/oauth/clients/${client.clientId}/regenerate-secret`)
      .set(bearer(owner))
      .expect(200);
    const secret = res.body.payload.clientSecret;
    expect(secret).not.toBe(client.clientSecret);
    expect(res.body.payload.secretRotatedAt).toEqual(expect.any(String));
    await tokenRequest(t.http, { grant_type: 'client_credentials' }, client).expect(401);
    await tokenRequest(
      t.http,
      { grant_type: 'client_credentials' },
      { clientId: client.clientId, clientSecret: secret },
    ).expect(200);
  });

  it('deletes a client: its tokens stop working', async () => {
    const owner = await registerUser(t.http);
    const client = await createClient(t.http, owner);
    const token = (
      await tokenRequest(t.http, { grant_type: 'client_credentials', scope: 'openid' }, client).expect(200)
    ).body.access_token;
    await request(t.http).get('/userinfo').set('Authorization', `Bearer ${token}`).expect(200);
    await request(t.http).delete(`/api/v1/oauth/clients/${client.clientId}`).set(bearer(owner)).expect(200);
    expect(
      (await request(t.http).get('/userinfo').set('Authorization', `Bearer ${token}`).expect(401)).body.code,
    ).toBe('INVALID_TOKEN');
    await tokenRequest(t.http, { grant_type: 'client_credentials' }, client).expect(401);
    await request(t.http).get(`/api/v1/oauth/clients/${client.clientId}`).set(bearer(owner)).expect(404);
  });
});
