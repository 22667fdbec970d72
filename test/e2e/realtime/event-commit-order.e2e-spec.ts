import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { QueryRunner } from 'typeorm';
import { OutboxDispatcher } from '../../../src/modules/events/outbox.dispatcher.js';
import { outboxInsertSql } from '../../../src/modules/events/outbox.service.js';
import { RealtimeEventRepository } from '../../../src/modules/realtime/repositories/realtime-event.repository.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle } from '../documents/documents.fixtures.js';
import {
  coordinates,
  listen,
  openStream,
  REALTIME_TEST_ENV,
  realtimePath,
  sleep,
  waitFor,
} from './realtime.fixtures.js';

/**
 * Events are numbered (outbox `seq`) when they are recorded, but commit in another order: a comment, an approval or a
 * request opened without a merge records its event without the document lock. A client that read up to id N must
 * still get an event numbered below N that committed after it read (docs/realtime.md, "Order and resume"). Each test
 * holds a transaction open with a raw connection, as such a writer does between numbering its event and committing.
 */
describe('realtime event stream: events that commit out of id order', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    base = await listen(t);
    owner = await registerUser(t.http);
  });

  afterAll(async () => {
    await t.close();
  });

  const streamUrl = (doc: DocHandle): string =>
    `${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`;

  /** Records one event on `runner`'s open transaction with the outbox's own insert; returns its id (seq). */
  async function recordOn(runner: QueryRunner, doc: DocHandle, type: string, marker: string): Promise<string> {
    const rows = [
      {
        ...outboxColumns(doc),
        id: randomUUID(),
        event_type: type,
        triggered_by: owner.id,
        payload: { marker },
        stamps: null,
        ord: 0,
      },
    ];
    await runner.query(outboxInsertSql('$1'), [JSON.stringify(rows)]);
    const recorded = (await runner.query(`SELECT seq::text AS seq FROM outbox WHERE payload->>'marker' = $1`, [
      marker,
    ])) as Array<{ seq: string }>;
    return recorded[0].seq;
  }

  function outboxColumns(doc: DocHandle): Record<string, string> {
    const c = coordinates(owner, doc);
    return { organization_id: c.organizationId, workspace_id: c.workspaceId, doc_type: c.docType, doc_id: c.docId };
  }

  async function openTransaction(): Promise<QueryRunner> {
    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    return runner;
  }

  async function history(doc: DocHandle): Promise<Array<{ id: string; event: string }>> {
    const res = await request(t.http)
      .get(realtimePath(doc, 'events'))
      .query({ workspaceId: owner.defaultWorkspaceId, pageSize: 100 })
      .set(bearer(owner))
      .expect(200);
    return res.body.payload.items;
  }

  const markerOf = (event: { data: Record<string, unknown> }): unknown =>
    (event.data.payload as { marker?: unknown }).marker;

  it('a live stream and a stream resumed meanwhile get an event numbered before a merge that committed first', async () => {
    const doc = await createDocument(t.http, owner, { docType: 'notes' });
    await createRow(t.http, owner, doc, { id: 'r0', values: { name: 'n' } });
    const live = openStream(streamUrl(doc), owner.token);
    await waitFor(() => live.opened() === 1, 15_000, 'open');
    const before = (await history(doc))[0].id;

    // A comment's transaction numbers its event, then is slow to commit; a merge numbers its events after it and
    // commits first.
    const comment = await openTransaction();
    const delayedId = await recordOn(comment, doc, 'comment_created', 'delayed');
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'n' } });
    // Without the fix the merge's events are streamed now; with it they wait for the older transaction.
    await waitFor(() => live.events.some((event) => event.type === 'request_merged'), 1_500, 'merge').catch(
      () => undefined,
    );
    // A client resuming from before both, while the comment is still open.
    const resumed = openStream(`${streamUrl(doc)}&lastEventId=${before}`, owner.token);
    await waitFor(() => resumed.opened() === 1, 15_000, 'resumed open');
    await sleep(300);

    await comment.commitTransaction();
    await comment.release();
    t.app.get(OutboxDispatcher).kick();

    for (const stream of [live, resumed]) {
      await waitFor(
        () => stream.events.some((event) => event.id === delayedId),
        5_000,
        'the delayed event',
      ).catch(() => undefined);
    }
    await waitFor(() => resumed.events.some((event) => event.type === 'request_merged'), 5_000, 'resumed merge');
    await sleep(300);
    live.es.close();
    resumed.es.close();

    const since = (await history(doc)).filter((event) => BigInt(event.id) > BigInt(before)).reverse();
    expect(since.map((event) => event.id)).toContain(delayedId);
    for (const stream of [live, resumed]) {
      // Every event once, in the history's order, the delayed comment first (its transaction is the older).
      expect(stream.events.map((event) => `${event.id} ${event.type}`)).toEqual(
        since.map((event) => `${event.id} ${event.event}`),
      );
      expect(stream.events[0]).toMatchObject({ id: delayedId, type: 'comment_created' });
      expect(markerOf(stream.events[0])).toBe('delayed');
    }
  });

  it('younger writers still running above the snapshot\'s xmax do not release what an older open writer holds back', async () => {
    const doc = await createDocument(t.http, owner, { docType: 'notes' });
    await createRow(t.http, owner, doc, { id: 'r0', values: { name: 'n' } });
    const before = (await history(doc))[0].id;

    // The older writer numbers its event and stays open; two younger writers take ids above the snapshot's xmax and
    // stay open; a merge commits. The watermark once widened such an id by subtracting 2^32, came out negative, and
    // every committed event counted as final.
    const older = await openTransaction();
    const heldId = await recordOn(older, doc, 'comment_created', 'held');
    const olderXid = BigInt(
      ((await older.query(`SELECT pg_current_xact_id()::text AS xid`)) as Array<{ xid: string }>)[0].xid,
    );
    const younger = [await openTransaction(), await openTransaction()];
    for (const runner of younger) {
      await runner.query(`SELECT pg_current_xact_id()`);
    }
    // The watermark itself, read at once: nothing has completed since the older writer took its id, so the younger
    // ones are above the snapshot's xmax (later background commits would move xmax past them).
    const events = t.app.get(RealtimeEventRepository) as unknown as { watermark(): Promise<string> };
    const watermark = BigInt(await events.watermark());
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'n' } });
    const resumed = openStream(`${streamUrl(doc)}&lastEventId=${before}`, owner.token);
    await waitFor(() => resumed.opened() === 1, 15_000, 'resumed open');
    await sleep(500);
    const whileOpen = resumed.events.map((event) => event.type);

    for (const runner of [older, ...younger]) {
      await runner.commitTransaction();
      await runner.release();
    }
    t.app.get(OutboxDispatcher).kick();
    await waitFor(() => resumed.events.some((event) => event.type === 'request_merged'), 5_000, 'the merge');
    await sleep(300);
    resumed.es.close();

    // At most the older writer's id (an older transaction of the app may still be running), never below zero.
    expect(watermark).toBeGreaterThan(0n);
    expect(watermark).toBeLessThanOrEqual(olderXid);
    expect(whileOpen).toEqual([]);
    expect(resumed.events[0]).toMatchObject({ id: heldId, type: 'comment_created' });
  });

  it('an event of a younger transaction that numbered it first follows an older transaction that committed first', async () => {
    const doc = await createDocument(t.http, owner, { docType: 'notes' });
    await createRow(t.http, owner, doc, { id: 'r0', values: { name: 'n' } });
    const live = openStream(streamUrl(doc), owner.token);
    await waitFor(() => live.opened() === 1, 15_000, 'open');

    // The older transaction (a merge writing its rows) holds a transaction id first and numbers its event last.
    const older = await openTransaction();
    await older.query(`SELECT pg_current_xact_id()`);
    const younger = await openTransaction();
    const youngerId = await recordOn(younger, doc, 'comment_created', 'younger');
    const olderId = await recordOn(older, doc, 'request_closed', 'older');
    expect(BigInt(olderId)).toBeGreaterThan(BigInt(youngerId));
    await older.commitTransaction();
    await older.release();
    t.app.get(OutboxDispatcher).kick();
    // Nothing older is running: the older transaction's event is streamed at once.
    await waitFor(() => live.events.some((event) => event.id === olderId), 5_000, 'the older event');
    const seen = live.events.map((event) => event.id);

    await younger.commitTransaction();
    await younger.release();
    t.app.get(OutboxDispatcher).kick();
    await waitFor(() => live.events.some((event) => event.id === youngerId), 5_000, 'the younger event').catch(
      () => undefined,
    );
    // A client that stopped after the older event resumes from its id.
    const resumed = openStream(`${streamUrl(doc)}&lastEventId=${olderId}`, owner.token);
    await waitFor(() => resumed.events.length > 0, 5_000, 'resumed catch-up').catch(() => undefined);
    await sleep(300);
    live.es.close();
    resumed.es.close();

    expect(seen).toEqual([olderId]);
    expect(live.events.map((event) => [event.id, markerOf(event)])).toEqual([
      [olderId, 'older'],
      [youngerId, 'younger'],
    ]);
    expect(resumed.events.map((event) => [event.id, markerOf(event)])).toEqual([[youngerId, 'younger']]);
    // The history lists them in the stream's order (newest first).
    expect((await history(doc)).slice(0, 2).map((event) => event.id)).toEqual([youngerId, olderId]);
  });
});
