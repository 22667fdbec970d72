import request from 'supertest';
import { addToWorkspace, scopedToken } from '../documents/documents.fixtures.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { WebhookReceiver, waitFor } from './webhook-receiver.js';
import { API, createWebhook, deliveriesOf, WEBHOOK_TEST_ENV } from './webhooks.fixtures.js';

describe('webhooks: management, validation, tenancy and URL safety', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let outsider: TestUser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp(WEBHOOK_TEST_ENV);
    receiver = await new WebhookReceiver().start();
    owner = await registerUser(t.http);
    member = await registerUser(t.http);
    outsider = await registerUser(t.http);
    await addToWorkspace(t.dataSource, owner, member, 'editor');
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  async function countWebhooks(user: TestUser): Promise<number> {
    const res = await request(t.http)
      .get(`${API}/webhooks?organizationId=${owner.defaultOrganizationId}`)
      .set(bearer(user))
      .expect(200);
    return res.body.payload.total;
  }

  it('creates a webhook in the default organization with the spec defaults, showing the secret only on create', async () => {
    const res = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(owner))
      .send({
        name: 'Orders',
        description: 'ERP sync',
        url: receiver.url,
        events: ['request_merged', 'data_bulk_operation'],
      })
      .expect(201);
    const hook = res.body.payload;
    expect(hook).toMatchObject({
      organizationId: owner.defaultOrganizationId,
      name: 'Orders',
      description: 'ERP sync',
      url: receiver.url,
      events: ['request_merged', 'data_bulk_operation'],
      filters: {},
      timeout: 30,
      maxRetries: 3,
      retryInterval: 60,
      status: 'active',
      createdBy: owner.id,
      consecutiveFailures: 0,
    });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // Stored sealed, never as given.
    const [stored] = await t.dataSource.query(`SELECT secret FROM webhooks WHERE id = $1`, [hook.id]);
    expect(stored.secret).not.toContain(hook.secret.slice(6));
    const got = await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
    expect(got.body.payload.secret).toBeUndefined();
    const listed = await request(t.http).get(`${API}/webhooks`).set(bearer(owner)).expect(200);
    expect(listed.body.payload.items.map((item: { id: string }) => item.id)).toContain(hook.id);
    expect(
      listed.body.payload.items.every((item: Record<string, unknown>) => item.secret === undefined),
    ).toBe(true);
  });

  it('takes the organization from the body, else X-Organization-Id; a mismatch or foreign organization is refused', async () => {
    const viaHeader = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(member))
      .set('X-Organization-Id', owner.defaultOrganizationId)
      .send({ name: 'member hook', url: receiver.url, events: ['*'] })
      .expect(201);
    expect(viaHeader.body.payload.organizationId).toBe(owner.defaultOrganizationId);
    const mismatch = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(member))
      .set('X-Organization-Id', member.defaultOrganizationId)
      .send({ organizationId: owner.defaultOrganizationId, name: 'x', url: receiver.url, events: ['*'] })
      .expect(400);
    expect(mismatch.body.code).toBe('VALIDATION_ERROR');
    const foreign = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(outsider))
      .send({ organizationId: owner.defaultOrganizationId, name: 'x', url: receiver.url, events: ['*'] })
      .expect(404);
    expect(foreign.body).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });

  it('updates, pauses, resumes and deletes', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url });
    const put = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({
        name: 'Renamed',
        events: ['request_created'],
        timeout: 5,
        maxRetries: 0,
        retryInterval: 1,
        filters: { docTypes: ['products'] },
      })
      .expect(200);
    expect(put.body.payload).toMatchObject({
      name: 'Renamed',
      events: ['request_created'],
      timeout: 5,
      maxRetries: 0,
      retryInterval: 1,
      filters: { docTypes: ['products'] },
      url: receiver.url,
    });
    expect(
      (await request(t.http).post(`${API}/webhooks/${hook.id}/pause`).set(bearer(owner)).expect(200)).body
        .payload.status,
    ).toBe('paused');
    expect(
      (await request(t.http).post(`${API}/webhooks/${hook.id}/resume`).set(bearer(owner)).expect(200)).body
        .payload.status,
    ).toBe('active');
    await request(t.http).delete(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
    await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(404);
  });

  it('answers a pause of a paused and a resume of an active webhook with the webhook unchanged', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url });
    // An active webhook in a failure streak: a resume that does not re-enable anything must not clear it (that
    // would postpone the auto-disable) nor make its waiting retry due ahead of retryInterval.
    await t.dataSource.query(
      `UPDATE webhooks SET consecutive_failures = 3, failing_since = now() - interval '1 hour' WHERE id = $1`,
      [hook.id],
    );
    const before = (await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200)).body
      .payload;
    const resumed = await request(t.http).post(`${API}/webhooks/${hook.id}/resume`).set(bearer(owner)).expect(200);
    expect(resumed.body.payload).toEqual(before);
    const [row] = await t.dataSource.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [hook.id]);
    expect(row.failing_since).not.toBeNull();

    const paused = (await request(t.http).post(`${API}/webhooks/${hook.id}/pause`).set(bearer(owner)).expect(200))
      .body.payload;
    expect(paused).toMatchObject({ status: 'paused', consecutiveFailures: 3 });
    const again = await request(t.http).post(`${API}/webhooks/${hook.id}/pause`).set(bearer(owner)).expect(200);
    expect(again.body.payload).toEqual(paused);
    // The real transition still resets the streak (docs/webhooks.md, "Auto-disable").
    const active = await request(t.http).post(`${API}/webhooks/${hook.id}/resume`).set(bearer(owner)).expect(200);
    expect(active.body.payload).toMatchObject({ status: 'active', consecutiveFailures: 0 });
  });

  it.each([
    ['an unknown event', { events: ['row_exploded'] }, 'events'],
    ['no events', { events: [] }, 'events'],
    [
      'a bad JSONPath',
      { filters: { conditions: [{ path: '$.payload[', operator: 'eq', value: 1 }] } },
      'filters.conditions[0].path',
    ],
    [
      'a filter expression',
      { filters: { conditions: [{ path: '$..[?(@.a)]', operator: 'exists' }] } },
      'filters.conditions[0].path',
    ],
    [
      'a bad operator',
      { filters: { conditions: [{ path: '$.payload.status', operator: 'like', value: 'x' }] } },
      'filters.conditions[0].operator',
    ],
    [
      'a one-element range',
      { filters: { conditions: [{ path: '$.payload.qty', operator: 'range', value: [1] }] } },
      'filters.conditions[0].value',
    ],
    ['an unknown filter kind', { filters: { workspaceIds: ['x'] } }, 'filters.workspaceIds'],
    ['a zero timeout', { timeout: 0 }, 'timeout'],
    ['a timeout over 60 s', { timeout: 61 }, 'timeout'],
    ['too many retries', { maxRetries: 11 }, 'maxRetries'],
    ['a zero retry interval', { retryInterval: 0 }, 'retryInterval'],
    ['a non-http scheme', { url: 'ftp://example.com/hook' }, 'url'],
    ['credentials in the URL', { url: 'http://user:pw@127.0.0.1:9/hook' }, 'url'],
    ['port 0', { url: 'http://127.0.0.1:0/hook' }, 'url'],
    ['a raw line feed inside the URL', { url: 'http://127.0.0.1:9/a\nb' }, 'url'],
    ['a raw carriage return inside the URL', { url: 'http://127.0.0.1:9/a\rb' }, 'url'],
    ['a raw tab inside the URL', { url: 'http://127.0.0.1:9/a\tb' }, 'url'],
    ['a raw NUL inside the URL', { url: 'http://127.0.0.1:9/a\u0000b' }, 'url'],
    ['a raw DEL inside the URL', { url: 'http://127.0.0.1:9/a\u007fb' }, 'url'],
  ])('refuses %s with VALIDATION_ERROR and creates nothing', async (_what, override, field) => {
    const before = await countWebhooks(owner);
    const res = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(owner))
      .send({ name: 'bad', url: receiver.url, events: ['*'], ...override })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(res.body.details)).toContain(field);
    expect(await countWebhooks(owner)).toBe(before);
  });

  it('refuses a bad update and leaves the webhook as it was', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['request_merged'] });
    const res = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({
        name: 'changed',
        filters: { conditions: [{ path: '$.x', operator: 'between', value: [1, 2] }] },
      })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const got = await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
    expect(got.body.payload).toMatchObject({ name: 'hook', events: ['request_merged'], filters: {} });
  });

  it('bounds the webhooks of an organization and the all-organizations webhooks of a user: one more is 409 INVALID_STATE', async () => {
    // Every webhook's filters run for every event of its organization in the outbox dispatch (docs/webhooks.md, "Limits").
    const busy = await registerUser(t.http);
    const own: string[] = [];
    for (let i = 0; i < 25; i += 1) {
      own.push((await createWebhook(t, busy, { url: receiver.url })).id);
    }
    const over = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(busy))
      .send({ name: 'one too many', url: receiver.url, events: ['*'] })
      .expect(409);
    expect(over.body.code).toBe('INVALID_STATE');
    expect(JSON.stringify(over.body.details)).toContain('at most 25 webhooks');
    expect(over.body.payload).toEqual({ limit: 25 });
    // All-organizations webhooks have their own limit, per user, whatever organization they were created in.
    for (let i = 0; i < 10; i += 1) {
      await createWebhook(t, busy, { url: receiver.url, allOrganizations: true });
    }
    const overAll = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(busy))
      .send({ name: 'one too many', url: receiver.url, events: ['*'], allOrganizations: true })
      .expect(409);
    expect(overAll.body.code).toBe('INVALID_STATE');
    expect(JSON.stringify(overAll.body.details)).toContain('at most 10 all-organizations webhooks');
    // Deleting one makes room again; the limit counts the organization, not its other members' own.
    await request(t.http).delete(`${API}/webhooks/${own[0]}`).set(bearer(busy)).expect(200);
    await createWebhook(t, busy, { url: receiver.url });
    await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(busy))
      .send({ name: 'one too many', url: receiver.url, events: ['*'] })
      .expect(409);
  });

  it('stores and answers filters.userIds lower-case, as the service writes every user id', async () => {
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      filters: { userIds: [owner.id.toUpperCase()] },
    });
    expect(hook.filters).toEqual({ userIds: [owner.id] });
    const updated = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({ filters: { userIds: [member.id.toUpperCase(), owner.id] } })
      .expect(200);
    expect(updated.body.payload.filters).toEqual({ userIds: [member.id, owner.id] });
    const read = await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
    expect(read.body.payload.filters).toEqual({ userIds: [member.id, owner.id] });
  });

  it('refuses a condition path with more than one recursive descent (..), on create and on update', async () => {
    // Each further `..` multiplies the work by the body's depth: twenty `$..*..*..*..*` conditions on one 100-row
    // data_bulk_operation held the event loop (every request) for about nine seconds.
    const conditions = (path: string) => ({ conditions: [{ path, operator: 'exists' }] });
    for (const path of ['$..*..*', '$..rows..qty', '$.payload..rows[*]..qty']) {
      const created = await request(t.http)
        .post(`${API}/webhooks`)
        .set(bearer(owner))
        .send({ name: 'deep', url: receiver.url, events: ['*'], filters: conditions(path) })
        .expect(400);
      expect(created.body).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { field: 'filters.conditions[0].path' },
      });
    }
    const hook = await createWebhook(t, owner, { url: receiver.url, filters: conditions("$..a['b..c']") });
    await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({ filters: conditions('$..a..b') })
      .expect(400);
    const got = await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
    expect(got.body.payload.filters).toEqual(conditions("$..a['b..c']"));
  });

  it.each([
    ['timeout', 'timeout'],
    ['maxRetries', 'maxRetries'],
    ['retryInterval', 'retryInterval'],
    ['events', 'events'],
    ['name', 'name'],
    ['url', 'url'],
  ])('refuses %s: null on update, naming the API field, and changes nothing', async (key, field) => {
    const hook = await createWebhook(t, owner, { url: receiver.url, events: ['request_merged'] });
    const res = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({ [key]: null })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const fields = (res.body.details.errors ?? [res.body.details]).map((d: { field: string }) => d.field);
    expect(new Set(fields)).toEqual(new Set([field]));
    const got = await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
    expect(got.body.payload).toMatchObject({
      name: 'hook',
      url: receiver.url,
      events: ['request_merged'],
      timeout: 30,
      maxRetries: 3,
      retryInterval: 60,
    });
  });

  it('takes null for description (cleared) and filters (reset to {}) on update', async () => {
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      description: 'to be cleared',
      filters: { docTypes: ['products'] },
    });
    const res = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({ description: null, filters: null })
      .expect(200);
    expect(res.body.payload).toMatchObject({ description: null, filters: {} });
  });

  it('takes percent-encoded line breaks in a URL but refuses raw control characters and port 0 on update', async () => {
    const encoded = `${receiver.url}?note=a%0D%0Ab`;
    const hook = await createWebhook(t, owner, { url: encoded });
    expect(hook.url).toBe(encoded);
    for (const url of [`${receiver.url}\r\nX-Injected: 1`, receiver.url.replace(/:\d+\//, ':0/')]) {
      const res = await request(t.http).put(`${API}/webhooks/${hook.id}`).set(bearer(owner)).send({ url }).expect(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'url' } });
    }
    const got = await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
    expect(got.body.payload.url).toBe(encoded);
  });

  it('stores the URL without surrounding whitespace, on create and on update', async () => {
    const created = await createWebhook(t, owner, { url: `  ${receiver.url}\t` });
    expect(created.url).toBe(receiver.url);
    const other = receiver.url.replace('/hook', '/other');
    const put = await request(t.http)
      .put(`${API}/webhooks/${created.id}`)
      .set(bearer(owner))
      .send({ url: ` ${other} ` })
      .expect(200);
    expect(put.body.payload.url).toBe(other);
    const [stored] = await t.dataSource.query(`SELECT url FROM webhooks WHERE id = $1`, [created.id]);
    expect(stored.url).toBe(other);
  });

  it('trims the name and refuses one made only of whitespace, on create and on update', async () => {
    const blank = await request(t.http).post(`${API}/webhooks`).set(bearer(owner)).send({ name: '   ', url: receiver.url, events: ['*'] }).expect(400);
    expect(blank.body.details).toMatchObject({ field: 'name' });
    const created = await createWebhook(t, owner, { url: receiver.url, name: '  Orders  ' });
    expect(created.name).toBe('Orders');
    await request(t.http).put(`${API}/webhooks/${created.id}`).set(bearer(owner)).send({ name: ' \t ' }).expect(400);
    const read = await request(t.http).get(`${API}/webhooks/${created.id}`).set(bearer(owner)).expect(200);
    expect(read.body.payload.name).toBe('Orders');
  });

  it('refuses a body on the routes that take none, naming its fields, and changes nothing', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url });
    const secret = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/regenerate-secret`)
      .set(bearer(owner))
      .send({ secret: 'mine' })
      .expect(400);
    expect(secret.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'secret', reason: 'property secret should not exist' },
    });
    const paused = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/pause`)
      .set(bearer(owner))
      .send({ x: 1 })
      .expect(400);
    expect(paused.body.details).toMatchObject({ field: 'x', reason: 'property x should not exist' });
    const resumed = await request(t.http)
      .post(`${API}/webhooks/${hook.id}/resume`)
      .set(bearer(owner))
      .send([1, 2])
      .expect(400);
    expect(resumed.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'body' } });
    const removed = await request(t.http)
      .delete(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({ force: true })
      .expect(400);
    expect(removed.body.details).toMatchObject({ field: 'force' });
    const got = await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
    expect(got.body.payload).toMatchObject({ status: 'active', secretRotatedAt: null });
    // No body, or {}, is what these routes take.
    await request(t.http).post(`${API}/webhooks/${hook.id}/pause`).set(bearer(owner)).send({}).expect(200);
    await request(t.http).post(`${API}/webhooks/${hook.id}/resume`).set(bearer(owner)).expect(200);
    await request(t.http).post(`${API}/webhooks/${hook.id}/regenerate-secret`).set(bearer(owner)).expect(200);
  });

  it('refuses unknown query parameters on every webhook GET route', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url });
    await request(t.http).post(`${API}/webhooks/${hook.id}/test`).set(bearer(owner)).send({}).expect(202);
    await waitFor(async () => (await deliveriesOf(t, owner, hook.id)).length === 1);
    const [delivery] = await deliveriesOf(t, owner, hook.id);
    for (const path of [
      `${API}/webhooks?foo=1`,
      `${API}/webhooks/${hook.id}?foo=1`,
      `${API}/webhooks/${hook.id}/stats?foo=1`,
      `${API}/webhooks/${hook.id}/deliveries?foo=1`,
      `${API}/webhooks/${hook.id}/deliveries/${delivery.deliveryId}?foo=1`,
    ]) {
      const res = await request(t.http).get(path).set(bearer(owner));
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.body).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { field: 'foo', reason: 'property foo should not exist' },
      });
    }
  });

  it('refuses a delivery history filter naming an unknown event, as it refuses an unknown status', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url });
    for (const query of ['status=done', 'event=request_merge']) {
      const res = await request(t.http).get(`${API}/webhooks/${hook.id}/deliveries?${query}`).set(bearer(owner));
      expect([query, res.status, res.body.code, res.body.details?.field]).toEqual([
        query,
        400,
        'VALIDATION_ERROR',
        query.split('=')[0],
      ]);
    }
    for (const event of ['request_merged', 'webhook_test']) {
      await request(t.http).get(`${API}/webhooks/${hook.id}/deliveries?event=${event}`).set(bearer(owner)).expect(200);
    }
  });

  it('refuses an X-Organization-Id that is not a UUID, like the organizationId parameter', async () => {
    const created = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(owner))
      .set('X-Organization-Id', 'xyz')
      .send({ name: 'x', url: receiver.url, events: ['*'] })
      .expect(400);
    expect(created.body).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'X-Organization-Id', reason: 'X-Organization-Id must be a UUID' },
    });
    const listed = await request(t.http)
      .get(`${API}/webhooks`)
      .set(bearer(owner))
      .set('X-Organization-Id', 'xyz')
      .expect(400);
    expect(listed.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'X-Organization-Id' } });
    const query = await request(t.http)
      .get(`${API}/webhooks?organizationId=xyz`)
      .set(bearer(owner))
      .expect(400);
    expect(query.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'organizationId' } });
  });

  it('declares 404 on every webhook route and the organization header once', () => {
    const paths = Object.entries(t.openApi.paths).filter(([path]) => path.startsWith(`${API}/webhooks`));
    expect(paths.length).toBeGreaterThanOrEqual(8);
    for (const [path, item] of paths) {
      for (const method of ['get', 'post', 'put', 'delete'] as const) {
        const operation = item[method];
        if (operation) {
          expect([method, path, Object.keys(operation.responses)]).toEqual([
            method,
            path,
            expect.arrayContaining(['404']),
          ]);
          const headers = (operation.parameters ?? []).filter(
            (p) => 'in' in p && p.in === 'header' && p.name.toLowerCase() === 'x-organization-id',
          );
          expect(headers.length).toBeLessThanOrEqual(1);
        }
      }
    }
    for (const operation of [
      t.openApi.paths[`${API}/webhooks`].get,
      t.openApi.paths[`${API}/webhooks`].post,
    ]) {
      const headers = (operation?.parameters ?? []).filter((p) => 'in' in p && p.in === 'header');
      expect(headers.map((p) => ('name' in p ? p.name : ''))).toEqual(['X-Organization-Id']);
    }
  });

  it('lets the creator and organization owners/admins manage a webhook; other members are refused', async () => {
    const mine = await createWebhook(t, member, {
      organizationId: owner.defaultOrganizationId,
      url: receiver.url,
    });
    // A webhook of the organization (an all-organizations one is its creator's alone: webhook-all-organizations spec).
    const ownersHook = await createWebhook(t, owner, { url: receiver.url, organizationId: owner.defaultOrganizationId });
    // The organization owner manages a member's webhook and lists every webhook.
    await request(t.http).post(`${API}/webhooks/${mine.id}/pause`).set(bearer(owner)).expect(200);
    // A member manages their own, sees only their own, and gets FORBIDDEN on others of the organization.
    await request(t.http).post(`${API}/webhooks/${mine.id}/resume`).set(bearer(member)).expect(200);
    const listed = await request(t.http)
      .get(`${API}/webhooks?organizationId=${owner.defaultOrganizationId}`)
      .set(bearer(member))
      .expect(200);
    expect(
      listed.body.payload.items.every((item: { createdBy: string }) => item.createdBy === member.id),
    ).toBe(true);
    const refused = await request(t.http)
      .put(`${API}/webhooks/${ownersHook.id}`)
      .set(bearer(member))
      .send({ name: 'mine now' })
      .expect(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    await request(t.http).get(`${API}/webhooks/${ownersHook.id}/deliveries`).set(bearer(member)).expect(403);
    // Guests may not create webhooks.
    await t.dataSource.query(
      `UPDATE organization_members SET role = 'guest' WHERE organization_id = $1 AND user_id = $2`,
      [owner.defaultOrganizationId, member.id],
    );
    const guest = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(member))
      .send({ organizationId: owner.defaultOrganizationId, name: 'x', url: receiver.url, events: ['*'] })
      .expect(403);
    expect(guest.body.code).toBe('FORBIDDEN');
    await t.dataSource.query(
      `UPDATE organization_members SET role = 'member' WHERE organization_id = $1 AND user_id = $2`,
      [owner.defaultOrganizationId, member.id],
    );
  });

  it('takes the webhook as GET answers it back on PUT: read-only keys ignored, a foreign id or an unknown key refused', async () => {
    const hook = await createWebhook(t, owner, {
      url: receiver.url,
      description: 'as read',
      events: ['request_merged'],
      filters: { docTypes: ['products'] },
    });
    const read = (await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200)).body
      .payload;
    const same = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send(read)
      .expect(200);
    const { updatedAt: _before, ...unchanged } = read;
    expect(same.body.payload).toMatchObject(unchanged);
    // Read-only keys are ignored whatever their value: they never change the webhook.
    const edited = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({
        ...read,
        name: 'Edited after reading',
        organizationId: outsider.defaultOrganizationId,
        allOrganizations: !read.allOrganizations,
        credentialScopes: [],
        status: 'paused',
        createdBy: outsider.id,
        consecutiveFailures: 99,
        disabledAt: new Date().toISOString(),
        disabledReason: 'x',
        secretRotatedAt: new Date().toISOString(),
        previousSecretExpiresAt: new Date().toISOString(),
        createdAt: '2000-01-01T00:00:00.000Z',
        updatedAt: '2000-01-01T00:00:00.000Z',
      })
      .expect(200);
    expect(edited.body.payload).toMatchObject({
      ...unchanged,
      name: 'Edited after reading',
    });
    // The id, given, must be this webhook's (any case); unknown keys stay refused.
    await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({ ...read, name: 'Edited after reading', id: hook.id.toUpperCase() })
      .expect(200);
    const otherId = await request(t.http)
      .put(`${API}/webhooks/${hook.id}`)
      .set(bearer(owner))
      .send({ ...read, id: '00000000-0000-4000-8000-000000000000' })
      .expect(400);
    expect(otherId.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'id' } });
    for (const extra of [{ foo: 1 }, { secret: 'whsec_mine' }]) {
      const refused = await request(t.http)
        .put(`${API}/webhooks/${hook.id}`)
        .set(bearer(owner))
        .send({ ...read, ...extra })
        .expect(400);
      const [key] = Object.keys(extra);
      expect(refused.body).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { field: key, reason: `property ${key} should not exist` },
      });
    }
    const after = (await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200))
      .body.payload;
    expect(after).toMatchObject({ ...unchanged, name: 'Edited after reading' });
  });

  it('needs webhooks:manage on delegated credentials', async () => {
    const narrow = await scopedToken(t, owner, ['doc:read']);
    const res = await request(t.http).get(`${API}/webhooks`).set(bearer(narrow)).expect(403);
    expect(res.body.code).toBe('FORBIDDEN');
    const scoped = await scopedToken(t, owner, ['webhooks:manage']);
    await request(t.http).get(`${API}/webhooks`).set(bearer(scoped)).expect(200);
  });

  it('answers another tenant NOT_FOUND on every route, with no data, and changes nothing', async () => {
    const hook = await createWebhook(t, owner, { url: receiver.url });
    await request(t.http).post(`${API}/webhooks/${hook.id}/test`).set(bearer(owner)).send({}).expect(202);
    await waitFor(async () => (await deliveriesOf(t, owner, hook.id)).some((d) => d.status === 'succeeded'));
    const [delivery] = await deliveriesOf(t, owner, hook.id);
    const calls = [
      request(t.http).get(`${API}/webhooks/${hook.id}`),
      request(t.http).put(`${API}/webhooks/${hook.id}`).send({ name: 'stolen' }),
      request(t.http).delete(`${API}/webhooks/${hook.id}`),
      request(t.http).post(`${API}/webhooks/${hook.id}/pause`),
      request(t.http).post(`${API}/webhooks/${hook.id}/resume`),
      request(t.http).post(`${API}/webhooks/${hook.id}/test`).send({}),
      request(t.http).post(`${API}/webhooks/${hook.id}/regenerate-secret`),
      request(t.http).get(`${API}/webhooks/${hook.id}/deliveries`),
      request(t.http).get(`${API}/webhooks/${hook.id}/deliveries/${delivery.deliveryId}`),
      request(t.http).post(`${API}/webhooks/${hook.id}/deliveries/${delivery.deliveryId}/redeliver`),
      request(t.http).get(`${API}/webhooks/${hook.id}/stats`),
    ];
    for (const call of calls) {
      const res = await call.set(bearer(outsider));
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, code: 'NOT_FOUND', payload: null });
    }
    // An unknown id answers exactly the same.
    const unknown = await request(t.http)
      .get(`${API}/webhooks/00000000-0000-4000-8000-000000000000`)
      .set(bearer(outsider))
      .expect(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    const outsiderList = await request(t.http).get(`${API}/webhooks`).set(bearer(outsider)).expect(200);
    expect(outsiderList.body.payload.items.map((item: { id: string }) => item.id)).not.toContain(hook.id);
    const after = await request(t.http).get(`${API}/webhooks/${hook.id}`).set(bearer(owner)).expect(200);
    expect(after.body.payload).toMatchObject({ name: 'hook', status: 'active' });
    expect(await deliveriesOf(t, owner, hook.id)).toHaveLength(1);
  });
});

describe('webhooks: server-side request forgery guard (WEBHOOK_ALLOW_PRIVATE off)', () => {
  let t: TestApp;
  let owner: TestUser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({ ...WEBHOOK_TEST_ENV, WEBHOOK_ALLOW_PRIVATE: 'false' });
    owner = await registerUser(t.http);
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t.close();
  });

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://10.1.2.3/hook',
    'http://172.16.0.1/hook',
    'http://192.168.1.1/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://100.100.100.200/',
    'http://0.0.0.0/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://224.0.0.1/',
    'https://2130706433/',
  ])('refuses %s at creation', async (url) => {
    const res = await request(t.http)
      .post(`${API}/webhooks`)
      .set(bearer(owner))
      .send({ name: 'ssrf', url, events: ['*'] })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details.field).toBe('url');
  });

  it('re-checks at delivery time: a destination that turned private is refused and nothing is sent', async () => {
    // Created while public (the DNS answer later changes): simulated by pointing the stored URL at loopback.
    const hook = await createWebhook(t, owner, { url: 'https://93.184.215.14/hook', maxRetries: 0 });
    await t.dataSource.query(`UPDATE webhooks SET url = $2 WHERE id = $1`, [hook.id, receiver.url]);
    await request(t.http).post(`${API}/webhooks/${hook.id}/test`).set(bearer(owner)).send({}).expect(202);
    await waitFor(async () => (await deliveriesOf(t, owner, hook.id)).some((d) => d.status === 'failed'));
    const [delivery] = await deliveriesOf(t, owner, hook.id);
    expect(delivery.error).toMatch(/^refused: destination resolves to a non-public address \(127\.0\.0\.1\)/);
    expect(receiver.received).toHaveLength(0);
  });
});
