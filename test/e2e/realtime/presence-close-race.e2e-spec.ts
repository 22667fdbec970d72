import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { blockedSessions, holdLock } from '../../utils/row-locks.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import {
  connectInfo,
  listen,
  REALTIME_TEST_ENV,
  realtimePath,
  sleep,
  TestSocket,
  waitFor,
} from './realtime.fixtures.js';

/**
 * A socket that closes while its `auth` is being answered must not stay online: its instance refreshes the
 * presence rows of its sessions every heartbeat, so a row written after the socket's clean-up ran would list the
 * user in GET .../users for as long as the instance lives.
 */
describe('realtime presence and locks of a socket that closes mid-message', () => {
  let t: TestApp;
  let wsUrl: string;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp({ ...REALTIME_TEST_ENV });
    const base = await listen(t);
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner, { docType: 'boards', id: 'ghost' });
    const info = await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId);
    wsUrl = `${base.replace('http', 'ws')}${info.wsPath}`;
  });

  afterAll(async () => {
    await t.close();
  });

  const online = async (): Promise<unknown[]> => {
    const res = await request(t.http)
      .get(realtimePath(doc, 'users'))
      .query({ workspaceId: owner.defaultWorkspaceId })
      .set(bearer(owner));
    expect(res.status).toBe(200);
    return res.body.payload.items as unknown[];
  };

  it('leaves no presence behind when the socket closed before its presence row was written', async () => {
    const [{ id: uuid }] = await t.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM documents WHERE doc_type = $1 AND doc_id = $2`,
      [doc.docType, doc.docId],
    );
    const { token } = await connectInfo(t.http, owner, doc, owner.defaultWorkspaceId);
    // The presence row's foreign key check waits for the document row the test holds: the row is written, not
    // yet committed, when the socket goes away and its clean-up runs.
    const lock = await holdLock(t.dataSource, 'SELECT 1 FROM documents WHERE id = $1 FOR UPDATE', [uuid]);
    try {
      const socket = await TestSocket.open(wsUrl);
      socket.ws.send(JSON.stringify({ kind: 'auth', seq: 1, payload: { token } }));
      await blockedSessions(t.dataSource, 1);
      socket.ws.terminate();
      await sleep(400);
    } finally {
      await lock.release();
    }
    // Past the presence TTL (three heartbeats, at least 5 s): a leftover row would still be refreshed and listed.
    await sleep(6000);
    expect(await online()).toEqual([]);
    const rows = await t.dataSource.query<unknown[]>(`SELECT 1 FROM realtime_presence WHERE document_uuid = $1`, [uuid]);
    expect(rows).toEqual([]);
  });

  it('a lock whose socket closed while it was being taken does not outlive the socket', async () => {
    // Slow heartbeats here: the sweep (every heartbeat) would otherwise hide a leftover lock within a moment.
    const slow = await createTestApp({ ...REALTIME_TEST_ENV, REALTIME_HEARTBEAT_MS: '20000' });
    try {
      const slowBase = await listen(slow);
      const user = await registerUser(slow.http);
      const board = await createDocument(slow.http, user, { docType: 'boards', id: 'lock-race' });
      const info = await connectInfo(slow.http, user, board, user.defaultWorkspaceId);
      const socket = await TestSocket.connect(`${slowBase.replace('http', 'ws')}${info.wsPath}`, info.token);
      const [{ id: uuid }] = await slow.dataSource.query<Array<{ id: string }>>(
        `SELECT id FROM documents WHERE doc_type = $1 AND doc_id = $2`,
        [board.docType, board.docId],
      );
      // The lock row's foreign key check waits for the document row: the socket's clean-up runs meanwhile.
      const lock = await holdLock(slow.dataSource, 'SELECT 1 FROM documents WHERE id = $1 FOR UPDATE', [uuid]);
      try {
        socket.ws.send(JSON.stringify({ kind: 'lock', seq: 5, payload: { target: { type: 'document' } } }));
        await blockedSessions(slow.dataSource, 1);
        socket.ws.terminate();
        await sleep(400);
      } finally {
        await lock.release();
      }
      // Once the blocked insert goes on, the socket's clean-up removes the row. A leftover would stay until the sweep
      // of a heartbeat (every 20 s here): one falling inside this wait could hide it (a false pass, never a false
      // failure), which the short wait keeps unlikely.
      await waitFor(
        async () =>
          (await slow.dataSource.query<unknown[]>(`SELECT 1 FROM realtime_locks WHERE document_uuid = $1`, [uuid]))
            .length === 0,
        3_000,
        'no lock left behind',
      );
      const other = await registerUser(slow.http);
      await slow.dataSource.query(
        `INSERT INTO organization_members (organization_id, user_id, role) VALUES ($1, $2, 'member')`,
        [user.defaultOrganizationId, other.id],
      );
      await slow.dataSource.query(
        `INSERT INTO workspace_members (organization_id, workspace_id, user_id, role) VALUES ($1, $2, $3, 'editor')`,
        [user.defaultOrganizationId, user.defaultWorkspaceId, other.id],
      );
      const taken = await request(slow.http)
        .post(realtimePath(board, 'lock'))
        .query({ workspaceId: user.defaultWorkspaceId })
        .set(bearer(other))
        .send({ target: { type: 'document' } });
      expect(taken.status).toBe(201);
    } finally {
      await slow.close();
    }
  });
});
