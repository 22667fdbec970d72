import { generate } from 'otplib';
import request from 'supertest';
import { bearer, registerUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

/**
 * The sign-in throttle (docs/auth.md, "Throttling") must hold for guesses sent at once, not only one after another:
 * from the 5th failure of an account sign-in answers 429 before any password is checked. Counted only after the
 * check, guesses sent together all passed the check before any was counted, and every one of them was tried.
 */
describe('sign-in throttle: guesses sent at once', () => {
  let t: TestApp;
  let address = 10;

  function from(): string {
    address += 1;
    return `198.51.100.${address}`;
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

  it('twelve wrong passwords at once for one account: five are tried, the others answer 429', async () => {
    const user = await registerUser(t.http);
    const ip = from();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => login({ email: user.email, password: `wrong-${i}` }, ip)));

    expect(answers.filter((res) => res.status === 401)).toHaveLength(5);
    expect(answers.filter((res) => res.status === 429).map((res) => res.body.code)).toEqual(Array(7).fill('RATE_LIMIT_EXCEEDED'));
    expect((await login({ email: user.email, password: user.password }, from())).status).toBe(429);
  });

  it('wrong second-step codes sent at once through several challenges: five are checked, the others answer 429', async () => {
    const user = await registerUser(t.http);
    const start = await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).send({ method: 'totp' }).expect(200);
    const secret: string = start.body.payload.secret;
    const right = await generate({ secret });
    await request(t.http).post('/api/v1/auth/2fa/enable').set(bearer(user)).send({ method: 'totp', code: right }).expect(200);
    const challenges: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const res = await login({ email: user.email, password: user.password }, from());
      expect(res.body.code).toBe('TWO_FACTOR_REQUIRED');
      challenges.push(res.body.payload.challengeToken);
    }
    const wrong = right === '000000' ? '000001' : '000000';
    const answers = await Promise.all(
      challenges.map((challengeToken) =>
        Promise.resolve(request(t.http).post('/api/v1/auth/2fa/verify').set('X-Forwarded-For', from()).send({ challengeToken, code: wrong })),
      ),
    );

    expect(answers.filter((res) => res.status === 401).map((res) => res.body.code)).toEqual(Array(5).fill('INVALID_CREDENTIALS'));
    expect(answers.filter((res) => res.status === 429)).toHaveLength(3);
  });

  it('wrong guesses from one address at once count up to the address limit (20), not past it', async () => {
    const ip = from();
    const answers = await Promise.all(Array.from({ length: 26 }, (_, i) => login({ email: `guess-${i}@example.test`, password: 'guess' }, ip)));

    expect(answers.filter((res) => res.status === 401)).toHaveLength(20);
    expect(answers.filter((res) => res.status === 429)).toHaveLength(6);
  });

  it('a right password sent with wrong ones signs in, and a success leaves nothing counted against the address', async () => {
    const user = await registerUser(t.http);
    const ip = from();
    const answers = await Promise.all([
      login({ email: user.email, password: user.password }, ip),
      ...Array.from({ length: 3 }, (_, i) => login({ email: user.email, password: `wrong-${i}` }, ip)),
    ]);
    expect(answers[0]?.status).toBe(200);
    expect(answers.slice(1).map((res) => res.status)).toEqual([401, 401, 401]);
    // Signed in four times more from that address: successes are not failures of the address.
    for (let i = 0; i < 4; i += 1) {
      expect((await login({ email: user.email, password: user.password }, ip)).status).toBe(200);
    }
    const [row] = await t.dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM login_failures WHERE throttle_key = $1`, [`ip:${ip}`]);
    expect(row?.n).toBe(3);
  });
});
