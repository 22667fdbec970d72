import request from 'supertest';
import * as Y from 'yjs';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { blockedSessions } from '../../utils/row-locks.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { connectInfo, listen, REALTIME_TEST_ENV, realtimePath, TestSocket } from './realtime.fixtures.js';

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

function textOf(state: string): string {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, new Uint8Array(Buffer.from(state, 'base64')));
  return doc.getText('t').toString();
}

/**
 * The Yjs state is the compacted state plus the updates after it. A compaction that commits while the state is
 * being read must not leave the reader with the old compacted state and only the updates after the new one: the
 * updates folded in between would be missing from the answer (and from a snapshot taken from it).
 */
describe('realtime Yjs state read while a compaction commits', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp({ ...REALTIME_TEST_ENV });
    base = await listen(t);
    owner = await registerUser(t.http);
  });

  afterAll(async () => {
    await t.close();
  });

  /** Applies `words` as separate updates over HTTP; returns the text they make. */
  async function write(target: DocHandle, words: string[]): Promise<string> {
    const client = new Y.Doc();
    for (const word of words) {
      const before = Y.encodeStateVector(client);
      client.getText('t').insert(client.getText('t').length, word);
      const res = await request(t.http)
        .post(realtimePath(target, 'apply-update'))
        .query({ workspaceId: owner.defaultWorkspaceId })
        .set(bearer(owner))
        .send({ update: b64(Y.encodeStateAsUpdate(client, before)) });
      expect(res.status).toBe(200);
    }
    return client.getText('t').toString();
  }

  /**
   * Runs `read` while the test's own connection holds the updates table, waits until the read queues behind it,
   * then compacts exactly as YjsStateRepository.saveCompacted does and commits.
   */
  async function readDuringCompaction<T>(target: DocHandle, read: () => Promise<T>): Promise<T> {
    const [{ id: uuid }] = await t.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM documents WHERE doc_type = $1 AND doc_id = $2`,
      [target.docType, target.docId],
    );
    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query(`LOCK TABLE realtime_yjs_updates IN ACCESS EXCLUSIVE MODE`);
      let settled = false;
      const pending = read().finally(() => {
        settled = true;
      });
      await blockedSessions(t.dataSource, 1, () => settled);
      const updates = (await runner.query(
        `SELECT id::text AS id, "update", organization_id, workspace_id FROM realtime_yjs_updates WHERE document_uuid = $1 ORDER BY id`,
        [uuid],
      )) as Array<{ id: string; update: Buffer; organization_id: string; workspace_id: string | null }>;
      const states = (await runner.query(
        `SELECT state FROM realtime_yjs_states WHERE document_uuid = $1`,
        [uuid],
      )) as Array<{ state: Buffer }>;
      const merged = Y.mergeUpdates([
        ...states.map((row) => new Uint8Array(row.state)),
        ...updates.map((row) => new Uint8Array(row.update)),
      ]);
      await runner.query(
        `INSERT INTO realtime_yjs_states (document_uuid, organization_id, workspace_id, state, last_update_id)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (document_uuid) DO UPDATE SET state = EXCLUDED.state, last_update_id = EXCLUDED.last_update_id`,
        [uuid, updates[0].organization_id, updates[0].workspace_id, Buffer.from(merged), updates[updates.length - 1].id],
      );
      await runner.query(`DELETE FROM realtime_yjs_updates WHERE document_uuid = $1 AND id <= $2`, [
        uuid,
        updates[updates.length - 1].id,
      ]);
      await runner.commitTransaction();
      return await pending;
    } finally {
      if (runner.isTransactionActive) {
        await runner.rollbackTransaction();
      }
      await runner.release();
    }
  }

  it('GET .../snapshot (current state) answers every update, none lost to the compaction', async () => {
    doc = await createDocument(t.http, owner, { docType: 'pads', id: 'race-get' });
    const expected = await write(doc, ['alpha ', 'beta ', 'gamma']);
    const res = await readDuringCompaction(doc, () =>
      request(t.http)
        .get(realtimePath(doc, 'snapshot'))
        .query({ workspaceId: owner.defaultWorkspaceId })
        .set(bearer(owner))
        .then((answer) => answer),
    );
    expect(res.status).toBe(200);
    expect(textOf(res.body.payload.state)).toBe(expected);
  });

  it('a named snapshot and a socket yjs_sync taken during a compaction hold every update', async () => {
    const second = await createDocument(t.http, owner, { docType: 'pads', id: 'race-sync' });
    const expected = await write(second, ['one ', 'two']);
    const created = await readDuringCompaction(second, () =>
      request(t.http)
        .post(realtimePath(second, 'snapshot'))
        .query({ workspaceId: owner.defaultWorkspaceId })
        .set(bearer(owner))
        .send({ name: 'during-compaction' })
        .then((answer) => answer),
    );
    expect(created.status).toBe(201);
    expect(textOf(created.body.payload.state)).toBe(expected);

    const more = await write(second, [' three']);
    const info = await connectInfo(t.http, owner, second, owner.defaultWorkspaceId);
    const socket = await TestSocket.connect(`${base.replace('http', 'ws')}${info.wsPath}`, info.token);
    try {
      const reply = await readDuringCompaction(second, () => socket.send('yjs_sync', {}));
      expect(reply.kind).toBe('ack');
      // Two writers (one Y.Doc per `write`): both texts are there, in the order Yjs gives concurrent inserts.
      expect(textOf(String(reply.payload.update))).toContain(more);
      expect(textOf(String(reply.payload.update))).toContain(expected);
    } finally {
      socket.close();
    }
  });
});
