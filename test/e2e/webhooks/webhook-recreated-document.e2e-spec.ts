import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { sleep, WebhookReceiver, waitFor } from './webhook-receiver.js';
import { API, createWebhook, deliveriesOf, WEBHOOK_TEST_ENV } from './webhooks.fixtures.js';

/**
 * "A document that no longer exists (deleted) is read by no one: its events still waiting to be dispatched, and its
 * deliveries still queued, are not sent" (docs/webhooks.md). A deleted document's id may be used again
 * (docs/documents.md): the new document with that id must not bring the deleted one's deliveries back.
 */
describe('webhooks: a deleted document re-created with the same id', () => {
  let t: TestApp;
  let owner: TestUser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp(WEBHOOK_TEST_ENV);
    owner = await registerUser(t.http);
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  const inWorkspace = (path: string): string => `${path}?workspaceId=${owner.defaultWorkspaceId}`;

  async function addRow(doc: DocHandle, name: string): Promise<void> {
    await request(t.http).post(inWorkspace(`${doc.path}/data`)).set(bearer(owner)).send({ values: { name } }).expect(201);
  }

  it("neither sends the deleted document's queued deliveries nor shows their bodies again", async () => {
    const doc = await createDocument(t.http, owner, { id: 'reused' });
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['data_row_created'],
      maxRetries: 0,
      timeout: 10,
    });
    // The first delivery is held by a slow receiver; the second waits behind it, queued while its document exists.
    receiver.replies = [{ status: 200, delayMs: 4000 }];
    await addRow(doc, 'first of the old document');
    await waitFor(() => receiver.received.length === 1, 15_000, 'first in flight');
    await addRow(doc, 'second of the old document');
    await waitFor(async () => (await deliveriesOf(t, owner, hook.id)).length === 2, 15_000, 'second queued');

    await request(t.http).delete(inWorkspace(doc.path)).set(bearer(owner)).expect(200);
    await createDocument(t.http, owner, { id: 'reused' });

    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id)).some((d) => d.status === 'skipped'),
      20_000,
      'the queued delivery skipped',
    );
    await sleep(300);
    expect(receiver.received.map((r) => JSON.stringify(r.body)).join()).not.toContain('second of the old document');
    const records = await deliveriesOf(t, owner, hook.id);
    const sent = records.find((d) => d.status === 'succeeded');
    expect(records.find((d) => d.status === 'skipped')).toMatchObject({ docType: null, docId: null, attempts: 0 });
    // The delivered one's body belongs to the deleted document: not shown, and not sent again.
    const detail = await request(t.http)
      .get(`${API}/webhooks/${hook.id}/deliveries/${sent?.deliveryId ?? ''}`)
      .set(bearer(owner))
      .expect(200);
    expect(detail.body.payload.requestBody).toBeNull();
    await request(t.http)
      .post(`${API}/webhooks/${hook.id}/deliveries/${sent?.deliveryId ?? ''}/redeliver`)
      .set(bearer(owner));
    await sleep(1000);
    expect(receiver.received).toHaveLength(1);
  });

  it('queues nothing of an event of the deleted document dispatched after the id was reused', async () => {
    const doc = await createDocument(t.http, owner, { id: 'reused-late' });
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['data_row_created'] });
    await sleep(20);
    const eventTime = new Date();
    await sleep(20);
    await request(t.http).delete(inWorkspace(doc.path)).set(bearer(owner)).expect(200);
    const again = await createDocument(t.http, owner, { id: 'reused-late' });
    // An event the deleted document committed before its deletion, dispatched only now (a dispatcher that was
    // behind): recorded as the outbox holds it, with its own time.
    await t.dataSource.query(
      `INSERT INTO outbox (id, event_type, organization_id, workspace_id, doc_type, doc_id, triggered_by, payload, occurred_at)
       VALUES (gen_random_uuid(), 'data_row_created', $1, $2, 'products', 'reused-late', $3, $4::jsonb, $5)`,
      [
        owner.defaultOrganizationId,
        owner.defaultWorkspaceId,
        owner.id,
        JSON.stringify({ rowId: 'late', values: [{ fieldId: 'name', value: { text: 'late row of the old document' } }] }),
        eventTime,
      ],
    );
    await addRow(again, 'row of the new document');
    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id)).some((d) => d.status === 'succeeded'),
      15_000,
      'the new row delivered',
    );
    await sleep(500);
    const bodies = receiver.received.filter((r) => r.body.webhookId === hook.id).map((r) => JSON.stringify(r.body));
    expect(bodies.join()).toContain('row of the new document');
    expect(bodies.join()).not.toContain('late row of the old document');
    expect(await deliveriesOf(t, owner, hook.id)).toHaveLength(1);
  });

  it("sends the new document's event queued by a dispatch that began before the document was created", async () => {
    const doc = await createDocument(t.http, owner, { id: 'reused-stalled' });
    await request(t.http).delete(inWorkspace(doc.path)).set(bearer(owner)).expect(200);
    await createDocument(t.http, owner, { id: 'reused-stalled' });
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['data_row_created'], maxRetries: 0 });
    // A row of the new document, recorded after its creation; the dispatch transaction that queued its delivery had
    // begun before the document was created (a stalled dispatcher, or another instance): the delivery's created_at
    // is that transaction's start, earlier than the document's. The event is still the new document's.
    const [event] = (await t.dataSource.query(
      `INSERT INTO outbox (id, event_type, organization_id, workspace_id, doc_type, doc_id, triggered_by, payload, dispatched_at)
       VALUES (gen_random_uuid(), 'data_row_created', $1, $2, 'products', 'reused-stalled', $3, $4::jsonb, now())
       RETURNING id, seq, occurred_at AS "occurredAt"`,
      [
        owner.defaultOrganizationId,
        owner.defaultWorkspaceId,
        owner.id,
        JSON.stringify({ rowId: 'stalled', values: [{ fieldId: 'name', value: { text: 'row of the new document' } }] }),
      ],
    )) as Array<{ id: string; seq: string; occurredAt: Date }>;
    const deliveryId = randomUUID();
    const body = {
      event: 'data_row_created',
      timestamp: new Date(event.occurredAt).toISOString(),
      webhookId: hook.id,
      deliveryId,
      organizationId: owner.defaultOrganizationId,
      workspaceId: owner.defaultWorkspaceId,
      docType: 'products',
      docId: 'reused-stalled',
      triggeredBy: owner.id,
      payload: { rowId: 'stalled', values: [{ fieldId: 'name', value: { text: 'row of the new document' } }] },
    };
    await t.dataSource.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, organization_id, workspace_id, event_id, event_seq, event_type,
                                       doc_type, doc_id, triggered_by, kind, request_body, status, queue_order,
                                       retries_left, next_attempt_at, created_at)
       SELECT $1, $2, $3, $4, $5, $6, 'data_row_created', 'products', 'reused-stalled', $7, 'event', $8, 'pending', $6, 0,
              now(), d.created_at - interval '1 second'
         FROM documents d
        WHERE d.workspace_id = $4 AND d.doc_type = 'products' AND d.doc_id = 'reused-stalled' AND d.deleted_at IS NULL`,
      [deliveryId, hook.id, owner.defaultOrganizationId, owner.defaultWorkspaceId, event.id, event.seq, owner.id, JSON.stringify(body)],
    );

    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id)).some((d) => d.status !== 'pending'),
      15_000,
      'the delivery attempted',
    );
    expect(await deliveriesOf(t, owner, hook.id)).toMatchObject([{ deliveryId, status: 'succeeded', docId: 'reused-stalled' }]);
    expect(receiver.received.filter((r) => r.body.webhookId === hook.id).map((r) => r.body.deliveryId)).toEqual([deliveryId]);
    const detail = await request(t.http).get(`${API}/webhooks/${hook.id}/deliveries/${deliveryId}`).set(bearer(owner)).expect(200);
    expect(JSON.parse(detail.body.payload.requestBody as string)).toMatchObject({ payload: { rowId: 'stalled' } });
  });
});
