import request from 'supertest';
import {
  addToWorkspace,
  createDocument,
  type DocHandle,
  scopedToken,
} from '../documents/documents.fixtures.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { sleep, WebhookReceiver, waitFor } from './webhook-receiver.js';
import { API, createWebhook, deliveriesOf, WEBHOOK_TEST_ENV } from './webhooks.fixtures.js';

/**
 * What a webhook may see (docs/webhooks.md): its creator's rights narrowed by the document's and its type's
 * `permissions.view` (spec 2.11), and the scopes of the credential that set it up (spec 5.8).
 */
describe("webhooks: the document's view permissions and the creating credential's scopes", () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp(WEBHOOK_TEST_ENV);
    owner = await registerUser(t.http);
    editor = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
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

  const inWorkspace = (path: string): string => `${path}?workspaceId=${owner.defaultWorkspaceId}`;
  const receivedBy = (hookId: string) =>
    receiver.received.filter((r) => r.body.webhookId === hookId).map((r) => r.body);

  async function addRow(doc: DocHandle, name: string): Promise<void> {
    await request(t.http)
      .post(inWorkspace(`${doc.path}/data`))
      .set(bearer(owner))
      .send({ values: { name } })
      .expect(201);
  }

  async function deliveryDetail(
    caller: { token: string },
    hookId: string,
    deliveryId: string,
  ): Promise<{ requestBody: string | null }> {
    const res = await request(t.http)
      .get(`${API}/webhooks/${hookId}/deliveries/${deliveryId}`)
      .set(bearer(caller))
      .expect(200);
    return res.body.payload;
  }

  it("queues nothing of a document whose or whose type's permissions.view shuts the creator out", async () => {
    // Restricted before the webhooks exist, so none of their creation events is older than the webhooks.
    const privateDoc = await createDocument(t.http, owner);
    await request(t.http)
      .put(inWorkspace(`${privateDoc.path}/settings`))
      .set(bearer(owner))
      .send({ permissions: { view: [owner.id] } })
      .expect(200);
    const typeRestricted = await createDocument(t.http, owner, { docType: 'secrets' });
    await request(t.http)
      .put(`${API}/doc/secrets/setting?workspaceId=${owner.defaultWorkspaceId}`)
      .set(bearer(owner))
      .send({ permissions: { view: ['role:owner'] } })
      .expect(200);
    const hook = await createWebhook(t, editor, {
      organizationId: owner.defaultOrganizationId,
      url: receiver.url,
      events: ['*'],
    });
    const sentinel = await createWebhook(t, owner, { url: receiver.url, events: ['*'] });
    const openDoc = await createDocument(t.http, owner);
    // Reads refuse the editor both documents: deliveries must follow.
    for (const doc of [privateDoc, typeRestricted]) {
      const read = await request(t.http)
        .get(inWorkspace(`${doc.path}/data`))
        .set(bearer(editor))
        .expect(403);
      expect(read.body.code).toBe('FORBIDDEN');
    }

    await addRow(privateDoc, 'CONFIDENTIAL-A');
    await request(t.http)
      .post(inWorkspace(`${privateDoc.path}/comments`))
      .set(bearer(owner))
      .send({ target: { scope: 'document' }, content: 'CONFIDENTIAL comment' })
      .expect(201);
    await addRow(typeRestricted, 'CONFIDENTIAL-B');
    await addRow(openDoc, 'open row');
    await waitFor(
      () =>
        receivedBy(sentinel.id).some((b) => b.event === 'data_row_created' && b.docId === openDoc.docId) &&
        receivedBy(hook.id).some((b) => b.event === 'data_row_created'),
      15_000,
      'the open row delivered to both',
    );
    await sleep(300);
    // The sentinel (the owner's) got every document's events; the editor's webhook only the open one's.
    const sentinelDocs = new Set(receivedBy(sentinel.id).map((b) => b.docId));
    expect(sentinelDocs).toEqual(new Set([privateDoc.docId, typeRestricted.docId, openDoc.docId]));
    expect(receivedBy(sentinel.id).map((b) => b.event)).toContain('comment_created');
    const editorGot = receivedBy(hook.id);
    expect(editorGot.length).toBeGreaterThan(0);
    expect(editorGot.every((b) => b.docId === openDoc.docId)).toBe(true);
    // Not queued at all: no record naming the documents, no stored body.
    await waitFor(
      async () => (await deliveriesOf(t, editor, hook.id)).every((d) => d.status === 'succeeded'),
      10_000,
      "the editor's deliveries sent",
    );
    const records = await deliveriesOf(t, editor, hook.id);
    expect(records.every((d) => d.docId === openDoc.docId)).toBe(true);
    const stored = await t.dataSource.query(
      `SELECT request_body FROM webhook_deliveries WHERE webhook_id = $1`,
      [hook.id],
    );
    expect(JSON.stringify(stored)).not.toContain('CONFIDENTIAL');
  });

  it('hides the body of a delivered event and skips a queued one once permissions.view shuts the creator out', async () => {
    const doc = await createDocument(t.http, owner);
    const hook = await createWebhook(t, editor, {
      organizationId: owner.defaultOrganizationId,
      url: receiver.url,
      events: ['data_row_created'],
      maxRetries: 0,
      timeout: 10,
    });
    // The first delivery is held by a slow receiver; the second waits behind it, queued while still readable.
    // Held long enough for the steps below to finish before it ends, even on a slow machine.
    receiver.replies = [{ status: 200, delayMs: 5000 }];
    await addRow(doc, 'first');
    await waitFor(() => receiver.received.length === 1, 15_000, 'first in flight');
    await addRow(doc, 'classified');
    await waitFor(async () => (await deliveriesOf(t, editor, hook.id)).length === 2, 15_000, 'second queued');
    await request(t.http)
      .put(inWorkspace(`${doc.path}/settings`))
      .set(bearer(owner))
      .send({ permissions: { view: [owner.id] } })
      .expect(200);
    await waitFor(
      async () => (await deliveriesOf(t, editor, hook.id)).some((d) => d.status === 'skipped'),
      20_000,
      'skipped',
    );
    const records = await deliveriesOf(t, editor, hook.id);
    const sent = records.find((d) => d.status === 'succeeded');
    const skipped = records.find((d) => d.status === 'skipped');
    expect(skipped).toMatchObject({ docType: null, docId: null, attempts: 0 });
    expect(skipped?.error).toMatch(/creator can no longer read this document; its body was dropped/);
    expect(receiver.received).toHaveLength(1);
    // The delivered one keeps its record, but its body is no longer shown, to its creator or to the owner.
    for (const caller of [editor, owner]) {
      expect((await deliveryDetail(caller, hook.id, sent?.deliveryId ?? '')).requestBody).toBeNull();
    }
    const [stored] = await t.dataSource.query(`SELECT request_body FROM webhook_deliveries WHERE id = $1`, [
      skipped?.deliveryId,
    ]);
    expect(stored.request_body).not.toContain('classified');
    // Allowed again: the delivered body shows again.
    await request(t.http)
      .put(inWorkspace(`${doc.path}/settings`))
      .set(bearer(owner))
      .send({ permissions: { view: [owner.id, editor.id] } })
      .expect(200);
    expect((await deliveryDetail(editor, hook.id, sent?.deliveryId ?? '')).requestBody).toContain('first');
  });

  it("delivers only what the creating credential's scopes read: data events need data:read, other document events doc:read", async () => {
    const doc = await createDocument(t.http, owner);
    const created = await request(t.http)
      .post(`${API}/api-keys`)
      .set(bearer(owner))
      .send({ name: 'hooks only', scopes: ['webhooks:manage'] })
      .expect(201);
    const hooksOnlyKey = { token: created.body.payload.key as string };
    const docReader = await scopedToken(t, owner, ['webhooks:manage', 'doc:read']);
    const events = ['request_merged', 'data_row_created', 'revision_created'];

    const keyHook = await createWebhook(t, hooksOnlyKey as TestUser, { url: receiver.url, events });
    expect(keyHook.credentialScopes).toEqual(['webhooks:manage']);
    const docHook = await createWebhook(t, docReader as TestUser, { url: receiver.url, events });
    expect(docHook.credentialScopes).toEqual(['doc:read', 'webhooks:manage']);
    const sessionHook = await createWebhook(t, owner, { url: receiver.url, events });
    expect(sessionHook.credentialScopes).toEqual(
      expect.arrayContaining(['data:read', 'doc:read', 'webhooks:manage']),
    );
    // Created before scopes were recorded: unrestricted, as before.
    const legacyHook = await createWebhook(t, owner, { url: receiver.url, events });
    await t.dataSource.query(`UPDATE webhooks SET credential_scopes = NULL WHERE id = $1`, [legacyHook.id]);
    const legacyRead = await request(t.http)
      .get(`${API}/webhooks/${legacyHook.id}`)
      .set(bearer(owner))
      .expect(200);
    expect(legacyRead.body.payload.credentialScopes).toBeNull();
    // The key itself may not read rows.
    await request(t.http)
      .get(inWorkspace(`${doc.path}/data`))
      .set(bearer(hooksOnlyKey))
      .expect(403);

    await addRow(doc, 'value needing data:read');
    const got = (hookId: string) => receivedBy(hookId).map((b) => b.event);
    await waitFor(
      () => [docHook, sessionHook, legacyHook].every((hook) => got(hook.id).includes('revision_created')),
      15_000,
      'revision_created everywhere',
    );
    await sleep(300);
    expect(got(keyHook.id)).toEqual([]);
    expect(await deliveriesOf(t, owner, keyHook.id)).toHaveLength(0);
    expect(got(docHook.id)).toEqual(['request_merged', 'revision_created']);
    expect(got(sessionHook.id)).toEqual(['request_merged', 'data_row_created', 'revision_created']);
    expect(got(legacyHook.id)).toEqual(['request_merged', 'data_row_created', 'revision_created']);

    // requestBody follows the calling credential too: a webhooks:manage key of the same user sees no row values.
    const sessionDeliveries = await deliveriesOf(t, owner, sessionHook.id);
    const dataDelivery = sessionDeliveries.find((d) => d.event === 'data_row_created');
    const mergedDelivery = sessionDeliveries.find((d) => d.event === 'request_merged');
    const body = (caller: { token: string }, delivery: { deliveryId: string } | undefined) =>
      deliveryDetail(caller, sessionHook.id, delivery?.deliveryId ?? '').then((d) => d.requestBody);
    expect(await body(owner, dataDelivery)).toContain('value needing data:read');
    expect(await body(hooksOnlyKey, dataDelivery)).toBeNull();
    expect(await body(docReader, dataDelivery)).toBeNull();
    expect(await body(hooksOnlyKey, mergedDelivery)).toBeNull();
    expect(await body(docReader, mergedDelivery)).toContain('request_merged');
  });

  it('a PUT narrows the stored scopes to those its credential holds and never widens them; queued deliveries follow', async () => {
    const doc = await createDocument(t.http, owner);
    const docReader = await scopedToken(t, owner, ['webhooks:manage', 'doc:read']);
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      events: ['data_row_created', 'request_merged'],
    });
    const legacy = await createWebhook(t, owner, { url: receiver.url, events: ['data_row_created'] });
    await t.dataSource.query(`UPDATE webhooks SET credential_scopes = NULL WHERE id = $1`, [legacy.id]);

    const renamed = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(docReader))
      .send({ name: 'renamed by a narrower token' })
      .expect(200);
    expect(renamed.body.payload.credentialScopes).toEqual(['doc:read', 'webhooks:manage']);
    const legacyRenamed = await request(t.http)
      .put(`${API}/webhooks/${legacy.id}`)
      .set(bearer(docReader))
      .send({ description: 'narrowed' })
      .expect(200);
    expect(legacyRenamed.body.payload.credentialScopes).toEqual(['doc:read', 'webhooks:manage']);
    // The session holds every scope, yet its PUT does not widen them back.
    const again = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({ name: 'renamed by the owner' })
      .expect(200);
    expect(again.body.payload.credentialScopes).toEqual(['doc:read', 'webhooks:manage']);

    await addRow(doc, 'after narrowing');
    await waitFor(
      () => receivedBy(hook.id).some((b) => b.event === 'request_merged'),
      10_000,
      'request_merged',
    );
    await sleep(300);
    expect(receivedBy(hook.id).map((b) => b.event)).toEqual(['request_merged']);
    expect(receivedBy(legacy.id)).toEqual([]);

    // A delivery queued while the scopes allowed it is skipped, not sent, once a narrower credential's PUT (here
    // pointing the webhook at its own receiver) removes them.
    const elsewhere = await new WebhookReceiver().start();
    try {
      const retried = await createWebhook(t, owner, {
        url: receiver.url,
        events: ['data_row_created'],
        maxRetries: 3,
        retryInterval: 2,
      });
      receiver.fallback = { status: 500 };
      await addRow(doc, 'queued before the PUT');
      await waitFor(
        async () => (await deliveriesOf(t, owner, retried.id))[0]?.status === 'retrying',
        10_000,
        'retrying',
      );
      await request(t.http)
        .put(`${API}/webhooks/${retried.id}`)
        .set(bearer(docReader))
        .send({ url: elsewhere.url })
        .expect(200);
      await waitFor(
        async () => (await deliveriesOf(t, owner, retried.id))[0]?.status === 'skipped',
        // Skipped at the next retry after the PUT: the second one (about 4 s later) if the PUT missed the first.
        20_000,
        'skipped',
      );
      const [skipped] = await deliveriesOf(t, owner, retried.id);
      expect(skipped.error).toMatch(/credential scopes no longer include data:read; its body was dropped/);
      expect(elsewhere.received).toHaveLength(0);
    } finally {
      await elsewhere.stop();
    }
  });
});
