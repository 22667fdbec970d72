import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { authorizeWithForms, createClient, pkcePair, type TestClient, tokenRequest } from './identity-helpers.js';

const REDIRECT = 'http://127.0.0.1/callback';

/**
 * Refresh-token rotation when a client refreshes from several requests at once (docs/auth.md, "Concurrent
 * refreshes"): within REFRESH_TOKEN_REUSE_GRACE_SECONDS a rotated token answers its unused successor again; later
 * reuse, or reuse once the successor was used, revokes the session; an ended session is never revived.
 */
describe('refresh token reuse grace window', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await registerUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  /** Moves every rotation into the past, beyond any grace window (control of time without waiting). */
  async function leaveGraceWindow(): Promise<void> {
    await t.dataSource.query(`UPDATE spent_refresh_tokens SET spent_at = spent_at - interval '1 hour'`);
  }

  function refresh(refreshToken: string): request.Test {
    return request(t.http).post('/api/v1/auth/refresh').send({ refreshToken });
  }

  async function expectSessionEnded(user: TestUser, accessToken: string, refreshToken: string): Promise<void> {
    const dead = await request(t.http).get('/api/v1/users/me').set(bearer({ token: accessToken })).expect(401);
    expect(dead.body.code).toBe('INVALID_TOKEN');
    await refresh(refreshToken).expect(401);
    const [row] = await t.dataSource.query<Array<{ revoked: boolean }>>(
      'SELECT revoked_at IS NOT NULL AS revoked FROM sessions WHERE id = $1',
      [user.sessionId],
    );
    expect(row.revoked).toBe(true);
  }

  async function oauthTokens(client: TestClient, user: TestUser): Promise<{ refresh_token: string }> {
    const { verifier, challenge } = pkcePair();
    const location = await authorizeWithForms(
      t.http,
      {
        response_type: 'code',
        client_id: client.clientId,
        redirect_uri: REDIRECT,
        scope: 'doc:read',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      user,
    );
    const res = await tokenRequest(
      t.http,
      {
        grant_type: 'authorization_code',
        code: location.searchParams.get('code') ?? '',
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      },
      client,
    ).expect(200);
    return res.body;
  }

  it('five refreshes at once with one token at /auth/refresh all succeed with the same successor; the session lives on', async () => {
    const user = await registerUser(t.http);
    const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(user.refreshToken)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const successors = new Set(answers.map((a) => a.body.payload.refreshToken as string));
    expect(successors.size).toBe(1);
    const [successor] = [...successors];
    expect(successor).toMatch(/^qrt_/);
    expect(successor).not.toBe(user.refreshToken);
    for (const answer of answers) {
      expect(answer.body.payload.sessionId).toBe(user.sessionId);
      await request(t.http).get('/api/v1/users/me').set(bearer({ token: answer.body.payload.accessToken })).expect(200);
    }
    // The successor rotates as usual, and the session is still listed.
    const next = await refresh(successor).expect(200);
    expect(next.body.payload.refreshToken).not.toBe(successor);
    const sessions = await request(t.http).get('/api/v1/auth/sessions').set(bearer(user)).expect(200);
    expect(sessions.body.payload.items.map((s: { id: string }) => s.id)).toContain(user.sessionId);
  });

  it('racing refreshes of the first-party client across /auth/refresh and /token on both mounts share one successor', async () => {
    const user = await registerUser(t.http);
    const form = { grant_type: 'refresh_token', client_id: 'quire', refresh_token: user.refreshToken };
    const answers = await Promise.all([
      refresh(user.refreshToken),
      request(t.http).post('/token').type('form').send(form),
      request(t.http).post('/api/v1/auth/token').type('form').send(form),
      refresh(user.refreshToken),
      request(t.http).post('/token').type('form').send(form),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const successors = new Set(answers.map((a) => (a.body.refresh_token ?? a.body.payload.refreshToken) as string));
    expect(successors.size).toBe(1);
    for (const answer of answers) {
      const token = (answer.body.access_token ?? answer.body.payload.accessToken) as string;
      await request(t.http).get('/api/v1/users/me').set(bearer({ token })).expect(200);
    }
    await refresh([...successors][0]).expect(200);
  });

  it('five refresh_token grants at once at /token for an OAuth client all succeed with the same successor', async () => {
    const user = await registerUser(t.http);
    const client = await createClient(t.http, owner);
    const tokens = await oauthTokens(client, user);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        tokenRequest(t.http, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, client),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const successors = new Set(answers.map((a) => a.body.refresh_token as string));
    expect(successors.size).toBe(1);
    expect([...successors][0]).not.toBe(tokens.refresh_token);
    for (const answer of answers) {
      expect(answer.body.scope).toBe('doc:read');
      await request(t.http).get('/api/v1/users/me').set(bearer({ token: answer.body.access_token })).expect(200);
    }
    await tokenRequest(t.http, { grant_type: 'refresh_token', refresh_token: [...successors][0] }, client).expect(200);
  });

  it('reuse after the window revokes the session', async () => {
    const user = await registerUser(t.http);
    const rotated = (await refresh(user.refreshToken).expect(200)).body.payload;
    await leaveGraceWindow();
    const reuse = await refresh(user.refreshToken).expect(401);
    expect(reuse.body).toMatchObject({ code: 'INVALID_TOKEN', details: { field: 'refreshToken' } });
    await expectSessionEnded(user, rotated.accessToken, rotated.refreshToken);
  });

  it('a token whose successor was already used is theft even within the window', async () => {
    const user = await registerUser(t.http);
    const first = (await refresh(user.refreshToken).expect(200)).body.payload;
    const second = (await refresh(first.refreshToken).expect(200)).body.payload;
    await refresh(user.refreshToken).expect(401);
    await expectSessionEnded(user, second.accessToken, second.refreshToken);
  });

  it('a spent token presented by another client within the window revokes, as before', async () => {
    const user = await registerUser(t.http);
    const client = await createClient(t.http, owner);
    const tokens = await oauthTokens(client, user);
    const rotated = (
      await tokenRequest(t.http, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, client).expect(200)
    ).body;
    const other = await createClient(t.http, owner);
    await tokenRequest(t.http, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, other).expect(401);
    await tokenRequest(t.http, { grant_type: 'refresh_token', refresh_token: rotated.refresh_token }, client).expect(401);
  });

  it('an ended session is never revived by a token in its window, nor a session revoked for reuse', async () => {
    const user = await registerUser(t.http);
    const rotated = (await refresh(user.refreshToken).expect(200)).body.payload;
    await request(t.http).delete(`/api/v1/auth/sessions/${user.sessionId}`).set(bearer(user)).expect(200);
    const again = await refresh(user.refreshToken).expect(401);
    expect(again.body.code).toBe('INVALID_TOKEN');
    await expectSessionEnded(user, rotated.accessToken, rotated.refreshToken);

    // Revoked for reuse: a token still within its window does not bring it back either.
    const victim = await registerUser(t.http);
    const first = (await refresh(victim.refreshToken).expect(200)).body.payload;
    await leaveGraceWindow();
    const second = (await refresh(first.refreshToken).expect(200)).body.payload;
    await refresh(victim.refreshToken).expect(401);
    await refresh(first.refreshToken).expect(401);
    await refresh(second.refreshToken).expect(401);
    await expectSessionEnded(victim, second.accessToken, second.refreshToken);
  });
});

describe('refresh token reuse grace window turned off (REFRESH_TOKEN_REUSE_GRACE_SECONDS=0)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ REFRESH_TOKEN_REUSE_GRACE_SECONDS: '0' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('any reuse of a rotated token revokes the session at once', async () => {
    const user = await registerUser(t.http);
    const rotated = (
      await request(t.http).post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken }).expect(200)
    ).body.payload;
    await request(t.http).post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken }).expect(401);
    await request(t.http).post('/api/v1/auth/refresh').send({ refreshToken: rotated.refreshToken }).expect(401);
    await request(t.http).get('/api/v1/users/me').set(bearer({ token: rotated.accessToken })).expect(401);
  });
});
