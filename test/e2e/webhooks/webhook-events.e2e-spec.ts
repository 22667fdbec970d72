import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { EVENT_GROUPS } from '../../../src/modules/events/event-catalogue.js';
import { addToWorkspace, createDocument, type DocHandle } from '../documents/documents.fixtures.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { sleep, WebhookReceiver, waitFor } from './webhook-receiver.js';
import {
  API,
  createOrganizationDocument,
  createWebhook,
  deliveriesOf,
  quireSignatureValid,
  recordEvents,
  standardHeaders,
  WEBHOOK_TEST_ENV,
} from './webhooks.fixtures.js';

describe('webhooks: events, payloads, signatures and filters', () => {
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
    // The other documents the recorded events name: an event of a document that does not exist reaches no webhook.
    await createDocument(t.http, owner, { docType: 'orders', id: 'o-1' });
    await createDocument(t.http, owner, { docType: 'orders', id: 'o-2' });
    await createOrganizationDocument(t, owner, 'orderbook', 'ob-1');
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

  it('delivers request, data, revision and metadata events raised by the document API, signed both ways, with the committed values', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['*'] });
    await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(owner))
      .send({ id: 'w1', values: { name: 'Widget', qty: 3 } })
      .expect(201);
    await request(t.http)
      .put(`${doc.path}/data/w1`)
      .set(bearer(owner))
      .send({ values: { qty: 4 } })
      .expect(200);
    await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(owner))
      .send({ id: 'w2', values: { name: 'Gadget' } })
      .expect(201);
    await request(t.http)
      .post(`${doc.path}/data/bulk`)
      .set(bearer(owner))
      .send([
        { target: { row: 'w1', field: 'qty' }, value: 5 },
        { target: { row: 'w2' }, value: { qty: 7 } },
      ])
      .expect(200);
    const current = await request(t.http).get(`${doc.path}/metadata`).set(bearer(owner)).expect(200);
    await request(t.http)
      .put(`${doc.path}/metadata`)
      .set(bearer(owner))
      .send({ fields: [...current.body.payload.fields, { id: 'colour', name: 'Colour', type: 'text' }] })
      .expect(200);
    await request(t.http).delete(`${doc.path}/data/w1`).set(bearer(owner)).expect(200);

    await waitFor(() => receiver.of('data_row_deleted').length === 1, 15_000, 'data_row_deleted');
    const kinds = new Set(receiver.received.map((r) => r.body.event));
    for (const type of [
      'request_created',
      'request_merged',
      'data_row_created',
      'data_row_updated',
      'data_bulk_operation',
      'revision_created',
      'metadata_field_added',
      'data_row_deleted',
    ]) {
      expect(kinds).toContain(type);
    }
    // The bulk write is one data_bulk_operation, not one call per row, carrying the rows as committed.
    expect(receiver.of('data_bulk_operation')).toHaveLength(1);
    const bulkRows = (receiver.of('data_bulk_operation')[0].body.payload as { rows: Array<{ rowId: string; version: number; values: unknown[] }> }).rows;
    expect(bulkRows.map((row) => [row.rowId, row.version])).toEqual([['w1', 3], ['w2', 2]]);
    expect(bulkRows[0].values).toContainEqual({ fieldId: 'qty', value: { number: 5 } });
    expect(bulkRows[1].values).toEqual(expect.arrayContaining([{ fieldId: 'name', value: { text: 'Gadget' } }, { fieldId: 'qty', value: { number: 7 } }]));
    // The update carries the row as committed (version 2, the new value).
    const updated = receiver.of('data_row_updated')[0].body;
    expect(updated).toMatchObject({
      event: 'data_row_updated',
      webhookId: hook.id,
      organizationId: owner.defaultOrganizationId,
      workspaceId: owner.defaultWorkspaceId,
      docType: doc.docType,
      docId: doc.docId,
      triggeredBy: owner.id,
      payload: { rowId: 'w1', version: 2 },
    });
    expect(JSON.stringify(updated.payload)).toContain('"number":4');
    expect(new Date(String(updated.timestamp)).toISOString()).toBe(updated.timestamp);
    for (const received of receiver.received) {
      expect(received.body.deliveryId).toBe(received.headers['webhook-id']);
      expect(received.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(received.headers['x-webhook-timestamp']) - Date.now())).toBeLessThan(60_000);
      expect(quireSignatureValid(hook.secret, received)).toBe(true);
      expect(new Webhook(hook.secret).verify(received.rawBody, standardHeaders(received))).toEqual(
        received.body,
      );
    }
    // A tampered body fails both checks.
    const tampered = {
      ...receiver.received[0],
      rawBody: receiver.received[0].rawBody.replace('"event"', '"event" '),
    };
    expect(quireSignatureValid(hook.secret, tampered)).toBe(false);
    expect(() => new Webhook(hook.secret).verify(tampered.rawBody, standardHeaders(tampered))).toThrow();
    // Delivered in event order, every one of them.
    await waitFor(
      async () => (await deliveriesOf(t, owner, hook.id)).every((d) => d.status === 'succeeded'),
      10_000,
      'all delivered',
    );
    const seqs = await t.dataSource.query(
      `SELECT d.id FROM webhook_deliveries d WHERE d.webhook_id = $1 ORDER BY d.event_seq`,
      [hook.id],
    );
    expect(receiver.received.map((r) => r.body.deliveryId)).toEqual(
      seqs.map((row: { id: string }) => row.id),
    );
  });

  it('delivers every event group of the catalogue recorded through the outbox (approval, comment, view, revision_reverted, supply chain)', async () => {
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: [
        ...EVENT_GROUPS.approval,
        ...EVENT_GROUPS.comment,
        ...EVENT_GROUPS.view,
        'revision_reverted',
        'orderbook_sync_request_created',
      ],
    });
    await recordEvents(
      t,
      event('approval_started', { instanceId: 'ap-1', status: 'pending', currentNode: 'n1' }),
      event('comment_created', {
        commentId: 'c-1',
        content: 'Looks good',
        mentions: [{ id: owner.id, displayName: owner.displayName }],
      }),
      event('view_created', { viewId: 'v-1', name: 'Grid', type: 'grid' }),
      event('revision_reverted', { revisionId: 'r-9' }),
      // Organization-level document (order book): no workspace.
      event(
        'orderbook_sync_request_created',
        { requestId: 'sr-1', orderBookId: 'ob-1', productInfo: { sku: 'A-1' } },
        { workspaceId: null, docType: 'orderbook', docId: 'ob-1' },
      ),
      // Not subscribed: must not arrive.
      event('request_created', { requestId: 'x' }),
    );
    await waitFor(() => receiver.received.length >= 5, 10_000, 'five deliveries');
    await sleep(300);
    expect(receiver.received.map((r) => r.body.event)).toEqual([
      'approval_started',
      'comment_created',
      'view_created',
      'revision_reverted',
      'orderbook_sync_request_created',
    ]);
    expect(
      receiver.received.every(
        (r) => r.body.webhookId === hook.id && r.body.organizationId === owner.defaultOrganizationId,
      ),
    ).toBe(true);
    expect(receiver.of('comment_created')[0].body.payload).toEqual({
      commentId: 'c-1',
      content: 'Looks good',
      mentions: [{ id: owner.id, displayName: owner.displayName }],
    });
    expect(receiver.of('orderbook_sync_request_created')[0].body).toMatchObject({
      workspaceId: null,
      docType: 'orderbook',
      payload: { requestId: 'sr-1', orderBookId: 'ob-1', productInfo: { sku: 'A-1' } },
    });
  });

  it('delivers the comment, view, approval and revert events their modules raise through the API (issue 12: emitted by its module)', async () => {
    const approver = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, approver, 'editor');
    const own = await createDocument(t.http, owner, { docType: 'tickets', id: 'api-events' });
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: [...EVENT_GROUPS.approval, ...EVENT_GROUPS.comment, ...EVENT_GROUPS.view, 'revision_reverted'],
      filters: { docIds: ['api-events'] },
    });
    const created = await request(t.http)
      .post(`${own.path}/comments`)
      .set(bearer(owner))
      .send({ target: { scope: 'document' }, content: 'Please check', mentions: [approver.id] })
      .expect(201);
    const commentId = created.body.payload.id as string;
    await request(t.http)
      .put(`${own.path}/comments/${commentId}`)
      .set(bearer(owner))
      .send({ content: 'Checked' })
      .expect(200);
    await request(t.http).post(`${own.path}/comments/${commentId}/resolve`).set(bearer(owner)).expect(200);
    await request(t.http).delete(`${own.path}/comments/${commentId}`).set(bearer(owner)).expect(200);
    const view = await request(t.http)
      .post(`${own.path}/views`)
      .set(bearer(owner))
      .send({ name: 'All', type: 'table', config: {} })
      .expect(201);
    const viewId = view.body.payload.id as string;
    await request(t.http)
      .put(`${own.path}/views/${viewId}`)
      .set(bearer(owner))
      .send({ name: 'Everything' })
      .expect(200);
    await request(t.http).post(`${own.path}/views/${viewId}/default`).set(bearer(owner)).expect(200);
    await request(t.http).delete(`${own.path}/views/${viewId}`).set(bearer(owner)).expect(200);
    const draft = await request(t.http)
      .post(`${own.path}/requests`)
      .set(bearer(owner))
      .send({ title: 'Rename' })
      .expect(201);
    const requestId = draft.body.payload.id as string;
    await request(t.http)
      .post(`${own.path}/data?requestId=${requestId}`)
      .set(bearer(owner))
      .send({ id: 'row-1', values: { name: 'First' } })
      .expect(201);
    const submitted = await request(t.http)
      .post(`${own.path}/requests/${requestId}/submit-approval`)
      .set(bearer(owner))
      .send({ approvers: [approver.id] })
      .expect(201);
    await request(t.http)
      .post(`${own.path}/approval/${submitted.body.payload.id}/decision?result=approved`)
      .set(bearer(approver))
      .send({})
      .expect(200);
    const merged = await request(t.http)
      .post(`${own.path}/requests/${requestId}/merge`)
      .set(bearer(owner))
      .expect(200);
    const revisionId = (merged.body.payload.generatedRevisionId ?? merged.body.payload.revisionId) as string;
    await request(t.http).post(`${own.path}/revisions/${revisionId}/revert`).set(bearer(owner)).expect(200);

    const expected = [
      'comment_created',
      'comment_mentioned',
      'comment_updated',
      'comment_resolved',
      'comment_deleted',
      'view_created',
      'view_updated',
      'view_default_changed',
      'view_deleted',
      'approval_started',
      'approval_node_completed',
      'approval_approved',
      'revision_reverted',
    ];
    await waitFor(() => expected.every((type) => receiver.of(type).length > 0), 15_000, 'every module event');
    expect(
      receiver.received.every((r) => r.body.webhookId === hook.id && r.body.docId === 'api-events'),
    ).toBe(true);
    expect(receiver.of('comment_mentioned')[0].body.payload).toMatchObject({
      commentId,
      mentions: [{ id: approver.id, displayName: approver.displayName }],
      createdBy: owner.id,
    });
    expect(receiver.of('view_updated')[0].body.payload).toMatchObject({
      viewId,
      name: 'Everything',
      type: 'table',
    });
    expect(receiver.of('approval_approved')[0].body).toMatchObject({
      triggeredBy: approver.id,
      payload: { requestId, status: 'approved', approver: approver.id, decision: 'approved' },
    });
    expect(receiver.of('revision_reverted')[0].body.payload).toMatchObject({
      revertedRevisionId: revisionId,
    });
  });

  it('applies every filter kind: docTypes, docIds, userIds and conditions', async () => {
    const other = await registerUser(t.http);
    const hooks = {
      docTypes: await createWebhook(t, owner, {
        url: `${receiver.url}?k=docTypes`,
        events: ['view_created'],
        filters: { docTypes: ['orders'] },
      }),
      docIds: await createWebhook(t, owner, {
        url: `${receiver.url}?k=docIds`,
        events: ['view_created'],
        filters: { docIds: ['o-2'] },
      }),
      userIds: await createWebhook(t, owner, {
        url: `${receiver.url}?k=userIds`,
        events: ['view_created'],
        filters: { userIds: [other.id] },
      }),
      conditions: await createWebhook(t, owner, {
        url: `${receiver.url}?k=conditions`,
        events: ['view_created'],
        filters: {
          conditions: [
            { path: '$.payload.type', operator: 'in', value: ['grid', 'kanban'] },
            { path: '$.payload.rank', operator: 'range', value: [2, 5] },
            { path: '$.payload.name', operator: 'contains', value: 'Sales' },
            { path: '$.payload.archived', operator: 'exists', value: false },
            { path: '$.payload.owner', operator: 'ne', value: 'bot' },
          ],
        },
      }),
    };
    await recordEvents(
      t,
      event(
        'view_created',
        { viewId: 'a', type: 'grid', rank: 1, name: 'Sales' },
        { docType: 'orders', docId: 'o-1' },
      ),
      event(
        'view_created',
        { viewId: 'b', type: 'kanban', rank: 3, name: 'Sales board' },
        { docType: 'orders', docId: 'o-2', triggeredBy: other.id },
      ),
      event('view_created', { viewId: 'c', type: 'form', rank: 3, name: 'Sales' }),
      event('view_created', { viewId: 'd', type: 'grid', rank: 4, name: 'Sales', archived: true }),
      event('view_created', { viewId: 'e', type: 'grid', rank: 5, name: 'West Sales', owner: 'bot' }),
    );
    const viewsOf = (id: string): string[] =>
      receiver.received.filter((r) => r.body.webhookId === id).map((r) => String(r.body.payload.viewId));
    // Each webhook has its own queue, sent concurrently: wait for every expected delivery (five in all), then a
    // little longer for any that should not come.
    await waitFor(
      () =>
        viewsOf(hooks.docTypes.id).length >= 2 &&
        [hooks.docIds, hooks.userIds, hooks.conditions].every((hook) => viewsOf(hook.id).length >= 1),
      15_000,
      'filtered deliveries',
    );
    await sleep(400);
    expect(viewsOf(hooks.docTypes.id)).toEqual(['a', 'b']);
    expect(viewsOf(hooks.docIds.id)).toEqual(['b']);
    expect(viewsOf(hooks.userIds.id)).toEqual(['b']);
    expect(viewsOf(hooks.conditions.id)).toEqual(['b']);
  });

  it('matches filters.userIds given in capitals, as user ids are answered lower-case', async () => {
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['view_created'],
      filters: { userIds: [owner.id.toUpperCase()] },
    });
    await recordEvents(t, event('view_created', { viewId: 'by-owner' }));
    await waitFor(
      () => receiver.received.some((r) => r.body.webhookId === hook.id),
      15_000,
      'the delivery matched by an upper-case user id',
    );
    expect(receiver.received.filter((r) => r.body.webhookId === hook.id).map((r) => r.body.payload.viewId)).toEqual([
      'by-owner',
    ]);
  });

  it("bounds the work of a webhook's conditions per event: conditions that cannot be evaluated within it do not hold", async () => {
    // docs/webhooks.md, "Filter work": a 100-row bulk operation has about 2,500 values; a condition with `..` or a
    // wildcard is evaluated only while twice the envelope's values are left of the webhook's 10,000, and costs the
    // envelope's values plus those it selected. Twenty `$..*` conditions held the event loop for tens of ms each.
    const rows = Array.from({ length: 100 }, (_, i) => ({
      rowId: `r${i}`,
      version: 1,
      values: ['name', 'sku', 'qty', 'price', 'status'].map((fieldId, j) => ({
        fieldId,
        value: j % 2 ? { number: i } : { text: `value ${i}` },
      })),
    }));
    const everything = Array.from({ length: 20 }, () => ({ path: '$..*', operator: 'exists' }));
    const hooks = {
      heavy: await createWebhook(t, owner, {
        url: `${receiver.url}?k=heavy`,
        events: ['data_bulk_operation', 'view_created'],
        filters: { conditions: everything },
      }),
      negative: await createWebhook(t, owner, {
        url: `${receiver.url}?k=negative`,
        events: ['data_bulk_operation'],
        filters: { conditions: Array.from({ length: 4 }, () => ({ path: '$..nope', operator: 'exists', value: false })) },
      }),
      whole: await createWebhook(t, owner, {
        url: `${receiver.url}?k=whole`,
        events: ['data_bulk_operation'],
        filters: { conditions: [{ path: '$..fieldId', operator: 'eq', value: 'qty' }] },
      }),
      narrow: await createWebhook(t, owner, {
        url: `${receiver.url}?k=narrow`,
        events: ['data_bulk_operation'],
        filters: {
          conditions: Array.from({ length: 20 }, () => ({
            path: '$.payload.rows[99].values[2].fieldId',
            operator: 'eq',
            value: 'qty',
          })),
        },
      }),
    };
    await recordEvents(
      t,
      event('data_bulk_operation', { bulkId: 'b1', rowIds: rows.map((row) => row.rowId), rows }),
      event('view_created', { viewId: 'small' }),
    );
    const eventsOf = (id: string): string[] =>
      receiver.received.filter((r) => r.body.webhookId === id).map((r) => String(r.body.event));
    await waitFor(
      () =>
        eventsOf(hooks.heavy.id).length >= 1 &&
        eventsOf(hooks.whole.id).length >= 1 &&
        eventsOf(hooks.narrow.id).length >= 1,
      15_000,
      'the deliveries within the budget',
    );
    await sleep(400);
    // Twenty whole-body conditions fit a small event, not a 100-row bulk operation.
    expect(eventsOf(hooks.heavy.id)).toEqual(['view_created']);
    // Over the budget a condition does not hold whatever its operator, exists: false included.
    expect(eventsOf(hooks.negative.id)).toEqual([]);
    expect(eventsOf(hooks.whole.id)).toEqual(['data_bulk_operation']);
    expect(eventsOf(hooks.narrow.id)).toEqual(['data_bulk_operation']);
    // Not sent, but not hidden either: the owner finds the event the filters could not decide, skipped with the reason.
    for (const hook of [hooks.heavy, hooks.negative]) {
      const skipped = (await deliveriesOf(t, owner, hook.id)).filter((d) => d.event === 'data_bulk_operation');
      expect(skipped).toEqual([
        expect.objectContaining({ status: 'skipped', error: expect.stringContaining('could not be evaluated') }),
      ]);
    }
    // A filter that simply does not match records nothing.
    expect((await deliveriesOf(t, owner, hooks.whole.id)).map((d) => d.event)).toEqual(['data_bulk_operation']);
    // The owner may send it anyway: a redelivery is not filtered.
    const [skipped] = (await deliveriesOf(t, owner, hooks.heavy.id)).filter((d) => d.event === 'data_bulk_operation');
    await request(t.http)
      .post(`${API}/webhooks/${hooks.heavy.id}/deliveries/${skipped.deliveryId}/redeliver`)
      .set(bearer(owner))
      .expect(202);
    await waitFor(() => eventsOf(hooks.heavy.id).includes('data_bulk_operation'), 15_000, 'the redelivery');
  });

  it('only delivers events that occur after the webhook was created', async () => {
    await recordEvents(t, event('view_updated', { before: true }));
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['view_updated'] });
    await recordEvents(t, event('view_updated', { before: false }));
    await waitFor(() => receiver.received.length === 1, 10_000, 'one delivery');
    await sleep(300);
    expect(receiver.received.map((r) => r.body.payload.before)).toEqual([false]);
    expect(receiver.received[0].body.webhookId).toBe(hook.id);
  });

  it('rotates the secret: X-Webhook-Signature uses the new secret, the previous one signs alongside during the grace period', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['view_created'] });
    const rotated = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/regenerate-secret`)
      .set(bearer(owner))
      .expect(200);
    const newSecret = rotated.body.payload.secret as string;
    expect(newSecret).not.toBe(hook.secret);
    expect(new Date(rotated.body.payload.previousSecretExpiresAt).getTime()).toBeGreaterThan(
      Date.now() + 3500_000,
    );
    await recordEvents(t, event('view_created', { viewId: 'rot' }));
    await waitFor(() => receiver.received.length === 1, 10_000, 'rotated delivery');
    const [received] = receiver.received;
    // Spec 6.1's header is one `sha256=<hex>`, by the new secret; the old secret's is in its own header.
    expect(String(received.headers['x-webhook-signature'])).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(quireSignatureValid(newSecret, received)).toBe(true);
    expect(quireSignatureValid(hook.secret, received)).toBe(false);
    expect(quireSignatureValid(hook.secret, received, 'x-webhook-signature-previous')).toBe(true);
    for (const secret of [newSecret, hook.secret]) {
      expect(new Webhook(secret).verify(received.rawBody, standardHeaders(received))).toEqual(received.body);
    }
    // Once the grace period is over only the new secret signs.
    await t.dataSource.query(
      `UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
      [hook.id],
    );
    await recordEvents(t, event('view_created', { viewId: 'rot2' }));
    await waitFor(() => receiver.received.length === 2, 10_000, 'second delivery');
    expect(quireSignatureValid(newSecret, receiver.received[1])).toBe(true);
    expect(quireSignatureValid(hook.secret, receiver.received[1])).toBe(false);
    expect(receiver.received[1].headers['x-webhook-signature-previous']).toBeUndefined();
    expect(() =>
      new Webhook(hook.secret).verify(receiver.received[1].rawBody, standardHeaders(receiver.received[1])),
    ).toThrow();
  });

  it("never delivers another organization's events", async () => {
    const stranger = await registerUser(t.http);
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['*'] });
    await recordEvents(t, {
      ...event('view_created', { viewId: 'foreign' }),
      organizationId: stranger.defaultOrganizationId,
      workspaceId: stranger.defaultWorkspaceId,
    });
    await recordEvents(t, event('view_created', { viewId: 'mine' }));
    await waitFor(() => receiver.received.length >= 1, 10_000, 'own event');
    await sleep(300);
    expect(receiver.received.map((r) => r.body.payload.viewId)).toEqual(['mine']);
    expect(receiver.received[0].body.webhookId).toBe(hook.id);
  });
});
