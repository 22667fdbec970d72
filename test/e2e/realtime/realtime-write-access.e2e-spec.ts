import request from 'supertest';
import * as Y from 'yjs';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { encodeSync, SYNC_STEP2, SYNC_UPDATE } from '../../../src/modules/realtime/domain/yjs-wire.js';
import {
  addToWorkspace,
  addWorkspace,
  API,
  bearer,
  createDocument,
  createRow,
  type DocHandle,
  PRODUCT_FIELDS,
  scopedToken,
} from '../documents/documents.fixtures.js';
import {
  connectInfo,
  listen,
  REALTIME_TEST_ENV,
  realtimePath,
  sleep,
  TestSocket,
  waitFor,
} from './realtime.fixtures.js';

type Reply = Awaited<ReturnType<TestSocket['send']>>;

/** A Yjs update that writes `text` into the shared text `t` (each from a fresh client, so they never overlap). */
function textUpdate(text: string): Uint8Array {
  const doc = new Y.Doc();
  doc.getText('t').insert(0, text);
  return Y.encodeStateAsUpdate(doc);
}

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/** The error reply's code and reasons, as a client reads them (docs/realtime.md, "WebSocket sessions"). */
function refusal(reply: { kind: string; payload: Record<string, unknown> }): {
  kind: string;
  code: unknown;
  reasons: string;
} {
  return {
    kind: reply.kind,
    code: reply.payload.code,
    reasons: problemsOf(reply.payload as { details?: { errors?: unknown[] } })
      .map((problem: { reason?: string }) => problem.reason)
      .join('; '),
  };
}

describe('realtime write access: socket writes as the HTTP routes allow them, locks of users who lost it', () => {
  let t: TestApp;
  let owner: TestUser;
  let nextDoc = 0;
  const sockets: TestSocket[] = [];

  const newMember = async (role: 'owner' | 'editor' | 'viewer', workspaceId?: string): Promise<TestUser> => {
    const user = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, user, role, workspaceId ?? owner.defaultWorkspaceId);
    return user;
  };
  const newDoc = (workspaceId?: string): Promise<DocHandle> =>
    createDocument(t.http, owner, {
      docType: 'notes',
      id: `wa-${(nextDoc += 1)}`,
      ...(workspaceId ? { workspaceId } : {}),
    });
  /** A socket of `user` on `doc` (connect token), with its `auth` ack. */
  const socketOf = async (
    user: { token: string },
    doc: DocHandle,
    workspaceId = owner.defaultWorkspaceId,
  ): Promise<{ socket: TestSocket; ack: Record<string, unknown> }> => {
    const info = await connectInfo(t.http, user, doc, workspaceId);
    const socket = await TestSocket.connect(info.wsUrl, info.token);
    sockets.push(socket);
    const ack = socket.messages.find((message) => message.kind === 'ack' && message.seq === 1);
    return { socket, ack: ack?.payload ?? {} };
  };
  /** Sends a binary y-protocols update frame and waits for the error frame (`seq: null`) it must draw. */
  const sendBinaryUpdate = async (socket: TestSocket, text: string): Promise<Reply> => {
    const errorsBefore = socket.messages.filter(
      (message) => message.kind === 'error' && message.seq === null,
    ).length;
    socket.ws.send(encodeSync(SYNC_UPDATE, textUpdate(text)));
    await waitFor(
      () =>
        socket.messages.filter((message) => message.kind === 'error' && message.seq === null).length >
        errorsBefore,
      15_000,
      'error frame for a binary update',
    );
    return socket.messages
      .filter((message) => message.kind === 'error' && message.seq === null)
      .at(-1) as Reply;
  };
  /** The shared text of the document's Yjs state, as its owner reads it. */
  const sharedText = async (doc: DocHandle, workspaceId = owner.defaultWorkspaceId): Promise<string> => {
    const res = await request(t.http)
      .get(realtimePath(doc, 'snapshot'))
      .query({ workspaceId })
      .set(bearer(owner))
      .expect(200);
    const state = new Y.Doc();
    Y.applyUpdate(state, new Uint8Array(Buffer.from(String(res.body.payload.state), 'base64')));
    return state.getText('t').toString();
  };
  const putSettings = (doc: DocHandle, permissions: Record<string, unknown>): Promise<unknown> =>
    request(t.http)
      .put(`${doc.path}/settings`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner))
      .send({ permissions })
      .expect(200);
  const setRole = (user: TestUser, role: 'owner' | 'editor' | 'viewer'): Promise<unknown> =>
    t.dataSource.query(`UPDATE workspace_members SET role = $2 WHERE user_id = $1`, [user.id, role]);
  const lockHttp = (user: TestUser, doc: DocHandle, target: Record<string, unknown>): request.Test =>
    request(t.http)
      .post(realtimePath(doc, 'lock'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(user))
      .send({ target, ttlSeconds: 3600 });
  const lockIds = async (doc: DocHandle): Promise<string[]> =>
    (
      await request(t.http)
        .get(realtimePath(doc, 'locks'))
        .query({ workspaceId: owner.defaultWorkspaceId })
        .set(bearer(owner))
        .expect(200)
    ).body.payload.items.map((item: { lockId: string }) => item.lockId);
  const putRow = (
    user: TestUser,
    doc: DocHandle,
    rowId: string,
    values: Record<string, unknown>,
  ): request.Test =>
    request(t.http)
      .put(`${doc.path}/data/${rowId}`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(user))
      .send({ values });
  const putFields = (doc: DocHandle, fields: unknown[]): request.Test =>
    request(t.http)
      .put(`${doc.path}/metadata`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner))
      .send({ fields });

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    await listen(t);
    owner = await registerUser(t.http);
  });

  afterEach(() => {
    sockets.splice(0).forEach((socket) => socket.close());
  });

  afterAll(async () => {
    await t.close();
  });

  it('permissions.edit: the ack says canWrite false, and JSON and binary updates are refused, neither stored nor relayed', async () => {
    const doc = await newDoc();
    const editor = await newMember('editor');
    const { socket: watcher } = await socketOf(owner, doc);
    await putSettings(doc, { edit: ['role:owner'] });
    const http = await request(t.http)
      .post(realtimePath(doc, 'apply-update'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(editor))
      .send({ update: b64(textUpdate('http')) });
    expect(http.status).toBe(403);

    const { socket, ack } = await socketOf(editor, doc);
    expect(ack.canWrite).toBe(false);
    const json = await socket.send('yjs_update', { update: b64(textUpdate('json-refused')) });
    expect(refusal(json)).toEqual({
      kind: 'error',
      code: 'FORBIDDEN',
      reasons: expect.stringContaining('permissions settings do not allow you to edit it'),
    });
    expect(refusal(await sendBinaryUpdate(socket, 'binary-refused'))).toMatchObject({
      kind: 'error',
      code: 'FORBIDDEN',
    });
    expect((await socket.send('lock', { target: { type: 'document' } })).payload.code).toBe('FORBIDDEN');

    expect(await sharedText(doc)).toBe('');
    expect(watcher.pushed('yjs_update')).toEqual([]);
    // The owner is never narrowed: the same socket protocol writes for them.
    expect((await watcher.send('yjs_update', { update: b64(textUpdate('owner')) })).kind).toBe('ack');
    expect(await sharedText(doc)).toBe('owner');
  });

  it("a viewer's empty sync step 2 (what a stock provider answers the server's step 1 with) draws no error", async () => {
    const doc = await newDoc();
    const viewer = await newMember('viewer');
    const { socket, ack } = await socketOf(viewer, doc);
    expect(ack.canWrite).toBe(false);
    socket.ws.send(encodeSync(SYNC_STEP2, Y.encodeStateAsUpdate(new Y.Doc())));
    // Frames are answered in order: the refusal of a real update after it is the first error frame.
    const refused = await sendBinaryUpdate(socket, 'viewer-refused');
    expect(refusal(refused)).toMatchObject({ kind: 'error', code: 'FORBIDDEN' });
    expect(socket.messages.filter((message) => message.kind === 'error')).toHaveLength(1);
    expect(await sharedText(doc)).toBe('');
  });

  it('narrowing permissions.edit or demoting an editor takes effect at the next socket write, not at the next re-check', async () => {
    const doc = await newDoc();
    const editor = await newMember('editor');
    const { socket, ack } = await socketOf(editor, doc);
    expect(ack.canWrite).toBe(true);
    expect((await socket.send('yjs_update', { update: b64(textUpdate('a')) })).kind).toBe('ack');

    await putSettings(doc, { edit: ['role:owner'] });
    expect(refusal(await socket.send('yjs_update', { update: b64(textUpdate('x')) }))).toMatchObject({
      kind: 'error',
      code: 'FORBIDDEN',
    });
    await putSettings(doc, {});
    expect((await socket.send('yjs_update', { update: b64(textUpdate('b')) })).kind).toBe('ack');

    await setRole(editor, 'viewer');
    expect(refusal(await socket.send('yjs_update', { update: b64(textUpdate('y')) }))).toEqual({
      kind: 'error',
      code: 'FORBIDDEN',
      reasons: expect.stringContaining('write permission required'),
    });
    expect(refusal(await sendBinaryUpdate(socket, 'z'))).toMatchObject({ code: 'FORBIDDEN' });
    // A viewer still reads: the socket stays open through several re-checks, and still may not write.
    await sleep(4 * Number(REALTIME_TEST_ENV.REALTIME_ACCESS_RECHECK_MS));
    expect(socket.closeCode).toBeUndefined();
    expect((await socket.send('yjs_update', { update: b64(textUpdate('w')) })).payload.code).toBe(
      'FORBIDDEN',
    );
    expect((await socket.send('yjs_sync', {})).kind).toBe('ack');

    const text = await sharedText(doc);
    expect([...text].sort().join('')).toBe('ab');
  });

  it('an archived workspace is read-only over the socket; a token without doc:write cannot send updates', async () => {
    const workspaceId = await addWorkspace(t.dataSource, owner);
    const editor = await newMember('editor', workspaceId);
    const doc = await newDoc(workspaceId);
    const { socket } = await socketOf(editor, doc, workspaceId);
    expect((await socket.send('yjs_update', { update: b64(textUpdate('a')) })).kind).toBe('ack');
    const workspacePath = `${API}/organizations/${owner.defaultOrganizationId}/workspaces/${workspaceId}`;
    await request(t.http).post(`${workspacePath}/archive`).set(bearer(owner)).expect(200);
    expect(refusal(await socket.send('yjs_update', { update: b64(textUpdate('x')) }))).toEqual({
      kind: 'error',
      code: 'FORBIDDEN',
      reasons: expect.stringContaining('archived'),
    });
    expect(refusal(await sendBinaryUpdate(socket, 'y'))).toMatchObject({ code: 'FORBIDDEN' });
    expect((await socket.send('lock', { target: { type: 'document' } })).payload.code).toBe('FORBIDDEN');
    await request(t.http).post(`${workspacePath}/restore`).set(bearer(owner)).expect(200);
    expect((await socket.send('yjs_update', { update: b64(textUpdate('b')) })).kind).toBe('ack');
    expect([...(await sharedText(doc, workspaceId))].sort().join('')).toBe('ab');

    const readOnly = await scopedToken(t, editor, ['doc:read']);
    const url = `${(await connectInfo(t.http, editor, doc, workspaceId)).wsUrl}`;
    const scoped = await TestSocket.open(url);
    sockets.push(scoped);
    // The ack's canWrite answers whether a write would be allowed: not without doc:write.
    const ack = await scoped.send('auth', { token: readOnly.token });
    expect(ack).toMatchObject({ kind: 'ack', payload: { canWrite: false } });
    expect(refusal(await scoped.send('yjs_update', { update: b64(textUpdate('s')) }))).toEqual({
      kind: 'error',
      code: 'FORBIDDEN',
      reasons: expect.stringContaining('missing scope doc:write'),
    });
    expect(refusal(await sendBinaryUpdate(scoped, 's'))).toMatchObject({ code: 'FORBIDDEN' });
    expect([...(await sharedText(doc, workspaceId))].sort().join('')).toBe('ab');
  });

  it("unlock over the socket releases another user's lock only with manage rights as they are now", async () => {
    const doc = await newDoc();
    const editor = await newMember('editor');
    const manager = await newMember('owner');
    const lock = await lockHttp(editor, doc, { type: 'row', rowId: 'r-1' }).expect(201);
    const lockId = lock.body.payload.lockId as string;
    const { socket } = await socketOf(manager, doc);
    await setRole(manager, 'editor');
    const refused = await socket.send('unlock', { lockId });
    expect(refusal(refused)).toMatchObject({ kind: 'error', code: 'FORBIDDEN' });
    expect(await lockIds(doc)).toEqual([lockId]);
    await setRole(manager, 'owner');
    expect((await socket.send('unlock', { lockId })).kind).toBe('ack');
    expect(await lockIds(doc)).toEqual([]);
  });

  describe('a lock whose holder lost write access stands in nobody’s way and is released', () => {
    const losses: Array<[string, (holder: TestUser, doc: DocHandle, other: TestUser) => Promise<unknown>]> = [
      [
        'removed from the workspace and the organization',
        async (holder) => {
          await t.dataSource.query(`DELETE FROM workspace_members WHERE user_id = $1`, [holder.id]);
          await t.dataSource.query(`DELETE FROM organization_members WHERE user_id = $1`, [holder.id]);
        },
      ],
      ['demoted to viewer', (holder) => setRole(holder, 'viewer')],
      [
        'suspended in the workspace',
        (holder) =>
          t.dataSource.query(`UPDATE workspace_members SET status = 'suspended' WHERE user_id = $1`, [
            holder.id,
          ]),
      ],
      // The list admits the other editor, not the holder.
      ['left out by permissions.edit', (_holder, doc, other) => putSettings(doc, { edit: [other.id] })],
    ];

    it.each(losses)(
      '%s: writes and locks of others go through, and the lock is gone',
      async (_name, lose) => {
        const doc = await newDoc();
        const holder = await newMember('editor');
        const other = await newMember('editor');
        const row = await createRow(t.http, owner, doc, { values: { name: 'Row' } });
        const { socket: watcher } = await socketOf(owner, doc);
        // A row lock: a document lock would also refuse the owner's settings change that narrows permissions.edit.
        const lock = await lockHttp(holder, doc, { type: 'row', rowId: row.id }).expect(201);
        const lockId = lock.body.payload.lockId as string;
        const blocked = await putRow(other, doc, row.id, { name: 'blocked' });
        expect([blocked.status, blocked.body.code, blocked.body.payload?.lock?.lockId]).toEqual([
          409,
          'RESOURCE_LOCKED',
          lockId,
        ]);

        await lose(holder, doc, other);
        expect((await putRow(other, doc, row.id, { name: 'written' })).status).toBe(200);
        expect(await lockIds(doc)).toEqual([]);
        await waitFor(
          () =>
            watcher
              .pushed('lock_changed')
              .some(
                (push) => push.action === 'released' && (push.lock as { lockId: string }).lockId === lockId,
              ),
          15_000,
          'release announced',
        );
      },
    );

    it('GET locks drops it without waiting for a write in its way, and announces the release', async () => {
      const doc = await newDoc();
      const holder = await newMember('editor');
      const kept = await newMember('editor');
      const { socket: watcher } = await socketOf(owner, doc);
      const stale = await lockHttp(holder, doc, { type: 'row', rowId: 'r-1' }).expect(201);
      const standing = await lockHttp(kept, doc, { type: 'row', rowId: 'r-2' }).expect(201);
      await setRole(holder, 'viewer');
      expect(await lockIds(doc)).toEqual([standing.body.payload.lockId]);
      await waitFor(
        () =>
          watcher
            .pushed('lock_changed')
            .some(
              (push) =>
                push.action === 'released' &&
                (push.lock as { lockId: string }).lockId === stale.body.payload.lockId,
            ),
        15_000,
        'release announced',
      );
      // Gone for good: restoring the role does not bring it back.
      await setRole(holder, 'editor');
      expect(await lockIds(doc)).toEqual([standing.body.payload.lockId]);
    });

    it('another user may take a lock over it', async () => {
      const doc = await newDoc();
      const holder = await newMember('editor');
      const other = await newMember('editor');
      const stale = await lockHttp(holder, doc, { type: 'row', rowId: 'r-9' }).expect(201);
      expect((await lockHttp(other, doc, { type: 'row', rowId: 'r-9' })).status).toBe(409);
      await setRole(holder, 'viewer');
      const taken = await lockHttp(other, doc, { type: 'row', rowId: 'r-9' }).expect(201);
      expect(await lockIds(doc)).toEqual([taken.body.payload.lockId]);
      expect(await lockIds(doc)).not.toContain(stale.body.payload.lockId);
    });
  });

  it('row and cell locks protect their cells from deleting or retyping the field', async () => {
    const doc = await newDoc();
    const holder = await newMember('editor');
    const row = await createRow(t.http, owner, doc, {
      values: { name: 'Locked', price: 5, qty: 2, due: '2024-02-02' },
    });
    const readRow = async (): Promise<{ version: number; values: Record<string, unknown> }> => {
      const res = await request(t.http)
        .get(`${doc.path}/data/${row.id}`)
        .query({ workspaceId: owner.defaultWorkspaceId })
        .set(bearer(owner))
        .expect(200);
      const values = Object.fromEntries(
        (res.body.payload.values as Array<{ fieldId: string; value: unknown }>).map((item) => [
          item.fieldId,
          item.value,
        ]),
      );
      return { version: res.body.payload.version as number, values };
    };
    const before = await readRow();
    const without = (id: string): unknown[] => PRODUCT_FIELDS.filter((field) => field.id !== id);
    const retyped = (id: string): unknown[] =>
      PRODUCT_FIELDS.map((field) =>
        field.id === id ? { ...field, type: 'text', validations: undefined } : field,
      );

    const rowLock = await lockHttp(holder, doc, { type: 'row', rowId: row.id }).expect(201);
    for (const fields of [without('due'), retyped('qty')]) {
      const res = await putFields(doc, fields);
      expect([res.status, res.body.code, res.body.payload?.lock?.lockId]).toEqual([
        409,
        'RESOURCE_LOCKED',
        rowLock.body.payload.lockId,
      ]);
    }
    // A definition change that leaves stored values alone does not touch the locked cells.
    const renamed = PRODUCT_FIELDS.map((field) =>
      field.id === 'name' ? { ...field, name: 'Title' } : field,
    );
    expect((await putFields(doc, renamed)).status).toBe(200);
    expect(await readRow()).toEqual(before);
    await request(t.http)
      .delete(realtimePath(doc, `unlock/${rowLock.body.payload.lockId}`))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(holder))
      .expect(200);

    const cellLock = await lockHttp(holder, doc, { type: 'cell', rowId: row.id, fieldId: 'price' }).expect(
      201,
    );
    for (const fields of [
      renamed.filter((field) => field.id !== 'price'),
      renamed.map((field) =>
        field.id === 'price' ? { ...field, type: 'text', validations: undefined } : field,
      ),
    ]) {
      const res = await putFields(doc, fields);
      expect([res.status, res.body.code, res.body.payload?.lock?.lockId]).toEqual([
        409,
        'RESOURCE_LOCKED',
        cellLock.body.payload.lockId,
      ]);
    }
    expect(await readRow()).toEqual(before);
    // Another field's cells are not locked.
    expect(
      (
        await putFields(
          doc,
          renamed.filter((field) => field.id !== 'active'),
        )
      ).status,
    ).toBe(200);
  });
});
