import { connect } from 'node:net';
import { Logger } from '@nestjs/common';
import request from 'supertest';
import { WebSocket } from 'ws';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { connectInfo, listen, REALTIME_TEST_ENV, TestSocket, waitFor } from './realtime.fixtures.js';

type Reply = { kind: string; seq?: number | null; payload: Record<string, unknown> };

/** The socket's upgrade and first message: what is refused, with which close code and which details. */
describe('realtime socket handshake', () => {
  let t: TestApp;
  let base: string;
  let wsBase: string;
  let owner: TestUser;
  let doc: DocHandle;
  let docUrl: string;
  const sockets: TestSocket[] = [];

  const open = async (url = docUrl): Promise<TestSocket> => {
    const socket = await TestSocket.open(url);
    sockets.push(socket);
    return socket;
  };
  /** Sends one raw first frame; returns the reply and the close code. */
  const firstFrame = async (frame: string, url = docUrl): Promise<{ reply: Reply; code: number }> => {
    const socket = await open(url);
    socket.ws.send(frame);
    await waitFor(() => socket.messages.some((message) => message.kind === 'error'), 15_000, 'error reply');
    return {
      reply: socket.messages.find((message) => message.kind === 'error') as Reply,
      code: await socket.closed(),
    };
  };
  /** The raw HTTP answer to an upgrade request for `path`. */
  const rawUpgrade = async (path: string): Promise<string> => {
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 3000))]);
    socket.destroy();
    return answer;
  };

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    base = await listen(t);
    wsBase = base.replace('http', 'ws');
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner, { docType: 'boards', id: 'hs-1' });
    docUrl = `${wsBase}/realtime/ws?docType=boards&docId=hs-1&workspaceId=${owner.defaultWorkspaceId}`;
  });

  afterEach(() => {
    sockets.splice(0).forEach((socket) => socket.close());
  });

  afterAll(async () => {
    await t.close();
  });

  it('a missing or empty token is 4401 UNAUTHENTICATED, as documented', async () => {
    for (const payload of [{}, { token: '' }, undefined]) {
      const { reply, code } = await firstFrame(
        JSON.stringify({ kind: 'auth', seq: 1, ...(payload ? { payload } : {}) }),
      );
      expect([payload, reply.seq, reply.payload.code, reply.payload.details, code]).toEqual([
        payload,
        1,
        'UNAUTHORIZED',
        { field: 'payload.token', reason: 'token is required' },
        4401,
      ]);
    }
  });

  it('a malformed first message is 4400 with details naming what is wrong', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ kind: 'auth', seq: '1', payload: { token: 'x' } }, 'seq', /seq must be a non-negative integer/],
      [{ kind: 'auth', seq: 1.5, payload: { token: 'x' } }, 'seq', /seq/],
      [{ kind: 'auth', seq: -1, payload: { token: 'x' } }, 'seq', /seq/],
      [{ kind: 'auth', payload: { token: 'x' } }, 'seq', /seq/],
      [
        { kind: 'auth', seq: 1, payload: { token: 'x' }, extra: 1 },
        'extra',
        /property extra should not exist/,
      ],
      [{ kind: 'auth', seq: 1, payload: { token: 'x', other: 1 } }, 'payload.other', /should not exist/],
      [{ kind: 'auth', seq: 1, payload: { token: 5 } }, 'payload.token', /token must be a string/],
      [{ kind: 'auth', seq: 1, payload: 'x' }, 'payload', /payload must be an object/],
      [{ kind: 'ping', seq: 1 }, 'kind', /the first message must be/],
      ['{not json', 'message', /JSON/],
    ];
    for (const [frame, field, reason] of cases) {
      const { reply, code } = await firstFrame(typeof frame === 'string' ? frame : JSON.stringify(frame));
      const details = reply.payload.details as { field: string; reason: string };
      expect([frame, reply.payload.code, details.field, code]).toEqual([
        frame,
        'VALIDATION_ERROR',
        field,
        4400,
      ]);
      expect(details.reason).toMatch(reason);
    }
  });

  it('a bearer token on a socket whose URL names no document: VALIDATION_ERROR naming docType/docId, 4400', async () => {
    const none = await firstFrame(
      JSON.stringify({ kind: 'auth', seq: 1, payload: { token: owner.token } }),
      `${wsBase}/realtime/ws`,
    );
    expect(none.reply.payload.code).toBe('VALIDATION_ERROR');
    expect(
      (none.reply.payload.details as { errors: Array<{ field: string }> }).errors.map(
        (detail) => detail.field,
      ),
    ).toEqual(['docType', 'docId']);
    expect(none.code).toBe(4400);
    const half = await firstFrame(
      JSON.stringify({ kind: 'auth', seq: 1, payload: { token: owner.token } }),
      `${wsBase}/realtime/ws?docType=boards`,
    );
    expect([
      half.reply.payload.code,
      (half.reply.payload.details as { field: string }).field,
      half.code,
    ]).toEqual(['VALIDATION_ERROR', 'docId', 4400]);
    // A connect token names its document: no query needed.
    const token = (await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId)).token;
    sockets.push(await TestSocket.connect(`${wsBase}/realtime/ws`, token));
  });

  it('a malformed workspaceId or organizationId in the socket URL is refused like over HTTP', async () => {
    const http = await request(t.http)
      .get('/realtime/doc/boards/hs-1/users')
      .query({ workspaceId: 'zzz' })
      .set(bearer(owner));
    expect(http.status).toBe(400);
    for (const [query, field] of [
      ['workspaceId=zzz', 'workspaceId'],
      ['organizationId=zzz', 'organizationId'],
      [`workspaceId=${owner.defaultWorkspaceId}&workspaceId=${owner.defaultWorkspaceId}`, 'workspaceId'],
    ]) {
      const { reply, code } = await firstFrame(
        JSON.stringify({ kind: 'auth', seq: 1, payload: { token: owner.token } }),
        `${wsBase}/realtime/ws?docType=boards&docId=hs-1&${query}`,
      );
      expect([query, reply.payload.code, (reply.payload.details as { field: string }).field, code]).toEqual([
        query,
        'VALIDATION_ERROR',
        field,
        4400,
      ]);
    }
  });

  it('selects only quire.realtime.v1; offered protocols without it get none (the client fails the connection)', async () => {
    const protocolOf = async (protocols: string[] | undefined): Promise<string | Error> => {
      const ws = new WebSocket(docUrl, protocols);
      return new Promise((resolve) => {
        ws.once('open', () => {
          resolve(ws.protocol);
          ws.close();
        });
        ws.once('error', (error) => resolve(error));
      });
    };
    expect(await protocolOf(['quire.realtime.v1'])).toBe('quire.realtime.v1');
    expect(await protocolOf(['foo', 'quire.realtime.v1'])).toBe('quire.realtime.v1');
    expect(await protocolOf(undefined)).toBe('');
    const refused = await protocolOf(['foo']);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/no subprotocol/i);
  });

  it('a frame over the hard cap closes with 1009 and logs no error', async () => {
    // Whatever reaches Nest's loggers at error or warn level (the ws adapter logs socket errors through one).
    const logged: unknown[] = [];
    const original = { error: Logger.prototype.error, warn: Logger.prototype.warn };
    Logger.prototype.error = function error(...args: unknown[]) {
      logged.push(args);
    };
    Logger.prototype.warn = function warn(...args: unknown[]) {
      logged.push(args);
    };
    try {
      const token = (await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId)).token;
      const socket = await TestSocket.connect(docUrl, token);
      sockets.push(socket);
      socket.ws.send(Buffer.alloc(1100 * 1024, 1));
      expect(await socket.closed()).toBe(1009);
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      Logger.prototype.error = original.error;
      Logger.prototype.warn = original.warn;
    }
    expect(logged).toEqual([]);
  });

  it('a ping without payload is fine, and the schema says payload is optional where nothing in it is required', async () => {
    const token = (await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId)).token;
    const socket = await TestSocket.connect(docUrl, token);
    sockets.push(socket);
    socket.ws.send(JSON.stringify({ kind: 'ping', seq: 2 }));
    await waitFor(() => socket.messages.some((message) => message.seq === 2), 15_000, 'ping reply');
    expect(socket.messages.find((message) => message.seq === 2)?.kind).toBe('ack');
    socket.ws.send(JSON.stringify({ kind: 'awareness', seq: 3 }));
    await waitFor(() => socket.messages.some((message) => message.seq === 3), 15_000, 'awareness reply');
    expect(socket.messages.find((message) => message.seq === 3)?.payload).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'payload', reason: 'payload is required' },
    });
    const schema = (await request(t.http).get('/realtime/messages/schema').set(bearer(owner)).expect(200))
      .body.payload;
    const required = (kind: string): string[] => schema.$defs.client[kind].required;
    for (const kind of ['ping', 'users', 'locks', 'yjs_sync']) {
      expect([kind, required(kind)]).toEqual([kind, ['kind', 'seq']]);
    }
    for (const kind of ['auth', 'yjs_update', 'awareness', 'lock', 'unlock']) {
      expect([kind, required(kind)]).toEqual([kind, ['kind', 'seq', 'payload']]);
    }
  });

  it('an upgrade to another path is answered 404, not dropped', async () => {
    const answer = await rawUpgrade('/realtime/nope');
    expect(answer).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(answer).toContain('NOT_FOUND');
    expect(await rawUpgrade('/api/v1/realtime/ws')).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(await rawUpgrade('/realtime/ws?docType=boards')).toMatch(/^HTTP\/1\.1 101 /);
  });

  it("an API key's IP allow-list sees the socket's client address as HTTP requests do (X-Forwarded-For from a trusted proxy)", async () => {
    const created = await request(t.http)
      .post('/api/v1/api-keys')
      .set(bearer(owner))
      .send({ name: 'allow-listed', scopes: ['doc:read'], ipAllowlist: ['203.0.113.7'] })
      .expect(201);
    const key = created.body.payload.key as string;
    // The same key through the same (loopback, trusted) proxy over HTTP, for reference.
    await request(t.http)
      .get('/realtime/doc/boards/hs-1/users')
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set('Authorization', `Bearer ${key}`)
      .set('X-Forwarded-For', '203.0.113.7')
      .expect(200);
    const allowed = await TestSocket.open(docUrl, { headers: { 'X-Forwarded-For': '203.0.113.7' } });
    sockets.push(allowed);
    expect((await allowed.send('auth', { token: key })).kind).toBe('ack');
    const elsewhere = await TestSocket.open(docUrl, { headers: { 'X-Forwarded-For': '198.51.100.1' } });
    sockets.push(elsewhere);
    expect((await elsewhere.send('auth', { token: key })).payload).toMatchObject({ code: 'FORBIDDEN' });
    expect(await elsewhere.closed()).toBe(4403);
  });
});
