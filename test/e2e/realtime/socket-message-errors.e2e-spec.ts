import * as encoding from 'lib0/encoding';
import * as Y from 'yjs';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { connectInfo, listen, REALTIME_TEST_ENV, TestSocket } from './realtime.fixtures.js';

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

describe('realtime socket: errors name the message field', () => {
  let t: TestApp;
  let wsBase: string;
  let owner: TestUser;
  let doc: DocHandle;
  let socket: TestSocket;

  beforeAll(async () => {
    t = await createTestApp({ ...REALTIME_TEST_ENV, REALTIME_LOCK_MAX_TTL_SECONDS: '600' });
    wsBase = (await listen(t)).replace('http', 'ws');
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner, { docType: 'boards', id: 'errors-1' });
    const info = await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId);
    socket = await TestSocket.connect(`${wsBase}${info.wsPath}`, info.token);
  });

  afterAll(async () => {
    socket.close();
    await t.close();
  });

  it('a VALIDATION_ERROR of a JSON message names payload.<field>, as the parser does', async () => {
    // Refused by the parser: already payload.ttlSeconds.
    const fraction = await socket.send('lock', { target: { type: 'document' }, ttlSeconds: 1.5 });
    expect(fraction.kind).toBe('error');
    expect(problemsOf(fraction.payload as never).map((problem) => problem.field)).toEqual(['payload.ttlSeconds']);

    // Over REALTIME_LOCK_MAX_TTL_SECONDS: refused by the lock service; the same field, the same name.
    const tooLong = await socket.send('lock', { target: { type: 'document' }, ttlSeconds: 601 });
    expect(tooLong.kind).toBe('error');
    expect(tooLong.payload.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(tooLong.payload as never)).toEqual([
      { field: 'payload.ttlSeconds', reason: 'ttlSeconds must not be greater than 600' },
    ]);

    // Base64 that is no Yjs update / state vector.
    const badUpdate = await socket.send('yjs_update', { update: b64(new Uint8Array([1, 1, 5, 0, 0, 0])) });
    expect(badUpdate.payload.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(badUpdate.payload as never).map((problem) => problem.field)).toEqual(['payload.update']);
    const badVector = await socket.send('yjs_sync', { stateVector: b64(new Uint8Array([5, 1, 2, 3])) });
    expect(badVector.payload.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(badVector.payload as never).map((problem) => problem.field)).toEqual([
      'payload.stateVector',
    ]);

    // Awareness already named its field so: unchanged.
    const badAwareness = await socket.send('awareness', { update: b64(new Uint8Array([1, 5, 1, 3])) });
    expect(problemsOf(badAwareness.payload as never).map((problem) => problem.field)).toEqual(['payload.update']);

    // An awareness state nested deeper than anyone's cursor (within the message size) is a bad update, not a
    // failure of the server re-encoding it for the others.
    const nested = encoding.createEncoder();
    encoding.writeVarUint(nested, 1);
    encoding.writeVarUint(nested, 4242);
    encoding.writeVarUint(nested, 1);
    encoding.writeVarString(nested, `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`);
    const deepAwareness = await socket.send('awareness', { update: b64(encoding.toUint8Array(nested)) });
    expect(deepAwareness.payload.code).toBe('VALIDATION_ERROR');
    expect(problemsOf(deepAwareness.payload as never).map((problem) => problem.field)).toEqual(['payload.update']);

    // And the socket still works.
    const ydoc = new Y.Doc();
    ydoc.getText('t').insert(0, 'fine');
    expect((await socket.send('yjs_update', { update: b64(Y.encodeStateAsUpdate(ydoc)) })).kind).toBe('ack');
  });
});
