import request from 'supertest';
import { createDocument } from '../documents/documents.fixtures.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestDatabase } from '../../utils/test-database.js';
import { TransactionHost } from '../../../src/database/transaction-host.js';
import { OutboxService } from '../../../src/modules/events/outbox.service.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { WebhookReceiver, waitFor } from './webhook-receiver.js';
import { API, createWebhook, deliveriesOf, recordEvents, WEBHOOK_TEST_ENV } from './webhooks.fixtures.js';

/** The owner and the document its view events name (an event of a document that does not exist is delivered to no one). */
async function ownerWithDocument(app: TestApp): Promise<TestUser> {
  const owner = await registerUser(app.http);
  await createDocument(app.http, owner, { docType: 'products', id: 'p-1' });
  return owner;
}

function viewEvent(user: TestUser, n: number): Parameters<typeof recordEvents>[1] {
  return {
    event: 'view_updated',
    organizationId: user.defaultOrganizationId,
    workspaceId: user.defaultWorkspaceId,
    docType: 'products',
    docId: 'p-1',
    triggeredBy: user.id,
    payload: { n },
  };
}

describe('webhooks: restarts and several instances on one database', () => {
  let database: { url: string; drop: () => Promise<void> };
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  beforeEach(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('resumes a retry schedule after a restart: same delivery, next attempt when due, nothing lost', async () => {
    const first = await createTestApp(WEBHOOK_TEST_ENV, { databaseUrl: database.url });
    const owner = await ownerWithDocument(first);
    receiver.replies = [{ status: 500 }];
    const hook = await createWebhook(first, owner, {
      url: receiver.url,
      events: ['view_updated'],
      maxRetries: 3,
      retryInterval: 2,
    });
    await recordEvents(first, viewEvent(owner, 1));
    await waitFor(
      async () => (await deliveriesOf(first, owner, hook.id))[0]?.status === 'retrying',
      10_000,
      'retrying',
    );
    const [retrying] = await deliveriesOf(first, owner, hook.id);
    const dueAt = new Date(retrying.nextRetryAt ?? '').getTime();
    await first.close();

    const second = await createTestApp(WEBHOOK_TEST_ENV, { databaseUrl: database.url });
    try {
      await waitFor(() => receiver.received.length === 2, 15_000, 'the retry after restart');
      expect(receiver.received[1].receivedAt).toBeGreaterThanOrEqual(dueAt - 50);
      expect(receiver.received[1].body.deliveryId).toBe(retrying.deliveryId);
      await waitFor(
        async () => (await deliveriesOf(second, owner, hook.id))[0]?.status === 'succeeded',
        15_000,
        'succeeded',
      );
      const [done] = await deliveriesOf(second, owner, hook.id);
      expect(done).toMatchObject({ deliveryId: retrying.deliveryId, attempts: 2, responseStatus: 200 });
    } finally {
      await second.close();
    }
  });

  it('two instances deliver every event exactly once per attempt, in order per webhook', async () => {
    const a: TestApp = await createTestApp(WEBHOOK_TEST_ENV, { databaseUrl: database.url });
    const b: TestApp = await createTestApp(WEBHOOK_TEST_ENV, { databaseUrl: database.url });
    try {
      const owner = await ownerWithDocument(a);
      const slow = await new WebhookReceiver().start();
      slow.fallback = { status: 200, delayMs: 400 };
      const fastHook = await createWebhook(a, owner, {
        url: receiver.url,
        events: ['view_updated'],
        maxRetries: 2,
        retryInterval: 1,
      });
      const slowHook = await createWebhook(b, owner, { url: slow.url, events: ['view_updated'] });
      // Every tenth attempt fails once, so retries run on both instances too.
      let calls = 0;
      receiver.replies = [];
      for (let i = 0; i < 80; i += 1) {
        receiver.replies.push({ status: (calls += 1) % 10 === 0 ? 503 : 200 });
      }
      const total = 42;
      for (let n = 1; n <= total; n += 6) {
        const batch = [0, 1, 2, 3, 4, 5].map((k) => viewEvent(owner, n + k));
        await recordEvents(n % 2 === 1 ? a : b, ...batch);
      }
      await waitFor(
        async () => (await deliveriesOf(a, owner, fastHook.id, '&status=succeeded')).length === total,
        60_000,
        'all fast deliveries',
      );
      // The slow receiver delays only its own webhook: the fast one finished while the slow one is still busy.
      const slowDone = (await deliveriesOf(a, owner, slowHook.id, '&status=succeeded')).length;
      expect(slowDone).toBeLessThan(total);
      await waitFor(
        async () => (await deliveriesOf(a, owner, slowHook.id, '&status=succeeded')).length === total,
        60_000,
        'all slow deliveries',
      );
      // (the slow webhook needs about 17 s in all: 42 × 400 ms, plus each attempt's own time on a loaded machine)

      // Each attempt once: the receiver saw exactly the recorded attempts, no more.
      const [{ attempts }] = await a.dataSource.query(
        `SELECT count(*)::int AS attempts FROM webhook_delivery_attempts WHERE webhook_id = $1`,
        [fastHook.id],
      );
      expect(receiver.received).toHaveLength(attempts);
      const successes = receiver.received.filter((_r, i) => (i + 1) % 10 !== 0).map((r) => r.body.deliveryId);
      expect(new Set(successes).size).toBe(total);
      expect(slow.received).toHaveLength(total);
      expect(new Set(slow.received.map((r) => r.body.deliveryId)).size).toBe(total);
      // Per-webhook order: payload n arrives increasing (a retry is sent before anything behind it).
      expect(slow.received.map((r) => r.body.payload.n)).toEqual(
        Array.from({ length: total }, (_v, i) => i + 1),
      );
      const firstSeen = [
        ...new Map(receiver.received.map((r) => [r.body.deliveryId, Number(r.body.payload.n)])).values(),
      ];
      expect(firstSeen).toEqual(Array.from({ length: total }, (_v, i) => i + 1));
      const stats = await request(a.http)
        .get(`${API}/webhooks/${fastHook.id}/stats`)
        .set(bearer(owner))
        .expect(200);
      expect(stats.body.payload.deliveries.succeeded).toBe(total);
      await slow.stop();
    } finally {
      await a.close();
      await b.close();
    }
  }, 150_000);

  it('a busy webhook does not send a later event ahead of an earlier one another instance is still dispatching', async () => {
    const app = await createTestApp(WEBHOOK_TEST_ENV, { databaseUrl: database.url });
    try {
      const owner = await ownerWithDocument(app);
      receiver.fallback = { status: 200, delayMs: 800 };
      const hook = await createWebhook(app, owner, { url: receiver.url, events: ['view_updated'] });
      await recordEvents(app, viewEvent(owner, 1));
      await waitFor(() => receiver.received.length === 1, 10_000, 'the first delivery in flight');
      // Event 2 is committed but not dispatchable for 2 s: what an instance busy dispatching it looks like to the others.
      const tx = app.app.get(TransactionHost);
      const outbox = app.app.get(OutboxService);
      await tx.run(async () => {
        const ids = await outbox.record(viewEvent(owner, 2));
        await tx.manager.query(
          `UPDATE outbox SET next_attempt_at = now() + interval '2 seconds' WHERE id = ANY($1::uuid[])`,
          [ids],
        );
      });
      await recordEvents(app, viewEvent(owner, 3));
      await waitFor(
        async () => (await deliveriesOf(app, owner, hook.id, '&status=succeeded')).length === 3,
        15_000,
        'three deliveries',
      );
      // Delivery 3 was queued while 1 was in flight; the webhook still waited for event 2 before sending it.
      expect(receiver.received.map((r) => r.body.payload.n)).toEqual([1, 2, 3]);
    } finally {
      await app.close();
    }
  });
});
