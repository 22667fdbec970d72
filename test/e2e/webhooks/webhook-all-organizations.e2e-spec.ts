import request from 'supertest';
import {
  addToWorkspace,
  createDocument,
  createRow,
  type DocHandle,
} from '../documents/documents.fixtures.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { sleep, WebhookReceiver, waitFor } from './webhook-receiver.js';
import { API, createWebhook, WEBHOOK_TEST_ENV } from './webhooks.fixtures.js';

/**
 * A webhook created with `allOrganizations: true` belongs to its creator, not to the
 * organization it was created in: only the creator manages it, wherever they are a member, and it carries an
 * organization's events only while the creator is an active member of it (docs/webhooks.md, "Tenancy and roles").
 */
describe('webhooks: all-organizations webhooks (opt-in) belong to their creator', () => {
  let t: TestApp;
  let creatorReceiver: WebhookReceiver;
  let adminReceiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp(WEBHOOK_TEST_ENV);
  });
  beforeEach(async () => {
    creatorReceiver = await new WebhookReceiver().start();
    adminReceiver = await new WebhookReceiver().start();
  });
  afterEach(async () => {
    await creatorReceiver.stop();
    await adminReceiver.stop();
  });
  afterAll(async () => {
    await t.close();
  });

  interface TwoOrganizations {
    /** Owner of organization A, where the creator is a member (an editor of A's default workspace). */
    admin: TestUser;
    /** Member of A with A as default organization; owner of their own organization B. */
    creator: TestUser;
    organizationA: string;
    organizationB: string;
    docA: DocHandle;
    docB: DocHandle;
  }

  /** The creator's all-organizations webhook without an organization is created in A (the default) and also carries B's events. */
  async function twoOrganizations(): Promise<TwoOrganizations> {
    const admin = await registerUser(t.http);
    const creator = await registerUser(t.http);
    const docB = await createDocument(t.http, creator);
    const docA = await createDocument(t.http, admin);
    await addToWorkspace(t.dataSource, admin, creator, 'editor');
    await request(t.http)
      .patch(`${API}/users/me`)
      .set(bearer(creator))
      .send({ defaultOrganizationId: admin.defaultOrganizationId })
      .expect(200);
    return {
      admin,
      creator,
      organizationA: admin.defaultOrganizationId,
      organizationB: creator.defaultOrganizationId,
      docA,
      docB,
    };
  }

  async function listIds(user: TestUser, query = ''): Promise<string[]> {
    const res = await request(t.http).get(`${API}/webhooks${query}`).set(bearer(user)).expect(200);
    return (res.body.payload.items as Array<{ id: string }>).map((item) => item.id);
  }

  async function removeMember(admin: TestUser, organizationId: string, user: TestUser): Promise<void> {
    const [membership] = await t.dataSource.query<Array<{ id: string }>>(
      `SELECT id FROM organization_members WHERE organization_id = $1 AND user_id = $2`,
      [organizationId, user.id],
    );
    await request(t.http)
      .delete(`${API}/organizations/${organizationId}/members/${membership.id}`)
      .set(bearer(admin))
      .expect(200);
  }

  it("puts a webhook created without an organization in the creator's default one (issue 12): its admins manage it, and it carries that organization's events only", async () => {
    const { admin, creator, organizationA, docA, docB } = await twoOrganizations();
    const hook = await createWebhook(t, creator, { url: creatorReceiver.url, events: ['data_row_created'] });
    expect(hook).toMatchObject({ organizationId: organizationA, allOrganizations: false });
    await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(admin)).expect(200);
    expect(await listIds(admin)).toContain(hook.id);

    await createRow(t.http, creator, docB, { id: 'in-b', values: { name: 'of B' } });
    await createRow(t.http, creator, docA, { id: 'in-a', values: { name: 'of A' } });
    await waitFor(() => creatorReceiver.received.length > 0, 10_000, 'the delivery of organization A');
    await sleep(500);
    expect(creatorReceiver.received.map((r) => (r.body.payload as { rowId: string }).rowId)).toEqual(['in-a']);
  });

  it("hides a member's all-organizations webhook from the admins of the organization it was created in: no read, no redirect of the other organizations' events", async () => {
    const { admin, creator, organizationA, organizationB, docB } = await twoOrganizations();
    const hook = await createWebhook(t, creator, { url: creatorReceiver.url, events: ['data_row_created'], allOrganizations: true });
    expect(hook).toMatchObject({ organizationId: organizationA, allOrganizations: true });
    // A webhook of the organization itself stays manageable by its admins.
    const orgHook = await createWebhook(t, creator, {
      url: creatorReceiver.url,
      events: ['data_row_created'],
      organizationId: organizationA,
    });

    expect(await listIds(admin, `?organizationId=${organizationA}`)).toEqual([orgHook.id]);
    for (const [method, path, body] of [
      ['get', `/webhooks/${hook.id}`, undefined],
      ['put', `/webhooks/${hook.id}`, { url: adminReceiver.url }],
      ['post', `/webhooks/${hook.id}/pause`, undefined],
      ['post', `/webhooks/${hook.id}/regenerate-secret`, undefined],
      ['post', `/webhooks/${hook.id}/test`, {}],
      ['get', `/webhooks/${hook.id}/deliveries`, undefined],
      ['get', `/webhooks/${hook.id}/stats`, undefined],
      ['delete', `/webhooks/${hook.id}`, undefined],
    ] as const) {
      const call = request(t.http)[method](`${API}${path}`).set(bearer(admin));
      const res = await (body === undefined ? call : call.send(body));
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 404, 'NOT_FOUND']);
    }
    await request(t.http).get(`${API}/webhooks/${orgHook.id}`).set(bearer(admin)).expect(200);

    // The creator still sees it in the list of each of their organizations, unchanged.
    expect(await listIds(creator, `?organizationId=${organizationA}`)).toEqual([orgHook.id, hook.id]);
    expect(await listIds(creator, `?organizationId=${organizationB}`)).toEqual([hook.id]);
    const read = await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(creator)).expect(200);
    expect(read.body.payload).toMatchObject({ url: creatorReceiver.url, status: 'active' });

    // An event of B goes to the creator's URL only.
    await createRow(t.http, creator, docB, { values: { name: 'of B' } });
    await waitFor(() => creatorReceiver.received.length > 0, 10_000, 'the delivery of B');
    await sleep(300);
    expect(creatorReceiver.received.map((r) => r.body.webhookId)).toEqual([hook.id]);
    expect(adminReceiver.received).toHaveLength(0);
  });

  it('stops delivering the events of an organization once the creator is removed from it; the creator keeps managing the webhook', async () => {
    const { admin, creator, organizationA, docA, docB } = await twoOrganizations();
    const hook = await createWebhook(t, creator, { url: creatorReceiver.url, events: ['data_row_created'], allOrganizations: true });

    await createRow(t.http, admin, docA, { values: { name: 'while a member' } });
    await waitFor(() => creatorReceiver.received.length === 1, 10_000, 'the delivery of A while a member');
    expect(creatorReceiver.received[0].body).toMatchObject({
      organizationId: organizationA,
      docId: docA.docId,
    });

    await removeMember(admin, organizationA, creator);
    await createRow(t.http, admin, docA, { values: { name: 'after the removal' } });
    await createRow(t.http, creator, docB, { values: { name: 'of B' } });
    await waitFor(() => creatorReceiver.received.length >= 2, 10_000, 'the delivery of B');
    await sleep(800);
    expect(creatorReceiver.received.map((r) => r.body.docId)).toEqual([docA.docId, docB.docId]);

    // Removed from the organization it was created in, the creator still finds, pauses and deletes it — with no
    // organization named (their default organization was cleared) or under their other organization.
    expect(await listIds(creator)).toEqual([hook.id]);
    expect(await listIds(creator, `?organizationId=${creator.defaultOrganizationId}`)).toEqual([hook.id]);
    await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(creator)).expect(200);
    const paused = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/pause`)
      .set(bearer(creator))
      .expect(200);
    expect(paused.body.payload.status).toBe('paused');
    await request(t.http).get(`${API}/webhooks/${hook.id}/deliveries`).set(bearer(creator)).expect(200);
    await request(t.http).delete(`${API}/webhooks/${hook.id}`).set(bearer(creator)).expect(200);
    expect(await listIds(creator)).toEqual([]);
  });

  it('stays under its creator control when the organization it was created in is archived', async () => {
    const { admin, creator, organizationA, organizationB } = await twoOrganizations();
    const hook = await createWebhook(t, creator, { url: creatorReceiver.url, events: ['data_row_created'], allOrganizations: true });
    await request(t.http).delete(`${API}/organizations/${organizationA}`).set(bearer(admin)).expect(200);

    expect(await listIds(creator, `?organizationId=${organizationB}`)).toEqual([hook.id]);
    expect(await listIds(creator)).toEqual([hook.id]);
    const paused = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/pause`)
      .set(bearer(creator))
      .expect(200);
    expect(paused.body.payload.status).toBe('paused');
    await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(creator))
      .send({ name: 'still mine' })
      .expect(200);
    await request(t.http).delete(`${API}/webhooks/${hook.id}`).set(bearer(creator)).expect(200);
    await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(creator)).expect(404);
  });

  it("lists only the caller's all-organizations webhooks when no organization is named and there is no default one", async () => {
    const loner = await registerUser(t.http);
    const other = await registerUser(t.http);
    const hook = await createWebhook(t, loner, { url: creatorReceiver.url, allOrganizations: true });
    await createWebhook(t, other, { url: creatorReceiver.url, allOrganizations: true });
    await request(t.http)
      .patch(`${API}/users/me`)
      .set(bearer(loner))
      .send({ defaultOrganizationId: null })
      .expect(200);
    const listed = await request(t.http).get(`${API}/webhooks`).set(bearer(loner)).expect(200);
    expect(listed.body.payload).toMatchObject({ total: 1 });
    expect(listed.body.payload.items.map((item: { id: string }) => item.id)).toEqual([hook.id]);
    // Creating still needs an organization.
    const refused = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(loner))
      .send({ name: 'x', url: creatorReceiver.url, events: ['*'] })
      .expect(400);
    expect(refused.body.code).toBe('VALIDATION_ERROR');
  });
});
