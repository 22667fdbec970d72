import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { TransactionHost } from '../../../src/database/transaction-host.js';
import { OutboxDispatcher } from '../../../src/modules/events/outbox.dispatcher.js';
import { OutboxService } from '../../../src/modules/events/outbox.service.js';
import { createTestDatabase } from '../../utils/test-database.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { ProbeModule, ProbeSubscriber } from './support/probe.module.js';

// Generous: dispatch runs in the background, and a loaded CI machine can be many times slower than a laptop.
async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) {
      throw new Error('timed out waiting for the condition');
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface OutboxRow {
  id: string;
  dispatched_at: Date | null;
  attempts: number;
  next_attempt_at: Date | null;
  last_error: string | null;
  delay_seconds: number | null;
}

async function outboxRow(dataSource: DataSource, id: string): Promise<OutboxRow | undefined> {
  const rows = await dataSource.query<OutboxRow[]>(
    `SELECT id, dispatched_at, attempts, next_attempt_at, last_error,
            extract(epoch FROM next_attempt_at - now())::float AS delay_seconds
       FROM outbox WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** Inserts an undispatched event directly, as a crash between commit and dispatch would leave it. */
async function insertPending(
  dataSource: DataSource,
  event: string,
  payload: Record<string, unknown> = {},
): Promise<string> {
  const id = randomUUID();
  await dataSource.query(
    `INSERT INTO outbox (id, event_type, doc_type, doc_id, payload) VALUES ($1, $2, 'probe', 'doc-1', $3)`,
    [id, event, JSON.stringify(payload)],
  );
  return id;
}

describe('event outbox', () => {
  let t: TestApp;
  let tx: TransactionHost;
  let outbox: OutboxService;
  let subscriber: ProbeSubscriber;

  beforeAll(async () => {
    t = await createTestApp({ OUTBOX_POLL_INTERVAL_MS: '100' }, { extraModules: [ProbeModule] });
    tx = t.app.get(TransactionHost);
    outbox = t.app.get(OutboxService);
    subscriber = t.app.get(ProbeSubscriber);
  });
  afterAll(async () => {
    await t.close();
  });

  it('records the event with its change and dispatches it to subscribers only after commit', async () => {
    const orgId = randomUUID();
    let id = '';
    await tx.run(async () => {
      [id] = await outbox.record({
        event: 'platform_probe_committed',
        organizationId: orgId,
        workspaceId: null,
        docType: 'probe',
        docId: 'doc-1',
        triggeredBy: 'user-1',
        payload: { requestId: 'r-1' },
      });
      // Several poll intervals pass while the transaction is open: nobody else can see the event yet.
      await sleep(350);
      expect(subscriber.received.find((e) => e.id === id)).toBeUndefined();
    });
    await waitFor(() => subscriber.received.some((e) => e.id === id));
    const event = subscriber.received.find((e) => e.id === id);
    expect(event).toMatchObject({
      id,
      event: 'platform_probe_committed',
      organizationId: orgId,
      docType: 'probe',
      docId: 'doc-1',
      triggeredBy: 'user-1',
      payload: { requestId: 'r-1' },
    });
    expect(new Date(event?.timestamp ?? '').toISOString()).toBe(event?.timestamp);
    await waitFor(async () => (await outboxRow(t.dataSource, id))?.dispatched_at instanceof Date);
    expect((await outboxRow(t.dataSource, id))?.attempts).toBe(1);
  });

  it('neither stores nor dispatches the event of a unit of work that rolls back', async () => {
    let id = '';
    await expect(
      tx.run(async () => {
        [id] = await outbox.record({ event: 'platform_probe_rolled_back', payload: {} });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await sleep(400);
    expect(await outboxRow(t.dataSource, id)).toBeUndefined();
    expect(subscriber.received.some((e) => e.event === 'platform_probe_rolled_back')).toBe(false);
  });

  it('refuses to record outside a unit of work', async () => {
    await expect(outbox.record({ event: 'platform_probe_loose', payload: {} })).rejects.toThrow(
      /inside TransactionHost.run/,
    );
  });

  it('picks up an event left undispatched by a crash through the poll', async () => {
    const id = await insertPending(t.dataSource, 'platform_probe_recovered', { n: 1 });
    await waitFor(() => subscriber.received.some((e) => e.id === id));
    expect(subscriber.received.filter((e) => e.id === id)).toHaveLength(1);
    await waitFor(async () => (await outboxRow(t.dataSource, id))?.dispatched_at instanceof Date);
  });

  it('retries an event whose subscriber fails, with back-off, then dispatches it once', async () => {
    subscriber.failuresLeft.set('platform_probe_flaky', 1);
    const before = Date.now();
    const id = await insertPending(t.dataSource, 'platform_probe_flaky');
    await waitFor(async () => (await outboxRow(t.dataSource, id))?.attempts === 1);
    const failed = await outboxRow(t.dataSource, id);
    expect(failed).toMatchObject({
      dispatched_at: null,
      attempts: 1,
      last_error: 'probe subscriber failure for platform_probe_flaky',
    });
    // First retry after 2 s (2^attempts), so nothing happens on the next polls. Measured from before the event
    // existed (not from this read, which a loaded machine may make late): at least 2 s, and never more than 2 s left.
    expect(new Date(failed?.next_attempt_at ?? 0).getTime() - before).toBeGreaterThanOrEqual(1950);
    expect(failed?.delay_seconds).toBeLessThanOrEqual(2);
    await sleep(300);
    expect(subscriber.received.some((e) => e.id === id)).toBe(false);
    // Once the back-off has elapsed (fast-forwarded here), the next pass delivers it.
    await t.dataSource.query(`UPDATE outbox SET next_attempt_at = now() WHERE id = $1`, [id]);
    await waitFor(() => subscriber.received.some((e) => e.id === id));
    await waitFor(async () => (await outboxRow(t.dataSource, id))?.dispatched_at instanceof Date);
    expect((await outboxRow(t.dataSource, id))?.attempts).toBe(2);
    expect(subscriber.received.filter((e) => e.id === id)).toHaveLength(1);
  });

  it('parks an event after OUTBOX_MAX_ATTEMPTS failures', async () => {
    const maxAttempts = t.config.outbox.maxAttempts;
    subscriber.failuresLeft.set('platform_probe_poison', maxAttempts + 5);
    const id = await insertPending(t.dataSource, 'platform_probe_poison');
    for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
      await waitFor(async () => (await outboxRow(t.dataSource, id))?.attempts === attempt);
      await t.dataSource.query(
        `UPDATE outbox SET next_attempt_at = now() WHERE id = $1 AND dispatched_at IS NULL`,
        [id],
      );
    }
    const parked = await outboxRow(t.dataSource, id);
    expect(parked?.attempts).toBe(maxAttempts);
    expect(parked?.dispatched_at).not.toBeNull();
    expect(parked?.last_error).toMatch(/probe subscriber failure/);
    expect(subscriber.received.some((e) => e.id === id)).toBe(false);
  });
});

describe('event outbox with two instances on one database', () => {
  const N = 60;
  let database: { url: string; drop: () => Promise<void> };
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = { OUTBOX_POLL_INTERVAL_MS: '50', OUTBOX_BATCH_SIZE: '5' };
    [a, b] = await Promise.all([
      createTestApp(env, { extraModules: [ProbeModule], databaseUrl: database.url }),
      createTestApp(env, { extraModules: [ProbeModule], databaseUrl: database.url }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await database?.drop();
  });

  it(`dispatches each of ${N} events exactly once between them`, async () => {
    const ids = new Set<string>();
    for (let i = 0; i < N; i += 1) {
      ids.add(await insertPending(a.dataSource, 'platform_probe_shared', { i }));
    }
    // Both dispatchers also drain at once, on top of their polls.
    a.app.get(OutboxDispatcher).kick();
    b.app.get(OutboxDispatcher).kick();
    const received = () =>
      [...a.app.get(ProbeSubscriber).received, ...b.app.get(ProbeSubscriber).received].filter((e) =>
        ids.has(e.id),
      );
    await waitFor(() => received().length >= N, 30_000);
    await sleep(300);
    const delivered = received().map((e) => e.id);
    expect(delivered).toHaveLength(N);
    expect(new Set(delivered).size).toBe(N);
    // Both instances took part (batches of 5 interleave), so the test exercised the locking.
    expect(a.app.get(ProbeSubscriber).received.length).toBeGreaterThan(0);
    expect(b.app.get(ProbeSubscriber).received.length).toBeGreaterThan(0);
    const pending = await a.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM outbox WHERE dispatched_at IS NULL`,
    );
    expect(pending[0].n).toBe(0);
  });
});
