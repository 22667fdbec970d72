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
import { problemsOf } from '../../utils/error-details.js';
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

describe('realtime locks and snapshots', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;
  let doc: DocHandle;
  let ws: string;

  const http = (user: TestUser, method: 'get' | 'post' | 'delete', suffix: string): request.Test => {
    const agent = request(t.http);
    return agent[method](realtimePath(doc, suffix))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(user));
  };
  const putRow = (user: TestUser, rowId: string, values: Record<string, unknown>): request.Test =>
    request(t.http)
      .put(`${doc.path}/data/${rowId}`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(user))
      .send({ values });

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    base = await listen(t);
    owner = await registerUser(t.http);
    editor = await registerUser(t.http);
    viewer = await registerUser(t.http);
    stranger = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    doc = await createDocument(t.http, owner, { docType: 'orders', id: 'o-1' });
    ws = `${base.replace('http', 'ws')}/realtime/ws`;
  });

  afterAll(async () => {
    await t.close();
  });

  it('locks a row: conflicting locks and writes by others are refused naming the lock; the holder writes', async () => {
    const row = await createRow(t.http, owner, doc, { values: { name: 'Widget', price: 1 } });
    const lock = await http(owner, 'post', 'lock').send({
      target: { type: 'row', rowId: row.id },
      ttlSeconds: 60,
    });
    expect(lock.status).toBe(201);
    expect(lock.body.payload).toMatchObject({
      lockId: expect.any(String),
      target: { type: 'row', rowId: row.id },
      exclusive: true,
      userId: owner.id,
      sessionId: null,
    });
    const lockId = lock.body.payload.lockId as string;

    const write = await putRow(editor, row.id, { price: 5 });
    expect(write.status).toBe(409);
    expect(write.body.code).toBe('RESOURCE_LOCKED');
    expect(write.body.payload.lock).toMatchObject({
      lockId,
      userId: owner.id,
      target: { type: 'row', rowId: row.id },
    });
    const unchanged = await request(t.http)
      .get(`${doc.path}/data/${row.id}`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner));
    expect(JSON.stringify(unchanged.body.payload)).not.toContain('"value":5');

    const cellLock = await http(editor, 'post', 'lock').send({
      target: { type: 'cell', rowId: row.id, fieldId: 'price' },
    });
    expect(cellLock.status).toBe(409);
    expect(cellLock.body.payload.lock.lockId).toBe(lockId);
    const otherRow = await http(editor, 'post', 'lock').send({
      target: { type: 'row', rowId: 'another' },
      exclusive: false,
    });
    expect(otherRow.status).toBe(201);

    expect((await putRow(owner, row.id, { price: 7 })).status).toBe(200);
    const list = await http(viewer, 'get', 'locks');
    expect(list.body.payload.items.map((item: { lockId: string }) => item.lockId)).toEqual([
      lockId,
      otherRow.body.payload.lockId,
    ]);
    // Listings take page and pageSize (spec 4) and answer the paged structure of every list (spec 1).
    const second = await http(viewer, 'get', 'locks').query({ page: 2, pageSize: 1 }).expect(200);
    expect(second.body.payload).toMatchObject({ page: 2, pageSize: 1, total: 2, totalPages: 2 });
    expect(second.body.payload.items.map((item: { lockId: string }) => item.lockId)).toEqual([otherRow.body.payload.lockId]);
    const online = await http(viewer, 'get', 'users').query({ page: 1, pageSize: 20 }).expect(200);
    expect(online.body.payload).toMatchObject({ items: expect.any(Array), page: 1, pageSize: 20, total: online.body.payload.items.length });

    expect((await http(editor, 'delete', `unlock/${lockId}`)).status).toBe(403);
    expect((await http(owner, 'delete', `unlock/${lockId}`)).status).toBe(200);
    expect((await http(owner, 'delete', `unlock/${lockId}`)).status).toBe(404);
    expect((await putRow(editor, row.id, { price: 9 })).status).toBe(200);
    expect((await http(owner, 'delete', `unlock/${otherRow.body.payload.lockId}`)).status).toBe(200);
  });

  it('a merge is a write: a change staged before another user locked its row is refused when merged', async () => {
    const row = await createRow(t.http, owner, doc, { values: { name: 'Staged', price: 1 } });
    const staged = await request(t.http)
      .post(`${doc.path}/requests`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(editor))
      .send({ title: 'Reprice', changes: [{ type: 'row-update', target: { kind: 'row', rowId: row.id }, newValue: { price: 2 } }] })
      .expect(201);
    const requestId = staged.body.payload.id as string;
    const lock = await http(owner, 'post', 'lock').send({ target: { type: 'cell', rowId: row.id, fieldId: 'price' } }).expect(201);
    const merge = (user: TestUser): request.Test =>
      request(t.http)
        .post(`${doc.path}/requests/${requestId}/merge`)
        .query({ workspaceId: owner.defaultWorkspaceId })
        .set(bearer(user));

    const refused = await merge(editor).expect(409);
    expect(refused.body).toMatchObject({ code: 'RESOURCE_LOCKED', payload: { lock: { lockId: lock.body.payload.lockId, userId: owner.id } } });
    const still = await request(t.http)
      .get(`${doc.path}/requests/${requestId}`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner))
      .expect(200);
    expect(still.body.payload.status).toBe('open');
    const unchanged = await request(t.http)
      .get(`${doc.path}/data/${row.id}`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner))
      .expect(200);
    expect(unchanged.body.payload.version).toBe(1);

    // Once the lock is released the same merge goes through.
    await http(owner, 'delete', `unlock/${lock.body.payload.lockId}`).expect(200);
    const merged = await merge(editor).expect(200);
    expect(merged.body.payload.status).toBe('merged');
  });

  it('field and document locks cover writes and metadata; locks expire', async () => {
    const row = await createRow(t.http, owner, doc, { values: { name: 'Nut', qty: 1 } });
    const field = await http(owner, 'post', 'lock').send({
      target: { type: 'field', fieldId: 'qty' },
      // Long enough that the two writes below run while it holds, even on a slow machine.
      ttlSeconds: 3,
    });
    expect(field.status).toBe(201);
    expect((await putRow(editor, row.id, { qty: 2 })).body.code).toBe('RESOURCE_LOCKED');
    expect((await putRow(editor, row.id, { name: 'Nut 2' })).status).toBe(200);
    await sleep(3200);
    expect((await putRow(editor, row.id, { qty: 3 })).status).toBe(200);
    expect((await http(owner, 'get', 'locks')).body.payload.items).toEqual([]);

    const whole = await http(editor, 'post', 'lock').send({ target: { type: 'document' }, ttlSeconds: 30 });
    expect(whole.status).toBe(201);
    const blocked = await request(t.http)
      .post(`${doc.path}/data`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner))
      .send({ values: { name: 'Blocked' } });
    expect(blocked.status).toBe(409);
    expect(blocked.body.payload.lock.lockId).toBe(whole.body.payload.lockId);
    expect((await http(editor, 'delete', `unlock/${whole.body.payload.lockId}`)).status).toBe(200);
  });

  it('a socket lock dies with its session', async () => {
    const row = await createRow(t.http, owner, doc, { values: { name: 'Socketed' } });
    const token = (await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId)).token;
    const socket = await TestSocket.connect(ws, token);
    const lock = await socket.send('lock', { target: { type: 'row', rowId: row.id } });
    expect(lock.payload.sessionId).toEqual(expect.any(String));
    expect((await putRow(editor, row.id, { name: 'x' })).status).toBe(409);
    socket.close();
    await waitFor(
      async () => (await http(owner, 'get', 'locks')).body.payload.items.length === 0,
      15_000,
      'lock released',
    );
    expect((await putRow(editor, row.id, { name: 'x' })).status).toBe(200);
  });

  it('validates locks, and refuses viewers and strangers', async () => {
    const invalid = await http(owner, 'post', 'lock').send({
      target: { type: 'cell', rowId: 'r1' },
      ttlSeconds: 0,
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('VALIDATION_ERROR');
    const tooLong = await http(owner, 'post', 'lock').send({
      target: { type: 'document' },
      ttlSeconds: 999_999,
    });
    expect(tooLong.body.code).toBe('VALIDATION_ERROR');
    // Each target type takes exactly its ids (a missing one would stand for "all"); no target at all is refused too.
    for (const [target, field] of [
      [{ type: 'row' }, 'target.rowId'],
      [{ type: 'cell', rowId: 'r1' }, 'target.fieldId'],
      [{ type: 'field', fieldId: 'price', rowId: 'r1' }, 'target.rowId'],
      [{ type: 'document', rowId: 'x' }, 'target.rowId'],
      [undefined, 'target'],
    ] as const) {
      const res = await http(owner, 'post', 'lock').send(target === undefined ? {} : { target });
      expect([res.status, res.body.code, problemsOf(res.body)[0]?.field]).toEqual([400, 'VALIDATION_ERROR', field]);
    }
    expect((await http(viewer, 'post', 'lock').send({ target: { type: 'document' } })).status).toBe(403);
    const foreign = await http(stranger, 'post', 'lock').send({ target: { type: 'document' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('DOC_NOT_FOUND');
    expect((await http(stranger, 'get', 'locks')).status).toBe(404);
    expect((await http(owner, 'get', 'locks')).body.payload.items).toEqual([]);
  });

  it('refuses locks on fields the document does not have; a row lock may reserve a row not created yet', async () => {
    for (const target of [
      { type: 'field', fieldId: 'nosuchfield' },
      { type: 'cell', rowId: 'r1', fieldId: 'nosuchfield' },
    ]) {
      const res = await http(owner, 'post', 'lock').send({ target });
      expect([
        target,
        res.status,
        res.body.code,
        problemsOf(res.body).map((problem) => problem.field),
      ]).toEqual([target, 400, 'VALIDATION_ERROR', ['target.fieldId']]);
    }
    const socket = await TestSocket.connect(
      ws,
      (await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId)).token,
    );
    try {
      const overSocket = await socket.send('lock', { target: { type: 'field', fieldId: 'nosuchfield' } });
      expect(overSocket.payload).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { field: 'payload.target.fieldId' },
      });
      const known = await socket.send('lock', {
        target: { type: 'field', fieldId: 'qty' },
        exclusive: false,
      });
      expect(known.kind).toBe('ack');
      expect((await socket.send('unlock', { lockId: known.payload.lockId })).kind).toBe('ack');
    } finally {
      socket.close();
    }
    // Nothing was taken: another user's row lock goes through.
    const rowLock = await http(editor, 'post', 'lock').send({ target: { type: 'row', rowId: 'future-row' } });
    expect(rowLock.status).toBe(201);
    // The reserved row id: creating it is a write the lock covers.
    const create = await request(t.http)
      .post(`${doc.path}/data`)
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner))
      .send({ id: 'future-row', values: { name: 'Reserved' } });
    expect([create.status, create.body.code]).toEqual([409, 'RESOURCE_LOCKED']);
    expect((await http(editor, 'delete', `unlock/${rowLock.body.payload.lockId}`)).status).toBe(200);
  });

  it('routes without a body refuse one naming its keys', async () => {
    for (const [method, suffix] of [
      ['post', 'disconnect-all'],
      ['delete', 'unlock/00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const res = await http(owner, method, suffix).send({ x: 1 });
      expect([suffix, res.status, res.body.code, problemsOf(res.body)]).toEqual([
        suffix,
        400,
        'VALIDATION_ERROR',
        [{ field: 'x', reason: 'property x should not exist' }],
      ]);
      const list = await http(owner, method, suffix).send([1]);
      expect([suffix, list.status, problemsOf(list.body)[0]?.field]).toEqual([suffix, 400, 'body']);
    }
    expect((await http(owner, 'post', 'disconnect-all').send({})).status).toBe(200);
    expect((await http(owner, 'post', 'disconnect-all')).status).toBe(200);
  });

  it("answers another organization's user 404 on every document route, with no data and nothing changed", async () => {
    const before = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT (SELECT count(*) FROM realtime_yjs_updates) + (SELECT count(*) FROM realtime_snapshots) + (SELECT count(*) FROM realtime_locks) AS n`,
    );
    const calls: Array<['get' | 'post' | 'delete', string, Record<string, unknown>?]> = [
      ['get', 'connect'],
      ['get', 'events'],
      ['get', 'users'],
      ['get', 'locks'],
      ['get', 'snapshot'],
      ['get', 'snapshots'],
      ['post', 'snapshot', { name: 'x' }],
      ['post', 'lock', { target: { type: 'document' } }],
      ['delete', 'unlock/00000000-0000-4000-8000-000000000000'],
      ['post', 'apply-update', { update: b64(Y.encodeStateAsUpdate(new Y.Doc())) }],
      ['post', 'awareness', { update: b64(new Uint8Array([1, 1, 1, 2, 123, 125])) }],
      ['post', 'disconnect-all'],
    ];
    for (const [method, suffix, body] of calls) {
      const res = await http(stranger, method, suffix).send(body);
      expect([suffix, res.status, res.body.code, res.body.payload]).toEqual([
        suffix,
        404,
        'DOC_NOT_FOUND',
        null,
      ]);
    }
    const after = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT (SELECT count(*) FROM realtime_yjs_updates) + (SELECT count(*) FROM realtime_snapshots) + (SELECT count(*) FROM realtime_locks) AS n`,
    );
    expect(after).toEqual(before);
  });

  it('stores and reads named snapshots of the Yjs state', async () => {
    const client = new Y.Doc();
    client.getText('t').insert(0, 'version one');
    expect(
      (await http(editor, 'post', 'apply-update').send({ update: b64(Y.encodeStateAsUpdate(client)) }))
        .status,
    ).toBe(200);
    const first = await http(editor, 'post', 'snapshot').send({ name: 'v1' });
    expect(first.status).toBe(201);
    expect(first.body.payload).toMatchObject({
      snapshotId: expect.any(String),
      name: 'v1',
      createdBy: editor.id,
      state: expect.any(String),
      stateVector: expect.any(String),
    });

    const before = Y.encodeStateVector(client);
    client.getText('t').insert(11, ' and two');
    await http(editor, 'post', 'apply-update').send({ update: b64(Y.encodeStateAsUpdate(client, before)) });
    expect((await http(owner, 'post', 'snapshot').send({ name: 'v2' })).status).toBe(201);

    const read = (state: string): string => {
      const doc2 = new Y.Doc();
      Y.applyUpdate(doc2, new Uint8Array(Buffer.from(state, 'base64')));
      return doc2.getText('t').toString();
    };
    const byId = await http(viewer, 'get', 'snapshot').query({ snapshotId: first.body.payload.snapshotId });
    expect(read(byId.body.payload.state)).toBe('version one');
    const byName = await http(viewer, 'get', 'snapshot').query({ name: 'v2' });
    expect(read(byName.body.payload.state)).toBe('version one and two');
    const current = await http(viewer, 'get', 'snapshot');
    expect(current.body.payload).toMatchObject({ snapshotId: null, name: null });
    expect(read(current.body.payload.state)).toBe('version one and two');

    const list = await http(viewer, 'get', 'snapshots');
    expect(list.status).toBe(200);
    expect(list.body.payload).toMatchObject({ total: 2, page: 1 });
    expect(list.body.payload.items.map((item: { name: string }) => item.name)).toEqual(['v2', 'v1']);
    expect(list.body.payload.items[0].state).toBeUndefined();

    expect((await http(editor, 'post', 'snapshot').send({ name: '' })).body.code).toBe('VALIDATION_ERROR');
    expect((await http(viewer, 'post', 'snapshot').send({ name: 'nope' })).status).toBe(403);
    expect((await http(stranger, 'get', 'snapshots')).status).toBe(404);
    expect((await http(viewer, 'get', 'snapshot').query({ name: 'missing' })).status).toBe(404);
    expect((await http(viewer, 'get', 'snapshots')).body.payload.total).toBe(2);
  });

  it('takes a snapshot on a POST without a body (spec 4.5 names none), named by its time', async () => {
    const before = Date.now();
    const bare = await http(editor, 'post', 'snapshot');
    expect(bare.status).toBe(201);
    expect(bare.body.payload).toMatchObject({ snapshotId: expect.any(String), createdBy: editor.id, state: expect.any(String) });
    const taken = Date.parse(bare.body.payload.name as string);
    expect(taken).toBeGreaterThanOrEqual(before - 1000);
    expect(taken).toBeLessThanOrEqual(Date.now());
    const empty = await http(editor, 'post', 'snapshot').send({});
    expect(empty.status).toBe(201);
    const byName = await http(viewer, 'get', 'snapshot').query({ name: bare.body.payload.name });
    expect(byName.body.payload.snapshotId).toBe(bare.body.payload.snapshotId);
  });

  it('compacts stored updates into the state without losing any', async () => {
    const compacting = await createTestApp({ ...REALTIME_TEST_ENV, REALTIME_YJS_COMPACT_AFTER_UPDATES: '5' });
    try {
      const user = await registerUser(compacting.http);
      const other = await createDocument(compacting.http, user, { docType: 'pads', id: 'p-1' });
      const client = new Y.Doc();
      for (let index = 0; index < 12; index += 1) {
        const before = Y.encodeStateVector(client);
        client.getArray('list').push([index]);
        const res = await request(compacting.http)
          .post(realtimePath(other, 'apply-update'))
          .query({ workspaceId: user.defaultWorkspaceId })
          .set(bearer(user))
          .send({ update: b64(Y.encodeStateAsUpdate(client, before)) });
        expect(res.status).toBe(200);
      }
      const pending = await compacting.dataSource.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM realtime_yjs_updates`,
      );
      expect(pending[0].n).toBeLessThan(5);
      const states = await compacting.dataSource.query<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM realtime_yjs_states`,
      );
      expect(states[0].n).toBe(1);
      const current = await request(compacting.http)
        .get(realtimePath(other, 'snapshot'))
        .query({ workspaceId: user.defaultWorkspaceId })
        .set(bearer(user));
      const restored = new Y.Doc();
      Y.applyUpdate(restored, new Uint8Array(Buffer.from(current.body.payload.state, 'base64')));
      expect(restored.getArray('list').toArray()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    } finally {
      await compacting.close();
    }
  });
});
