import { generate } from 'otplib';
import request from 'supertest';
import { lastMessageTo } from '../../factories/notifications.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createClient, formFields, pkcePair } from './identity-helpers.js';

describe('two-step verification', () => {
  let t: TestApp;
  let address = 10;

  function login(user: TestUser): request.Test {
    address += 1;
    return request(t.http)
      .post('/api/v1/auth/login')
      .set('X-Forwarded-For', `192.0.2.${address}`)
      .send({ email: user.email, password: user.password });
  }

  function verify(body: Record<string, string>): request.Test {
    address += 1;
    return request(t.http)
      .post('/api/v1/auth/2fa/verify')
      .set('X-Forwarded-For', `192.0.2.${address}`)
      .send(body);
  }

  /** A TOTP code `stepsAhead` 30-second steps from now (the server accepts one step of drift). */
  function totp(secret: string, stepsAhead = 0): Promise<string> {
    return generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 * stepsAhead });
  }

  /** Opens the issuer's /authorize page for a new client and signs `user` in at its password step. */
  async function pageSignIn(user: TestUser, expected = 200): Promise<{ requestToken: string; page: request.Response }> {
    const client = await createClient(t.http, await registerUser(t.http));
    const query = {
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: 'http://127.0.0.1/callback',
      scope: 'openid',
      state: 's',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    };
    const requestToken = formFields((await request(t.http).get('/authorize').query(query).expect(200)).text).request;
    return { requestToken, page: await pagePost({ step: 'login', request: requestToken, email: user.email, password: user.password }).expect(expected) };
  }

  /** One form post to the /authorize page. */
  function pagePost(fields: Record<string, string>): request.Test {
    return request(t.http).post('/authorize').type('form').send(fields);
  }

  async function challenge(
    user: TestUser,
  ): Promise<{ challengeToken: string; methods: string[]; destination?: string }> {
    const res = await login(user).expect(401);
    expect(res.body).toMatchObject({ success: false, code: 'TWO_FACTOR_REQUIRED' });
    expect(res.body.payload.accessToken).toBeUndefined();
    return res.body.payload;
  }

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('TOTP: enrolls with an otpauth URI and QR code, confirms with a code, and makes sign-in two-step', async () => {
    const user = await registerUser(t.http);
    const start = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp' })
      .expect(200);
    const { secret, otpauthUri, qrCodeDataUrl, status } = start.body.payload;
    expect(status).toBe('pending');
    expect(otpauthUri).toMatch(/^otpauth:\/\/totp\/Quire:/);
    expect(otpauthUri).toContain(`secret=${secret}`);
    expect(otpauthUri).toContain('issuer=Quire');
    expect(qrCodeDataUrl).toMatch(/^data:image\/png;base64,/);

    // A wrong code changes nothing.
    const bad = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp', code: '000000' === (await totp(secret)) ? '111111' : '000000' })
      .expect(400);
    expect(bad.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: expect.objectContaining({ field: 'code' }),
    });
    expect(
      (await request(t.http).get('/api/v1/users/me').set(bearer(user))).body.payload.twoFactorEnabled,
    ).toBe(false);
    await login(user).expect(200);

    const confirmed = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp', code: await totp(secret) })
      .expect(200);
    const backupCodes: string[] = confirmed.body.payload.backupCodes;
    expect(confirmed.body.payload).toMatchObject({ method: 'totp', status: 'enabled' });
    expect(backupCodes).toHaveLength(10);
    expect(
      (await request(t.http).get('/api/v1/users/me').set(bearer(user))).body.payload.twoFactorEnabled,
    ).toBe(true);
    const stored = await t.dataSource.query<Array<{ code_hash: string }>>(
      'SELECT code_hash FROM backup_codes WHERE user_id = $1',
      [user.id],
    );
    expect(stored).toHaveLength(10);
    expect(stored.map((row) => row.code_hash)).not.toContain(backupCodes[0]);
    const [row] = await t.dataSource.query<Array<{ totp_secret: string }>>(
      'SELECT totp_secret FROM user_two_factor WHERE user_id = $1',
      [user.id],
    );
    expect(row.totp_secret).not.toContain(secret);

    const again = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp' })
      .expect(409);
    expect(again.body.code).toBe('INVALID_STATE');

    // Sign-in: first step answers the challenge, the second the tokens.
    const first = await challenge(user);
    expect(first).toMatchObject({ methods: ['totp', 'backup_code'], expiresIn: 300 });
    expect(
      (await verify({ challengeToken: first.challengeToken, code: '12345' }).expect(401)).body.code,
    ).toBe('INVALID_CREDENTIALS');
    const code = await totp(secret, 1);
    const done = await verify({ challengeToken: first.challengeToken, code }).expect(200);
    expect(done.body.payload).toMatchObject({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      user: { id: user.id },
    });
    await request(t.http)
      .get('/api/v1/users/me')
      .set('Authorization', `Bearer ${done.body.payload.accessToken}`)
      .expect(200);
    // A used challenge is gone; a used TOTP code cannot be replayed.
    expect((await verify({ challengeToken: first.challengeToken, code }).expect(401)).body.code).toBe(
      'INVALID_TOKEN',
    );
    const second = await challenge(user);
    expect((await verify({ challengeToken: second.challengeToken, code }).expect(401)).body.code).toBe(
      'INVALID_CREDENTIALS',
    );

    // Backup codes work once each.
    await verify({ challengeToken: second.challengeToken, code: backupCodes[0].toUpperCase() }).expect(200);
    const third = await challenge(user);
    await verify({
      challengeToken: third.challengeToken,
      code: backupCodes[0],
      method: 'backup_code',
    }).expect(401);
    await verify({
      challengeToken: third.challengeToken,
      code: backupCodes[1],
      method: 'backup_code',
    }).expect(200);
  });

  it('closes a challenge after five wrong codes', async () => {
    const user = await registerUser(t.http);
    const start = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp' })
      .expect(200);
    await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp', code: await totp(start.body.payload.secret) })
      .expect(200);
    const { challengeToken } = await challenge(user);
    for (let i = 0; i < 5; i += 1) {
      await verify({ challengeToken, code: `bad-code-${i}` }).expect(401);
    }
    const closed = await verify({ challengeToken, code: await totp(start.body.payload.secret, 1) }).expect(
      401,
    );
    expect(closed.body.code).toBe('INVALID_TOKEN');
  });

  /** A user with TOTP two-step verification on; answers the TOTP secret. */
  async function withTotp(user: TestUser): Promise<string> {
    const start = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp' })
      .expect(200);
    const secret: string = start.body.payload.secret;
    await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp', code: await totp(secret) })
      .expect(200);
    return secret;
  }

  /** A six-digit code that is not the current TOTP code (nor the neighbouring steps). */
  async function wrongCode(secret: string, i: number): Promise<string> {
    const valid = new Set([await totp(secret, -1), await totp(secret), await totp(secret, 1)]);
    let code = String(100000 + i * 7919);
    while (valid.has(code)) {
      code = String(Number(code) + 1);
    }
    return code;
  }

  it('wrong second-step codes count against the account: from the 5th, sign-in answers 429 even with fresh challenges and addresses', async () => {
    const user = await registerUser(t.http);
    const other = await registerUser(t.http);
    const secret = await withTotp(user);
    await withTotp(other);
    // Fewer than five wrong codes per challenge, each challenge from a new password sign-in and every request
    // from a new address: only the per-account count can stop this.
    for (let i = 0; i < 5; i += 1) {
      const { challengeToken } = await challenge(user);
      const wrong = await verify({ challengeToken, code: await wrongCode(secret, i) }).expect(401);
      expect(wrong.body.code).toBe('INVALID_CREDENTIALS');
    }
    const blocked = await login(user).expect(429);
    expect(blocked.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    const rows = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM login_failures WHERE throttle_key = $1`,
      [`user:${user.id}`],
    );
    expect(rows[0].n).toBe(5);
    // A challenge opened before the limit was reached does not get around it, not even with the right code.
    await t.dataSource.query(`DELETE FROM login_failures WHERE throttle_key = $1`, [`user:${user.id}`]);
    const open = await challenge(user);
    for (let i = 0; i < 4; i += 1) {
      await verify({ challengeToken: open.challengeToken, code: await wrongCode(secret, i) }).expect(401);
    }
    const last = await challenge(user);
    await verify({ challengeToken: last.challengeToken, code: await wrongCode(secret, 9) }).expect(401);
    const late = await verify({ challengeToken: open.challengeToken, code: await totp(secret, 1) }).expect(
      429,
    );
    expect(late.body.code).toBe('RATE_LIMIT_EXCEEDED');
    // Other accounts are not affected.
    await challenge(other);
  });

  it('a right second step clears the account count, and the /authorize page counts wrong codes the same way', async () => {
    const user = await registerUser(t.http);
    const secret = await withTotp(user);
    for (let i = 0; i < 4; i += 1) {
      const { challengeToken } = await challenge(user);
      await verify({ challengeToken, code: await wrongCode(secret, i) }).expect(401);
    }
    const { challengeToken } = await challenge(user);
    await verify({ challengeToken, code: await totp(secret, 1) }).expect(200);

    // Now through the issuer's page: four wrong codes at its second step, then one at the API, and the page's
    // password step answers 429.
    const { requestToken, page: second } = await pageSignIn(user);
    const pageChallenge = formFields(second.text).challenge;
    expect(pageChallenge).toEqual(expect.any(String));
    for (let i = 0; i < 4; i += 1) {
      await pagePost({ step: 'two_factor', request: requestToken, challenge: pageChallenge, code: await wrongCode(secret, i) }).expect(401);
    }
    const api = await challenge(user);
    await verify({ challengeToken: api.challengeToken, code: await wrongCode(secret, 5) }).expect(401);
    const throttled = await pagePost({ step: 'login', request: requestToken, email: user.email, password: user.password }).expect(429);
    expect(throttled.text).toContain('Too many failed attempts');
    const pageSecond = await pagePost({ step: 'two_factor', request: requestToken, challenge: pageChallenge, code: await totp(secret, 1) }).expect(429);
    expect(pageSecond.text).toContain('Too many failed attempts');
    await login(user).expect(429);
  });

  it('disabling counts wrong passwords and codes like failed sign-ins and answers 429 over the limit', async () => {
    const user = await registerUser(t.http);
    const secret = await withTotp(user);
    const disable = (body: Record<string, string>, ip: string): request.Test =>
      request(t.http)
        .post('/api/v1/auth/2fa/disable')
        .set(bearer(user))
        .set('X-Forwarded-For', ip)
        .send(body);

    // Wrong passwords: the code stays VALIDATION_ERROR; the fifth for the account closes the door, the right
    // password included, and sign-in with the password too (same account count).
    for (let i = 0; i < 5; i += 1) {
      const wrong = await disable({ password: `guess-${i}` }, `203.0.113.${i + 1}`).expect(400);
      expect(wrong.body).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: expect.objectContaining({ field: 'password' }),
      });
    }
    const blocked = await disable({ password: user.password }, '203.0.113.50').expect(429);
    expect(blocked.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    await login(user).expect(429);
    expect(
      (await request(t.http).get('/api/v1/users/me').set(bearer(user))).body.payload.twoFactorEnabled,
    ).toBe(true);

    // Wrong codes: counted under the account's second-factor key, which stops the second sign-in step too.
    await t.dataSource.query(`DELETE FROM login_failures WHERE throttle_key = 'email:' || $1`, [
      user.email.toLowerCase(),
    ]);
    for (let i = 0; i < 4; i += 1) {
      await disable({ code: await wrongCode(secret, i) }, `203.0.113.${i + 10}`).expect(400);
    }
    const { challengeToken } = await challenge(user);
    await disable({ code: await wrongCode(secret, 4) }, '203.0.113.20').expect(400);
    expect((await disable({ code: await totp(secret, 1) }, '203.0.113.21').expect(429)).body.code).toBe(
      'RATE_LIMIT_EXCEEDED',
    );
    await verify({ challengeToken, code: await totp(secret, 1) }).expect(429);

    // Per address: 20 wrong values from one address stop that address, whatever the account.
    await t.dataSource.query(`DELETE FROM login_failures WHERE throttle_key = $1`, [`user:${user.id}`]);
    const ip = '203.0.113.99';
    const others = await Promise.all([1, 2, 3, 4, 5].map(() => registerUser(t.http)));
    for (const other of others) {
      await withTotp(other);
      for (let i = 0; i < 4; i += 1) {
        await request(t.http)
          .post('/api/v1/auth/2fa/disable')
          .set(bearer(other))
          .set('X-Forwarded-For', ip)
          .send({ password: `guess-${i}` })
          .expect(400);
      }
    }
    expect((await disable({ password: user.password }, ip).expect(429)).body.code).toBe(
      'RATE_LIMIT_EXCEEDED',
    );
    const off = await disable({ password: user.password }, '203.0.113.100').expect(200);
    expect(off.body.payload).toEqual({ enabled: false, method: null });
  });

  it('SMS: enrolls a phone with a texted code and sends sign-in codes to it', async () => {
    const user = await registerUser(t.http);
    const phone = '+4917012345678';
    const missing = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'sms' })
      .expect(400);
    expect(missing.body.details.field).toBe('phone');

    const start = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'sms', phone })
      .expect(200);
    expect(start.body.payload).toEqual({ method: 'sms', status: 'pending', destination: '+49*******5678' });
    const enrollment = await lastMessageTo(t.dataSource, phone, 'two_factor_enrollment');
    expect(enrollment?.channel).toBe('sms');
    await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'sms', code: String(enrollment?.data.code) })
      .expect(200);
    expect((await request(t.http).get('/api/v1/users/me').set(bearer(user))).body.payload).toMatchObject({
      phone,
      twoFactorEnabled: true,
    });

    const pending = await challenge(user);
    expect(pending).toMatchObject({ methods: ['sms', 'backup_code'], destination: '+49*******5678' });
    const text = await lastMessageTo(t.dataSource, phone, 'two_factor_code');
    await verify({ challengeToken: pending.challengeToken, code: String(text?.data.code) }).expect(200);

    // The number now belongs to this account.
    const other = await registerUser(t.http);
    const taken = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(other))
      .send({ method: 'sms', phone })
      .expect(409);
    expect(taken.body.code).toBe('ALREADY_EXISTS');
  });

  it('e-mail: enrolls and signs in with e-mailed codes; disabling needs the password', async () => {
    const user = await registerUser(t.http);
    await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'email' })
      .expect(200);
    const enrollment = await lastMessageTo(t.dataSource, user.email, 'two_factor_enrollment');
    expect(enrollment?.channel).toBe('email');
    await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'email', code: String(enrollment?.data.code) })
      .expect(200);

    const pending = await challenge(user);
    const mail = await lastMessageTo(t.dataSource, user.email, 'two_factor_code');
    await verify({
      challengeToken: pending.challengeToken,
      code: String(mail?.data.code),
      method: 'email',
    }).expect(200);

    // The issuer's page asks for the e-mailed code, and asks for it again after a wrong one (it used to switch to
    // "the code from your authenticator app", which an e-mail account does not have).
    const { requestToken, page: secondStep } = await pageSignIn(user);
    expect(secondStep.text).toContain('Enter the code we sent to');
    const again = await pagePost({ step: 'two_factor', request: requestToken, challenge: formFields(secondStep.text).challenge, code: '000000' }).expect(401);
    expect(again.text).toContain('The code is not correct.');
    expect(again.text).toContain('Enter the code we sent to');
    expect(again.text).not.toContain('authenticator app');

    const wrong = await request(t.http)
      .post('/api/v1/auth/2fa/disable')
      .set(bearer(user))
      .send({ password: 'not it' })
      .expect(400);
    expect(wrong.body.code).toBe('VALIDATION_ERROR');
    expect(
      (await request(t.http).get('/api/v1/users/me').set(bearer(user))).body.payload.twoFactorEnabled,
    ).toBe(true);
    const off = await request(t.http)
      .post('/api/v1/auth/2fa/disable')
      .set(bearer(user))
      .send({ password: user.password })
      .expect(200);
    expect(off.body.payload).toEqual({ enabled: false, method: null });
    await login(user).expect(200);
    expect(
      (
        await request(t.http)
          .post('/api/v1/auth/2fa/disable')
          .set(bearer(user))
          .send({ password: user.password })
          .expect(409)
      ).body.code,
    ).toBe('INVALID_STATE');
  });

  it('enrols with a body-less enable (TOTP) and confirms at verify too: signed in, without a challenge token (enable → verify → disable)', async () => {
    const user = await registerUser(t.http);
    // Without a bearer token, verify is the sign-in second step and needs its challenge token.
    const anonymous = await verify({ code: '123456' }).expect(400);
    expect(anonymous.body).toMatchObject({ code: 'VALIDATION_ERROR', details: expect.objectContaining({ field: 'challengeToken' }) });
    expect((await verify({ code: '123456' }).set(bearer(user)).expect(409)).body.code).toBe('INVALID_STATE');

    // Spec 4.7 shows no body for enable: without a method it enrols an authenticator app (null is no method).
    expect((await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).send({ method: null }).expect(400)).body.details).toMatchObject({ field: 'method' });
    const start = await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).expect(200);
    expect(start.body.payload).toMatchObject({ method: 'totp', status: 'pending' });
    const secret: string = start.body.payload.secret;
    expect((await verify({ code: await wrongCode(secret, 0) }).set(bearer(user)).expect(400)).body.details).toMatchObject({ field: 'code' });
    const confirmed = await verify({ code: await totp(secret) }).set(bearer(user)).expect(200);
    expect(confirmed.body.payload).toMatchObject({ method: 'totp', status: 'enabled' });
    expect(confirmed.body.payload.backupCodes).toHaveLength(10);
    // On from now on: sign-in is two-step, and a second confirmation is refused.
    const { challengeToken } = await challenge(user);
    expect((await verify({ challengeToken, code: await totp(secret, 1) }).expect(200)).body.payload.accessToken).toEqual(expect.any(String));
    expect((await verify({ code: await totp(secret) }).set(bearer(user)).expect(409)).body.code).toBe('INVALID_STATE');
  });

  it('concurrent confirmations with one code: one turns it on, the others get 409, and sign-in is two-step with the codes shown', async () => {
    const user = await registerUser(t.http);
    const start = await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).send({ method: 'totp' }).expect(200);
    const code = await totp(start.body.payload.secret);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).send({ code })),
    );
    expect(answers.map((res) => `${res.status} ${res.body.code ?? 'OK'}`).sort()).toEqual([
      '200 OK',
      '409 INVALID_STATE',
      '409 INVALID_STATE',
      '409 INVALID_STATE',
    ]);
    const confirmed = answers.filter((res) => res.status === 200);
    // The one answer that said "enabled" is true: sign-in asks for the second step, and its backup codes work.
    const { challengeToken, methods } = await challenge(user);
    expect(methods).toEqual(['totp', 'backup_code']);
    const backupCode: string = confirmed[0].body.payload.backupCodes[0];
    expect((await verify({ challengeToken, code: backupCode }).expect(200)).body.payload.accessToken).toEqual(expect.any(String));
  });

  it('needs a signed-in caller to enrol, and validates the method', async () => {
    expect(
      (await request(t.http).post('/api/v1/auth/2fa/enable').send({ method: 'totp' }).expect(401)).body.code,
    ).toBe('UNAUTHORIZED');
    const user = await registerUser(t.http);
    const res = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'carrier-pigeon' })
      .expect(400);
    expect(res.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: expect.objectContaining({ field: 'method' }),
    });
  });
});
