import { createServer, type AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Logger } from '@nestjs/common';
import request from 'supertest';
import { addToWorkspace, createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { WebhookDeliveryJob } from '../../../src/modules/webhooks/jobs/webhook-delivery.job.js';
import { WebhookUrlGuard } from '../../../src/modules/webhooks/services/webhook-url-guard.service.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { sleep, WebhookReceiver, waitFor } from './webhook-receiver.js';
import {
  API,
  createOrganizationDocument,
  createWebhook,
  deliveriesOf,
  recordEvents,
  standardHeaders,
  WEBHOOK_TEST_ENV,
} from './webhooks.fixtures.js';

describe('webhooks: retries, disable, pause, redeliver, test, stats, access', () => {
  let t: TestApp;
  let owner: TestUser;
  let receiver: WebhookReceiver;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp({
      ...WEBHOOK_TEST_ENV,
      WEBHOOK_DISABLE_AFTER_FAILURES: '4',
      WEBHOOK_SECRET_GRACE_SECONDS: '3600',
    });
    owner = await registerUser(t.http);
    doc = await createDocument(t.http, owner);
  });
  beforeEach(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
  });
  afterAll(async () => {
    await t.close();
  });

  function event(
    type: string,
    payload: Record<string, unknown> = {},
    over: Record<string, unknown> = {},
  ): Parameters<typeof recordEvents>[1] {
    return {
      event: type,
      organizationId: owner.defaultOrganizationId,
      workspaceId: owner.defaultWorkspaceId,
      docType: doc.docType,
      docId: doc.docId,
      triggeredBy: owner.id,
      payload,
      ...over,
    };
  }

  it('retries a failing delivery with exponential spacing, records every attempt, then gives up', async () => {
    receiver.fallback = { status: 500, body: 'x'.repeat(5000) };
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['view_updated'],
      maxRetries: 2,
      retryInterval: 1,
    });
    await recordEvents(t, event('view_updated', { viewId: 'r' }));
    await waitFor(() => receiver.received.length === 3, 15_000, 'three attempts');
    const [first, second, third] = receiver.received;
    // Never earlier than scheduled. How much later depends on the machine's load, so the doubling itself is
    // checked on the schedule the worker recorded (below), not on the arrival times.
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(950);
    expect(third.receivedAt - second.receivedAt).toBeGreaterThanOrEqual(1950);
    // Same delivery id and the same bytes on every attempt.
    expect(new Set(receiver.received.map((r) => r.body.deliveryId)).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.rawBody)).size).toBe(1);
    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id))[0]?.status === 'failed',
      15_000,
      'failed',
    );
    const [delivery] = await deliveriesOf(t, owner, hook.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3, responseStatus: 500, nextRetryAt: null });
    const detail = await request(t.http)
      .get(`${API}/webhooks/${hook.id}/deliveries/${delivery.deliveryId}`)
      .set(bearer(owner))
      .expect(200);
    const log = detail.body.payload.attemptLog;
    expect(log.map((a: { attempt: number }) => a.attempt)).toEqual([3, 2, 1]);
    expect(log[2]).toMatchObject({ responseStatus: 500, success: false, manual: false, error: 'HTTP 500' });
    expect(log[2].responseBody).toHaveLength(2048);
    expect(log[2].requestHeaders).toMatchObject({
      'webhook-id': delivery.deliveryId,
      'x-webhook-event': 'view_updated',
    });
    // Scheduled retry delays: retryInterval × 2^(retry−1) plus up to 25 % jitter.
    // The retry is scheduled once the attempt is over: its own duration (however slow the machine) is left out.
    const scheduled = (entry: { nextRetryAt: string; startedAt: string; durationMs: number }) =>
      new Date(entry.nextRetryAt).getTime() - new Date(entry.startedAt).getTime() - entry.durationMs;
    expect(scheduled(log[2])).toBeGreaterThanOrEqual(990); // durations are rounded to the millisecond
    expect(scheduled(log[2])).toBeLessThan(2000);
    expect(scheduled(log[1])).toBeGreaterThanOrEqual(1990);
    expect(scheduled(log[1])).toBeLessThan(3500);
    expect(log[0].nextRetryAt).toBeNull();
    expect(detail.body.payload.requestBody).toBe(first.rawBody);
  });

  it('treats a time-out and a redirect as failures and follows no redirect', async () => {
    const elsewhere = await new WebhookReceiver().start();
    receiver.replies = [
      { status: 200, delayMs: 2500 },
      { status: 302, headers: { location: elsewhere.url } },
    ];
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['view_deleted'],
      maxRetries: 0,
      timeout: 1,
    });
    await recordEvents(t, event('view_deleted', { viewId: 't1' }), event('view_deleted', { viewId: 't2' }));
    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id, '&status=failed')).length === 2,
      10_000,
      'two failures',
    );
    const failed = await deliveriesOf(t, owner, hook.id);
    expect(failed.map((d) => d.error).sort()).toEqual(['HTTP 302', 'timed out after 1000 ms']);
    expect(elsewhere.received).toHaveLength(0);
    await elsewhere.stop();
  });

  it('bounds the DNS lookup before an attempt by the timeout: a slow lookup is a failed attempt that says so, and nothing is sent', async () => {
    // A lookup that outlived the lease (timeout + 30 s) would let another instance make the same attempt again.
    const guard = t.app.get(WebhookUrlGuard);
    const original = guard.resolve.bind(guard);
    const port = new URL(receiver.url).port;
    let slow = false;
    guard.resolve = async (host: string) => {
      if (host !== 'slow-dns.example.test') {
        return original(host);
      }
      if (slow) {
        await sleep(5000);
      }
      return [{ address: '127.0.0.1', family: 4 }];
    };
    try {
      const hook = await createWebhook(t, owner, {
        url: `http://slow-dns.example.test:${port}/hook`,
        events: ['view_deleted'],
        maxRetries: 0,
        timeout: 1,
      });
      slow = true;
      await recordEvents(t, event('view_deleted', { viewId: 'dns' }));
      await waitFor(
        async () => (await deliveriesOf(t, owner, hook.id, '&status=failed')).length === 1,
        4000,
        'the attempt to fail at its timeout',
      );
      const [failed] = await deliveriesOf(t, owner, hook.id);
      expect(failed.error).toBe('timed out after 1000 ms resolving slow-dns.example.test');
      expect(receiver.received).toHaveLength(0);
    } finally {
      guard.resolve = original;
    }
  });

  it('applies a maxRetries changed by PUT to the deliveries already retrying, like timeout and retryInterval', async () => {
    receiver.fallback = { status: 500 };
    const lowered = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['comment_updated'],
      maxRetries: 5,
      retryInterval: 1,
    });
    const raised = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['comment_updated'],
      maxRetries: 1,
      retryInterval: 1,
    });
    await recordEvents(t, event('comment_updated', { commentId: 'm' }));
    for (const hook of [lowered, raised]) {
      await waitFor(
        async () => (await deliveriesOf(t, owner, hook.id))[0]?.status === 'retrying',
        10_000,
        'the first failed attempt',
      );
    }
    for (const [hook, maxRetries] of [
      [lowered, 1],
      [raised, 2],
    ] as const) {
      await request(t.http).put(`${API}/webhooks/${hook.id}`).set(bearer(owner)).send({ maxRetries }).expect(200);
    }
    for (const hook of [lowered, raised]) {
      await waitFor(
        async () => (await deliveriesOf(t, owner, hook.id))[0]?.status === 'failed',
        15_000,
        'the delivery to be given up',
      );
    }
    // One first attempt plus maxRetries retries, counted with the value the webhook has now.
    expect((await deliveriesOf(t, owner, lowered.id))[0].attempts).toBe(2);
    expect((await deliveriesOf(t, owner, raised.id))[0].attempts).toBe(3);
  });

  it('records an answer whose body holds NUL bytes, once, instead of sending the delivery again and again', async () => {
    receiver.fallback = { status: 200, body: 'ok\u0000done' };
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['comment_resolved'],
      maxRetries: 0,
      timeout: 1,
    });
    await recordEvents(t, event('comment_resolved', { commentId: 'nul' }));
    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id))[0]?.status === 'succeeded',
      10_000,
      'the attempt to be recorded',
    );
    const [delivery] = await deliveriesOf(t, owner, hook.id);
    const detail = await request(t.http)
      .get(`${API}/webhooks/${hook.id}/deliveries/${delivery.deliveryId}`)
      .set(bearer(owner))
      .expect(200);
    // PostgreSQL text cannot hold NUL: it is kept as U+FFFD, like any other byte that is not UTF-8 text.
    expect(detail.body.payload.attemptLog).toEqual([
      expect.objectContaining({ attempt: 1, success: true, responseBody: 'ok\ufffddone' }),
    ]);
    expect(receiver.received).toHaveLength(1);
  });

  it('treats a 2xx answer whose connection breaks before the body is complete as a failed attempt', async () => {
    // Announces 100 bytes, sends 5 and closes: the exchange did not complete (a connection error).
    const truncating = createServer((socket) => {
      socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort'));
    });
    await new Promise<void>((resolve) => truncating.listen(0, '127.0.0.1', resolve));
    const hook = await createWebhook(t, owner, {
      url: `http://127.0.0.1:${(truncating.address() as AddressInfo).port}/hook`,
      events: ['view_created'],
      maxRetries: 0,
    });
    await recordEvents(t, event('view_created', { viewId: 'cut' }));
    await waitFor(
      async () => ['failed', 'succeeded'].includes((await deliveriesOf(t, owner, hook.id))[0]?.status ?? ''),
      10_000,
      'the attempt',
    );
    const [delivery] = await deliveriesOf(t, owner, hook.id);
    expect(delivery).toMatchObject({ status: 'failed', responseStatus: 200, error: 'aborted' });
    const detail = await request(t.http)
      .get(`${API}/webhooks/${hook.id}/deliveries/${delivery.deliveryId}`)
      .set(bearer(owner))
      .expect(200);
    expect(detail.body.payload.attemptLog[0]).toMatchObject({ success: false, error: 'aborted' });
    await new Promise<void>((resolve) => truncating.close(() => resolve()));
  });

  it('disables a webhook after the configured failure streak, e-mails its creator, keeps events while disabled, and resume delivers them in order', async () => {
    receiver.fallback = { status: 503 };
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['view_default_changed'],
      maxRetries: 0,
    });
    await recordEvents(t, ...[1, 2, 3, 4].map((n) => event('view_default_changed', { n })));
    await waitFor(
      async () =>
        (await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner))).body.payload.status ===
        'disabled',
      10_000,
      'disabled',
    );
    const disabled = (await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner))).body
      .payload;
    expect(disabled).toMatchObject({
      status: 'disabled',
      consecutiveFailures: 4,
      disabledReason: '4 consecutive failed deliveries',
    });
    const mails = await t.dataSource.query(
      `SELECT subject, data FROM notifications WHERE recipient = $1 AND kind = 'webhook_disabled' AND data->>'webhookId' = $2`,
      [owner.email, hook.id],
    );
    expect(mails).toHaveLength(1);
    expect(mails[0].data).toMatchObject({ webhookId: hook.id });
    // Issue 12: events are kept while the webhook cannot deliver, not dropped; nothing is sent meanwhile.
    await recordEvents(t, event('view_default_changed', { n: 5 }), event('view_default_changed', { n: 6 }));
    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id, '&status=pending')).length === 2,
      10_000,
      'events kept while disabled',
    );
    await sleep(300);
    expect(receiver.received).toHaveLength(4);
    receiver.fallback = { status: 204 };
    const resumed = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/resume`)
      .set(bearer(owner))
      .expect(200);
    expect(resumed.body.payload).toMatchObject({
      status: 'active',
      consecutiveFailures: 0,
      disabledAt: null,
    });
    await recordEvents(t, event('view_default_changed', { n: 7 }));
    await waitFor(() => receiver.received.length === 7, 10_000, 'kept events, then the one after resume');
    await sleep(300);
    expect(receiver.received.slice(4).map((r) => r.body.payload.n)).toEqual([5, 6, 7]);
  });

  it('keeps the events that occur while paused and delivers them in order on resume, after the retry the pause held', async () => {
    receiver.fallback = { status: 503 };
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['view_updated'],
      maxRetries: 1,
      // Long enough that the pause below lands before the retry is due even on a slow machine.
      retryInterval: 2,
    });
    // Queued while active: its first attempt fails, and the pause holds its retry.
    await recordEvents(t, event('view_updated', { n: 1 }));
    await waitFor(() => receiver.received.length === 1, 10_000, 'first attempt');
    await request(t.http).post(`${API}/webhooks/${hook.id}/pause`).set(bearer(owner)).expect(200);
    receiver.fallback = { status: 204 };
    await recordEvents(t, ...[2, 3].map((n) => event('view_updated', { n })));
    // Past the retry's due time (2 s to 2.5 s after the first attempt): the pause must have held it, and kept the
    // events that occurred meanwhile (issue 12: "while paused, events are kept and delivered on resume").
    await sleep(3000);
    expect(receiver.received).toHaveLength(1);
    expect((await deliveriesOf(t, owner, hook.id)).map((d) => d.status)).toEqual(['pending', 'pending', 'retrying']);
    await request(t.http).post(`${API}/webhooks/${hook.id}/resume`).set(bearer(owner)).expect(200);
    await recordEvents(t, event('view_updated', { n: 4 }));
    await waitFor(() => receiver.received.length === 5, 15_000, 'resumed deliveries');
    await sleep(300);
    expect(receiver.received.map((r) => r.body.payload.n)).toEqual([1, 1, 2, 3, 4]);
  });

  it('redelivers the same deliveryId as a new manual attempt', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['view_created'] });
    await recordEvents(t, event('view_created', { viewId: 'again' }));
    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id))[0]?.status === 'succeeded',
      10_000,
      'first',
    );
    const [delivery] = await deliveriesOf(t, owner, hook.id);
    const res = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/deliveries/${delivery.deliveryId}/redeliver`)
      .set(bearer(owner))
      .expect(202);
    expect(res.body.payload).toMatchObject({ deliveryId: delivery.deliveryId, status: 'pending' });
    await waitFor(() => receiver.received.length === 2, 10_000, 'redelivery');
    expect(receiver.received[1].body.deliveryId).toBe(delivery.deliveryId);
    expect(receiver.received[1].rawBody).toBe(receiver.received[0].rawBody);
    expect(receiver.received[1].headers['webhook-id']).toBe(delivery.deliveryId);
    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id))[0]?.status === 'succeeded',
      15_000,
      'succeeded',
    );
    const detail = await request(t.http)
      .get(`${API}/webhooks/${hook.id}/deliveries/${delivery.deliveryId}`)
      .set(bearer(owner))
      .expect(200);
    expect(
      detail.body.payload.attemptLog.map((a: { attempt: number; manual: boolean }) => [a.attempt, a.manual]),
    ).toEqual([
      [2, true],
      [1, false],
    ]);
    await request(t.http)
      .post(`${API}/webhooks/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`)
      .set(bearer(owner))
      .expect(404);
  });

  it('sends test deliveries: webhook_test by default, or the given event and payload', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['request_merged'] });
    const first = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/test`)
      .set(bearer(owner))
      .send({})
      .expect(202);
    expect(first.body.payload).toMatchObject({ event: 'webhook_test', kind: 'test', status: 'pending' });
    await request(t.http)
      .post(`${API}/webhooks/${hook.id}/test`)
      .set(bearer(owner))
      .send({ event: 'request_merged', payload: { requestId: 'rq-1', changesApplied: 2 } })
      .expect(202);
    const bad = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/test`)
      .set(bearer(owner))
      .send({ event: 'nope' })
      .expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    await waitFor(() => receiver.received.length === 2, 10_000, 'tests');
    expect(receiver.received[0].body).toMatchObject({
      event: 'webhook_test',
      webhookId: hook.id,
      deliveryId: first.body.payload.deliveryId,
      triggeredBy: owner.id,
    });
    // Every envelope field of spec 6.1 has its type there, test deliveries included: docType and docId are strings.
    for (const received of receiver.received) {
      const body = received.body as Record<string, unknown>;
      for (const key of ['event', 'timestamp', 'webhookId', 'deliveryId', 'docType', 'docId', 'triggeredBy']) {
        expect([key, typeof body[key]]).toEqual([key, 'string']);
      }
      expect(body).toMatchObject({ docType: '', docId: '' });
    }
    expect(receiver.received[1].body).toMatchObject({
      event: 'request_merged',
      payload: { requestId: 'rq-1', changesApplied: 2 },
    });
    expect(
      new Webhook(hook.secret).verify(receiver.received[1].rawBody, standardHeaders(receiver.received[1])),
    ).toBeTruthy();
  });

  it('computes stats: counts by outcome, success rate, latency percentiles, last success and failure, streak', async () => {
    receiver.replies = [{ status: 200 }, { status: 200, delayMs: 120 }, { status: 500 }];
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['view_created'],
      maxRetries: 0,
    });
    await recordEvents(t, ...[1, 2, 3].map((n) => event('view_created', { n })));
    // The third outcome is recorded after the receiver answered: wait until the stats count all three attempts.
    const statsOf = async () =>
      (await request(t.http).get(`${API}/webhooks/${hook.id}/stats`).set(bearer(owner)).expect(200)).body.payload;
    await waitFor(
      async () => {
        const current = await statsOf();
        return receiver.received.length === 3 && current.deliveries?.pending === 0 && current.attempts?.total === 3;
      },
      15_000,
      'three outcomes',
    );
    const stats = await statsOf();
    expect(stats).toMatchObject({
      webhookId: hook.id,
      status: 'active',
      deliveries: { pending: 0, retrying: 0, succeeded: 2, failed: 1, skipped: 0, total: 3 },
      attempts: { total: 3, succeeded: 2, failed: 1 },
      consecutiveFailures: 1,
    });
    expect(stats.successRate).toBeCloseTo(2 / 3);
    expect(stats.latencyMs.p50).toBeGreaterThanOrEqual(0);
    expect(stats.latencyMs.p95).toBeGreaterThanOrEqual(100);
    expect(stats.lastSuccessAt).toEqual(expect.any(String));
    expect(stats.lastFailureAt).toEqual(expect.any(String));
    const failedOnly = await deliveriesOf(t, owner, hook.id, '&status=failed&event=view_created');
    expect(failedOnly).toHaveLength(1);
    expect(await deliveriesOf(t, owner, hook.id, '&event=view_deleted')).toHaveLength(0);
  });

  it("follows the creator's read rights: unreadable events are not queued, and removing access stops deliveries", async () => {
    const editor = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    const hook = await createWebhook(t, editor, {
      organizationId: owner.defaultOrganizationId,
      url: receiver.url,
      events: ['view_updated'],
    });
    // The owner's webhook sees every event: once it has one, the editor's webhook has been offered it too.
    const sentinel = await createWebhook(t, owner, { url: receiver.url, events: ['view_updated'] });
    const sentinelGot = (n: number) => () =>
      receiver.received.some((r) => r.body.webhookId === sentinel.id && r.body.payload.n === n);
    const editorGot = () =>
      receiver.received.filter((r) => r.body.webhookId === hook.id).map((r) => r.body.payload.n);
    await recordEvents(t, event('view_updated', { n: 1 }));
    await waitFor(() => editorGot().length === 1, 10_000, 'first');
    await t.dataSource.query(`DELETE FROM workspace_members WHERE user_id = $1`, [editor.id]);
    await sleep(100);
    await recordEvents(t, event('view_updated', { n: 2 }));
    await waitFor(sentinelGot(2), 10_000, 'n=2 dispatched');
    await sleep(200);
    // An event its creator cannot read is not queued for the webhook at all: no record, nothing sent.
    expect(editorGot()).toEqual([1]);
    expect(await deliveriesOf(t, owner, hook.id)).toHaveLength(1);
    // Organization-level documents: any active member reads; a suspended one does not.
    const orgLevel = { workspaceId: null, docType: 'ledgers', docId: `l-${Date.now()}` };
    await createOrganizationDocument(t, owner, orgLevel.docType, orgLevel.docId);
    await recordEvents(t, event('view_updated', { n: 3 }, orgLevel));
    await waitFor(() => editorGot().length === 2, 10_000, 'org-level');
    await t.dataSource.query(`UPDATE organization_members SET status = 'suspended' WHERE user_id = $1`, [
      editor.id,
    ]);
    await sleep(100);
    await recordEvents(t, event('view_updated', { n: 4 }, orgLevel));
    await waitFor(sentinelGot(4), 10_000, 'n=4 dispatched');
    await sleep(200);
    expect(editorGot()).toEqual([1, 3]);
    expect(await deliveriesOf(t, owner, hook.id)).toHaveLength(2);
  });

  it("never shows or keeps data its creator may not read: a member's webhook and row values of a private workspace", async () => {
    // A member of the organization without access to the owner's (private) workspace.
    const member = await registerUser(t.http);
    await t.dataSource.query(
      `INSERT INTO organization_members (organization_id, user_id, role) VALUES ($1, $2, 'member')`,
      [owner.defaultOrganizationId, member.id],
    );
    const created = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(member))
      .set('X-Organization-Id', owner.defaultOrganizationId)
      .send({ name: 'curious', url: receiver.url, events: ['*'] })
      .expect(201);
    const hook = created.body.payload as { id: string };
    const sentinel = await createWebhook(t, owner, { url: receiver.url, events: ['data_row_created'] });
    await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(owner))
      .send({ id: 'secret-row', values: { name: 'Confidential', qty: 99 } })
      .expect(201);
    await waitFor(
      () => receiver.received.some((r) => r.body.webhookId === sentinel.id),
      10_000,
      'row event dispatched',
    );
    await sleep(300);
    expect(receiver.received.filter((r) => r.body.webhookId === hook.id)).toHaveLength(0);
    const listed = await request(t.http)
      .get(`${API}/webhooks/${hook.id}/deliveries?pageSize=100`)
      .set(bearer(member))
      .expect(200);
    for (const item of listed.body.payload.items as Array<{ deliveryId: string }>) {
      const detail = await request(t.http)
        .get(`${API}/webhooks/${hook.id}/deliveries/${item.deliveryId}`)
        .set(bearer(member))
        .expect(200);
      expect(JSON.stringify(detail.body.payload)).not.toMatch(/Confidential|secret-row/);
    }
    expect(JSON.stringify(listed.body.payload)).not.toContain(doc.docId);
    const stored = await t.dataSource.query(
      `SELECT request_body FROM webhook_deliveries WHERE webhook_id = $1`,
      [hook.id],
    );
    expect(JSON.stringify(stored)).not.toContain('Confidential');
  });

  it('drops the body of a delivery skipped because its creator lost read access, hides its document, and refuses to redeliver it', async () => {
    const editor = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    const hook = await createWebhook(t, editor, {
      organizationId: owner.defaultOrganizationId,
      url: receiver.url,
      events: ['view_created'],
      maxRetries: 0,
      timeout: 10,
    });
    // The first delivery is held by a slow receiver; the second waits behind it, queued while still readable.
    // Held long enough for the steps below to finish before it ends, even on a slow machine.
    receiver.replies = [{ status: 200, delayMs: 5000 }];
    await recordEvents(t, event('view_created', { n: 1 }));
    await waitFor(() => receiver.received.length === 1, 15_000, 'first in flight');
    await recordEvents(t, event('view_created', { n: 2, secret: 'classified' }));
    await waitFor(async () => (await deliveriesOf(t, owner, hook.id)).length === 2, 15_000, 'second queued');
    const queued = (await deliveriesOf(t, owner, hook.id)).find((d) => d.status === 'pending');
    expect(queued).toBeDefined();
    await t.dataSource.query(`DELETE FROM workspace_members WHERE user_id = $1`, [editor.id]);
    await sleep(100);
    // While queued, its body is not shown once the creator may not read the event.
    const pending = await request(t.http)
      .get(`${API}/webhooks/${hook.id}/deliveries/${queued?.deliveryId}`)
      .set(bearer(owner))
      .expect(200);
    expect(pending.body.payload.requestBody).toBeNull();
    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id)).some((d) => d.status === 'skipped'),
      20_000,
      'skipped',
    );
    expect(receiver.received).toHaveLength(1);
    const skipped = (await deliveriesOf(t, owner, hook.id)).find((d) => d.status === 'skipped');
    expect(skipped).toMatchObject({
      deliveryId: queued?.deliveryId,
      event: 'view_created',
      docType: null,
      docId: null,
      attempts: 0,
    });
    expect(skipped?.error).toMatch(/can no longer read this document; its body was dropped/);
    const detail = await request(t.http)
      .get(`${API}/webhooks/${hook.id}/deliveries/${skipped?.deliveryId}`)
      .set(bearer(owner))
      .expect(200);
    expect(detail.body.payload).toMatchObject({
      requestBody: null,
      docType: null,
      docId: null,
      attemptLog: [],
    });
    const [stored] = await t.dataSource.query(
      `SELECT request_body, doc_id FROM webhook_deliveries WHERE id = $1`,
      [skipped?.deliveryId],
    );
    expect(stored.request_body).not.toContain('classified');
    expect(stored.doc_id).toBeNull();
    // Its body is gone: a redelivery is refused, and nothing goes out.
    const redeliver = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/deliveries/${skipped?.deliveryId}/redeliver`)
      .set(bearer(owner))
      .expect(409);
    expect(redeliver.body.code).toBe('INVALID_STATE');
    await sleep(300);
    expect(receiver.received).toHaveLength(1);
    expect(
      (await deliveriesOf(t, owner, hook.id)).find((d) => d.deliveryId === skipped?.deliveryId)?.status,
    ).toBe('skipped');
  });

  it('takes the deletion of a webhook with an attempt in flight in its stride: nothing recorded, no error logged', async () => {
    const job = t.app.get(WebhookDeliveryJob);
    const logger = (job as unknown as { logger: Logger }).logger;
    const errors: unknown[] = [];
    const debug: unknown[] = [];
    const original = { error: logger.error.bind(logger), debug: logger.debug.bind(logger) };
    logger.error = (...args: unknown[]) => void errors.push(args);
    logger.debug = (...args: unknown[]) => void debug.push(args);
    try {
      receiver.replies = [{ status: 200, delayMs: 1200 }];
      const hook = await createWebhook(t, owner, { url: receiver.url, timeout: 10 });
      await request(t.http).post(`${API}/webhooks/${hook.id}/test`).set(bearer(owner)).send({}).expect(202);
      await waitFor(() => receiver.received.length === 1, 15_000, 'test delivery in flight');
      await request(t.http).delete(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
      // The attempt ends 1.2 s after it reached the receiver and then finds its webhook gone (logged at debug).
      await waitFor(() => JSON.stringify(debug).includes(hook.id), 15_000, 'the attempt to end');
      expect(errors).toEqual([]);
      const rows = await t.dataSource.query(`SELECT 1 FROM webhook_delivery_attempts WHERE webhook_id = $1`, [
        hook.id,
      ]);
      expect(rows).toHaveLength(0);
    } finally {
      logger.error = original.error;
      logger.debug = original.debug;
    }
  });
  it('a webhook created with allOrganizations follows its creator into every organization; one created without stays in its own', async () => {
    const user = await registerUser(t.http);
    const team = await request(t.http)
      .post(`${API}/organizations`)
      .set(bearer(user))
      .send({ name: 'Second', slug: `second-${Date.now()}`, type: 'team' })
      .expect(201);
    const teamOrg: string = team.body.payload.id;
    const teamWorkspace: string = (await request(t.http).get(`${API}/organizations/${teamOrg}/workspaces`).set(bearer(user)).expect(200)).body
      .payload.items[0].id;
    const teamDoc = await request(t.http)
      .post(`${API}/doc/orders`)
      .set(bearer(user))
      .send({ id: 'o1', organizationId: teamOrg, workspaceId: teamWorkspace, metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] } })
      .expect(201);
    expect(teamDoc.body.payload.organizationId).toBe(teamOrg);
    const everywhere = await createWebhook(t, user, { url: receiver.url, events: ['data_row_created'], allOrganizations: true });
    expect(everywhere).toMatchObject({ organizationId: user.defaultOrganizationId, allOrganizations: true });
    const homeOnly = await createWebhook(t, user, { url: receiver.url, events: ['data_row_created'] });
    expect(homeOnly).toMatchObject({ organizationId: user.defaultOrganizationId, allOrganizations: false });
    // Someone else's webhook created the same way sees nothing of an organization its creator is not in.
    const outsider = await registerUser(t.http);
    await createWebhook(t, outsider, { url: receiver.url, events: ['data_row_created'], allOrganizations: true });

    await request(t.http).post(`${API}/doc/orders/o1/data?workspaceId=${teamWorkspace}`).set(bearer(user)).send({ id: 'r1', values: { name: 'x' } }).expect(201);
    await waitFor(() => receiver.received.length > 0, 10_000, 'the all-organizations delivery');
    await sleep(500);
    expect(receiver.received.map((r) => (r.body as { webhookId?: string }).webhookId)).toEqual([everywhere.id]);
    expect(receiver.received[0].body).toMatchObject({ event: 'data_row_created', docType: 'orders', docId: 'o1', webhookId: everywhere.id });
    await waitFor(
      async () => (await deliveriesOf(t, user, everywhere.id))[0]?.status === 'succeeded',
      15_000,
      'the delivery to be recorded',
    );
    const [delivery] = await deliveriesOf(t, user, everywhere.id);
    expect(delivery).toMatchObject({ status: 'succeeded', docId: 'o1' });
  });
});
