import { registerUser } from '../../factories/users.factory.js';
import { blockedSessions, holdLock } from '../../utils/row-locks.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createDocument } from '../documents/documents.fixtures.js';
import { connectInfo, listen, REALTIME_TEST_ENV, sleep, TestSocket, waitFor } from './realtime.fixtures.js';

/**
 * Frames of one socket are handled one at a time. The message rate and size limits must apply as frames arrive,
 * not when their turn comes: otherwise a client that sends faster than its messages are handled (here: while its
 * `auth` message waits for the database) makes the server hold every frame it sends, without bound.
 */
describe('realtime socket: limits apply as frames arrive', () => {
  let t: TestApp;
  let wsUrl: string;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({
      ...REALTIME_TEST_ENV,
      REALTIME_MAX_MESSAGES_PER_SECOND: '20',
      REALTIME_MAX_MESSAGE_BYTES: '65536',
      REALTIME_AUTH_TIMEOUT_MS: '20000',
    });
    const base = await listen(t);
    const user = await registerUser(t.http);
    const doc = await createDocument(t.http, user, { docType: 'boards', id: 'flood' });
    const info = await connectInfo(t.http, user, doc, user.defaultWorkspaceId);
    wsUrl = `${base.replace('http', 'ws')}${info.wsPath}`;
    token = info.token;
  });

  afterAll(async () => {
    await t.close();
  });

  it('a flood sent while the auth message is still being handled is refused and ends the socket (4429)', async () => {
    // The handshake checks the session behind the connect token: it waits while the test holds the table.
    const lock = await holdLock(t.dataSource, 'LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE', []);
    let socket: TestSocket | undefined;
    try {
      socket = await TestSocket.open(wsUrl);
      socket.ws.send(JSON.stringify({ kind: 'auth', seq: 1, payload: { token } }));
      await blockedSessions(t.dataSource, 1);
      const filler = 'x'.repeat(40_000);
      for (let index = 0; index < 300; index += 1) {
        socket.ws.send(JSON.stringify({ kind: 'ping', seq: index + 2, payload: { filler } }));
      }
      const flooded = socket;
      await waitFor(() => flooded.closeCode !== undefined, 15_000, 'the flooding socket to be closed');
      expect(flooded.closeCode).toBe(4429);
      const refusals = flooded.messages.filter(
        (message) => message.kind === 'error' && message.seq === null,
      );
      expect(refusals.length).toBeGreaterThan(0);
      expect(refusals[0].payload).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
    } finally {
      await lock.release();
      socket?.close();
    }
    // The frames it was allowed are answered in order after the handshake, and nothing broke.
    await sleep(200);
    const fresh = await TestSocket.connect(wsUrl, token);
    expect((await fresh.send('ping')).kind).toBe('ack');
    fresh.close();
  });

  it('a frame over REALTIME_MAX_MESSAGE_BYTES is refused as it arrives, while earlier messages wait', async () => {
    const lock = await holdLock(t.dataSource, 'LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE', []);
    let socket: TestSocket | undefined;
    try {
      socket = await TestSocket.open(wsUrl);
      socket.ws.send(JSON.stringify({ kind: 'auth', seq: 1, payload: { token } }));
      await blockedSessions(t.dataSource, 1);
      socket.ws.send(JSON.stringify({ kind: 'ping', seq: 2, payload: { filler: 'y'.repeat(70_000) } }));
      const waiting = socket;
      await waitFor(() => waiting.messages.length > 0, 15_000, 'the refusal');
      expect(waiting.messages[0]).toMatchObject({
        kind: 'error',
        seq: null,
        payload: { code: 'PAYLOAD_TOO_LARGE' },
      });
    } finally {
      await lock.release();
    }
    const authed = socket as TestSocket;
    await waitFor(() => authed.messages.some((message) => message.seq === 1), 15_000, 'the auth ack');
    expect(authed.messages.find((message) => message.seq === 1)?.kind).toBe('ack');
    authed.close();
  });
});
