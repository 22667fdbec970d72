import { generate } from 'otplib';
import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createClient, formFields, pkcePair, type TestClient, tokenRequest } from './identity-helpers.js';
import { startTestIdp, type TestIdp } from './test-idp.js';

const ISSUER = 'http://issuer.quire.test';
const PAGE_CALLBACK = `${ISSUER}/api/v1/auth/authorize/oauth/google/callback`;
const CLIENT_REDIRECT = 'http://127.0.0.1/callback';

/** The `action` of every form on a page (the attribute is left out when a form posts to the page's own URL). */
function formActions(html: string): Array<string | undefined> {
  return [...html.matchAll(/<form method="post"(?: action="([^"]*)")?/g)].map((match) => match[1]);
}

/** A path with query for supertest, from an absolute URL the provider sent the browser to. */
function pathOf(url: URL): string {
  return `${url.pathname}${url.search}`;
}

describe('third-party sign-in on the /authorize page', () => {
  let t: TestApp;
  let idp: TestIdp;
  let owner: TestUser;
  let client: TestClient;

  beforeAll(async () => {
    idp = await startTestIdp([PAGE_CALLBACK]);
    t = await createTestApp({
      AUTH_ISSUER_URL: ISSUER,
      ADMIN_EMAILS: 'platform-admin@example.test',
      ENCRYPTION_KEY: 'test-encryption-key',
    });
    const admin = await registerUser(t.http, { email: 'platform-admin@example.test' });
    for (const [account, name] of [
      ['alice', 'Alice'],
      ['dave', 'Dave'],
      ['erin', 'Erin'],
      ['frank', 'Frank'],
      ['gina', 'Gina'],
    ]) {
      idp.accounts.set(account, { email: `${account}@idp.test`, email_verified: true, name: `${name} Idp` });
    }
    // A provider account that shares no e-mail: its Quire account gets a placeholder address.
    idp.accounts.set('hank', { name: 'Hank Idp' });
    await request(t.http)
      .post('/api/v1/admin/oidc/providers')
      .set(bearer(admin))
      .send({
        provider: 'google',
        displayName: 'Google Test',
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
      })
      .expect(201);
    owner = await registerUser(t.http);
    client = await createClient(t.http, owner, { allowedScopes: ['openid', 'email', 'doc:read'] });
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  function authorizeQuery(state: string, challenge: string): Record<string, string> {
    return {
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: CLIENT_REDIRECT,
      scope: 'openid email doc:read',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
  }

  /** GET /authorize, then "Sign in with Google Test": the provider authorization URL the page redirects to. */
  async function chooseProvider(state: string, challenge: string): Promise<URL> {
    const page = await request(t.http).get('/authorize').query(authorizeQuery(state, challenge)).expect(200);
    expect(page.text).toContain('Sign in with Google Test');
    expect(page.text).not.toMatch(/<script/i);
    const chosen = await request(t.http)
      .post('/authorize')
      .type('form')
      .send({ step: 'third_party', request: formFields(page.text).request, provider: 'google' })
      .expect(303);
    const location = new URL(chosen.headers.location);
    expect(location.origin).toBe(idp.issuer);
    expect(location.searchParams.get('redirect_uri')).toBe(PAGE_CALLBACK);
    return location;
  }

  /** The page flow up to the provider's return: the callback URL with code, state and iss. */
  async function returnFromProvider(account: string, state: string, challenge: string): Promise<URL> {
    const back = await idp.signIn((await chooseProvider(state, challenge)).href, account);
    expect(back.href.startsWith(PAGE_CALLBACK)).toBe(true);
    return back;
  }

  /** Approves the consent page and answers the client redirect. */
  async function approve(consentHtml: string): Promise<URL> {
    const fields = formFields(consentHtml);
    const done = await request(t.http)
      .post('/authorize')
      .type('form')
      .send({ step: 'consent', request: fields.request, consent: fields.consent, decision: 'approve' })
      .expect(303);
    return new URL(done.headers.location);
  }

  async function exchange(location: URL, verifier: string): Promise<{ sub: string; email: string }> {
    const tokens = await tokenRequest(
      t.http,
      {
        grant_type: 'authorization_code',
        code: location.searchParams.get('code') ?? '',
        redirect_uri: CLIENT_REDIRECT,
        code_verifier: verifier,
      },
      client,
    ).expect(200);
    const info = await request(t.http)
      .get('/userinfo')
      .set('Authorization', `Bearer ${tokens.body.access_token}`)
      .expect(200);
    return info.body;
  }

  /** An account made by the API flow's third-party login (no password); its first-party tokens. */
  async function apiLogin(account: string): Promise<request.Response> {
    const start = await request(t.http)
      .get('/api/v1/auth/oauth/google/authorize')
      .query({ redirectUri: idp.redirectUri })
      .expect(200);
    const { authorizationUrl, state } = start.body.payload;
    const back = await idp.signIn(authorizationUrl, account);
    return request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({ code: back.searchParams.get('code'), state, iss: back.searchParams.get('iss') ?? undefined });
  }

  it('lets an account without a password authorize a client through the provider; the code buys tokens', async () => {
    const created = await apiLogin('alice');
    expect(created.status).toBe(200);
    const aliceId: string = created.body.payload.user.id;
    const [row] = await t.dataSource.query<Array<{ password_hash: string | null }>>(
      'SELECT password_hash FROM users WHERE id = $1',
      [aliceId],
    );
    expect(row.password_hash).toBeNull();

    const { verifier, challenge } = pkcePair();
    const back = await returnFromProvider('alice', 'client-state-1', challenge);
    const consent = await request(t.http).get(pathOf(back)).expect(200);
    expect(consent.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    );
    expect(consent.headers['cache-control']).toBe('no-store');
    expect(consent.text).toContain('Signed in as alice@idp.test');
    expect(consent.text).toContain('id="approve"');
    // The page is the callback's URL: its form posts to the authorization endpoint.
    expect(formActions(consent.text)).toEqual([`${ISSUER}/authorize`]);

    const location = await approve(consent.text);
    expect(location.href.startsWith(CLIENT_REDIRECT)).toBe(true);
    expect(location.searchParams.get('state')).toBe('client-state-1');
    expect(location.searchParams.get('code')).toMatch(/^qac_/);
    expect(await exchange(location, verifier)).toMatchObject({ sub: aliceId, email: 'alice@idp.test' });
  });

  it('creates the account on a first sign-in through the page, as the API callback does', async () => {
    const { verifier, challenge } = pkcePair();
    const back = await returnFromProvider('dave', 'dave-state', challenge);
    const consent = await request(t.http).get(pathOf(back)).expect(200);
    const info = await exchange(await approve(consent.text), verifier);
    const [row] = await t.dataSource.query<
      Array<{ id: string; password_hash: string | null; subject: string }>
    >(
      `SELECT u.id, u.password_hash, c.subject FROM users u JOIN oauth_connections c ON c.user_id = u.id
        WHERE c.provider = 'google' AND c.subject = 'dave'`,
    );
    expect(row).toMatchObject({ id: info.sub, password_hash: null, subject: 'dave' });
    // The same identity through the API finds that account.
    const again = await apiLogin('dave');
    expect(again.body.payload).toMatchObject({ isNewUser: false, user: { id: info.sub } });
  });

  it('asks an account with two-step verification for its second step before the consent', async () => {
    const created = await apiLogin('erin');
    const erin = { token: created.body.payload.accessToken as string };
    const enrol = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(erin))
      .send({ method: 'totp' })
      .expect(200);
    const secret: string = enrol.body.payload.secret;
    await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(erin))
      .send({ method: 'totp', code: await generate({ secret }) })
      .expect(200);

    const { verifier, challenge } = pkcePair();
    const back = await returnFromProvider('erin', 'erin-state', challenge);
    const second = await request(t.http).get(pathOf(back)).expect(200);
    expect(second.text).toContain('Two-step verification');
    expect(second.text).not.toContain('id="approve"');
    expect(formActions(second.text)).toEqual([`${ISSUER}/authorize`]);
    const fields = formFields(second.text);
    expect(fields.challenge).toEqual(expect.any(String));

    const wrong = await request(t.http)
      .post('/authorize')
      .type('form')
      .send({ step: 'two_factor', request: fields.request, challenge: fields.challenge, code: '00000000' })
      .expect(401);
    expect(wrong.text).toContain('not correct');
    // One step ahead: the enrolment used the current step, and a TOTP step is not accepted twice.
    const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    const consent = await request(t.http)
      .post('/authorize')
      .type('form')
      .send({ step: 'two_factor', request: fields.request, challenge: fields.challenge, code })
      .expect(200);
    expect(consent.text).toContain('id="approve"');
    const location = await approve(consent.text);
    expect(location.searchParams.get('state')).toBe('erin-state');
    expect((await exchange(location, verifier)).sub).toBe(created.body.payload.user.id);
  });

  it('does not let the API callback redeem a state made for the page (nor spend it)', async () => {
    const { verifier, challenge } = pkcePair();
    const back = await returnFromProvider('frank', 'frank-state', challenge);
    const refused = await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({
        code: back.searchParams.get('code'),
        state: back.searchParams.get('state'),
        iss: back.searchParams.get('iss') ?? undefined,
      })
      .expect(401);
    expect(refused.body).toMatchObject({
      code: 'INVALID_TOKEN',
      details: expect.objectContaining({ field: 'state' }),
    });
    expect(refused.body.payload?.accessToken).toBeUndefined();
    const bind = await request(t.http)
      .post('/api/v1/users/me/oauth/google')
      .set(bearer(owner))
      .send({ authorizationCode: back.searchParams.get('code'), state: back.searchParams.get('state') })
      .expect(401);
    expect(bind.body.code).toBe('INVALID_TOKEN');

    // The page itself still takes its state.
    const consent = await request(t.http).get(pathOf(back)).expect(200);
    expect((await exchange(await approve(consent.text), verifier)).email).toBe('frank@idp.test');
  });

  it('does not let the page callback resume an interaction with a state of the API flow (nor spend it)', async () => {
    const start = await request(t.http)
      .get('/api/v1/auth/oauth/google/authorize')
      .query({ redirectUri: idp.redirectUri })
      .expect(200);
    const { authorizationUrl, state } = start.body.payload;
    const back = await idp.signIn(authorizationUrl, 'gina');
    const code = back.searchParams.get('code') ?? '';
    const iss = back.searchParams.get('iss') ?? '';
    const refused = await request(t.http)
      .get('/api/v1/auth/authorize/oauth/google/callback')
      .query({ code, state, iss })
      .expect(400);
    expect(refused.headers['content-type']).toMatch(/text\/html/);
    expect(refused.headers.location).toBeUndefined();
    expect(refused.text).toContain('expired or was already used');
    expect(refused.text).not.toContain('id="approve"');

    const signedIn = await request(t.http)
      .post('/api/v1/auth/oauth/google/callback')
      .send({ code, state, iss: iss || undefined })
      .expect(200);
    expect(signedIn.body.payload.user.email).toBe('gina@idp.test');
  });

  it('refuses an unknown or already used state with the error page', async () => {
    const unknown = await request(t.http)
      .get('/api/v1/auth/authorize/oauth/google/callback')
      .query({ code: 'whatever', state: 'not-a-state' })
      .expect(400);
    expect(unknown.text).toContain('expired or was already used');
    const noState = await request(t.http)
      .get('/api/v1/auth/authorize/oauth/google/callback')
      .query({ code: 'whatever' })
      .expect(400);
    expect(noState.text).toContain('expired or was already used');

    const { challenge } = pkcePair();
    const back = await returnFromProvider('alice', 'reuse-state', challenge);
    await request(t.http).get(pathOf(back)).expect(200);
    const reused = await request(t.http).get(pathOf(back)).expect(400);
    expect(reused.headers.location).toBeUndefined();
    expect(reused.text).toContain('expired or was already used');
    expect(reused.text).not.toContain('id="approve"');
  });

  it('names an account without an e-mail by its display name on the consent page, not by its placeholder address', async () => {
    const { challenge } = pkcePair();
    const back = await returnFromProvider('hank', 'client-state-hank', challenge);
    const consent = await request(t.http).get(pathOf(back)).expect(200);
    expect(consent.text).toContain('Signed in as Hank Idp');
    expect(consent.text).not.toContain('oauth.quire.invalid');
  });

  it('shows the sign-in page again when the provider answers with an error, and spends the state', async () => {
    const toProvider = await chooseProvider('cancel-state', pkcePair().challenge);
    const state = toProvider.searchParams.get('state') ?? '';
    const cancelled = await request(t.http)
      .get('/api/v1/auth/authorize/oauth/google/callback')
      .query({ error: 'access_denied', state })
      .expect(401);
    expect(cancelled.text).toContain('cancelled or refused');
    expect(cancelled.text).toContain('Sign in with Google Test');
    expect(formActions(cancelled.text)).toEqual([`${ISSUER}/authorize`, `${ISSUER}/authorize`]);
    // The interaction goes on: the user may sign in another way, and the same state is spent.
    expect(formFields(cancelled.text).request).toEqual(expect.any(String));
    await request(t.http)
      .get('/api/v1/auth/authorize/oauth/google/callback')
      .query({ code: 'x', state })
      .expect(400);
  });

  it('refuses a provider that is not enabled with the sign-in page', async () => {
    const page = await request(t.http)
      .get('/authorize')
      .query(authorizeQuery('gh', pkcePair().challenge))
      .expect(200);
    expect(page.text).not.toContain('provider-github');
    const refused = await request(t.http)
      .post('/authorize')
      .type('form')
      .send({ step: 'third_party', request: formFields(page.text).request, provider: 'github' })
      .expect(400);
    expect(refused.text).toContain('not available');
    expect(refused.headers.location).toBeUndefined();
  });
});
