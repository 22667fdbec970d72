import { generate } from 'otplib';
import request from 'supertest';
import { lastMessageTo } from '../../factories/notifications.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

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
