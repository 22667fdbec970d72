import { registerUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createDocument } from '../documents/documents.fixtures.js';
import { connectInfo, listen, REALTIME_TEST_ENV, TestSocket, waitFor } from './realtime.fixtures.js';

/**
 * REALTIME_MAX_CONNECTIONS bounds what an instance holds open, and a socket is held from its upgrade on: sockets
 * that have not sent `auth` yet take places too, or anyone could keep any number of them open without a
 * credential (each for REALTIME_AUTH_TIMEOUT_MS, then again).
 */
describe('realtime connection limit and sockets that have not authenticated', () => {
  let t: TestApp;
  let wsUrl: string;
  let token: string;
  const sockets: TestSocket[] = [];

  const open = async (): Promise<TestSocket> => {
    const socket = await TestSocket.open(wsUrl);
    sockets.push(socket);
    return socket;
  };

  beforeAll(async () => {
    t = await createTestApp({ ...REALTIME_TEST_ENV, REALTIME_MAX_CONNECTIONS: '2', REALTIME_AUTH_TIMEOUT_MS: '1500' });
    const base = await listen(t);
    const user = await registerUser(t.http);
    const doc = await createDocument(t.http, user, { docType: 'boards', id: 'limits' });
    const info = await connectInfo(t.http, user, doc, user.defaultWorkspaceId);
    wsUrl = `${base.replace('http', 'ws')}${info.wsPath}`;
    token = info.token;
  });

  afterAll(async () => {
    sockets.forEach((socket) => socket.close());
    await t.close();
  });

  it('refuses a socket past the limit with RATE_LIMIT_EXCEEDED and 4429, counting sockets not yet authenticated', async () => {
    const first = await open();
    const second = await open();
    // Neither has authenticated: the instance is full all the same.
    const third = await open();
    expect(await third.closed()).toBe(4429);
    expect(third.messages[0]).toMatchObject({
      kind: 'error',
      seq: null,
      payload: { code: 'RATE_LIMIT_EXCEEDED' },
    });
    expect(third.messages[1]).toEqual({ kind: 'closing', payload: { code: 4429, reason: 'TOO_MANY' } });

    // A place comes free when a pending socket closes; the next one authenticates.
    first.close();
    await first.closed();
    let joined: TestSocket | undefined;
    await waitFor(
      async () => {
        const candidate = await open();
        await waitFor(() => candidate.closeCode !== undefined || candidate.messages.length > 0, 300).catch(
          () => undefined,
        );
        if (candidate.closeCode !== undefined) {
          return false;
        }
        joined = candidate;
        return true;
      },
      15_000,
      'room for a socket',
    );
    const ack = await (joined as TestSocket).send('auth', { token });
    expect(ack.kind).toBe('ack');

    // One authenticated, one pending: still full, until the pending one times out (4408).
    const fourth = await open();
    expect(await fourth.closed()).toBe(4429);
    expect(await second.closed()).toBe(4408);
    const fifth = await open();
    expect((await fifth.send('auth', { token })).kind).toBe('ack');
  });
});
