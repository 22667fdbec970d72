import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { freePort } from '../../../src/database/embedded-postgres.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { authorizeWithForms, createClient, type TestClient } from './identity-helpers.js';

/**
 * The issuer seen by a standard relying party: openid-client against the app listening on a loopback port,
 * every access token checked with jose against the served JWKS.
 */
describe('a real relying party (openid-client) against the issuer', () => {
  let t: TestApp;
  let issuer: string;
  let user: TestUser;
  let client: TestClient;
  let redirectUri: string;
  let jwks: ReturnType<typeof createRemoteJWKSet>;

  beforeAll(async () => {
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    t = await createTestApp({ PUBLIC_BASE_URL: issuer, AUTH_ISSUER_URL: issuer });
    await t.app.listen(port, '127.0.0.1');
    user = await registerUser(t.http);
    redirectUri = `${issuer}/health`;
    client = await createClient(t.http, user, {
      redirectUris: [redirectUri],
      allowedScopes: ['openid', 'profile', 'email', 'doc:read', 'data:read'],
      grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
    });
    jwks = createRemoteJWKSet(new URL(`${issuer}/jwks.json`));
  });
  afterAll(async () => {
    await t.close();
  });

  function discover(auth?: oidc.ClientAuth): Promise<oidc.Configuration> {
    return oidc.discovery(new URL(issuer), client.clientId, client.clientSecret, auth, {
      execute: [oidc.allowInsecureRequests],
    });
  }

  async function verifyAccessToken(token: string, scope: string): Promise<void> {
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer,
      audience: client.clientId,
      algorithms: ['RS256'],
    });
    expect(protectedHeader.kid).toEqual(expect.any(String));
    expect(payload).toMatchObject({
      client_id: client.clientId,
      scope,
      jti: expect.any(String),
      iat: expect.any(Number),
    });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);
  }

  it('discovers the issuer', async () => {
    const config = await discover();
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(issuer);
    expect(metadata.token_endpoint).toBe(`${issuer}/token`);
    expect(metadata.supportsPKCE()).toBe(true);
  });

  it('gets client-credentials tokens with HTTP Basic and with form authentication', async () => {
    for (const auth of [
      oidc.ClientSecretBasic(client.clientSecret),
      oidc.ClientSecretPost(client.clientSecret),
    ]) {
      const config = await discover(auth);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'doc:read data:read' });
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBe(3600);
      await verifyAccessToken(tokens.access_token, 'doc:read data:read');
      const claims = (await jwtVerify(tokens.access_token, jwks)).payload;
      expect(claims.sub).toBe(user.id);
    }
  });

  it('runs the authorization-code flow with PKCE, then refresh and userinfo', async () => {
    const config = await discover();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile email doc:read',
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    expect(url.origin + url.pathname).toBe(`${issuer}/authorize`);

    const callback = await authorizeWithForms(t.http, Object.fromEntries(url.searchParams), user);
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: codeVerifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    expect(tokens.refresh_token).toMatch(/^qrt_/);
    expect(tokens.claims()).toMatchObject({ sub: user.id, aud: client.clientId, iss: issuer, nonce });
    await verifyAccessToken(tokens.access_token, 'openid profile email doc:read');

    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
    expect(info).toMatchObject({ sub: user.id, email: user.email, name: user.displayName });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? '');
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await verifyAccessToken(refreshed.access_token, 'openid profile email doc:read');
    expect(decodeProtectedHeader(refreshed.access_token).kid).toBe(
      decodeProtectedHeader(tokens.access_token).kid,
    );

    // Within the reuse grace window (a client refreshing from several requests at once) the rotated token answers
    // the same successor; after it, the rotated refresh token is dead for a standard client too, with an RFC 6749
    // error. Time is moved on by back-dating the rotation.
    const racing = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? '');
    expect(racing.refresh_token).toBe(refreshed.refresh_token);
    await t.dataSource.query(`UPDATE spent_refresh_tokens SET spent_at = spent_at - interval '1 hour'`);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token ?? '')).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });

  it('surfaces a wrong client secret as invalid_client', async () => {
    const config = await oidc.discovery(new URL(issuer), client.clientId, 'qcs_wrong', undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    await expect(oidc.clientCredentialsGrant(config, { scope: 'doc:read' })).rejects.toMatchObject({
      error: 'invalid_client',
    });
  });
});
