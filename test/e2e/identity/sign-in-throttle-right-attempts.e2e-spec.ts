import { generate } from 'otplib';
import request from 'supertest';
import { bearer, registerUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * docs/auth.md, "Throttling": only failures count. An attempt is recorded before it is checked (so wrong guesses
 * sent at once cannot pass the limit), but attempts still being checked must not refuse one another: twelve right
 * passwords sent at once answered five 200 and seven 429 with Retry-After 900, as if they had failed.
 */
describe('sign-in throttle: right attempts sent at once', () => {
  let t: TestApp;
  let address = 10;

  function from(): string {
    address += 1;
    return `198.51.101.${address}`;
  }

  function login(body: Record<string, string>, ip: string): Promise<request.Response> {
    return Promise.resolve(request(t.http).post('/api/v1/auth/login').set('X-Forwarded-For', ip).send(body));
  }

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('twelve right passwords at once for one account from one address all sign in, and nothing stays counted', async () => {
    const user = await registerUser(t.http);
    const ip = from();
    const answers = await Promise.all(Array.from({ length: 12 }, () => login({ email: user.email, password: user.password }, ip)));

    expect(answers.map((res) => res.status)).toEqual(Array(12).fill(200));
    const [row] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM login_failures WHERE throttle_key = ANY($1::text[])`,
      [[`email:${user.email.toLowerCase()}`, `ip:${ip}`]],
    );
    expect(row?.n).toBe(0);
  });

  it('right and wrong passwords mixed at once: every right one signs in, every wrong one is checked', async () => {
    const user = await registerUser(t.http);
    const ip = from();
    // Four wrong ones: under the limit whatever the order, so none may be refused, and neither may a right one.
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => login({ email: user.email, password: i % 3 === 1 ? `wrong-${i}` : user.password }, ip)),
    );

    expect(answers.filter((_, i) => i % 3 !== 1).map((res) => res.status)).toEqual(Array(8).fill(200));
    expect(answers.filter((_, i) => i % 3 === 1).map((res) => res.status)).toEqual(Array(4).fill(401));
    const [row] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM login_failures WHERE throttle_key = $1 AND NOT pending`,
      [`ip:${ip}`],
    );
    expect(row?.n).toBe(4);
  });

  it('right second-step codes sent at once through several challenges all sign in', async () => {
    const user = await registerUser(t.http);
    const start = await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).send({ method: 'totp' }).expect(200);
    const right = await generate({ secret: start.body.payload.secret as string });
    const confirmed = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp', code: right })
      .expect(200);
    const backupCodes: string[] = confirmed.body.payload.backupCodes;
    const ip = from();
    const challenges: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const res = await login({ email: user.email, password: user.password }, ip);
      expect(res.body.code).toBe('TWO_FACTOR_REQUIRED');
      challenges.push(res.body.payload.challengeToken);
    }
    const answers = await Promise.all(
      challenges.map((challengeToken, i) =>
        Promise.resolve(
          request(t.http).post('/api/v1/auth/2fa/verify').set('X-Forwarded-For', ip).send({ challengeToken, code: backupCodes[i] }),
        ),
      ),
    );

    expect(answers.map((res) => res.status)).toEqual(Array(8).fill(200));
  });

  it('turning two-step verification off with the right password, sent at once: none is refused as throttled', async () => {
    const user = await registerUser(t.http);
    const start = await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).send({ method: 'totp' }).expect(200);
    const right = await generate({ secret: start.body.payload.secret as string });
    await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).send({ method: 'totp', code: right }).expect(200);
    const ip = from();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        Promise.resolve(
          request(t.http).post('/api/v1/auth/2fa/disable').set(bearer(user)).set('X-Forwarded-For', ip).send({ password: user.password }),
        ),
      ),
    );

    // Each turns it off, or finds it already off (409); a right password is never answered 429.
    expect(answers.filter((res) => res.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(answers.every((res) => res.status === 200 || res.status === 409)).toBe(true);
  });
});
