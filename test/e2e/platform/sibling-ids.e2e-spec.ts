import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

const API = '/api/v1';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

interface Seen {
  status: number;
  code: unknown;
  message: unknown;
  details: string;
  headers: string;
}

/** Headers that belong to the one request (its id, clock, budget) or follow the body (compared on their own). */
const PER_REQUEST = new Set(['x-request-id', 'date', 'ratelimit-remaining', 'ratelimit-reset', 'etag', 'content-length', 'connection', 'keep-alive']);

const uuid = (): string => randomUUID();
const slugOf = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/**
 * "A tenant is part of every identity" inside one organization, and for callers other than a stranger from another
 * one (that is `stranger-probes.e2e-spec.ts`): a sub-resource id belongs to its parent, so an id of document X named
 * under document Y — or a delivery of one webhook under another, a share link, binding or sync request under a
 * sibling connection or order book, a workspace member or reference under another workspace — answers exactly as an
 * id that exists nowhere, even to someone who may read both parents (docs/tenancy.md "404 or 403", docs/comments.md,
 * docs/views.md, docs/webhooks.md, docs/supply-chain.md). And an organization member outside a private workspace, or
 * a guest, learns nothing about that workspace's documents from their ids (docs/documents.md).
 */
describe('ids named under a sibling parent answer as unknown ids', () => {
  let t: TestApp;
  let owner: TestUser;
  let outsider: TestUser;
  let guest: TestUser;
  let stranger: TestUser;
  const A: Record<string, string> = {};

  async function must(res: request.Test, status: number): Promise<request.Response> {
    const answer = await res;
    if (answer.status !== status) {
      throw new Error(`setup ${res.method} ${res.url} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    }
    return answer;
  }

  function as(user: TestUser, method: Method, path: string): request.Test {
    return request(t.http)[method](path).set(bearer(user));
  }

  /** The answer with the ids the request named blanked out of `details` and headers (a "row x not found" echoes x). */
  async function seen(user: TestUser, method: Method, path: string, body?: Record<string, unknown>): Promise<Seen> {
    const res = body === undefined ? await as(user, method, path) : await as(user, method, path).send(body);
    const named = [...new Set(`${path} ${JSON.stringify(body ?? null)}`.split(/[^A-Za-z0-9_-]+/).filter((token) => token.length >= 8))].sort(
      (x, y) => y.length - x.length,
    );
    const blank = (text: string): string => named.reduce((acc, id) => acc.split(id).join('<id>'), text);
    const headers = Object.entries(res.headers)
      .filter(([name]) => !PER_REQUEST.has(name))
      .sort(([x], [y]) => x.localeCompare(y));
    return {
      status: res.status,
      code: res.body?.code,
      message: res.body?.message,
      details: blank(JSON.stringify(res.body?.details ?? null)),
      headers: blank(JSON.stringify(headers)),
    };
  }

  /** Every pair whose two answers differ, or that was not refused, so one run lists them all. */
  async function mismatches(user: TestUser, probes: Array<[Method, string, string, string, Record<string, unknown>?, Record<string, unknown>?]>) {
    const found: Array<{ name: string; real: Seen; fake: Seen }> = [];
    for (const [method, name, real, fake, realBody, fakeBody] of probes) {
      const r = await seen(user, method, real, realBody);
      const f = await seen(user, method, fake, fakeBody ?? realBody);
      if (JSON.stringify(r) !== JSON.stringify(f) || r.status < 400) {
        found.push({ name: `${method.toUpperCase()} ${name}`, real: r, fake: f });
      }
    }
    return found;
  }

  async function populate(doc: string, prefix: string): Promise<void> {
    A[`${prefix}row`] = slugOf('row');
    await must(as(owner, 'post', `${doc}/data`).send({ id: A[`${prefix}row`], values: { name: 'Widget' } }), 201);
    A[`${prefix}comment`] = (await must(as(owner, 'post', `${doc}/comments`).send({ target: { scope: 'document' }, content: 'hello' }), 201)).body.payload.id;
    A[`${prefix}view`] = slugOf('view');
    await must(as(owner, 'post', `${doc}/views`).send({ id: A[`${prefix}view`], name: 'All', type: 'table' }), 201);
    A[`${prefix}request`] = (await must(as(owner, 'post', `${doc}/requests`).send({ title: 'draft' }), 201)).body.payload.id;
    A[`${prefix}revision`] = (await must(as(owner, 'get', `${doc}/revisions`), 200)).body.payload.items[0].id;
    const gated = await must(as(owner, 'post', `${doc}/requests`).send({ title: 'gated' }), 201);
    A[`${prefix}approval`] = (
      await must(as(owner, 'post', `${doc}/approval/start`).send({ requestId: gated.body.payload.id, flowId: 'settings-sequential' }), 201)
    ).body.payload.id;
    const realtime = doc.replace(`${API}/doc`, '/realtime/doc');
    A[`${prefix}lock`] = (await must(as(owner, 'post', `${realtime}/lock`).send({ target: { type: 'row', rowId: A[`${prefix}row`] }, ttlSeconds: 600 }), 201)).body.payload.lockId;
  }

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    [owner, outsider, guest, stranger] = await Promise.all([registerUser(t.http), registerUser(t.http), registerUser(t.http), registerUser(t.http)]);
    const org = await must(as(owner, 'post', `${API}/organizations`).send({ name: 'Acme', slug: slugOf('acme'), type: 'team' }), 201);
    A.org = org.body.payload.id;
    A.ws = org.body.payload.defaultWorkspaceId;
    const sc = `${API}/organizations/${A.org}`;
    A.ws2 = (await must(as(owner, 'post', `${sc}/workspaces`).send({ name: 'Private', slug: slugOf('private') }), 201)).body.payload.id;
    await must(as(owner, 'post', `${sc}/members`).send({ userId: outsider.id, role: 'member' }), 201);
    await must(as(owner, 'post', `${sc}/members`).send({ userId: guest.id, role: 'guest' }), 201);
    A.wsMember = (await must(as(owner, 'get', `${sc}/workspaces/${A.ws}/members`), 200)).body.payload.items[0].id;
    A.ref = (await must(as(owner, 'post', `${sc}/workspaces/${A.ws2}/data-source-references`).send({ sourceWorkspaceId: A.ws, docType: 'ledger' }), 201)).body.payload.id;

    const create = async (workspaceId: string): Promise<[string, string]> => {
      const id = slugOf('doc');
      await must(
        as(owner, 'post', `${API}/doc/products`).send({
          id,
          organizationId: A.org,
          workspaceId,
          metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] },
          settings: { workflow: { approvers: [owner.id] } },
        }),
        201,
      );
      return [id, `${API}/doc/products/${id}`];
    };
    [A.x, A.docX] = await create(A.ws);
    [A.y, A.docY] = await create(A.ws);
    [A.z, A.docZ] = await create(A.ws2);
    await populate(A.docX, 'x_');
    await populate(A.docZ, 'z_');
    // An organization-level document every member writes rows of: the source of the outsider's relation probe.
    A.o = slugOf('org-doc');
    await must(
      as(owner, 'post', `${API}/doc/products`).send({ id: A.o, organizationId: A.org, workspaceId: null, metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] } }),
      201,
    );
    A.o_row = slugOf('row');
    await must(as(owner, 'post', `${API}/doc/products/${A.o}/data?organizationId=${A.org}`).send({ id: A.o_row, values: { name: 'shared' } }), 201);

    A.webhook = (await must(as(owner, 'post', `${API}/webhooks`).send({ name: 'one', url: 'http://127.0.0.1:9/one', events: ['*'] }), 201)).body.payload.id;
    A.webhook2 = (await must(as(owner, 'post', `${API}/webhooks`).send({ name: 'two', url: 'http://127.0.0.1:9/two', events: ['*'] }), 201)).body.payload.id;
    A.delivery = (await must(as(owner, 'post', `${API}/webhooks/${A.webhook}/test`).send({}), 202)).body.payload.deliveryId;

    const fields = [{ id: 'sku', name: 'sku', type: 'text' }];
    A.catalog = (await must(as(owner, 'post', `${sc}/catalogs`).send({ name: 'One', catalogType: 'product', sharingEnabled: true, fields }), 201)).body.payload.id;
    A.catalog2 = (await must(as(owner, 'post', `${sc}/catalogs`).send({ name: 'Two', catalogType: 'product', sharingEnabled: true, fields }), 201)).body.payload.id;
    A.catalogRow = slugOf('cat-row');
    await must(as(owner, 'post', `${sc}/catalogs/${A.catalog}/rows/batch-update`).send({ rows: [{ id: A.catalogRow, values: { sku: 'A-1' } }] }), 200);
    A.connection = (await must(as(owner, 'post', `${sc}/catalogs/${A.catalog}/connections`).send({ name: 'one', accessControl: 'public' }), 201)).body.payload.id;
    A.connection2 = (await must(as(owner, 'post', `${sc}/catalogs/${A.catalog2}/connections`).send({ name: 'two', accessControl: 'public' }), 201)).body.payload.id;
    A.shareLink = (await must(as(owner, 'post', `${sc}/connections/${A.connection}/share-link`).send({}), 201)).body.payload.id;
    const orderBook = { fields: [{ name: 'qty', type: 'number' }] };
    A.orderBook = (await must(as(owner, 'post', `${sc}/orderbooks`).send({ name: 'One', ...orderBook }), 201)).body.payload.id;
    A.orderBook2 = (await must(as(owner, 'post', `${sc}/orderbooks`).send({ name: 'Two', ...orderBook }), 201)).body.payload.id;
    A.binding = (
      await must(as(owner, 'post', `${sc}/orderbooks/${A.orderBook}/bindings`).send({ connectionId: A.connection, fieldMapping: { unmappedFields: 'create', rules: [] } }), 201)
    ).body.payload.id;
    A.syncRequest = (await must(as(owner, 'post', `${sc}/orderbooks/${A.orderBook}/requests`).send({ changes: [{ operation: 'create_row', values: {} }] }), 201)).body.payload.requestId;
    for (const [key, value] of Object.entries(A)) {
      if (typeof value !== 'string' || value === '') {
        throw new Error(`setup left ${key} empty`);
      }
    }
  }, 120_000);

  afterAll(async () => {
    await t.close();
  });

  it("answers ids of one document named under another of the same workspace like unknown ids, to the documents' owner", async () => {
    const Y = A.docY;
    const row = (): string => slugOf('row');
    const view = (): string => slugOf('view');
    const probes: Array<[Method, string, string, string, Record<string, unknown>?, Record<string, unknown>?]> = [];
    const sub = (method: Method, name: string, path: (id: string) => string, real: string, fake: () => string = uuid, body?: Record<string, unknown>): void => {
      probes.push([method, `/doc/{Y}${name}`, `${Y}${path(real)}`, `${Y}${path(fake())}`, body]);
    };
    sub('get', '/data/{X row}', (id) => `/data/${id}`, A.x_row, row);
    sub('put', '/data/{X row}', (id) => `/data/${id}`, A.x_row, row, { values: { name: 'mine' } });
    sub('delete', '/data/{X row}', (id) => `/data/${id}`, A.x_row, row);
    sub('get', '/rows/{X row}', (id) => `/rows/${id}`, A.x_row, row);
    sub('get', '/comments/{X comment}', (id) => `/comments/${id}`, A.x_comment);
    sub('put', '/comments/{X comment}', (id) => `/comments/${id}`, A.x_comment, uuid, { content: 'mine' });
    sub('delete', '/comments/{X comment}', (id) => `/comments/${id}`, A.x_comment);
    sub('post', '/comments/{X comment}/pin', (id) => `/comments/${id}/pin`, A.x_comment, uuid, {});
    sub('post', '/comments/{X comment}/reactions', (id) => `/comments/${id}/reactions?emoji=%F0%9F%91%8D`, A.x_comment, uuid, {});
    sub('get', '/views/{X view}', (id) => `/views/${id}`, A.x_view, view);
    sub('put', '/views/{X view}', (id) => `/views/${id}`, A.x_view, view, { name: 'Mine', type: 'table' });
    sub('post', '/views/{X view}/default', (id) => `/views/${id}/default`, A.x_view, view, {});
    sub('get', '/data?viewId={X view}', (id) => `/data?viewId=${id}`, A.x_view, view);
    sub('get', '/requests/{X request}', (id) => `/requests/${id}`, A.x_request);
    sub('post', '/requests/{X request}/close', (id) => `/requests/${id}/close`, A.x_request, uuid, {});
    sub('post', '/data?requestId={X request}', (id) => `/data?requestId=${id}`, A.x_request, uuid, { values: { name: 'x' } });
    sub('get', '/revisions/{X revision}', (id) => `/revisions/${id}`, A.x_revision);
    sub('post', '/revisions/{X revision}/revert', (id) => `/revisions/${id}/revert`, A.x_revision, uuid, {});
    sub('get', '/approval/{X approval}', (id) => `/approval/${id}`, A.x_approval);
    sub('post', '/approval/{X approval}/decision', (id) => `/approval/${id}/decision?result=approved`, A.x_approval, uuid, {});
    probes.push(['post', '/doc/{Y}/comments parentId = X comment', `${Y}/comments`, `${Y}/comments`, { target: { scope: 'document' }, content: 'r', parentId: A.x_comment }, { target: { scope: 'document' }, content: 'r', parentId: uuid() }]);
    probes.push(['post', '/doc/{Y}/approval/start requestId = X request', `${Y}/approval/start`, `${Y}/approval/start`, { requestId: A.x_request, flowId: 'settings-sequential' }, { requestId: uuid(), flowId: 'settings-sequential' }]);
    const realtime = `/realtime/doc/products/${A.y}`;
    probes.push(['delete', '/realtime/doc/{Y}/unlock/{X lock}', `${realtime}/unlock/${A.x_lock}`, `${realtime}/unlock/${uuid()}`]);

    expect(await mismatches(owner, probes)).toEqual([]);
    // X kept all of it.
    await must(as(owner, 'get', `${A.docX}/data/${A.x_row}`), 200);
    await must(as(owner, 'get', `${A.docX}/comments/${A.x_comment}`), 200);
    await must(as(owner, 'get', `${A.docX}/views/${A.x_view}`), 200);
    expect((await must(as(owner, 'get', `${A.docX}/requests/${A.x_request}`), 200)).body.payload.status).toBe('open');
  });

  it('answers ids of one webhook, connection, order book, catalog or workspace named under a sibling like unknown ids', async () => {
    const sc = `${API}/organizations/${A.org}`;
    const probes: Array<[Method, string, string, string, Record<string, unknown>?]> = [];
    const pair = (method: Method, name: string, path: (id: string) => string, real: string, fake: () => string = uuid, body?: Record<string, unknown>): void => {
      probes.push([method, name, path(real), path(fake()), body]);
    };
    pair('get', '/webhooks/{two}/deliveries/{delivery of one}', (id) => `${API}/webhooks/${A.webhook2}/deliveries/${id}`, A.delivery);
    pair('post', '/webhooks/{two}/deliveries/{delivery of one}/redeliver', (id) => `${API}/webhooks/${A.webhook2}/deliveries/${id}/redeliver`, A.delivery, uuid, {});
    pair('delete', '/connections/{two}/share-links/{link of one}', (id) => `${sc}/connections/${A.connection2}/share-links/${id}`, A.shareLink);
    pair('post', '/connections/{two}/bindings/{binding of one}/approve', (id) => `${sc}/connections/${A.connection2}/bindings/${id}/approve`, A.binding, uuid, {});
    pair('post', '/connections/{two}/bindings/{binding of one}/reject', (id) => `${sc}/connections/${A.connection2}/bindings/${id}/reject`, A.binding, uuid, {});
    pair('get', '/orderbooks/{two}/bindings/{binding of one}', (id) => `${sc}/orderbooks/${A.orderBook2}/bindings/${id}`, A.binding);
    pair('get', '/orderbooks/{two}/bindings/{binding of one}/propagation', (id) => `${sc}/orderbooks/${A.orderBook2}/bindings/${id}/propagation`, A.binding);
    pair('get', '/orderbooks/{two}/requests/{request of one}', (id) => `${sc}/orderbooks/${A.orderBook2}/requests/${id}`, A.syncRequest);
    pair('post', '/orderbooks/{two}/requests/{request of one}/accept', (id) => `${sc}/orderbooks/${A.orderBook2}/requests/${id}/accept`, A.syncRequest, uuid, {});
    pair('patch', '/catalogs/{two}/rows/{row of one}', (id) => `${sc}/catalogs/${A.catalog2}/rows/${id}`, A.catalogRow, () => slugOf('cat-row'), { values: { sku: 'x' } });
    pair('delete', '/catalogs/{two}/rows/{row of one}', (id) => `${sc}/catalogs/${A.catalog2}/rows/${id}`, A.catalogRow, () => slugOf('cat-row'));
    pair('get', '/workspaces/{private}/members/{member of default}', (id) => `${sc}/workspaces/${A.ws2}/members/${id}`, A.wsMember);
    pair('patch', '/workspaces/{private}/members/{member of default}', (id) => `${sc}/workspaces/${A.ws2}/members/${id}`, A.wsMember, uuid, { role: 'viewer' });
    pair('get', '/workspaces/{default}/data-source-references/{reference of private}', (id) => `${sc}/workspaces/${A.ws}/data-source-references/${id}`, A.ref);
    pair('delete', '/workspaces/{default}/data-source-references/{reference of private}', (id) => `${sc}/workspaces/${A.ws}/data-source-references/${id}`, A.ref);

    expect(await mismatches(owner, probes)).toEqual([]);
    await must(as(owner, 'get', `${sc}/orderbooks/${A.orderBook}/bindings/${A.binding}`), 200);
    await must(as(owner, 'get', `${API}/webhooks/${A.webhook}/deliveries/${A.delivery}`), 200);
    await must(as(owner, 'get', `${sc}/workspaces/${A.ws2}/data-source-references/${A.ref}`), 200);
  });

  it("tells an organization member outside a private workspace, and a guest, nothing about that workspace's documents", async () => {
    const fakeDoc = `${API}/doc/products/${slugOf('doc')}`;
    const realtime = (doc: string): string => `/realtime/doc/products/${doc}`;
    const fakeId = slugOf('doc');
    const probes: Array<[Method, string, string, string, Record<string, unknown>?]> = [];
    for (const [method, suffix, body] of [
      ['get', ''],
      ['get', '/data'],
      ['post', '/data', { values: { name: 'x' } }],
      ['get', '/metadata'],
      ['get', '/settings'],
      ['get', '/revisions'],
      ['get', '/requests'],
      ['post', '/requests', { title: 'mine' }],
      ['get', '/comments'],
      ['post', '/comments', { target: { scope: 'document' }, content: 'hi' }],
      ['get', '/views'],
    ] as Array<[Method, string, Record<string, unknown>?]>) {
      probes.push([method, `/doc/{private doc}${suffix}`, `${A.docZ}${suffix}`, `${fakeDoc}${suffix}`, body]);
    }
    probes.push(['get', '/doc/{private doc}/data/{row}', `${A.docZ}/data/${A.z_row}`, `${fakeDoc}/data/${slugOf('row')}`]);
    probes.push(['get', '/doc/{private doc}/comments/{comment}', `${A.docZ}/comments/${A.z_comment}`, `${fakeDoc}/comments/${uuid()}`]);
    probes.push(['get', '/doc/{private doc}/views/{view}', `${A.docZ}/views/${A.z_view}`, `${fakeDoc}/views/${slugOf('view')}`]);
    probes.push(['get', '/doc/{private doc}/requests/{request}', `${A.docZ}/requests/${A.z_request}`, `${fakeDoc}/requests/${uuid()}`]);
    probes.push(['get', '/doc/{private doc}/approval/{approval}', `${A.docZ}/approval/${A.z_approval}`, `${fakeDoc}/approval/${uuid()}`]);
    probes.push(['get', '/realtime/doc/{private doc}/users', `${realtime(A.z)}/users`, `${realtime(fakeId)}/users`]);
    probes.push(['get', '/realtime/doc/{private doc}/connect', `${realtime(A.z)}/connect`, `${realtime(fakeId)}/connect`]);
    probes.push(['delete', '/realtime/doc/{private doc}/unlock/{lock}', `${realtime(A.z)}/unlock/${A.z_lock}`, `${realtime(fakeId)}/unlock/${uuid()}`]);
    probes.push([
      'post',
      '/relations target = private row',
      `${API}/relations`,
      `${API}/relations`,
      { type: 'link', source: { docType: 'products', docId: A.o, rowId: A.o_row, organizationId: A.org }, target: { docType: 'products', docId: A.z, rowId: A.z_row } },
    ]);
    // The relation's target differs between the two calls; the source is the organization-level document (the
    // outsider writes its rows, the guest reads them).
    const [relation] = probes.splice(-1, 1);
    const fakeRelation = { ...(relation[4] as Record<string, unknown>), target: { docType: 'products', docId: fakeId, rowId: slugOf('row') } };

    for (const user of [outsider, guest]) {
      expect(await mismatches(user, probes)).toEqual([]);
      expect(await mismatches(user, [[relation[0], relation[1], relation[2], relation[3], relation[4], fakeRelation]])).toEqual([]);
    }
    // Nothing was written on the way.
    const rows = await must(as(owner, 'get', `${A.docZ}/data`), 200);
    expect(rows.body.payload.items.map((item: { id: string }) => item.id)).toEqual([A.z_row]);
  });

  it('refuses the connect token and the row cursor of one document on another exactly as on an unknown one', async () => {
    const connect = await must(as(owner, 'get', `/realtime/doc/products/${A.x}/connect`), 200);
    const token = connect.body.payload.token as string;
    const stream = async (docId: string): Promise<Seen> => {
      const res = await request(t.http).get(`/realtime/doc/products/${docId}/events/stream?token=${encodeURIComponent(token)}`).timeout({ response: 10_000 });
      return { status: res.status, code: res.body?.code, message: res.body?.message, details: JSON.stringify(res.body?.details ?? null), headers: '' };
    };
    const onSibling = await stream(A.y);
    expect(onSibling).toEqual(await stream(slugOf('doc')));
    expect(onSibling).toMatchObject({ status: 401, code: 'INVALID_TOKEN' });

    await must(as(owner, 'post', `${A.docX}/data`).send({ values: { name: 'second' } }), 201);
    const page = await must(as(owner, 'get', `${A.docX}/data?limit=1`), 200);
    const cursor = encodeURIComponent(page.body.payload.nextCursor as string);
    await must(as(owner, 'post', `${A.docY}/data`).send({ values: { name: 'y' } }), 201);
    const other = await as(owner, 'get', `${A.docY}/data?limit=1&cursor=${cursor}`);
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'cursor' } });
    // The stranger's document of the same id does not take it either, and the stranger cannot tell X from no document.
    await must(
      as(stranger, 'post', `${API}/doc/products`).send({ id: A.x, workspaceId: stranger.defaultWorkspaceId, metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] } }),
      201,
    );
    await must(as(stranger, 'post', `${API}/doc/products/${A.x}/data`).send({ values: { name: 'mine' } }), 201);
    const sameId = await as(stranger, 'get', `${API}/doc/products/${A.x}/data?limit=1&cursor=${cursor}`);
    expect(sameId.status).toBe(400);
    expect(sameId.body).toMatchObject({ code: 'VALIDATION_ERROR', details: { field: 'cursor' } });
    const real = await seen(stranger, 'get', `${API}/doc/products/${A.x}/data?limit=1&cursor=${cursor}&workspaceId=${A.ws}`);
    const fake = await seen(stranger, 'get', `${API}/doc/products/${slugOf('doc')}/data?limit=1&cursor=${cursor}&workspaceId=${uuid()}`);
    expect(real).toEqual(fake);
    expect(real.status).toBe(404);
  });
});
