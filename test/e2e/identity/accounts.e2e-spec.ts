import request from 'supertest';
import { lastMessageTo } from '../../factories/notifications.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

describe('accounts, sessions and sign-in throttling', () => {
  let t: TestApp;
  let address = 10;

  /** Each test signs in from its own address so the per-address throttle of one does not leak into another. */
  function from(): string {
    address += 1;
    return `198.51.100.${address}`;
  }

  function login(body: Record<string, string>, ip: string): request.Test {
    return request(t.http).post('/api/v1/auth/login').set('X-Forwarded-For', ip).send(body);
  }

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('registers and signs in with e-mail and password, answering tokens bound to a session', async () => {
    const user = await registerUser(t.http);
    const res = await login({ email: user.email.toUpperCase(), password: user.password }, from()).expect(200);
    expect(res.body.payload).toMatchObject({
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^qrt_/),
      tokenType: 'Bearer',
      expiresIn: 3600,
      sessionId: expect.any(String),
      user: { id: user.id, email: user.email, twoFactorEnabled: false },
    });
    await request(t.http)
      .get('/api/v1/users/me')
      .set('Authorization', `Bearer ${res.body.payload.accessToken}`)
      .expect(200);
  });

  it('registers with e-mail and password alone, naming the user after the address', async () => {
    const email = `minimal-${Date.now()}@example.test`;
    const res = await request(t.http).post('/api/v1/auth/register').send({ email, password: 'correct horse battery' }).expect(201);
    expect(res.body.payload.user).toMatchObject({ email, displayName: email.split('@')[0] });
    await request(t.http).post('/api/v1/auth/register').send({ email: `x-${email}`, password: 'correct horse battery', displayName: '' }).expect(400);
  });

  it('PATCH /users/me refuses a display name made only of whitespace like the empty one and trims names', async () => {
    const user = await registerUser(t.http);
    const patch = (displayName: string) => request(t.http).patch('/api/v1/users/me').set(bearer(user)).send({ displayName });
    const empty = await patch('').expect(400);
    const blank = await patch('   ').expect(400);
    expect(blank.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'displayName' } });
    expect(blank.body.details).toEqual(empty.body.details);
    expect((await patch('  Ada  ').expect(200)).body.payload.displayName).toBe('Ada');
  });

  it('PATCH /users/me takes a language tag of at most 255 characters as locale, extensions included', async () => {
    const user = await registerUser(t.http);
    const patch = (locale: string) => request(t.http).patch('/api/v1/users/me').set(bearer(user)).send({ locale });
    // Longer than RFC 5646's 35-character minimum: a tag with a Unicode extension.
    expect((await patch('de-DE-u-co-phonebk-ka-shifted-nu-latn').expect(200)).body.payload.locale).toBe('de-DE-u-co-phonebk-ka-shifted-nu-latn');
    const longest = `eng${'-abcdefgh'.repeat(28)}`;
    expect(longest).toHaveLength(255);
    expect((await patch(longest).expect(200)).body.payload.locale).toBe(longest);
    // A well-formed tag one subtag longer: refused for its length alone.
    const tooLong = await patch(`${longest}-x`).expect(400);
    expect(tooLong.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'locale' } });
    expect((await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(200)).body.payload.locale).toBe(longest);
  });

  it('PATCH /users/me takes back the record GET /users/me answered; e-mail and phone only as stored', async () => {
    const user = await registerUser(t.http);
    const phone = '+4915112340077';
    await t.dataSource.query('UPDATE users SET phone = $1 WHERE id = $2', [phone, user.id]);
    const me = () => request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(200);
    const patch = (body: Record<string, unknown>) => request(t.http).patch('/api/v1/users/me').set(bearer(user)).send(body);
    const read = (await me()).body.payload;
    expect(read).toMatchObject({ id: user.id, email: user.email, phone, twoFactorEnabled: false });

    const saved = await patch({ ...read, displayName: 'Round Trip', email: read.email.toUpperCase() }).expect(200);
    expect(saved.body.payload).toMatchObject({ id: user.id, email: user.email, phone, displayName: 'Round Trip', twoFactorEnabled: false });
    // The read-only keys are ignored, whatever they say.
    const ignored = await patch({ ...read, id: '00000000-0000-4000-8000-000000000000', twoFactorEnabled: true, createdAt: 'x', updatedAt: 1 }).expect(200);
    expect(ignored.body.payload).toMatchObject({ id: user.id, twoFactorEnabled: false, createdAt: read.createdAt });

    // A changed e-mail or phone is refused by name, never answered 200 and dropped; nothing is half-applied.
    const changed = await patch({ ...read, displayName: 'Not Saved', email: 'someone-else@example.test', phone: '+4915112340078' }).expect(400);
    expect(changed.body.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(changed.body).map((d: { field: string }) => d.field)).toEqual(['email', 'phone']);
    await patch({ phone: null }).expect(400);
    expect((await me()).body.payload).toMatchObject({ email: user.email, phone, displayName: read.displayName });
    // Keys a user record never has are still refused.
    await patch({ ...read, emial: user.email }).expect(400);
  });

  it('never reveals whether an account exists', async () => {
    const user = await registerUser(t.http);
    const ip = from();
    const wrongPassword = await login({ email: user.email, password: 'not the password' }, ip).expect(401);
    const unknown = await login(
      { email: 'nobody-here@example.test', password: 'not the password' },
      ip,
    ).expect(401);
    expect(wrongPassword.body.code).toBe('INVALID_CREDENTIALS');
    expect(unknown.body).toEqual(wrongPassword.body);
  });

  it('rejects an incomplete or mixed sign-in with VALIDATION_ERROR', async () => {
    expect((await login({ email: 'a@example.test' }, from()).expect(400)).body.code).toBe('VALIDATION_ERROR');
    expect(
      (await login({ email: 'a@example.test', password: 'x', phone: '+4915112345678' }, from()).expect(400))
        .body.code,
    ).toBe('VALIDATION_ERROR');
    expect((await login({ phone: '0151 1234' }, from()).expect(400)).body.details.field).toBe('phone');
  });

  it('throttles repeated failures for one account, even with the right password, and not other accounts', async () => {
    const user = await registerUser(t.http);
    const other = await registerUser(t.http);
    for (let i = 0; i < 5; i += 1) {
      await login({ email: user.email, password: `wrong-${i}` }, from()).expect(401);
    }
    const blocked = await login({ email: user.email, password: user.password }, from()).expect(429);
    expect(blocked.body.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    await login({ email: other.email, password: other.password }, from()).expect(200);
  });

  it('throttles repeated failures from one address across accounts', async () => {
    const user = await registerUser(t.http);
    const ip = from();
    for (let i = 0; i < 20; i += 1) {
      await login({ email: `guess-${i}@example.test`, password: 'guess' }, ip).expect(401);
    }
    expect((await login({ email: user.email, password: user.password }, ip).expect(429)).body.code).toBe(
      'RATE_LIMIT_EXCEEDED',
    );
    await login({ email: user.email, password: user.password }, from()).expect(200);
  });

  describe('sessions', () => {
    async function signIn(
      user: TestUser,
    ): Promise<{ token: string; refreshToken: string; sessionId: string }> {
      const res = await login({ email: user.email, password: user.password }, from()).expect(200);
      return {
        token: res.body.payload.accessToken,
        refreshToken: res.body.payload.refreshToken,
        sessionId: res.body.payload.sessionId,
      };
    }

    it('rotates the refresh token; reusing a rotated one revokes the whole session', async () => {
      const user = await registerUser(t.http);
      const first = await request(t.http)
        .post('/api/v1/auth/refresh')
        .send({ refreshToken: user.refreshToken })
        .expect(200);
      const rotated = first.body.payload;
      expect(rotated.refreshToken).not.toBe(user.refreshToken);
      expect(rotated.sessionId).toBe(user.sessionId);
      await request(t.http)
        .get('/api/v1/users/me')
        .set('Authorization', `Bearer ${rotated.accessToken}`)
        .expect(200);

      // Reuse after the grace window for racing refreshes (docs/auth.md): time is moved on by back-dating the rotation.
      await t.dataSource.query(`UPDATE spent_refresh_tokens SET spent_at = spent_at - interval '1 hour'`);
      const reuse = await request(t.http)
        .post('/api/v1/auth/refresh')
        .send({ refreshToken: user.refreshToken })
        .expect(401);
      expect(reuse.body.code).toBe('INVALID_TOKEN');
      // The detail names the body field that carried the token.
      expect(reuse.body.details.field).toBe('refreshToken');
      // The family is gone: the newest refresh token and every access token of the session stop working.
      await request(t.http)
        .post('/api/v1/auth/refresh')
        .send({ refreshToken: rotated.refreshToken })
        .expect(401);
      const dead = await request(t.http)
        .get('/api/v1/users/me')
        .set('Authorization', `Bearer ${rotated.accessToken}`)
        .expect(401);
      expect(dead.body.code).toBe('INVALID_TOKEN');
    });

    it('lists active sessions and marks the current one', async () => {
      const user = await registerUser(t.http);
      const second = await signIn(user);
      const res = await request(t.http).get('/api/v1/auth/sessions').set(bearer(second)).expect(200);
      expect(res.body.payload).toMatchObject({ page: 1, pageSize: 20, total: 2, totalPages: 1 });
      const byId = new Map(res.body.payload.items.map((s: { id: string; current: boolean }) => [s.id, s]));
      expect(byId.get(second.sessionId)).toMatchObject({
        current: true,
        clientId: 'quire',
        authMethod: 'password',
      });
      expect(byId.get(user.sessionId)).toMatchObject({ current: false });
    });

    it('ends one session: its access and refresh tokens stop working, the others keep going', async () => {
      const user = await registerUser(t.http);
      const second = await signIn(user);
      await request(t.http).delete(`/api/v1/auth/sessions/${user.sessionId}`).set(bearer(second)).expect(200);
      expect((await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(401)).body.code).toBe(
        'INVALID_TOKEN',
      );
      await request(t.http)
        .post('/api/v1/auth/refresh')
        .send({ refreshToken: user.refreshToken })
        .expect(401);
      await request(t.http).get('/api/v1/users/me').set(bearer(second)).expect(200);
      // Already ended → 404.
      await request(t.http).delete(`/api/v1/auth/sessions/${user.sessionId}`).set(bearer(second)).expect(404);
    });

    it("cannot end another user's session (404); a malformed id names nothing (404)", async () => {
      const alice = await registerUser(t.http);
      const bob = await registerUser(t.http);
      expect(
        (
          await request(t.http)
            .delete(`/api/v1/auth/sessions/${bob.sessionId}`)
            .set(bearer(alice))
            .expect(404)
        ).body.code,
      ).toBe('NOT_FOUND');
      await request(t.http).get('/api/v1/users/me').set(bearer(bob)).expect(200);
      expect(
        (await request(t.http).delete('/api/v1/auth/sessions/not-a-uuid').set(bearer(alice)).expect(404)).body
          .code,
      ).toBe('NOT_FOUND');
    });

    it('logs out everywhere', async () => {
      const user = await registerUser(t.http);
      const second = await signIn(user);
      const res = await request(t.http)
        .post('/api/v1/auth/sessions/logout-all')
        .set(bearer(second))
        .expect(200);
      expect(res.body.payload).toEqual({ endedSessions: 2 });
      await request(t.http).get('/api/v1/users/me').set(bearer(user)).expect(401);
      await request(t.http).get('/api/v1/users/me').set(bearer(second)).expect(401);
      await request(t.http)
        .post('/api/v1/auth/refresh')
        .send({ refreshToken: second.refreshToken })
        .expect(401);
    });
  });

  describe('phone and one-time code', () => {
    it('sends a code by SMS and signs in with it once', async () => {
      const user = await registerUser(t.http);
      const phone = '+4915112340001';
      await t.dataSource.query('UPDATE users SET phone = $1 WHERE id = $2', [phone, user.id]);
      const sent = await login({ phone }, from()).expect(202);
      expect(sent.body.payload).toEqual({ codeSent: true, expiresIn: 300 });
      const message = await lastMessageTo(t.dataSource, phone, 'login_code');
      expect(message).toMatchObject({ channel: 'sms' });
      const code = String(message?.data.code);

      const wrong = code === '000000' ? '111111' : '000000';
      expect((await login({ phone, code: wrong }, from()).expect(401)).body.code).toBe('INVALID_CREDENTIALS');
      const ok = await login({ phone, code }, from()).expect(200);
      expect(ok.body.payload.user.id).toBe(user.id);
      await login({ phone, code }, from()).expect(401);
      const sessions = await request(t.http)
        .get('/api/v1/auth/sessions')
        .set('Authorization', `Bearer ${ok.body.payload.accessToken}`);
      expect(
        sessions.body.payload.items.some((s: { authMethod: string }) => s.authMethod === 'phone_code'),
      ).toBe(true);
    });

    it('answers an unknown number the same way and sends nothing', async () => {
      const phone = '+4915112340999';
      const res = await login({ phone }, from()).expect(202);
      expect(res.body.payload).toEqual({ codeSent: true, expiresIn: 300 });
      expect(await lastMessageTo(t.dataSource, phone)).toBeUndefined();
      expect((await login({ phone, code: '123456' }, from()).expect(401)).body.code).toBe(
        'INVALID_CREDENTIALS',
      );
    });
  });

  describe('GET /users/me/organizations', () => {
    async function addOrganization(
      owner: TestUser,
      member: TestUser,
      role: string,
      archived = false,
    ): Promise<string> {
      const [org] = await t.dataSource.query<Array<{ id: string }>>(
        `INSERT INTO organizations (name, slug, type, owner_id, created_by, archived_at)
         VALUES ($1, $2, 'team', $3, $3, $4) RETURNING id`,
        [
          `Org ${Math.random()}`,
          `org-${Math.random().toString(36).slice(2)}`,
          owner.id,
          archived ? new Date() : null,
        ],
      );
      await t.dataSource.query(
        `INSERT INTO organization_members (organization_id, user_id, role) VALUES ($1, $2, 'owner')`,
        [org.id, owner.id],
      );
      if (member.id !== owner.id) {
        await t.dataSource.query(
          `INSERT INTO organization_members (organization_id, user_id, role) VALUES ($1, $2, $3)`,
          [org.id, member.id, role],
        );
      }
      return org.id;
    }

    it("lists the caller's organizations with the caller's role, paged, without archived or foreign ones", async () => {
      const me = await registerUser(t.http);
      const other = await registerUser(t.http);
      const team = await addOrganization(other, me, 'member');
      await addOrganization(other, me, 'admin', true);
      await addOrganization(other, other, 'owner');

      const res = await request(t.http).get('/api/v1/users/me/organizations').set(bearer(me)).expect(200);
      expect(res.body.payload).toMatchObject({ page: 1, pageSize: 20, total: 2, totalPages: 1 });
      expect(res.body.payload.items).toEqual([
        expect.objectContaining({
          id: me.defaultOrganizationId,
          type: 'personal',
          role: 'owner',
          isDefault: true,
        }),
        expect.objectContaining({ id: team, type: 'team', role: 'member', isDefault: false }),
      ]);

      const second = await request(t.http)
        .get('/api/v1/users/me/organizations?page=2&pageSize=1')
        .set(bearer(me))
        .expect(200);
      expect(second.body.payload).toMatchObject({
        page: 2,
        pageSize: 1,
        total: 2,
        totalPages: 2,
        items: [expect.objectContaining({ id: team })],
      });
    });

    it('rejects a page size over 100', async () => {
      const me = await registerUser(t.http);
      const res = await request(t.http)
        .get('/api/v1/users/me/organizations?pageSize=101')
        .set(bearer(me))
        .expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    });
  });
});
