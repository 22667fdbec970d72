import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import {
  type AwarenessEntry,
  decodeAwareness,
  decodeFrame,
  encodeAwareness,
  encodeAwarenessFrame,
} from '../../../src/modules/realtime/domain/yjs-wire.js';
import {
  connectInfo,
  listen,
  REALTIME_TEST_ENV,
  realtimePath,
  sleep,
  TestSocket,
  waitFor,
} from './realtime.fixtures.js';

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');
const update = (entries: AwarenessEntry[]): string => b64(encodeAwareness(entries));

/** Every awareness entry a socket was sent, JSON or binary, in order. */
function received(socket: TestSocket): AwarenessEntry[] {
  const json = socket
    .pushed('awareness')
    .flatMap((payload) => decodeAwareness(new Uint8Array(Buffer.from(String(payload.update), 'base64'))));
  const binary = socket.binary.flatMap((frame) => {
    const decoded = decodeFrame(frame);
    return decoded.type === 'awareness' ? decodeAwareness(decoded.update) : [];
  });
  return [...json, ...binary];
}

/** Awareness may only speak for the sender's own client: another session's entry is never stored or relayed. */
describe('realtime awareness ownership', () => {
  let t: TestApp;
  let owner: TestUser;
  let viewer: TestUser;
  let editor: TestUser;
  let doc: DocHandle;
  let ws: string;
  const sockets: TestSocket[] = [];

  const open = async (user: TestUser): Promise<TestSocket> => {
    const socket = await TestSocket.connect(
      ws,
      (await connectInfo(t.http, user, doc, owner.defaultWorkspaceId)).token,
    );
    sockets.push(socket);
    return socket;
  };
  const postAwareness = (user: TestUser, body: string): request.Test =>
    request(t.http)
      .post(realtimePath(doc, 'awareness'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(user))
      .send({ update: body });
  const sessionsOf = async (user: TestUser): Promise<Array<{ clientId: number | null; state: unknown }>> => {
    const res = await request(t.http)
      .get(realtimePath(doc, 'users'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner))
      .expect(200);
    const entry = res.body.payload.items.find((item: { userId: string }) => item.userId === user.id);
    return entry?.sessions ?? [];
  };

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    const base = await listen(t);
    ws = `${base.replace('http', 'ws')}/realtime/ws`;
    owner = await registerUser(t.http);
    viewer = await registerUser(t.http);
    editor = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    doc = await createDocument(t.http, owner, { docType: 'boards', id: 'aw-1' });
  });

  afterEach(() => {
    sockets.splice(0).forEach((socket) => socket.close());
  });

  afterAll(async () => {
    await t.close();
  });

  it("refuses an awareness update naming another session's client, over the socket and over HTTP", async () => {
    const ownerSocket = await open(owner);
    const own = { clientId: 1001, clock: 3, state: { user: { name: 'Owner' } } };
    expect((await ownerSocket.send('awareness', { update: update([own]) })).kind).toBe('ack');
    const viewerSocket = await open(viewer);
    await waitFor(
      () => received(viewerSocket).some((entry) => entry.clientId === 1001),
      15_000,
      'current awareness',
    );
    const before = received(ownerSocket).length;

    const spoofed = { clientId: 1001, clock: 9, state: { user: { name: 'Spoofed' } } };
    const twoEntries = await viewerSocket.send('awareness', {
      update: update([{ clientId: 2002, clock: 1, state: { user: { name: 'Viewer' } } }, spoofed]),
    });
    expect(twoEntries).toMatchObject({
      kind: 'error',
      payload: { code: 'VALIDATION_ERROR', details: { field: 'payload.update' } },
    });
    const removal = await viewerSocket.send('awareness', {
      update: update([{ clientId: 1001, clock: 10, state: null }]),
    });
    expect(removal.payload).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'payload.update' } });

    const overHttp = await postAwareness(viewer, update([{ ...spoofed, clock: 11 }]));
    expect([overHttp.status, overHttp.body.code, overHttp.body.details?.field]).toEqual([
      400,
      'VALIDATION_ERROR',
      'update',
    ]);
    const mixedHttp = await postAwareness(
      viewer,
      update([
        { clientId: 3003, clock: 1, state: {} },
        { ...spoofed, clock: 12 },
      ]),
    );
    expect(mixedHttp.status).toBe(400);

    await sleep(300);
    expect(received(ownerSocket).length).toBe(before);
    const ownerSessions = await sessionsOf(owner);
    expect(ownerSessions).toEqual([
      expect.objectContaining({ clientId: 1001, state: { user: { name: 'Owner' } } }),
    ]);
    expect((await sessionsOf(viewer)).map((session) => session.clientId)).not.toContain(1001);
  });

  it("keeps a session to the client id it first used, and drops others' entries from binary frames", async () => {
    const ownerSocket = await open(owner);
    expect(
      (
        await ownerSocket.send('awareness', {
          update: update([{ clientId: 5005, clock: 1, state: { n: 1 } }]),
        })
      ).kind,
    ).toBe('ack');
    const editorSocket = await open(editor);
    expect(
      (
        await editorSocket.send('awareness', {
          update: update([{ clientId: 6006, clock: 1, state: { n: 2 } }]),
        })
      ).kind,
    ).toBe('ack');
    // Another id on the same socket afterwards, even one nobody holds: refused.
    expect(
      (await editorSocket.send('awareness', { update: update([{ clientId: 7007, clock: 1, state: {} }]) }))
        .payload,
    ).toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    await waitFor(
      () => received(ownerSocket).some((entry) => entry.clientId === 6006),
      15_000,
      'editor awareness',
    );
    const seen = received(ownerSocket).length;

    // A stock y-protocols client re-sends what it received (the owner's 5005) along with its own entry.
    editorSocket.ws.send(
      encodeAwarenessFrame(
        encodeAwareness([
          { clientId: 5005, clock: 8, state: { n: 'spoofed' } },
          { clientId: 6006, clock: 2, state: { n: 3 } },
        ]),
      ),
    );
    await waitFor(() => received(ownerSocket).length > seen, 15_000, 'own entry relayed');
    await sleep(200);
    expect(received(ownerSocket).slice(seen)).toEqual([{ clientId: 6006, clock: 2, state: { n: 3 } }]);
    expect(await sessionsOf(owner)).toEqual(
      expect.arrayContaining([expect.objectContaining({ clientId: 5005, state: { n: 1 } })]),
    );

    // A session's own removal is fine; its id stays its own.
    expect(
      (await editorSocket.send('awareness', { update: update([{ clientId: 6006, clock: 3, state: null }]) }))
        .kind,
    ).toBe('ack');
    expect(
      (
        await editorSocket.send('awareness', {
          update: update([{ clientId: 6006, clock: 4, state: { n: 4 } }]),
        })
      ).kind,
    ).toBe('ack');
  });

  it("an HTTP awareness client owns its id; another user's socket or HTTP client cannot take it", async () => {
    expect(
      (await postAwareness(viewer, update([{ clientId: 4242, clock: 1, state: { via: 'http' } }]))).status,
    ).toBe(200);
    expect(
      (await postAwareness(viewer, update([{ clientId: 4242, clock: 2, state: { via: 'http 2' } }]))).status,
    ).toBe(200);
    const taken = await postAwareness(
      editor,
      update([{ clientId: 4242, clock: 3, state: { via: 'editor' } }]),
    );
    expect([taken.status, taken.body.details?.field]).toEqual([400, 'update']);
    const editorSocket = await open(editor);
    expect(
      (await editorSocket.send('awareness', { update: update([{ clientId: 4242, clock: 4, state: null }]) }))
        .payload,
    ).toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    expect(await sessionsOf(viewer)).toEqual(
      expect.arrayContaining([expect.objectContaining({ clientId: 4242, state: { via: 'http 2' } })]),
    );
    expect((await postAwareness(viewer, update([{ clientId: 4242, clock: 5, state: null }]))).status).toBe(
      200,
    );
  });
});
