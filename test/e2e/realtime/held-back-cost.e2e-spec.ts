import request from 'supertest';
import type { QueryRunner } from 'typeorm';
import { RealtimeEventRepository } from '../../../src/modules/realtime/repositories/realtime-event.repository.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle } from '../documents/documents.fixtures.js';
import { listen, openStream, REALTIME_TEST_ENV, realtimePath, sleep, waitFor } from './realtime.fixtures.js';

/**
 * What events held back cost (docs/realtime.md, "Order and resume", "Known limits"): while a writing transaction
 * stays open, the instance reads the watermark once per tick for all its held documents — every 10 ms at first,
 * backing off to 250 ms — and reads a held document again only when the watermark has passed what it waits on or a
 * notice names it. Each document used to be read again (two statements) on its own timer and at every notice of any
 * document.
 */
describe('realtime event stream: the cost of events held back', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let idle: QueryRunner | undefined;

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    base = await listen(t);
    owner = await registerUser(t.http);
  });

  afterAll(async () => {
    // Ended here too when a test failed while holding it (the app's shutdown would otherwise wait on it).
    if (idle && !idle.isReleased) {
      await idle.rollbackTransaction().catch(() => undefined);
      await idle.release();
    }
    await t.close();
  });

  const streamUrl = (doc: DocHandle): string =>
    `${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`;

  async function history(doc: DocHandle): Promise<Array<{ id: string; event: string }>> {
    const res = await request(t.http)
      .get(realtimePath(doc, 'events'))
      .query({ workspaceId: owner.defaultWorkspaceId, pageSize: 100 })
      .set(bearer(owner))
      .expect(200);
    return res.body.payload.items;
  }

  it('one watermark read per tick for every held document, a document read again only when its wait ends or a notice names it', async () => {
    const docs: DocHandle[] = [];
    for (let i = 0; i < 4; i += 1) {
      docs.push(await createDocument(t.http, owner, { docType: 'notes' }));
    }
    const befores = await Promise.all(docs.map(async (doc) => (await history(doc))[0].id));
    const streams = docs.map((doc) => openStream(streamUrl(doc), owner.token));
    await waitFor(() => streams.every((stream) => stream.opened() === 1), 15_000, 'open');

    // A session left idle in a transaction that took an id (it records no event: its end sends no notice).
    const writer = t.dataSource.createQueryRunner();
    idle = writer;
    await writer.connect();
    await writer.startTransaction();
    await writer.query(`SELECT pg_current_xact_id()`);
    for (const doc of docs) {
      await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'n' } });
    }
    // Long enough for the notices to come and the poll to back off to its longest delay (10 + 20 + … + 250 ms).
    await sleep(1_000);
    expect(streams.map((stream) => stream.events.length)).toEqual([0, 0, 0, 0]);

    // Counts the hub's reads on the repository instance it shares (after() reads the watermark through it too).
    const events = t.app.get(RealtimeEventRepository);
    let watermarkReads = 0;
    const readDocs: string[] = [];
    const { watermark, after } = events;
    events.watermark = function (this: RealtimeEventRepository) {
      watermarkReads += 1;
      return watermark.call(this);
    };
    events.after = function (
      this: RealtimeEventRepository,
      ...args: Parameters<RealtimeEventRepository['after']>
    ) {
      readDocs.push(args[0].docId);
      return after.apply(this, args);
    };
    try {
      await sleep(1_000);
      // Four held documents, no traffic: no document is read, the watermark at most once per 250 ms for all of them
      // (three to five in a second; fewer when a loaded machine fires timers late, never one per document).
      expect(readDocs).toEqual([]);
      expect(watermarkReads).toBeGreaterThanOrEqual(1);
      expect(watermarkReads).toBeLessThanOrEqual(5);

      // A write to one of them: only that document is read again (its events wait on the same transaction).
      await createRow(t.http, owner, docs[0], { id: 'r2', values: { name: 'n' } });
      await sleep(500);
      expect(readDocs.length).toBeGreaterThan(0);
      expect(new Set(readDocs)).toEqual(new Set([docs[0].docId]));
    } finally {
      events.watermark = watermark;
      events.after = after;
    }

    // The idle transaction ends without a notice: the poll finds the waits over and every stream gets its events.
    await writer.commitTransaction();
    await writer.release();
    const expected = await Promise.all(
      docs.map(async (doc, index) =>
        (await history(doc))
          .filter((event) => BigInt(event.id) > BigInt(befores[index]))
          .reverse()
          .map((event) => `${event.id} ${event.event}`),
      ),
    );
    await waitFor(
      () => streams.every((stream, index) => stream.events.length >= expected[index].length),
      2_000,
      'the held events',
    );
    await sleep(300);
    streams.forEach((stream) => stream.es.close());
    // No gap, no duplicate, in the history's order.
    expect(streams.map((stream) => stream.events.map((event) => `${event.id} ${event.type}`))).toEqual(
      expected,
    );
    expect(expected[0].filter((event) => event.endsWith('data_row_created'))).toHaveLength(2);
  });
});
