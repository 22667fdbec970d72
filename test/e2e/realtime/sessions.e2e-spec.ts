import request from 'supertest';
import * as Y from 'yjs';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  bearer,
  createDocument,
  createRow,
  type DocHandle,
} from '../documents/documents.fixtures.js';
import {
  decodeFrame,
  encodeAwareness,
  encodeSync,
  SYNC_STEP1,
  SYNC_UPDATE,
} from '../../../src/modules/realtime/domain/yjs-wire.js';
import {
  connectInfo,
  coordinates,
  listen,
  REALTIME_TEST_ENV,
  realtimePath,
  recordEvents,
  sleep,
  TestSocket,
  waitFor,
} from './realtime.fixtures.js';

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/** A Yjs client speaking the JSON protocol: local edits go out as yjs_update, pushed updates are applied. */
function yjsClient(socket: TestSocket): Y.Doc {
  const doc = new Y.Doc();
  let applied = 0;
  doc.on('update', (update: Uint8Array, origin: unknown) => {
    if (origin !== 'remote') {
      void socket.send('yjs_update', { update: b64(update) });
    }
  });
  const timer = setInterval(() => {
    const pushed = socket.pushed('yjs_update');
    for (; applied < pushed.length; applied += 1) {
      Y.applyUpdate(doc, new Uint8Array(Buffer.from(String(pushed[applied].update), 'base64')), 'remote');
    }
  }, 10);
  socket.ws.on('close', () => clearInterval(timer));
  return doc;
}

describe('realtime WebSocket sessions', () => {
  let t: TestApp;
  let base: string;
  let wsBase: string;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let doc: DocHandle;
  let wsUrl: string;
  const sockets: TestSocket[] = [];

  const track = (socket: TestSocket): TestSocket => {
    sockets.push(socket);
    return socket;
  };
  const tokenFor = async (user: TestUser): Promise<string> =>
    (await connectInfo(t.http, user, doc, owner.defaultWorkspaceId)).token;

  beforeAll(async () => {
    t = await createTestApp({
      ...REALTIME_TEST_ENV,
      REALTIME_MAX_MESSAGES_PER_SECOND: '20',
      REALTIME_MAX_MESSAGE_BYTES: '8192',
    });
    base = await listen(t);
    wsBase = base.replace('http', 'ws');
    owner = await registerUser(t.http);
    editor = await registerUser(t.http);
    viewer = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    doc = await createDocument(t.http, owner, { docType: 'boards', id: 'b-1' });
    const info = await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId);
    wsUrl = `${wsBase}${info.wsPath}`;
    expect(info.wsUrl).toBe(
      `${wsBase}/realtime/ws?docType=boards&docId=b-1&workspaceId=${owner.defaultWorkspaceId}`,
    );
    expect(info).toMatchObject({
      wsHost: new URL(base).hostname,
      wsPath: '/realtime/ws',
      port: Number(new URL(base).port),
      protocols: ['quire.realtime.v1'],
    });
  });

  afterEach(() => {
    sockets.splice(0).forEach((socket) => socket.close());
  });

  afterAll(async () => {
    await t.close();
  });

  it('serves the JSON Schema of every message kind', async () => {
    // Spec 4: not marked public, so it needs a token; answered in the envelope like every operation.
    await request(t.http).get('/realtime/messages/schema').expect(401);
    const answer = await request(t.http).get('/realtime/messages/schema').set(bearer(owner)).expect(200);
    expect(answer.body).toMatchObject({ success: true });
    const res = { body: answer.body.payload };
    expect(Object.keys(res.body.$defs.client)).toEqual([
      'auth',
      'ping',
      'yjs_sync',
      'yjs_update',
      'awareness',
      'lock',
      'unlock',
      'users',
      'locks',
    ]);
    expect(Object.keys(res.body.$defs.server)).toEqual([
      'ack',
      'error',
      'event',
      'yjs_update',
      'awareness',
      'presence',
      'lock_changed',
      'closing',
    ]);
    expect(res.body.$defs.client.auth.properties.payload.required).toEqual(['token']);
  });

  it('handshake: connect token, bearer token with the document in the URL, late, bad token, wrong first message', async () => {
    const good = track(await TestSocket.open(wsUrl));
    const ack = await good.send('auth', { token: await tokenFor(owner) });
    expect(ack).toMatchObject({
      kind: 'ack',
      seq: 1,
      payload: {
        userId: owner.id,
        canWrite: true,
        document: { docType: 'boards', docId: 'b-1', workspaceId: owner.defaultWorkspaceId },
      },
    });

    const byBearer = track(
      await TestSocket.open(
        `${wsBase}/realtime/ws?docType=boards&docId=b-1&workspaceId=${owner.defaultWorkspaceId}`,
      ),
    );
    expect((await byBearer.send('auth', { token: viewer.token })).payload).toMatchObject({
      userId: viewer.id,
      canWrite: false,
    });

    const late = track(await TestSocket.open(wsUrl));
    expect(await late.closed()).toBe(4408);

    const bad = track(await TestSocket.open(wsUrl));
    // Neither a connect token nor any known credential: UNAUTHORIZED, as the same bearer token over HTTP.
    const refused = await bad.send('auth', { token: 'not-a-token' });
    expect(refused).toMatchObject({ kind: 'error', seq: 1, payload: { code: 'UNAUTHORIZED' } });
    expect(await bad.closed()).toBe(4401);

    const stranger = await registerUser(t.http);
    const foreign = track(
      await TestSocket.open(
        `${wsBase}/realtime/ws?docType=boards&docId=b-1&workspaceId=${owner.defaultWorkspaceId}`,
      ),
    );
    expect((await foreign.send('auth', { token: stranger.token })).payload).toMatchObject({
      code: 'DOC_NOT_FOUND',
    });
    expect(await foreign.closed()).toBe(4403);

    const wrong = track(await TestSocket.open(wsUrl));
    expect((await wrong.send('ping')).payload).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await wrong.closed()).toBe(4400);
  });

  it('answers every message kind by seq, and bad messages with an error instead of a crash', async () => {
    const socket = track(await TestSocket.connect(wsUrl, await tokenFor(owner)));
    expect((await socket.send('ping')).kind).toBe('ack');
    const sync = await socket.send('yjs_sync', {});
    expect(sync.payload).toEqual({ update: expect.any(String), stateVector: expect.any(String) });

    const local = new Y.Doc();
    local.getMap('draft').set('title', 'hello');
    expect((await socket.send('yjs_update', { update: b64(Y.encodeStateAsUpdate(local)) })).kind).toBe('ack');
    const awareness = encodeAwareness([
      { clientId: local.clientID, clock: 1, state: { user: { name: 'Owner' }, cursor: { row: 'r1' } } },
    ]);
    expect((await socket.send('awareness', { update: b64(awareness) })).kind).toBe('ack');
    const users = await socket.send('users');
    // Sockets of earlier tests may still be leaving; this session must be listed with its awareness state.
    expect(users.payload.items).toEqual(
      expect.arrayContaining([
        {
          userId: owner.id,
          sessions: expect.arrayContaining([
            expect.objectContaining({
              transport: 'ws',
              clientId: local.clientID,
              state: { user: { name: 'Owner' }, cursor: { row: 'r1' } },
            }),
          ]),
        },
      ]),
    );
    const lock = await socket.send('lock', {
      target: { type: 'cell', rowId: 'r1', fieldId: 'name' },
      ttlSeconds: 30,
    });
    expect(lock.payload).toMatchObject({
      lockId: expect.any(String),
      target: { type: 'cell', rowId: 'r1', fieldId: 'name' },
      exclusive: true,
      userId: owner.id,
    });
    expect(((await socket.send('locks')).payload.items as unknown[]).length).toBe(1);
    expect((await socket.send('unlock', { lockId: lock.payload.lockId })).kind).toBe('ack');
    expect((await socket.send('locks')).payload.items).toEqual([]);

    // Committed domain events arrive on the socket too.
    await recordEvents(t, coordinates(owner, doc), ['comment_created']);
    await waitFor(() => socket.pushed('event').length === 1, 15_000, 'event');
    expect(socket.pushed('event')[0]).toMatchObject({
      event: 'comment_created',
      docType: 'boards',
      docId: 'b-1',
    });

    // Bad input: never a crash, always an error reply (seq echoed when readable).
    socket.ws.send('{not json');
    await waitFor(() => socket.messages.some((message) => message.kind === 'error' && message.seq === null));
    expect((await socket.send('teleport')).payload).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((await socket.send('lock', { target: { type: 'cell', rowId: 'r1' } })).payload).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'payload.target.fieldId' },
    });
    const stored = async (): Promise<number> =>
      (
        await t.dataSource.query<Array<{ n: number }>>(`SELECT count(*)::int AS n FROM realtime_yjs_updates`)
      )[0].n;
    const storedBefore = await stored();
    expect(
      (await socket.send('yjs_update', { update: b64(new Uint8Array([1, 2, 3, 250, 251])) })).payload,
    ).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await stored()).toBe(storedBefore);
    expect(
      (await socket.send('unlock', { lockId: '00000000-0000-4000-8000-000000000000' })).payload,
    ).toMatchObject({ code: 'NOT_FOUND' });
    expect((await socket.send('auth', { token: 'again' })).payload).toMatchObject({ code: 'INVALID_STATE' });
    socket.ws.send(Buffer.from([9, 9, 9]));
    await waitFor(
      () => socket.messages.filter((message) => message.kind === 'error' && message.seq === null).length >= 2,
    );
    socket.ws.send(JSON.stringify({ kind: 'yjs_update', seq: 99, payload: { update: 'A'.repeat(12_000) } }));
    await waitFor(
      () =>
        socket.messages.some(
          (message) =>
            message.kind === 'error' && (message.payload as { code?: string }).code === 'PAYLOAD_TOO_LARGE',
        ),
      15_000,
      'size limit',
    );
    expect((await socket.send('ping')).kind).toBe('ack');
  });

  it('limits the message rate per connection, and a viewer cannot write', async () => {
    const socket = track(await TestSocket.connect(wsUrl, await tokenFor(viewer)));
    const denied = await socket.send('yjs_update', { update: b64(Y.encodeStateAsUpdate(new Y.Doc())) });
    expect(denied.payload).toMatchObject({ code: 'FORBIDDEN' });
    expect((await socket.send('lock', { target: { type: 'document' } })).payload).toMatchObject({
      code: 'FORBIDDEN',
    });
    for (let index = 0; index < 60; index += 1) {
      socket.ws.send(JSON.stringify({ kind: 'ping', seq: 1000 + index, payload: {} }));
    }
    await waitFor(
      () =>
        socket.messages.some(
          (message) => (message.payload as { code?: string }).code === 'RATE_LIMIT_EXCEEDED',
        ),
      15_000,
      'rate limit',
    );
    await sleep(1200);
    expect(socket.closeCode === undefined || socket.closeCode === 4429).toBe(true);
  });

  it('converges two Yjs clients through the server, and serves late joiners and the HTTP fallback', async () => {
    const a = track(await TestSocket.connect(wsUrl, await tokenFor(owner)));
    const b = track(await TestSocket.connect(wsUrl, await tokenFor(editor)));
    const docA = yjsClient(a);
    const docB = yjsClient(b);
    docA.getText('notes').insert(0, 'alpha ');
    docB.getText('notes').insert(0, 'beta ');
    docA.getArray('items').push(['one']);
    docB.getArray('items').push(['two']);
    await waitFor(
      () =>
        docA.getText('notes').toString() === docB.getText('notes').toString() &&
        docA.getArray('items').length === 2 &&
        docB.getArray('items').length === 2,
      15_000,
      'convergence',
    );
    expect(docA.getText('notes').toString()).toContain('alpha');
    expect(docA.getText('notes').toString()).toContain('beta');

    // HTTP fallback reaches sockets; the stored state catches up a late joiner.
    const helper = new Y.Doc();
    Y.applyUpdate(helper, Y.encodeStateAsUpdate(docA));
    const before = Y.encodeStateVector(helper);
    helper.getMap('meta').set('from', 'http');
    const res = await request(t.http)
      .post(realtimePath(doc, 'apply-update'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(editor))
      .send({ update: b64(Y.encodeStateAsUpdate(helper, before)) });
    expect(res.status).toBe(200);
    await waitFor(
      () => docA.getMap('meta').get('from') === 'http' && docB.getMap('meta').get('from') === 'http',
      15_000,
      'http update relayed',
    );
    const late = new Y.Doc();
    const lateSocket = track(await TestSocket.connect(wsUrl, await tokenFor(viewer)));
    const sync = await lateSocket.send('yjs_sync', { stateVector: b64(Y.encodeStateVector(late)) });
    Y.applyUpdate(late, new Uint8Array(Buffer.from(String(sync.payload.update), 'base64')));
    expect(late.getText('notes').toString()).toBe(docA.getText('notes').toString());

    const awareness = encodeAwareness([{ clientId: 4242, clock: 1, state: { user: { name: 'HTTP bot' } } }]);
    const aw = await request(t.http)
      .post(realtimePath(doc, 'awareness'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(viewer))
      .send({ update: b64(awareness) });
    expect(aw.status).toBe(200);
    await waitFor(() => a.pushed('awareness').length > 0, 15_000, 'awareness relayed');
    const users = await request(t.http)
      .get(realtimePath(doc, 'users'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(viewer));
    const viewerEntry = users.body.payload.items.find(
      (user: { userId: string }) => user.userId === viewer.id,
    );
    expect(viewerEntry.sessions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ transport: 'http', clientId: 4242, state: { user: { name: 'HTTP bot' } } }),
      ]),
    );

    const invalid = await request(t.http)
      .post(realtimePath(doc, 'apply-update'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(editor))
      .send({ update: 'not base64!' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('VALIDATION_ERROR');
    const viewerWrite = await request(t.http)
      .post(realtimePath(doc, 'apply-update'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(viewer))
      .send({ update: b64(Y.encodeStateAsUpdate(new Y.Doc())) });
    expect(viewerWrite.status).toBe(403);
  });

  it('speaks the binary y-protocols framing of stock Yjs providers after auth', async () => {
    const jsonClient = track(await TestSocket.connect(wsUrl, await tokenFor(owner)));
    const binaryClient = track(await TestSocket.connect(wsUrl, await tokenFor(editor)));
    const local = new Y.Doc();
    binaryClient.ws.send(encodeSync(SYNC_STEP1, Y.encodeStateVector(local)));
    await waitFor(() => binaryClient.binary.length >= 2, 15_000, 'sync step 2 and step 1');
    const [step2, step1] = binaryClient.binary.map((frame) => decodeFrame(frame));
    expect(step2.type).toBe('update');
    expect(step1.type).toBe('sync-step1');
    if (step2.type === 'update') {
      Y.applyUpdate(local, step2.update);
    }
    const before = Y.encodeStateVector(local);
    local.getMap('binary').set('hello', 'from a stock client');
    binaryClient.ws.send(encodeSync(SYNC_UPDATE, Y.encodeStateAsUpdate(local, before)));
    await waitFor(() => jsonClient.pushed('yjs_update').length > 0, 15_000, 'relayed as JSON');
    const mirror = new Y.Doc();
    const sync = await jsonClient.send('yjs_sync', {});
    Y.applyUpdate(mirror, new Uint8Array(Buffer.from(String(sync.payload.update), 'base64')));
    expect(mirror.getMap('binary').get('hello')).toBe('from a stock client');

    const other = new Y.Doc();
    other.getMap('binary').set('back', 'to binary');
    await jsonClient.send('yjs_update', { update: b64(Y.encodeStateAsUpdate(other)) });
    await waitFor(() => binaryClient.binary.length >= 3, 15_000, 'relayed as binary');
    expect(decodeFrame(binaryClient.binary[2]).type).toBe('update');
  });

  it('terminates a socket that stops answering pings, and keeps one whose process stalled past a heartbeat', async () => {
    const silent = track(await TestSocket.connect(wsUrl, await tokenFor(owner), { autoPong: false }));
    const stalled = track(await TestSocket.connect(wsUrl, await tokenFor(editor)));
    // The server and this client share one process: blocking inside the client's ping handler (after its
    // automatic pong is written) stalls the server past its next heartbeat, as a loaded machine would.
    stalled.ws.once('ping', () => {
      const until = Date.now() + 3 * Number(REALTIME_TEST_ENV.REALTIME_HEARTBEAT_MS);
      while (Date.now() < until) {
        // busy: nothing else runs
      }
    });
    // Terminated, not closed: no close frame, so the client sees 1006.
    expect(await silent.closed()).toBe(1006);
    expect(stalled.closeCode).toBeUndefined();
    expect((await stalled.send('ping')).kind).toBe('ack');
  });

  it('limits connections per user', async () => {
    const limited = await createTestApp({ ...REALTIME_TEST_ENV, REALTIME_MAX_CONNECTIONS_PER_USER: '2' });
    try {
      const limitedBase = await listen(limited);
      const user = await registerUser(limited.http);
      const own = await createDocument(limited.http, user, { docType: 'boards', id: 'limited' });
      const info = await connectInfo(limited.http, user, own, user.defaultWorkspaceId);
      const url = `${limitedBase.replace('http', 'ws')}${info.wsPath}`;
      const first = await TestSocket.connect(url, info.token);
      const second = await TestSocket.connect(url, info.token);
      const third = await TestSocket.open(url);
      expect((await third.send('auth', { token: info.token })).payload).toMatchObject({
        code: 'RATE_LIMIT_EXCEEDED',
      });
      expect(await third.closed()).toBe(4429);
      const stream = await fetch(`${limitedBase}${realtimePath(own, 'events/stream')}?token=${info.token}`);
      expect(stream.status).toBe(429);
      expect(((await stream.json()) as { code: string }).code).toBe('RATE_LIMIT_EXCEEDED');
      first.close();
      await waitFor(
        async () =>
          await fetch(`${limitedBase}${realtimePath(own, 'events/stream')}?token=${info.token}`, {
            signal: AbortSignal.timeout(500),
          })
            .then((res) => res.status === 200)
            .catch(() => false),
        15_000,
        'room again',
      );
      second.close();
    } finally {
      await limited.close();
    }
  });

  it('disconnect-all closes every socket of the document (managers only)', async () => {
    const a = track(await TestSocket.connect(wsUrl, await tokenFor(owner)));
    const b = track(await TestSocket.connect(wsUrl, await tokenFor(viewer)));
    const refused = await request(t.http)
      .post(realtimePath(doc, 'disconnect-all'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(editor));
    expect(refused.status).toBe(403);
    const res = await request(t.http)
      .post(realtimePath(doc, 'disconnect-all'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner));
    expect(res.status).toBe(200);
    expect(await a.closed()).toBe(4410);
    expect(await b.closed()).toBe(4410);
    expect(b.pushed('closing')).toEqual([{ code: 4410, reason: 'DISCONNECTED_BY_MANAGER' }]);
    await waitFor(
      async () => {
        const users = await request(t.http)
          .get(realtimePath(doc, 'users'))
          .query({ workspaceId: owner.defaultWorkspaceId })
          .set(bearer(owner));
        return !users.body.payload.items.some((user: { sessions: Array<{ transport: string }> }) =>
          user.sessions.some((session) => session.transport === 'ws'),
        );
      },
      15_000,
      'presence cleared',
    );
  });

  it('ends a socket when its user loses access', async () => {
    const member = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, member, 'viewer');
    const socket = track(await TestSocket.connect(wsUrl, await tokenFor(member)));
    await t.dataSource.query(`DELETE FROM workspace_members WHERE user_id = $1`, [member.id]);
    expect(await socket.closed()).toBe(4403);
    await createRow(t.http, owner, doc, { values: { name: 'after' } }).catch(() => undefined);
  });
});
