import { decodeJwt } from 'jose';
import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { RealtimeHub } from '../../../src/modules/realtime/services/realtime-hub.service.js';
import {
  connectInfo,
  listen,
  openStream,
  REALTIME_TEST_ENV,
  realtimePath,
  sleep,
  TestSocket,
  waitFor,
} from './realtime.fixtures.js';

/**
 * How the realtime surface refuses and ends connections (docs/realtime.md, "Connect tokens", "The event stream",
 * "Close codes"): a connect token never outlives the credential that asked for it, a refused socket is never
 * announced as having left, HEAD on the stream holds nothing open, an oversized first frame is a bad handshake,
 * an internal failure is not dressed up as rate limiting, and invalid UTF-8 closes with 1007.
 */
describe('realtime refusals and close codes', () => {
  let t: TestApp;
  let base: string;
  let wsUrl: string;
  let owner: TestUser;
  let doc: DocHandle;
  const sockets: TestSocket[] = [];

  const track = (socket: TestSocket): TestSocket => {
    sockets.push(socket);
    return socket;
  };
  const member = async (role: 'editor' | 'viewer' = 'editor'): Promise<TestUser> => {
    const user = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, user, role);
    return user;
  };
  const tokenFor = async (user: TestUser): Promise<string> =>
    (await connectInfo(t.http, user, doc, owner.defaultWorkspaceId)).token;
  const hub = (): RealtimeHub => t.app.get(RealtimeHub);

  beforeAll(async () => {
    t = await createTestApp({
      ...REALTIME_TEST_ENV,
      REALTIME_MAX_CONNECTIONS_PER_USER: '1',
      REALTIME_MAX_MESSAGE_BYTES: '8192',
      // Long enough that a socket still waiting for its `auth` is not mistaken for one closed on purpose.
      REALTIME_AUTH_TIMEOUT_MS: '5000',
      // Access tokens shorter-lived than connect tokens (300 s), so the cap shows for them too.
      ACCESS_TOKEN_TTL_SECONDS: '60',
    });
    base = await listen(t);
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner, { docType: 'boards', id: 'refusals' });
    const info = await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId);
    wsUrl = `${base.replace('http', 'ws')}${info.wsPath}`;
  });

  afterEach(async () => {
    sockets.splice(0).forEach((socket) => socket.close());
    await waitFor(() => hub().connectionCount === 0, 15_000, 'every connection to be gone');
  });

  afterAll(async () => {
    await t.close();
  });

  it('a connect token never outlives the credential that asked for it: access token, API key', async () => {
    const bySession = await request(t.http)
      .get(realtimePath(doc, 'connect'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set('Authorization', `Bearer ${owner.token}`)
      .expect(200);
    expect(bySession.body.payload.expiresIn).toBeLessThanOrEqual(60);
    expect(decodeJwt(bySession.body.payload.token).exp).toBeLessThanOrEqual(
      decodeJwt(owner.token).exp as number,
    );

    const keyExpiresAt = Math.floor(Date.now() / 1000) + 20;
    const key = await request(t.http)
      .post('/api/v1/api-keys')
      .set('Authorization', `Bearer ${owner.token}`)
      .send({ name: 'short', scopes: ['doc:read'], expiresAt: new Date(keyExpiresAt * 1000).toISOString() })
      .expect(201);
    const res = await request(t.http)
      .get(realtimePath(doc, 'connect'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set('Authorization', `Bearer ${key.body.payload.key}`)
      .expect(200);
    const { token, expiresIn } = res.body.payload as { token: string; expiresIn: number };
    expect(expiresIn).toBeGreaterThanOrEqual(1);
    expect(expiresIn).toBeLessThanOrEqual(20);
    expect(decodeJwt(token).exp).toBeLessThanOrEqual(keyExpiresAt);

    // A key without an expiry gets the configured lifetime.
    const lasting = await request(t.http)
      .post('/api/v1/api-keys')
      .set('Authorization', `Bearer ${owner.token}`)
      .send({ name: 'lasting', scopes: ['doc:read'] })
      .expect(201);
    const full = await request(t.http)
      .get(realtimePath(doc, 'connect'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set('Authorization', `Bearer ${lasting.body.payload.key}`)
      .expect(200);
    expect(full.body.payload.expiresIn).toBe(t.config.realtime.connectTokenTtlSeconds);
  });

  it('sends no presence notice for a socket that never joined', async () => {
    const watcher = track(await TestSocket.connect(wsUrl, await tokenFor(owner)));
    const editor = await member();
    const editorToken = await tokenFor(editor);
    const first = track(await TestSocket.connect(wsUrl, editorToken));
    const firstSession = (first.messages[0].payload as { sessionId: string }).sessionId;
    await waitFor(() => watcher.pushed('presence').length === 1, 15_000, 'the joined notice');
    expect(watcher.pushed('presence')[0]).toMatchObject({ action: 'joined', sessionId: firstSession });

    // Over the per-user limit: refused after its credential was accepted.
    const refused = track(await TestSocket.open(wsUrl));
    expect((await refused.send('auth', { token: editorToken })).payload).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
    });
    expect(await refused.closed()).toBe(4429);
    // A bad token.
    const stranger = track(await TestSocket.open(wsUrl));
    expect((await stranger.send('auth', { token: 'nope' })).kind).toBe('error');
    expect(await stranger.closed()).toBe(4401);

    // Notices travel in order on one channel: once the first socket's `left` is here, any earlier one would be too.
    first.close();
    await waitFor(
      () => watcher.pushed('presence').some((notice) => notice.action === 'left'),
      15_000,
      'the left notice',
    );
    await sleep(100);
    expect(watcher.pushed('presence')).toEqual([
      { action: 'joined', sessionId: firstSession, userId: editor.id },
      { action: 'left', sessionId: firstSession, userId: editor.id },
    ]);
  });

  it('HEAD on the event stream answers the headers and ends, holding no connection', async () => {
    const reader = await member('viewer');
    const path = `${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`;
    for (let index = 0; index < 3; index += 1) {
      const head = await request(t.http)
        .head(path)
        .set('Authorization', `Bearer ${reader.token}`)
        .timeout(3000);
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(head.headers['cache-control']).toBe('no-cache, no-transform');
    }
    expect(hub().connectionCount).toBe(0);
    // Authenticated like GET.
    await request(t.http).head(path).timeout(3000).expect(401);
    // The user's one connection is still free for the stream itself.
    const stream = openStream(`${base}${path}`, reader.token);
    try {
      await waitFor(() => stream.opened() === 1, 15_000, 'the stream');
      expect(hub().connectionCount).toBe(1);
    } finally {
      stream.es.close();
    }
  });

  it('an oversized first frame is a bad handshake (4400), later ones are refused and the socket stays', async () => {
    const socket = track(await TestSocket.open(wsUrl));
    socket.ws.send(
      JSON.stringify({
        kind: 'auth',
        seq: 1,
        payload: { token: await tokenFor(owner), filler: 'x'.repeat(9000) },
      }),
    );
    expect(await socket.closed()).toBe(4400);
    expect(socket.messages[0]).toMatchObject({
      kind: 'error',
      seq: null,
      payload: { code: 'PAYLOAD_TOO_LARGE' },
    });
    expect(socket.messages[1]).toEqual({ kind: 'closing', payload: { code: 4400, reason: 'BAD_HANDSHAKE' } });

    const binary = track(await TestSocket.open(wsUrl));
    binary.ws.send(Buffer.alloc(9000));
    expect(await binary.closed()).toBe(4400);
    expect(binary.messages[0]).toMatchObject({
      kind: 'error',
      seq: null,
      payload: { code: 'PAYLOAD_TOO_LARGE' },
    });

    const authed = track(await TestSocket.connect(wsUrl, await tokenFor(owner)));
    authed.ws.send(JSON.stringify({ kind: 'ping', seq: 2, payload: { filler: 'x'.repeat(9000) } }));
    await waitFor(() => authed.messages.length > 1, 15_000, 'the refusal');
    expect(authed.messages[1]).toMatchObject({
      kind: 'error',
      seq: null,
      payload: { code: 'PAYLOAD_TOO_LARGE' },
    });
    expect((await authed.send('ping')).kind).toBe('ack');
    expect(authed.closeCode).toBeUndefined();
  });

  it('a database failure while joining closes with 1011 INTERNAL_ERROR, not as rate limiting', async () => {
    // A real database error on the presence row's insert, for this test only.
    await t.dataSource.query(`
      CREATE FUNCTION test_refuse_presence() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'presence is unavailable'; END $$`);
    await t.dataSource.query(
      'CREATE TRIGGER test_refuse_presence BEFORE INSERT ON realtime_presence FOR EACH ROW EXECUTE FUNCTION test_refuse_presence()',
    );
    try {
      const socket = track(await TestSocket.open(wsUrl));
      const reply = await socket.send('auth', { token: await tokenFor(owner) });
      expect(reply).toMatchObject({ kind: 'error', seq: 1, payload: { code: 'INTERNAL_ERROR' } });
      expect(await socket.closed()).toBe(1011);
      expect(socket.messages[1]).toEqual({
        kind: 'closing',
        payload: { code: 1011, reason: 'INTERNAL_ERROR' },
      });
    } finally {
      await t.dataSource.query('DROP TRIGGER test_refuse_presence ON realtime_presence');
      await t.dataSource.query('DROP FUNCTION test_refuse_presence()');
    }
    await waitFor(() => hub().connectionCount === 0, 15_000, 'the failed socket to be detached');
    const fresh = track(await TestSocket.connect(wsUrl, await tokenFor(owner)));
    expect((await fresh.send('ping')).kind).toBe('ack');
  });

  it('a failure after the auth ack is told once, without a seq, and closes with 1011', async () => {
    // Catching the socket up (the outbox read every write uses) is broken for this one socket only; the session's
    // `auth` has had its ack by then, so the failure must not answer the same seq a second time.
    const live = hub();
    const catchUp = live.catchUp.bind(live);
    live.catchUp = () => {
      live.catchUp = catchUp;
      return Promise.reject(new Error('catch-up is unavailable'));
    };
    try {
      const socket = track(await TestSocket.open(wsUrl));
      const reply = await socket.send('auth', { token: await tokenFor(owner) });
      expect(reply).toMatchObject({ kind: 'ack', seq: 1 });
      expect(await socket.closed()).toBe(1011);
      expect(socket.messages.slice(1)).toEqual([
        { kind: 'error', seq: null, payload: expect.objectContaining({ code: 'INTERNAL_ERROR' }) },
        { kind: 'closing', payload: { code: 1011, reason: 'INTERNAL_ERROR' } },
      ]);
    } finally {
      live.catchUp = catchUp;
    }
    await waitFor(() => hub().connectionCount === 0, 15_000, 'the failed socket to be detached');
  });

  it('a text frame that is not UTF-8 closes with 1007', async () => {
    const socket = track(await TestSocket.open(wsUrl));
    socket.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect(await socket.closed()).toBe(1007);
    const authed = track(await TestSocket.connect(wsUrl, await tokenFor(owner)));
    authed.ws.send(Buffer.from([0xc3, 0x28]), { binary: false });
    expect(await authed.closed()).toBe(1007);
  });
});
