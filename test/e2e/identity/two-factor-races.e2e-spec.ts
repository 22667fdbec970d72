import { generate } from 'otplib';
import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { listen } from '../realtime/realtime.fixtures.js';

/**
 * Second steps sent at once with one challenge (a double-clicked button, docs/auth.md): one signs in; the others find
 * the challenge used — 401 INVALID_TOKEN — rather than having their code read as wrong (INVALID_CREDENTIALS) because
 * the first one just spent it, and no failed sign-in is counted against the account.
 */
describe('two-step sign-in: one challenge verified several times at once', () => {
  let t: TestApp;
  let base: string;
  let user: TestUser;
  let secret: string;
  let backupCodes: string[];

  const totp = (stepsAhead: number): Promise<string> =>
    generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 * stepsAhead });

  const challenge = async (): Promise<string> => {
    const res = await request(t.http).post('/api/v1/auth/login').send({ email: user.email, password: user.password }).expect(401);
    expect(res.body.code).toBe('TWO_FACTOR_REQUIRED');
    return res.body.payload.challengeToken as string;
  };

  /** Five verifies of one challenge with one code, each on a connection of its own. */
  const verifyAtOnce = async (challengeToken: string, code: string): Promise<Array<string | number>> => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const res = await fetch(`${base}/api/v1/auth/2fa/verify`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Connection: 'close' },
          body: JSON.stringify({ challengeToken, code }),
        });
        const body = (await res.json()) as { code?: string };
        return res.status === 200 ? 200 : `${res.status} ${body.code}`;
      }),
    );
    return answers.sort();
  };

  const failures = async (): Promise<number> =>
    (
      await t.dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM login_failures WHERE throttle_key = $1`, [
        `user:${user.id}`,
      ])
    )[0]?.n ?? 0;

  beforeAll(async () => {
    t = await createTestApp();
    base = await listen(t);
    user = await registerUser(t.http);
    const start = await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).send({ method: 'totp' }).expect(200);
    secret = start.body.payload.secret;
    const confirmed = await request(t.http)
      .post('/api/v1/auth/2fa/enable')
      .set(bearer(user))
      .send({ method: 'totp', code: await totp(0) })
      .expect(200);
    backupCodes = confirmed.body.payload.backupCodes;
  });
  afterAll(async () => {
    await t.close();
  });

  const signedIn = [200, '401 INVALID_TOKEN', '401 INVALID_TOKEN', '401 INVALID_TOKEN', '401 INVALID_TOKEN'];

  it('a TOTP code: one 200, the others INVALID_TOKEN, no failed sign-in counted', async () => {
    // The next step's code (one step of drift is accepted): the confirmation spent the current one.
    expect(await verifyAtOnce(await challenge(), await totp(1))).toEqual(signedIn);
    expect(await failures()).toBe(0);
  });

  it('a backup code: one 200, the others INVALID_TOKEN, no failed sign-in counted', async () => {
    for (const code of backupCodes.slice(0, 3)) {
      expect(await verifyAtOnce(await challenge(), code)).toEqual(signedIn);
      expect(await failures()).toBe(0);
    }
  });
});
