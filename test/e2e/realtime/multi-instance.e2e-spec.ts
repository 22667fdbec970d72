import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import request from 'supertest';
import * as Y from 'yjs';
import { encodeAwareness } from '../../../src/modules/realtime/domain/yjs-wire.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestDatabase } from '../../utils/test-database.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  bearer,
  createDocument,
  createRow,
  type DocHandle,
} from '../documents/documents.fixtures.js';
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

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/** Two service instances on one database: everything realtime must cross between them. */
describe('realtime across two instances', () => {
  let database: { url: string; drop: () => Promise<void> };
  let a: TestApp;
  let b: TestApp;
  let baseA: string;
  let baseB: string;
  let owner: TestUser;
  let editor: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    database = await createTestDatabase();
    a = await createTestApp(REALTIME_TEST_ENV, { databaseUrl: database.url });
    b = await createTestApp(REALTIME_TEST_ENV, { databaseUrl: database.url });
    baseA = await listen(a);
    baseB = await listen(b);
    owner = await registerUser(a.http);
    editor = await registerUser(a.http);
    await addToWorkspace(a.dataSource, owner, editor, 'editor');
    doc = await createDocument(a.http, owner, { docType: 'plans', id: 'shared' });
  });

  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await database.drop();
  });

  const socketOn = async (t: TestApp, base: string, user: TestUser): Promise<TestSocket> => {
    const info = await connectInfo(t.http, user, doc, owner.defaultWorkspaceId);
    return TestSocket.connect(`${base.replace('http', 'ws')}${info.wsPath}`, info.token);
  };

  it('delivers a merge committed on one instance to streams and sockets on the other, once each', async () => {
    const info = await connectInfo(b.http, owner, doc, owner.defaultWorkspaceId);
    const streamB = openStream(info.sseUrl.replace(/^http:\/\/[^/]+/, baseB));
    const streamA = openStream(
      `${baseA}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`,
      owner.token,
    );
    const socketB = await socketOn(b, baseB, editor);
    await waitFor(() => streamA.opened() === 1 && streamB.opened() === 1, 15_000, 'streams open');

    await createRow(a.http, owner, doc, { values: { name: 'From A' } });
    await createRow(b.http, editor, doc, { values: { name: 'From B' } });
    await waitFor(
      () =>
        streamB.events.filter((event) => event.type === 'request_merged').length === 2 &&
        streamA.events.filter((event) => event.type === 'request_merged').length === 2,
      15_000,
      'merges on both',
    );
    await waitFor(
      () => socketB.pushed('event').filter((event) => event.event === 'request_merged').length === 2,
      15_000,
      'socket events',
    );
    await sleep(400);
    // Both streams carry the same events: wait until the later of the two has caught up with the other.
    const idsOf = (stream: typeof streamA): string => stream.events.map((event) => event.id).join(',');
    await waitFor(() => idsOf(streamA) === idsOf(streamB), 15_000, 'the same events on both streams');
    for (const stream of [streamA, streamB]) {
      const ids = stream.events.map((event) => event.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual([...ids].sort((x, y) => Number(x) - Number(y)));
    }
    expect(streamA.events.map((event) => event.id)).toEqual(streamB.events.map((event) => event.id));
    streamA.es.close();
    streamB.es.close();
    socketB.close();
  });

  it('converges Yjs clients and shares presence and locks across instances; disconnect-all reaches both', async () => {
    const onA = await socketOn(a, baseA, owner);
    const onB = await socketOn(b, baseB, editor);
    await waitFor(
      () =>
        onA.pushed('presence').some((message) => message.action === 'joined' && message.userId === editor.id),
      15_000,
      'presence crosses',
    );
    const docA = new Y.Doc();
    docA.getText('t').insert(0, 'written on A');
    await onA.send('yjs_update', { update: b64(Y.encodeStateAsUpdate(docA)) });
    await waitFor(() => onB.pushed('yjs_update').length > 0, 15_000, 'update crosses');
    const docB = new Y.Doc();
    onB
      .pushed('yjs_update')
      .forEach((message) =>
        Y.applyUpdate(docB, new Uint8Array(Buffer.from(String(message.update), 'base64'))),
      );
    expect(docB.getText('t').toString()).toBe('written on A');

    await onB.send('awareness', {
      update: b64(encodeAwareness([{ clientId: 77, clock: 1, state: { user: { name: 'Editor on B' } } }])),
    });
    await waitFor(() => onA.pushed('awareness').length > 0, 15_000, 'awareness crosses');
    const users = await request(a.http)
      .get(realtimePath(doc, 'users'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner));
    expect(users.body.payload.items.map((user: { userId: string }) => user.userId).sort()).toEqual(
      [owner.id, editor.id].sort(),
    );
    const editorEntry = users.body.payload.items.find(
      (user: { userId: string }) => user.userId === editor.id,
    );
    expect(editorEntry.sessions[0]).toMatchObject({
      transport: 'ws',
      clientId: 77,
      state: { user: { name: 'Editor on B' } },
    });

    const row = await createRow(a.http, owner, doc, { values: { name: 'Locked' } });
    const lock = await onA.send('lock', { target: { type: 'row', rowId: row.id } });
    await waitFor(() => onB.pushed('lock_changed').length > 0, 15_000, 'lock news crosses');
    const write = await request(b.http)
      .put(`${doc.path}/data/${row.id}`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(editor))
      .send({ values: { name: 'nope' } });
    expect(write.status).toBe(409);
    expect(write.body.payload.lock.lockId).toBe(lock.payload.lockId);
    const conflict = await onB.send('lock', { target: { type: 'cell', rowId: row.id, fieldId: 'name' } });
    expect(conflict.payload).toMatchObject({
      code: 'RESOURCE_LOCKED',
      payload: { lock: { lockId: lock.payload.lockId } },
    });

    const res = await request(b.http)
      .post(realtimePath(doc, 'disconnect-all'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner));
    expect(res.status).toBe(200);
    expect(await onA.closed()).toBe(4410);
    expect(await onB.closed()).toBe(4410);
    await waitFor(
      async () =>
        (
          await request(b.http)
            .get(realtimePath(doc, 'locks'))
            .query({ workspaceId: owner.defaultWorkspaceId })
            .set(bearer(owner))
        ).body.payload.items.length === 0,
      15_000,
      'session lock released',
    );
  });

  it("an instance shutting down tells the others its sessions left and their locks were released", async () => {
    const c = await createTestApp(REALTIME_TEST_ENV, { databaseUrl: database.url });
    const baseC = await listen(c);
    const onA = await socketOn(a, baseA, owner);
    let onC: TestSocket | undefined;
    try {
      onC = await socketOn(c, baseC, editor);
      await onC.send('awareness', {
        update: b64(encodeAwareness([{ clientId: 91, clock: 1, state: { user: { name: 'Editor on C' } } }])),
      });
      const lock = await onC.send('lock', { target: { type: 'document' } });
      expect(lock.kind).toBe('ack');
      await waitFor(() => onA.pushed('lock_changed').length > 0, 15_000, 'lock news crosses');
    } finally {
      await c.close();
    }
    expect(await onC.closed()).toBe(1001);
    // Graceful: the clean-up of its sessions runs before the instance lets go of its database connections.
    await waitFor(
      () =>
        onA.pushed('lock_changed').some((message) => message.action === 'released') &&
        onA.pushed('presence').some((message) => message.action === 'left' && message.userId === editor.id),
      5_000,
      'release and leave notices from the instance shutting down',
    );
    onA.close();
  });

  it('relays a large update by reference, and the whole state when that update was compacted away first', async () => {
    const onA = await socketOn(a, baseA, owner);
    const onB = await socketOn(b, baseB, editor);
    const docA = new Y.Doc();
    docA.getText('big').insert(0, 'x'.repeat(6000));
    const large = Y.encodeStateAsUpdate(docA);
    expect(large.length).toBeGreaterThan(4096);
    await onA.send('yjs_update', { update: b64(large) });
    await waitFor(() => onB.pushed('yjs_update').length === 1, 15_000, 'large update read back on B');
    const received = new Y.Doc();
    Y.applyUpdate(received, new Uint8Array(Buffer.from(String(onB.pushed('yjs_update')[0].update), 'base64')));
    expect(received.getText('big').length).toBe(6000);

    // The notice an instance sends for a large update names its id; the instance that stored it may compact it
    // away before another reads it back. Such a notice (an id no longer stored) must still bring B's clients up
    // to date: they receive the document's whole state.
    const [{ id: uuid }] = await a.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM documents WHERE doc_type = $1 AND doc_id = $2`,
      [doc.docType, doc.docId],
    );
    await a.dataSource.query('SELECT pg_notify($1, $2)', [
      'quire_realtime',
      JSON.stringify({ t: 'yjs', doc: uuid, from: '', id: '0', i: 'another-instance' }),
    ]);
    await waitFor(() => onB.pushed('yjs_update').length === 2, 15_000, 'whole state on B');
    const whole = new Y.Doc();
    Y.applyUpdate(whole, new Uint8Array(Buffer.from(String(onB.pushed('yjs_update')[1].update), 'base64')));
    expect(whole.getText('big').length).toBe(6000);
    onA.close();
    onB.close();
  });
});

/** The same fan-out through Redis pub/sub (REDIS_URL), with a real redis-server on loopback. */
describe('realtime across two instances through Redis', () => {
  let redis: ChildProcess;
  let database: { url: string; drop: () => Promise<void> };
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    redis = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.end();
            resolve(true);
          });
          socket.on('error', () => resolve(false));
        }),
      15_000,
      'redis',
    );
    database = await createTestDatabase();
    const env = { ...REALTIME_TEST_ENV, REDIS_URL: `redis://127.0.0.1:${port}` };
    a = await createTestApp(env, { databaseUrl: database.url });
    b = await createTestApp(env, { databaseUrl: database.url });
  });

  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await database.drop();
    redis.kill('SIGTERM');
  });

  it('delivers events and Yjs updates from one instance to the other', async () => {
    const baseA = await listen(a);
    const baseB = await listen(b);
    const owner = await registerUser(a.http);
    const doc = await createDocument(a.http, owner, { docType: 'plans', id: 'redis' });
    const info = await connectInfo(b.http, owner, doc, owner.defaultWorkspaceId);
    const stream = openStream(info.sseUrl.replace(/^http:\/\/[^/]+/, baseB));
    const onB = await TestSocket.connect(`${baseB.replace('http', 'ws')}${info.wsPath}`, info.token);
    const onA = await TestSocket.connect(
      `${baseA.replace('http', 'ws')}${info.wsPath}`,
      (await connectInfo(a.http, owner, doc, owner.defaultWorkspaceId)).token,
    );
    await waitFor(() => stream.opened() === 1, 15_000, 'stream open');
    await createRow(a.http, owner, doc, { values: { name: 'Through Redis' } });
    await waitFor(
      () => stream.events.some((event) => event.type === 'request_merged'),
      15_000,
      'event crosses',
    );
    const update = new Y.Doc();
    update.getText('t').insert(0, 'via redis');
    await onA.send('yjs_update', { update: b64(Y.encodeStateAsUpdate(update)) });
    await waitFor(() => onB.pushed('yjs_update').length > 0, 15_000, 'update crosses');
    stream.es.close();
    onA.close();
    onB.close();
  });
});
