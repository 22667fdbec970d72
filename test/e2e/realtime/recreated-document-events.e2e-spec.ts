import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle } from '../documents/documents.fixtures.js';
import { listen, openStream, REALTIME_TEST_ENV, realtimePath, sleep, waitFor } from './realtime.fixtures.js';

/**
 * A deleted document's id can be reused (docs/documents.md). The outbox keys events by tenant + (docType, docId),
 * so the events of the deleted document must not become the history or stream of the new one
 * (docs/realtime.md, "The event stream").
 */
describe('realtime events of a document re-created with the same id', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;

  beforeAll(async () => {
    // Re-checks slow enough that a stream of the deleted document is still open when one of the new document opens.
    t = await createTestApp({ ...REALTIME_TEST_ENV, REALTIME_ACCESS_RECHECK_MS: '4000' });
    base = await listen(t);
    owner = await registerUser(t.http);
  });

  afterAll(async () => {
    await t.close();
  });

  async function history(doc: DocHandle): Promise<Array<{ id: string; event: string; payload: Record<string, unknown> }>> {
    const res = await request(t.http)
      .get(realtimePath(doc, 'events'))
      .query({ workspaceId: owner.defaultWorkspaceId, pageSize: 100 })
      .set(bearer(owner));
    expect(res.status).toBe(200);
    return res.body.payload.items;
  }

  async function recreate(docId: string): Promise<{ oldEventIds: string[]; doc: DocHandle }> {
    const first = await createDocument(t.http, owner, { id: docId });
    await createRow(t.http, owner, first, { id: 'r1', values: { name: 'old secret', price: 1 } });
    const oldEventIds = (await history(first)).map((event) => event.id);
    expect(oldEventIds.length).toBeGreaterThan(0);
    const deleted = await request(t.http).delete(`${first.path}?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner));
    expect(deleted.status).toBe(200);
    const doc = await createDocument(t.http, owner, { id: docId });
    return { oldEventIds, doc };
  }

  it('GET …/events lists only the new document’s events', async () => {
    const { oldEventIds, doc } = await recreate('reused-history');
    const items = await history(doc);
    expect(items.filter((event) => oldEventIds.includes(event.id))).toEqual([]);
    expect(JSON.stringify(items)).not.toContain('old secret');

    await createRow(t.http, owner, doc, { id: 'r2', values: { name: 'new', price: 2 } });
    const after = await history(doc);
    expect(after.some((event) => event.event === 'data_row_created')).toBe(true);
    expect(after.filter((event) => oldEventIds.includes(event.id))).toEqual([]);
  });

  it('a stream resumed from an id of the deleted document does not replay its events', async () => {
    const { oldEventIds, doc } = await recreate('reused-stream');
    const oldest = oldEventIds.reduce((min, id) => (BigInt(id) < BigInt(min) ? id : min));
    const url =
      `${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}` +
      `&lastEventId=${BigInt(oldest) - 1n}`;
    const stream = openStream(url, owner.token);
    try {
      await waitFor(() => stream.opened() === 1, 15_000, 'open');
      await createRow(t.http, owner, doc, { id: 'r2', values: { name: 'new', price: 2 } });
      await waitFor(() => stream.events.some((event) => event.type === 'data_row_created'), 15_000, 'new row event');
      await sleep(100);
      expect(stream.events.filter((event) => oldEventIds.includes(event.id))).toEqual([]);
      expect(JSON.stringify(stream.events.map((event) => event.data))).not.toContain('old secret');
    } finally {
      stream.es.close();
    }
  });

  it("keeps the new document's live stream going when the deleted document's last stream ends", async () => {
    const first = await createDocument(t.http, owner, { id: 'reused-live' });
    const streamOf = (doc: DocHandle) =>
      openStream(`${base}${realtimePath(doc, 'events/stream')}?workspaceId=${owner.defaultWorkspaceId}`, owner.token);
    const old = streamOf(first);
    old.es.addEventListener('error', () => old.es.close()); // no reconnect: the document is gone
    const fresh: { current?: ReturnType<typeof streamOf> } = {};
    try {
      await waitFor(() => old.opened() === 1, 15_000, 'old stream open');
      await request(t.http).delete(`${first.path}?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).expect(200);
      const doc = await createDocument(t.http, owner, { id: 'reused-live' });
      fresh.current = streamOf(doc);
      const stream = fresh.current;
      await waitFor(() => stream.opened() === 1, 15_000, 'new stream open');
      // The deleted document's stream is ended at its next access check.
      await waitFor(() => old.events.some((event) => event.type === 'stream_end'), 15_000, 'old stream ended');
      await sleep(200);
      await createRow(t.http, owner, doc, { id: 'live', values: { name: 'live', price: 1 } });
      await waitFor(
        () => stream.events.some((event) => event.type === 'data_row_created'),
        5_000,
        "the new document's row event on its live stream",
      );
    } finally {
      old.es.close();
      fresh.current?.es.close();
    }
  });
});
