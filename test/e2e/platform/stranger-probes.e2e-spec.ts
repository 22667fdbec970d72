import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

const API = '/api/v1';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What a stranger may compare between two answers: everything but the request's own identity. */
interface Seen {
  status: number;
  code: unknown;
  message: unknown;
  details: unknown;
}

/**
 * One probe: the same route aimed at the real resource of another tenant and at a well-formed id that exists
 * nowhere. The rule under test (docs/tenancy.md "404 or 403", docs/errors.md): a stranger cannot tell them apart.
 */
interface Probe {
  name: string;
  method: Method;
  real: string;
  fake: string;
  body?: (ids: 'real' | 'fake') => Record<string, unknown>;
  headers?: (ids: 'real' | 'fake') => Record<string, string>;
  /** For ids named inside the stranger's own resources: the answer must be the same, success included. */
  bothMaySucceed?: boolean;
}

const uuid = (): string => randomUUID();
const slugOf = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/**
 * Cross-cutting audit of "every answer to a stranger is the same whether or not a thing exists" and "a tenant is
 * part of every identity": user B (fully signed in, own organization, no membership in A's) aims every id-bearing
 * route at A's resources and at ids that do not exist, and gets the same answer for both.
 */
describe('a stranger learns nothing from ids of another tenant', () => {
  let t: TestApp;
  let a: TestUser;
  let b: TestUser;
  const A: Record<string, string> = {};
  const B: Record<string, string> = {};

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

  async function seen(method: Method, path: string, body?: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Seen> {
    // A stream opened by mistake must fail the probe, not hang the suite.
    const req = as(b, method, path).set(headers).timeout({ response: 10_000 });
    try {
      const res = body === undefined ? await req : await req.send(body);
      return { status: res.status, code: res.body?.code, message: res.body?.message, details: res.body?.details };
    } catch (error) {
      return { status: 0, code: 'NO_ANSWER', message: String(error), details: null };
    }
  }

  /** `details` with the ids the request itself named blanked out (a "row x not found" may echo the id it was given). */
  function detailsOf(answer: Seen, ...named: unknown[]): string {
    const ids = new Set(named.flatMap((part) => JSON.stringify(part ?? '').split(/[^A-Za-z0-9_-]+/)).filter((token) => token.length >= 8));
    let text = JSON.stringify(answer.details ?? null);
    for (const id of [...ids].sort((x, y) => y.length - x.length)) {
      text = text.split(id).join('<id>');
    }
    return text;
  }

  /**
   * Runs every probe and returns the ones whose two answers differ (status, code, message, or details beyond the
   * echoed id), or that are not refused, so one run lists them all.
   */
  async function mismatches(probes: Probe[]): Promise<Array<{ name: string; real: Seen; fake: Seen }>> {
    const found: Array<{ name: string; real: Seen; fake: Seen }> = [];
    for (const probe of probes) {
      const realBody = probe.body?.('real');
      const fakeBody = probe.body?.('fake');
      const real = await seen(probe.method, probe.real, realBody, probe.headers?.('real'));
      const fake = await seen(probe.method, probe.fake, fakeBody, probe.headers?.('fake'));
      const same =
        real.status === fake.status &&
        real.code === fake.code &&
        JSON.stringify(real.message) === JSON.stringify(fake.message) &&
        detailsOf(real, probe.real, realBody, probe.headers?.('real')) === detailsOf(fake, probe.fake, fakeBody, probe.headers?.('fake'));
      const refused = probe.bothMaySucceed === true || (real.status >= 400 && fake.status >= 400);
      if (!same || !refused) {
        found.push({ name: `${probe.method.toUpperCase()} ${probe.name}`, real, fake });
      }
    }
    return found;
  }

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    [a, b] = await Promise.all([registerUser(t.http), registerUser(t.http)]);
    const applicant = await registerUser(t.http);

    // A: a team organization with its default workspace and a second one.
    const org = await must(as(a, 'post', `${API}/organizations`).send({ name: 'Acme', slug: slugOf('acme'), type: 'team' }), 201);
    A.org = org.body.payload.id;
    A.orgSlug = org.body.payload.slug;
    A.ws = org.body.payload.defaultWorkspaceId;
    const ws2 = await must(as(a, 'post', `${API}/organizations/${A.org}/workspaces`).send({ name: 'Second', slug: slugOf('second') }), 201);
    A.ws2 = ws2.body.payload.id;
    A.ws2Slug = ws2.body.payload.slug;
    const members = await must(as(a, 'get', `${API}/organizations/${A.org}/members`), 200);
    A.member = members.body.payload.items[0].id;
    const wsMembers = await must(as(a, 'get', `${API}/organizations/${A.org}/workspaces/${A.ws}/members`), 200);
    A.wsMember = wsMembers.body.payload.items[0].id;
    const invitation = await must(as(a, 'post', `${API}/organizations/${A.org}/invitations`).send({ email: `inv-${uuid().slice(0, 8)}@example.test` }), 201);
    A.invitation = invitation.body.payload.id;
    const join = await must(as(applicant, 'post', `${API}/organizations/${A.org}/join-requests`).send({ message: 'let me in' }), 201);
    A.joinRequest = join.body.payload.id;
    const ref = await must(
      as(a, 'post', `${API}/organizations/${A.org}/workspaces/${A.ws2}/data-source-references`).send({ sourceWorkspaceId: A.ws, docType: 'ledger' }),
      201,
    );
    A.ref = ref.body.payload.id;

    // A's document with a row (merged, so a revision), a comment, a view, an open request, a lock.
    A.docType = 'products';
    A.docId = slugOf('plan');
    await must(
      as(a, 'post', `${API}/doc/${A.docType}`).send({
        id: A.docId,
        organizationId: A.org,
        workspaceId: A.ws,
        title: 'Plan',
        metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] },
        settings: { workflow: { approvers: [a.id] } },
      }),
      201,
    );
    A.doc = `${API}/doc/${A.docType}/${A.docId}`;
    // An organization-level document, and a document in a public workspace (readable by every member of A's
    // organization, still by no stranger).
    A.orgDocId = slugOf('org-doc');
    await must(
      as(a, 'post', `${API}/doc/${A.docType}`).send({ id: A.orgDocId, organizationId: A.org, workspaceId: null, metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] } }),
      201,
    );
    const ws3 = await must(as(a, 'post', `${API}/organizations/${A.org}/workspaces`).send({ name: 'Open', slug: slugOf('open'), visibility: 'public' }), 201);
    A.publicWs = ws3.body.payload.id;
    A.publicDocId = slugOf('pub-doc');
    await must(
      as(a, 'post', `${API}/doc/${A.docType}`).send({ id: A.publicDocId, organizationId: A.org, workspaceId: A.publicWs, metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] } }),
      201,
    );
    A.row = slugOf('row');
    await must(as(a, 'post', `${A.doc}/data`).send({ id: A.row, values: { name: 'Widget' } }), 201);
    const comment = await must(as(a, 'post', `${A.doc}/comments`).send({ target: { scope: 'document' }, content: 'hello' }), 201);
    A.comment = comment.body.payload.id;
    await must(as(a, 'post', `${A.doc}/comments/${A.comment}/reactions`).query({ emoji: '👍' }).send({}), 200);
    A.view = slugOf('view');
    await must(as(a, 'post', `${A.doc}/views`).send({ id: A.view, name: 'All', type: 'table' }), 201);
    const opened = await must(as(a, 'post', `${A.doc}/requests`).send({ title: 'draft' }), 201);
    A.request = opened.body.payload.id;
    const revisions = await must(as(a, 'get', `${A.doc}/revisions`), 200);
    A.revision = revisions.body.payload.items[0].id;
    const approvalRequest = await must(as(a, 'post', `${A.doc}/requests`).send({ title: 'needs approval' }), 201);
    const approval = await must(as(a, 'post', `${A.doc}/approval/start`).send({ requestId: approvalRequest.body.payload.id, flowId: 'settings-sequential' }), 201);
    A.approval = approval.body.payload.id;
    const lock = await must(as(a, 'post', `/realtime/doc/${A.docType}/${A.docId}/lock`).send({ target: { type: 'row', rowId: A.row }, ttlSeconds: 600 }), 201);
    A.lock = lock.body.payload.lockId;

    // A's webhook (with a delivery), API key and OAuth client.
    const hook = await must(as(a, 'post', `${API}/webhooks`).send({ name: 'hook', url: 'http://127.0.0.1:9/hook', events: ['*'] }), 201);
    A.webhook = hook.body.payload.id;
    const orgHook = await must(as(a, 'post', `${API}/webhooks`).send({ name: 'org hook', url: 'http://127.0.0.1:9/org', events: ['*'], organizationId: A.org }), 201);
    A.orgWebhook = orgHook.body.payload.id;
    const delivery = await must(as(a, 'post', `${API}/webhooks/${A.webhook}/test`).send({}), 202);
    A.delivery = delivery.body.payload.deliveryId;
    const key = await must(as(a, 'post', `${API}/api-keys`).send({ name: 'k', scopes: ['doc:read'] }), 201);
    A.apiKey = key.body.payload.id;
    const client = await must(as(a, 'post', `${API}/oauth/clients`).send({ name: 'Dash', redirectUris: ['https://dash.example.com/cb'], allowedScopes: ['doc:read'] }), 201);
    A.oauthClient = client.body.payload.clientId;

    // A's supply chain: two catalogs, a connection with a share link, an order book bound to it, a connector,
    // a sync request.
    const sc = `${API}/organizations/${A.org}`;
    const catalog = await must(
      as(a, 'post', `${sc}/catalogs`).send({ name: 'Master', catalogType: 'product', sharingEnabled: true, fields: [{ id: 'sku', name: 'sku', type: 'text' }] }),
      201,
    );
    A.catalog = catalog.body.payload.id;
    const clone = await must(
      as(a, 'post', `${sc}/catalogs`).send({ name: 'Clone', catalogType: 'product', sharingEnabled: true, fields: [{ id: 'sku', name: 'sku', type: 'text' }] }),
      201,
    );
    A.catalog2 = clone.body.payload.id;
    A.catalogRow = slugOf('cat-row');
    await must(as(a, 'post', `${sc}/catalogs/${A.catalog}/rows/batch-update`).send({ rows: [{ id: A.catalogRow, values: { sku: 'A-1' } }] }), 200);
    const connection = await must(
      as(a, 'post', `${sc}/catalogs/${A.catalog}/connections`).send({ name: 'feed', accessControl: { mode: 'whitelist', allowedOrganizations: [A.org] } }),
      201,
    );
    A.connection = connection.body.payload.id;
    const link = await must(as(a, 'post', `${sc}/connections/${A.connection}/share-link`).send({}), 201);
    A.shareLink = link.body.payload.id;
    const orderBook = await must(as(a, 'post', `${sc}/orderbooks`).send({ name: 'Orders', fields: [{ name: 'qty', type: 'number' }] }), 201);
    A.orderBook = orderBook.body.payload.id;
    const binding = await must(
      as(a, 'post', `${sc}/orderbooks/${A.orderBook}/bindings`).send({ connectionId: A.connection, targetOrderBookId: A.orderBook, fieldMapping: { unmappedFields: 'create', rules: [] } }),
      201,
    );
    A.binding = binding.body.payload.id;
    const connector = await must(
      as(a, 'post', `${sc}/connectors`).send({
        name: 'clone',
        connectorType: 'catalog_clone',
        sourceDocId: A.catalog,
        targetDocId: A.catalog2,
        catalogCloneConfig: { fieldMapping: { unmappedFields: 'create', rules: [] }, syncMode: 'realtime' },
      }),
      201,
    );
    A.connector = connector.body.payload.id;
    const syncRequest = await must(as(a, 'post', `${sc}/orderbooks/${A.orderBook}/requests`).send({ changes: [{ operation: 'create_row', values: {} }] }), 201);
    A.syncRequest = syncRequest.body.payload.requestId;

    // B: its own organization (the personal one), a document of its own and an order book.
    B.org = b.defaultOrganizationId;
    B.ws = b.defaultWorkspaceId;
    B.docId = slugOf('own');
    await must(
      as(b, 'post', `${API}/doc/${A.docType}`).send({
        id: B.docId,
        organizationId: B.org,
        workspaceId: B.ws,
        metadata: {
          fields: [
            { id: 'name', name: 'Name', type: 'text' },
            { id: 'link', name: 'Link', type: 'relation' },
          ],
        },
        settings: { workflow: { approvers: [b.id] } },
      }),
      201,
    );
    B.doc = `${API}/doc/${A.docType}/${B.docId}`;
    B.row = slugOf('b-row');
    await must(as(b, 'post', `${B.doc}/data`).send({ id: B.row, values: { name: 'Mine' } }), 201);
    const bRevisions = await must(as(b, 'get', `${B.doc}/revisions`), 200);
    B.revision = bRevisions.body.payload.items[0].id;
    const bRequest = await must(as(b, 'post', `${B.doc}/requests`).send({ title: 'mine' }), 201);
    B.request = bRequest.body.payload.id;
    const bHook = await must(as(b, 'post', `${API}/webhooks`).send({ name: 'mine', url: 'http://127.0.0.1:9/mine', events: ['*'] }), 201);
    B.webhook = bHook.body.payload.id;
    const bCatalog = await must(
      as(b, 'post', `${API}/organizations/${B.org}/catalogs`).send({ name: 'Mine', catalogType: 'product', sharingEnabled: true, fields: [{ id: 'sku', name: 'sku', type: 'text' }] }),
      201,
    );
    B.catalog = bCatalog.body.payload.id;
    const bOrderBook = await must(as(b, 'post', `${API}/organizations/${B.org}/orderbooks`).send({ name: 'Mine', fields: [{ name: 'qty', type: 'number' }] }), 201);
    B.orderBook = bOrderBook.body.payload.id;
    const bConnection = await must(as(b, 'post', `${API}/organizations/${B.org}/catalogs/${B.catalog}/connections`).send({ name: 'mine', accessControl: 'public' }), 201);
    B.connection = bConnection.body.payload.id;
    // Every id the probes use was really created (an id read from the wrong key would make a probe vacuous).
    for (const [key, value] of Object.entries({ ...A, ...Object.fromEntries(Object.entries(B).map(([k, v]) => [`B.${k}`, v])) })) {
      if (typeof value !== 'string' || value === '') {
        throw new Error(`setup left ${key} empty`);
      }
    }
  }, 120_000);

  afterAll(async () => {
    await t.close();
  });

  it('answers tenancy routes of another organization like those of one that does not exist', async () => {
    const org = (ids: 'real' | 'fake', rest = ''): string => `${API}/organizations/${ids === 'real' ? A.org : FAKE.org}${rest}`;
    const FAKE = { org: uuid(), ws: uuid(), ws2: uuid(), id: uuid() };
    const probes: Probe[] = [];
    const add = (method: Method, name: string, rest: (ids: 'real' | 'fake') => string, body?: Probe['body']): void => {
      probes.push({ name, method, real: org('real', rest('real')), fake: org('fake', rest('fake')), body });
    };
    const pick = (ids: 'real' | 'fake', real: string): string => (ids === 'real' ? real : uuid());
    add('get', '/organizations/{orgId}', () => '');
    add('patch', '/organizations/{orgId}', () => '', () => ({ description: 'mine now' }));
    add('delete', '/organizations/{orgId}', () => '');
    add('post', '/organizations/{orgId}/leave', () => '/leave');
    add('post', '/organizations/{orgId}/transfer-ownership', () => '/transfer-ownership', () => ({ userId: b.id }));
    add('get', '/organizations/{orgId}/members', () => '/members');
    add('post', '/organizations/{orgId}/members', () => '/members', () => ({ userId: b.id, role: 'admin' }));
    add('get', '/organizations/{orgId}/members/{memberId}', (ids) => `/members/${pick(ids, A.member)}`);
    add('patch', '/organizations/{orgId}/members/{memberId}', (ids) => `/members/${pick(ids, A.member)}`, () => ({ role: 'admin' }));
    add('delete', '/organizations/{orgId}/members/{memberId}', (ids) => `/members/${pick(ids, A.member)}`);
    add('get', '/organizations/{orgId}/invitations', () => '/invitations');
    add('post', '/organizations/{orgId}/invitations', () => '/invitations', () => ({ email: b.email }));
    add('get', '/organizations/{orgId}/invitations/{id}', (ids) => `/invitations/${pick(ids, A.invitation)}`);
    add('delete', '/organizations/{orgId}/invitations/{id}', (ids) => `/invitations/${pick(ids, A.invitation)}`);
    add('get', '/organizations/{orgId}/join-requests', () => '/join-requests');
    add('get', '/organizations/{orgId}/join-requests/{id}', (ids) => `/join-requests/${pick(ids, A.joinRequest)}`);
    add('delete', '/organizations/{orgId}/join-requests/{id}', (ids) => `/join-requests/${pick(ids, A.joinRequest)}`);
    add('post', '/organizations/{orgId}/join-requests/{id}/approve', (ids) => `/join-requests/${pick(ids, A.joinRequest)}/approve`, () => ({}));
    add('post', '/organizations/{orgId}/join-requests/{id}/reject', (ids) => `/join-requests/${pick(ids, A.joinRequest)}/reject`, () => ({ reviewNote: 'no' }));
    add('get', '/organizations/{orgId}/workspaces', () => '/workspaces');
    add('post', '/organizations/{orgId}/workspaces', () => '/workspaces', () => ({ name: 'Mine', slug: slugOf('mine') }));
    add('get', '/organizations/{orgId}/currency-rates', () => '/currency-rates');
    add('put', '/organizations/{orgId}/currency-rates', () => '/currency-rates', () => ({ rates: [] }));
    const ws = (ids: 'real' | 'fake'): string => `/workspaces/${pick(ids, A.ws)}`;
    add('get', '/workspaces/{wsId}', (ids) => ws(ids));
    add('patch', '/workspaces/{wsId}', (ids) => ws(ids), () => ({ name: 'mine now' }));
    add('delete', '/workspaces/{wsId}', (ids) => ws(ids));
    add('post', '/workspaces/{wsId}/archive', (ids) => `${ws(ids)}/archive`);
    add('post', '/workspaces/{wsId}/restore', (ids) => `${ws(ids)}/restore`);
    add('get', '/workspaces/{wsId}/members', (ids) => `${ws(ids)}/members`);
    add('post', '/workspaces/{wsId}/members', (ids) => `${ws(ids)}/members`, () => ({ userId: b.id }));
    add('get', '/workspaces/{wsId}/members/{memberId}', (ids) => `${ws(ids)}/members/${pick(ids, A.wsMember)}`);
    add('patch', '/workspaces/{wsId}/members/{memberId}', (ids) => `${ws(ids)}/members/${pick(ids, A.wsMember)}`, () => ({ role: 'viewer' }));
    add('delete', '/workspaces/{wsId}/members/{memberId}', (ids) => `${ws(ids)}/members/${pick(ids, A.wsMember)}`);
    const refs = (ids: 'real' | 'fake'): string => `/workspaces/${pick(ids, A.ws2)}/data-source-references`;
    add('get', '/workspaces/{wsId}/data-source-references', (ids) => refs(ids));
    add('post', '/workspaces/{wsId}/data-source-references', (ids) => refs(ids), () => ({ sourceWorkspaceId: B.ws, docType: 'other' }));
    add('get', '/data-source-references/{refId}', (ids) => `${refs(ids)}/${pick(ids, A.ref)}`);
    add('patch', '/data-source-references/{refId}', (ids) => `${refs(ids)}/${pick(ids, A.ref)}`, () => ({ status: 'inactive' }));
    add('delete', '/data-source-references/{refId}', (ids) => `${refs(ids)}/${pick(ids, A.ref)}`);

    // B's own organization and workspace in the path, A's ids below it.
    const own = `${API}/organizations/${B.org}`;
    const inOwn = (method: Method, name: string, rest: (id: string) => string, real: string, body?: Probe['body']): void => {
      probes.push({ name: `(own org) ${name}`, method, real: `${own}${rest(real)}`, fake: `${own}${rest(uuid())}`, body });
    };
    inOwn('get', '/members/{A member}', (id) => `/members/${id}`, A.member);
    inOwn('patch', '/members/{A member}', (id) => `/members/${id}`, A.member, () => ({ role: 'admin' }));
    inOwn('delete', '/members/{A member}', (id) => `/members/${id}`, A.member);
    inOwn('get', '/invitations/{A invitation}', (id) => `/invitations/${id}`, A.invitation);
    inOwn('delete', '/invitations/{A invitation}', (id) => `/invitations/${id}`, A.invitation);
    inOwn('get', '/join-requests/{A join request}', (id) => `/join-requests/${id}`, A.joinRequest);
    inOwn('delete', '/join-requests/{A join request}', (id) => `/join-requests/${id}`, A.joinRequest);
    inOwn('post', '/join-requests/{A join request}/approve', (id) => `/join-requests/${id}/approve`, A.joinRequest, () => ({}));
    inOwn('post', '/join-requests/{A join request}/reject', (id) => `/join-requests/${id}/reject`, A.joinRequest, () => ({ reviewNote: 'no' }));
    inOwn('get', '/workspaces/{A ws}', (id) => `/workspaces/${id}`, A.ws);
    inOwn('patch', '/workspaces/{A ws}', (id) => `/workspaces/${id}`, A.ws, () => ({ name: 'x' }));
    inOwn('delete', '/workspaces/{A ws}', (id) => `/workspaces/${id}`, A.ws);
    inOwn('post', '/workspaces/{A ws}/archive', (id) => `/workspaces/${id}/archive`, A.ws);
    inOwn('get', '/workspaces/{A ws}/members', (id) => `/workspaces/${id}/members`, A.ws);
    inOwn('get', '/workspaces/{own ws}/members/{A ws member}', (id) => `/workspaces/${B.ws}/members/${id}`, A.wsMember);
    inOwn('patch', '/workspaces/{own ws}/members/{A ws member}', (id) => `/workspaces/${B.ws}/members/${id}`, A.wsMember, () => ({ role: 'viewer' }));
    inOwn('delete', '/workspaces/{own ws}/members/{A ws member}', (id) => `/workspaces/${B.ws}/members/${id}`, A.wsMember);
    inOwn('get', '/workspaces/{own ws}/data-source-references/{A ref}', (id) => `/workspaces/${B.ws}/data-source-references/${id}`, A.ref);
    inOwn('patch', '/workspaces/{own ws}/data-source-references/{A ref}', (id) => `/workspaces/${B.ws}/data-source-references/${id}`, A.ref, () => ({ status: 'inactive' }));
    inOwn('delete', '/workspaces/{own ws}/data-source-references/{A ref}', (id) => `/workspaces/${B.ws}/data-source-references/${id}`, A.ref);
    // Ids in bodies: a reference to A's workspace, adding A as a workspace member.
    probes.push({
      name: '(own ws) data-source-references body sourceWorkspaceId = A ws',
      method: 'post',
      real: `${own}/workspaces/${B.ws}/data-source-references`,
      fake: `${own}/workspaces/${B.ws}/data-source-references`,
      body: (ids) => ({ sourceWorkspaceId: ids === 'real' ? A.ws : uuid(), docType: 'ledger' }),
    });
    probes.push({
      name: 'PATCH /users/me defaultWorkspaceId = A ws',
      method: 'patch',
      real: `${API}/users/me`,
      fake: `${API}/users/me`,
      body: (ids) => ({ defaultWorkspaceId: ids === 'real' ? A.ws : uuid() }),
    });
    probes.push({
      name: 'PATCH /users/me defaultOrganizationId = A org',
      method: 'patch',
      real: `${API}/users/me`,
      fake: `${API}/users/me`,
      body: (ids) => ({ defaultOrganizationId: ids === 'real' ? A.org : uuid() }),
    });

    // Ids in upper case are the same ids (docs/tenancy.md, "Ids in upper case").
    probes.push({ name: '/organizations/{A org upper}', method: 'get', real: `${API}/organizations/${A.org.toUpperCase()}`, fake: `${API}/organizations/${uuid().toUpperCase()}` });
    probes.push({
      name: '/organizations/{A org upper}/workspaces/{A ws upper}',
      method: 'get',
      real: `${API}/organizations/${A.org.toUpperCase()}/workspaces/${A.ws.toUpperCase()}`,
      fake: `${API}/organizations/${uuid().toUpperCase()}/workspaces/${uuid().toUpperCase()}`,
    });
    probes.push({ name: '/webhooks/{A webhook upper}', method: 'get', real: `${API}/webhooks/${A.webhook.toUpperCase()}`, fake: `${API}/webhooks/${uuid().toUpperCase()}` });

    expect(await mismatches(probes)).toEqual([]);

    // Join requests are the one thing a non-member may create (spec 4.2); once A's organization takes none, asking
    // answers exactly like an organization that does not exist.
    await must(as(a, 'patch', `${API}/organizations/${A.org}`).send({ settings: { allowJoinRequests: false } }), 200);
    expect(
      await mismatches([
        { name: '/organizations/{closed org}/join-requests', method: 'post', real: org('real', '/join-requests'), fake: org('fake', '/join-requests'), body: () => ({ message: 'hi' }) },
      ]),
    ).toEqual([]);
    await must(as(a, 'patch', `${API}/organizations/${A.org}`).send({ settings: { allowJoinRequests: true } }), 200);
    // Nothing of A's changed on the way.
    const still = await must(as(a, 'get', `${API}/organizations/${A.org}`), 200);
    expect(still.body.payload).toMatchObject({ id: A.org, role: 'owner' });
    await must(as(a, 'get', `${API}/organizations/${A.org}/workspaces/${A.ws2}/data-source-references/${A.ref}`), 200);
  });

  it('answers document routes of another tenant like those of a document that does not exist', async () => {
    const fakeDoc = `${API}/doc/${A.docType}/${slugOf('plan')}`;
    const probes: Probe[] = [];
    // Suffix under the document, with A's ids (real) or unknown ones (fake).
    const subs: Array<[Method, string, (ids: 'real' | 'fake') => string, Probe['body']?]> = [];
    const pick = (ids: 'real' | 'fake', real: string, fake: () => string = uuid): string => (ids === 'real' ? real : fake());
    const row = (ids: 'real' | 'fake'): string => pick(ids, A.row, () => slugOf('row'));
    const view = (ids: 'real' | 'fake'): string => pick(ids, A.view, () => slugOf('view'));
    const sub = (method: Method, name: string, rest: (ids: 'real' | 'fake') => string, body?: Probe['body']): void => {
      subs.push([method, name, rest, body]);
    };
    sub('get', '', () => '');
    sub('delete', '', () => '');
    sub('get', '/properties', () => '/properties');
    sub('put', '/properties', () => '/properties', () => ({ properties: [] }));
    sub('patch', '/properties', () => '/properties', () => ({ properties: [] }));
    sub('delete', '/properties', () => '/properties');
    sub('get', '/properties/history', () => '/properties/history');
    sub('get', '/metadata', () => '/metadata');
    sub('put', '/metadata', () => '/metadata', () => ({ fields: [{ id: 'name', name: 'Name', type: 'text' }] }));
    sub('get', '/settings', () => '/settings');
    sub('put', '/settings', () => '/settings', () => ({ notifications: { onMerge: true } }));
    sub('get', '/relations', () => '/relations');
    sub('get', '/data', () => '/data');
    sub('post', '/data', () => '/data', () => ({ id: slugOf('r'), values: { name: 'x' } }));
    sub('post', '/data/query', () => '/data/query', () => ({}));
    sub('get', '/data/{rowId}', (ids) => `/data/${row(ids)}`);
    sub('put', '/data/{rowId}', (ids) => `/data/${row(ids)}`, () => ({ values: { name: 'y' } }));
    sub('delete', '/data/{rowId}', (ids) => `/data/${row(ids)}`);
    sub('get', '/rows/{rowId}', (ids) => `/rows/${row(ids)}`);
    sub('post', '/rows/batch-update', () => '/rows/batch-update', () => ({ updates: [] }));
    sub('get', '/comments', () => '/comments');
    sub('post', '/comments', () => '/comments', () => ({ target: { scope: 'document' }, content: 'hi' }));
    sub('get', '/comments/{id}', (ids) => `/comments/${pick(ids, A.comment)}`);
    sub('put', '/comments/{id}', (ids) => `/comments/${pick(ids, A.comment)}`, () => ({ content: 'mine' }));
    sub('delete', '/comments/{id}', (ids) => `/comments/${pick(ids, A.comment)}`);
    for (const action of ['pin', 'unpin', 'resolve', 'unresolve']) {
      sub('post', `/comments/{id}/${action}`, (ids) => `/comments/${pick(ids, A.comment)}/${action}`, () => ({}));
    }
    sub('post', '/comments/{id}/reactions', (ids) => `/comments/${pick(ids, A.comment)}/reactions?emoji=%F0%9F%91%8D`, () => ({}));
    sub('delete', '/comments/{id}/reactions/{emoji}', (ids) => `/comments/${pick(ids, A.comment)}/reactions/%F0%9F%91%8D`);
    sub('get', '/views', () => '/views');
    sub('post', '/views', () => '/views', () => ({ name: 'Mine', type: 'table' }));
    sub('get', '/views/{id}', (ids) => `/views/${view(ids)}`);
    sub('put', '/views/{id}', (ids) => `/views/${view(ids)}`, () => ({ name: 'Mine', type: 'table' }));
    sub('delete', '/views/{id}', (ids) => `/views/${view(ids)}`);
    sub('post', '/views/{id}/default', (ids) => `/views/${view(ids)}/default`, () => ({}));
    sub('get', '/views/{id}/series', (ids) => `/views/${view(ids)}/series`);
    sub('get', '/requests', () => '/requests');
    sub('post', '/requests', () => '/requests', () => ({ title: 'mine' }));
    sub('get', '/requests/{id}', (ids) => `/requests/${pick(ids, A.request)}`);
    sub('get', '/requests/{id}/diff', (ids) => `/requests/${pick(ids, A.request)}/diff`);
    sub('get', '/requests/{id}/conflicts', (ids) => `/requests/${pick(ids, A.request)}/conflicts`);
    for (const action of ['merge', 'close', 'reopen']) {
      sub('post', `/requests/{id}/${action}`, (ids) => `/requests/${pick(ids, A.request)}/${action}`, () => ({}));
    }
    sub('post', '/requests/{id}/submit-approval', (ids) => `/requests/${pick(ids, A.request)}/submit-approval`, () => ({ approvers: [b.id] }));
    sub('get', '/revisions', () => '/revisions');
    sub('get', '/revisions/history', () => '/revisions/history');
    for (const suffix of ['', '/diff', '/operations', '/request', '/export']) {
      sub('get', `/revisions/{id}${suffix}`, (ids) => `/revisions/${pick(ids, A.revision)}${suffix}`);
    }
    sub('post', '/revisions/{id}/revert', (ids) => `/revisions/${pick(ids, A.revision)}/revert`, () => ({}));
    sub('get', '/approval', () => '/approval');
    sub('post', '/approval/start', () => '/approval/start', (ids) => ({ requestId: pick(ids, A.request), flowId: 'settings-sequential' }));
    sub('get', '/approval/{id}', (ids) => `/approval/${pick(ids, A.approval)}`);
    sub('post', '/approval/{id}/decision', (ids) => `/approval/${pick(ids, A.approval)}/decision?result=approved`, () => ({}));
    sub('post', '/approvals/{id}/approve', (ids) => `/approvals/${pick(ids, A.approval)}/approve`, () => ({ decision: 'approved' }));

    for (const [method, name, rest, body] of subs) {
      // A's document and ids vs. a document and ids that exist nowhere.
      probes.push({ name: `/doc/{A doc}${name}`, method, real: `${A.doc}${rest('real')}`, fake: `${fakeDoc}${rest('fake')}`, body });
      // The same, naming A's workspace as the context (query), vs. a workspace that does not exist.
      const q = (ws: string, path: string): string => `${path}${path.includes('?') ? '&' : '?'}workspaceId=${ws}`;
      probes.push({ name: `/doc/{A doc}${name}?workspaceId={A ws}`, method, real: q(A.ws, `${A.doc}${rest('real')}`), fake: q(uuid(), `${fakeDoc}${rest('fake')}`), body });
      // B's own document with A's sub-resource ids.
      if (name.includes('{')) {
        probes.push({ name: `/doc/{own doc}${name}`, method, real: `${B.doc}${rest('real')}`, fake: `${B.doc}${rest('fake')}`, body });
      }
    }
    // A's organization-level document in its organization's context, and the document of A's public workspace.
    for (const suffix of ['', '/data', '/metadata', '/comments', '/views', '/settings', '/revisions']) {
      probes.push({
        name: `/doc/{A org doc}${suffix}?organizationId={A org}`,
        method: 'get',
        real: `${API}/doc/${A.docType}/${A.orgDocId}${suffix}?organizationId=${A.org}`,
        fake: `${API}/doc/${A.docType}/${slugOf('org-doc')}${suffix}?organizationId=${uuid()}`,
      });
      probes.push({
        name: `X-Organization-Id: {A org} /doc/{A org doc}${suffix}`,
        method: 'get',
        real: `${API}/doc/${A.docType}/${A.orgDocId}${suffix}`,
        fake: `${API}/doc/${A.docType}/${slugOf('org-doc')}${suffix}`,
        headers: (ids) => ({ 'X-Organization-Id': ids === 'real' ? A.org : uuid() }),
      });
      probes.push({
        name: `/doc/{A public doc}${suffix}?workspaceId={A public ws}`,
        method: 'get',
        real: `${API}/doc/${A.docType}/${A.publicDocId}${suffix}?workspaceId=${A.publicWs}`,
        fake: `${API}/doc/${A.docType}/${slugOf('pub-doc')}${suffix}?workspaceId=${uuid()}`,
      });
      probes.push({
        name: `/doc/{A public doc}${suffix} (no context)`,
        method: 'get',
        real: `${API}/doc/${A.docType}/${A.publicDocId}${suffix}`,
        fake: `${API}/doc/${A.docType}/${slugOf('pub-doc')}${suffix}`,
      });
    }
    probes.push({
      name: '/doc/{A org doc}?workspaceId={own ws}&organizationId={A org}',
      method: 'get',
      real: `${API}/doc/${A.docType}/${A.orgDocId}?workspaceId=${B.ws}&organizationId=${A.org}`,
      fake: `${API}/doc/${A.docType}/${slugOf('org-doc')}?workspaceId=${B.ws}&organizationId=${uuid()}`,
    });
    probes.push({ name: '/doc/{type}?organizationId={A org}', method: 'get', real: `${API}/doc/${A.docType}?organizationId=${A.org}`, fake: `${API}/doc/${A.docType}?organizationId=${uuid()}` });
    probes.push({ name: '/doc/{type}?workspaceId={A public ws}', method: 'get', real: `${API}/doc/${A.docType}?workspaceId=${A.publicWs}`, fake: `${API}/doc/${A.docType}?workspaceId=${uuid()}` });
    probes.push({ name: '/doc/{type}/setting?organizationId={A org}', method: 'get', real: `${API}/doc/${A.docType}/setting?organizationId=${A.org}`, fake: `${API}/doc/${A.docType}/setting?organizationId=${uuid()}` });
    probes.push({
      name: '/doc/{type} create with organizationId = A org and own workspace',
      method: 'post',
      real: `${API}/doc/${A.docType}`,
      fake: `${API}/doc/${A.docType}`,
      body: (ids) => ({ id: slugOf('mixed'), organizationId: ids === 'real' ? A.org : uuid(), workspaceId: B.ws, metadata: { fields: [] } }),
    });
    // Document-level routes with A's ids in the query or body.
    probes.push({ name: '/doc/{type}?workspaceId={A ws}', method: 'get', real: `${API}/doc/${A.docType}?workspaceId=${A.ws}`, fake: `${API}/doc/${A.docType}?workspaceId=${uuid()}` });
    probes.push({ name: '/doc/{type}/setting?workspaceId={A ws}', method: 'get', real: `${API}/doc/${A.docType}/setting?workspaceId=${A.ws}`, fake: `${API}/doc/${A.docType}/setting?workspaceId=${uuid()}` });
    probes.push({
      name: '/doc/{type}/setting?workspaceId={A ws}',
      method: 'put',
      real: `${API}/doc/${A.docType}/setting?workspaceId=${A.ws}`,
      fake: `${API}/doc/${A.docType}/setting?workspaceId=${uuid()}`,
      body: () => ({ retention: {} }),
    });
    probes.push({
      name: '/doc/{type} create in A ws',
      method: 'post',
      real: `${API}/doc/${A.docType}`,
      fake: `${API}/doc/${A.docType}`,
      body: (ids) => ({ id: slugOf('squat'), organizationId: ids === 'real' ? A.org : uuid(), workspaceId: ids === 'real' ? A.ws : uuid(), metadata: { fields: [] } }),
    });
    probes.push({
      name: '/doc/{type} create in A org (no workspace)',
      method: 'post',
      real: `${API}/doc/${A.docType}`,
      fake: `${API}/doc/${A.docType}`,
      body: (ids) => ({ id: slugOf('squat'), organizationId: ids === 'real' ? A.org : uuid(), workspaceId: null, metadata: { fields: [] } }),
    });
    probes.push({
      name: '/relations target = A doc',
      method: 'post',
      real: `${API}/relations`,
      fake: `${API}/relations`,
      body: (ids) => ({
        type: 'link',
        direction: 'outgoing',
        source: { docType: A.docType, docId: B.docId, rowId: 'nope' },
        target: { docType: A.docType, docId: ids === 'real' ? A.docId : slugOf('plan'), rowId: ids === 'real' ? A.row : slugOf('row') },
      }),
    });
    probes.push({
      name: '/doc/{own doc}/comments parentId = A comment',
      method: 'post',
      real: `${B.doc}/comments`,
      fake: `${B.doc}/comments`,
      body: (ids) => ({ target: { scope: 'document' }, content: 'reply', parentId: ids === 'real' ? A.comment : uuid() }),
    });
    // Realtime routes of the document.
    const rt = (doc: string): string => `/realtime/doc/${A.docType}/${doc}`;
    const fakeId = slugOf('plan');
    for (const [method, suffix, body] of [
      ['get', '/connect'],
      ['get', '/users'],
      ['get', '/locks'],
      ['post', '/lock', { target: { type: 'row', rowId: A.row }, ttlSeconds: 60 }],
      ['get', '/snapshot'],
      ['post', '/snapshot', {}],
      ['get', '/snapshots'],
      ['get', '/events'],
      ['post', '/disconnect-all', {}],
      ['post', '/awareness', { state: {} }],
    ] as Array<[Method, string, Record<string, unknown>?]>) {
      probes.push({ name: `/realtime/doc/{A doc}${suffix}`, method, real: `${rt(A.docId)}${suffix}`, fake: `${rt(fakeId)}${suffix}`, body: body ? () => body : undefined });
    }
    probes.push({ name: '/realtime/doc/{A doc}/events/stream', method: 'get', real: `${rt(A.docId)}/events/stream`, fake: `${rt(fakeId)}/events/stream` });
    probes.push({ name: '/realtime/doc/{A doc}/unlock/{A lock}', method: 'delete', real: `${rt(A.docId)}/unlock/${A.lock}`, fake: `${rt(fakeId)}/unlock/${uuid()}` });
    probes.push({ name: '/realtime/doc/{own doc}/unlock/{A lock}', method: 'delete', real: `${rt(B.docId)}/unlock/${A.lock}`, fake: `${rt(B.docId)}/unlock/${uuid()}` });

    expect(await mismatches(probes)).toEqual([]);
    // A's document is whole.
    const kept = await must(as(a, 'get', `${A.doc}/data/${A.row}`), 200);
    expect(kept.body.payload.id).toBe(A.row);
    await must(as(a, 'get', `${A.doc}/comments/${A.comment}`), 200);
    await must(as(a, 'get', `${A.doc}/views/${A.view}`), 200);
  });

  it('answers webhook, key, client and session routes of another user like unknown ids', async () => {
    const probes: Probe[] = [];
    const hook = (ids: 'real' | 'fake'): string => `${API}/webhooks/${ids === 'real' ? A.webhook : uuid()}`;
    const both = (method: Method, name: string, path: (ids: 'real' | 'fake') => string, body?: Record<string, unknown>): void => {
      probes.push({ name, method, real: path('real'), fake: path('fake'), body: body ? () => body : undefined });
    };
    both('get', '/webhooks/{id}', hook);
    both('put', '/webhooks/{id}', hook, { name: 'mine' });
    both('delete', '/webhooks/{id}', hook);
    for (const action of ['pause', 'resume', 'regenerate-secret']) {
      both('post', `/webhooks/{id}/${action}`, (ids) => `${hook(ids)}/${action}`, {});
    }
    both('post', '/webhooks/{id}/test', (ids) => `${hook(ids)}/test`, {});
    both('get', '/webhooks/{id}/deliveries', (ids) => `${hook(ids)}/deliveries`);
    both('get', '/webhooks/{id}/stats', (ids) => `${hook(ids)}/stats`);
    both('get', '/webhooks/{id}/deliveries/{deliveryId}', (ids) => `${hook(ids)}/deliveries/${ids === 'real' ? A.delivery : uuid()}`);
    both('post', '/webhooks/{id}/deliveries/{deliveryId}/redeliver', (ids) => `${hook(ids)}/deliveries/${ids === 'real' ? A.delivery : uuid()}/redeliver`, {});
    const orgHook = (ids: 'real' | 'fake'): string => `${API}/webhooks/${ids === 'real' ? A.orgWebhook : uuid()}`;
    both('get', '/webhooks/{A org webhook}', orgHook);
    both('put', '/webhooks/{A org webhook}', orgHook, { name: 'mine' });
    both('delete', '/webhooks/{A org webhook}', orgHook);
    both('get', '/webhooks/{A org webhook}/deliveries', (ids) => `${orgHook(ids)}/deliveries`);
    probes.push({ name: 'X-Organization-Id: {A org} /webhooks', method: 'get', real: `${API}/webhooks`, fake: `${API}/webhooks`, headers: (ids) => ({ 'X-Organization-Id': ids === 'real' ? A.org : uuid() }) });
    probes.push({
      name: 'X-Organization-Id: {A org} /webhooks create',
      method: 'post',
      real: `${API}/webhooks`,
      fake: `${API}/webhooks`,
      body: () => ({ name: 'spy', url: 'http://127.0.0.1:9/spy', events: ['*'] }),
      headers: (ids) => ({ 'X-Organization-Id': ids === 'real' ? A.org : uuid() }),
    });
    both('get', '/webhooks?organizationId={A org}', (ids) => `${API}/webhooks?organizationId=${ids === 'real' ? A.org : uuid()}`);
    probes.push({
      name: '/webhooks create filtered to A org',
      method: 'post',
      real: `${API}/webhooks`,
      fake: `${API}/webhooks`,
      body: (ids) => ({ name: 'spy', url: 'http://127.0.0.1:9/spy', events: ['*'], organizationId: ids === 'real' ? A.org : uuid() }),
    });
    const key = (ids: 'real' | 'fake'): string => `${API}/api-keys/${ids === 'real' ? A.apiKey : uuid()}`;
    both('post', '/api-keys/{id}/revoke', (ids) => `${key(ids)}/revoke`, {});
    both('get', '/api-keys/{id}/usage', (ids) => `${key(ids)}/usage`);
    const client = (ids: 'real' | 'fake'): string => `${API}/oauth/clients/${ids === 'real' ? A.oauthClient : `qc_${randomBytes(A.oauthClient.length).toString('hex').slice(0, A.oauthClient.length - 3)}`}`;
    both('get', '/oauth/clients/{id}', client);
    both('delete', '/oauth/clients/{id}', client);
    both('post', '/oauth/clients/{id}/regenerate-secret', (ids) => `${client(ids)}/regenerate-secret`, {});
    both('delete', '/auth/sessions/{id}', (ids) => `${API}/auth/sessions/${ids === 'real' ? a.sessionId : uuid()}`);

    expect(await mismatches(probes)).toEqual([]);
    const still = await must(as(a, 'get', `${API}/webhooks/${A.webhook}`), 200);
    expect(still.body.payload.name).toBe('hook');
    await must(as(a, 'get', `${API}/webhooks/${A.orgWebhook}`), 200);
    await must(as(a, 'get', `${API}/oauth/clients/${A.oauthClient}`), 200);
    await must(as(a, 'get', `${API}/users/me`), 200);
  });

  it('answers supply-chain routes of another organization like unknown ids', async () => {
    const probes: Probe[] = [];
    const pick = (ids: 'real' | 'fake', real: string): string => (ids === 'real' ? real : uuid());
    const rest: Array<[Method, string, (ids: 'real' | 'fake') => string, Record<string, unknown>?]> = [];
    const r = (method: Method, name: string, path: (ids: 'real' | 'fake') => string, body?: Record<string, unknown>): void => {
      rest.push([method, name, path, body]);
    };
    const cat = (ids: 'real' | 'fake'): string => `/catalogs/${pick(ids, A.catalog)}`;
    const conn = (ids: 'real' | 'fake'): string => `/connections/${pick(ids, A.connection)}`;
    const ob = (ids: 'real' | 'fake'): string => `/orderbooks/${pick(ids, A.orderBook)}`;
    const con = (ids: 'real' | 'fake'): string => `/connectors/${pick(ids, A.connector)}`;
    r('get', '/catalogs', () => '/catalogs');
    r('post', '/catalogs', () => '/catalogs', { name: 'x', catalogType: 'product', fields: [] });
    r('get', '/catalogs/{id}', cat);
    r('patch', '/catalogs/{id}', cat, { name: 'mine' });
    r('get', '/catalogs/{id}/connections', (ids) => `${cat(ids)}/connections`);
    r('post', '/catalogs/{id}/connections', (ids) => `${cat(ids)}/connections`, { name: 'spy', accessControl: 'public' });
    r('get', '/catalogs/{id}/fields', (ids) => `${cat(ids)}/fields`);
    r('get', '/catalogs/{id}/revisions', (ids) => `${cat(ids)}/revisions`);
    r('patch', '/catalogs/{id}/rows/{rowId}', (ids) => `${cat(ids)}/rows/${pick(ids, A.catalogRow)}`, { values: { sku: 'mine' } });
    r('delete', '/catalogs/{id}/rows/{rowId}', (ids) => `${cat(ids)}/rows/${pick(ids, A.catalogRow)}`);
    r('post', '/catalogs/{id}/rows/batch-update', (ids) => `${cat(ids)}/rows/batch-update`, { rows: [{ id: 'r1', values: { sku: 'S' } }] });
    r('get', '/connections', () => '/connections');
    r('get', '/connections/{id}', conn);
    r('patch', '/connections/{id}', conn, { name: 'mine' });
    r('get', '/connections/{id}/bindings', (ids) => `${conn(ids)}/bindings`);
    r('post', '/connections/{id}/bindings/{bindingId}/approve', (ids) => `${conn(ids)}/bindings/${pick(ids, A.binding)}/approve`, {});
    r('post', '/connections/{id}/bindings/{bindingId}/reject', (ids) => `${conn(ids)}/bindings/${pick(ids, A.binding)}/reject`, {});
    for (const action of ['disable', 'pause', 'resume']) {
      r('post', `/connections/{id}/${action}`, (ids) => `${conn(ids)}/${action}`, {});
    }
    r('post', '/connections/{id}/share-link', (ids) => `${conn(ids)}/share-link`, {});
    r('get', '/connections/{id}/share-links', (ids) => `${conn(ids)}/share-links`);
    r('delete', '/connections/{id}/share-links/{linkId}', (ids) => `${conn(ids)}/share-links/${pick(ids, A.shareLink)}`);
    r('get', '/connectors', () => '/connectors');
    r('get', '/connectors/{id}', con);
    r('delete', '/connectors/{id}', con);
    for (const action of ['pause', 'resume', 'run']) {
      r('post', `/connectors/{id}/${action}`, (ids) => `${con(ids)}/${action}`, {});
    }
    r('get', '/connectors/{id}/runs', (ids) => `${con(ids)}/runs`);
    r('get', '/connectors/{id}/schedule', (ids) => `${con(ids)}/schedule`);
    r('get', '/orderbooks', () => '/orderbooks');
    r('get', '/orderbooks/{id}', ob);
    r('get', '/orderbooks/{id}/bindings', (ids) => `${ob(ids)}/bindings`);
    r('post', '/orderbooks/{id}/bindings', (ids) => `${ob(ids)}/bindings`, { connectionId: A.connection, fieldMapping: { unmappedFields: 'create', rules: [] } });
    r('get', '/orderbooks/{id}/bindings/{bindingId}', (ids) => `${ob(ids)}/bindings/${pick(ids, A.binding)}`);
    r('get', '/orderbooks/{id}/bindings/{bindingId}/propagation', (ids) => `${ob(ids)}/bindings/${pick(ids, A.binding)}/propagation`);
    r('post', '/orderbooks/{id}/field-mapping/preview', (ids) => `${ob(ids)}/field-mapping/preview`, { connectionId: A.connection });
    r('get', '/orderbooks/{id}/fields', (ids) => `${ob(ids)}/fields`);
    r('get', '/orderbooks/{id}/requests', (ids) => `${ob(ids)}/requests`);
    r('post', '/orderbooks/{id}/requests', (ids) => `${ob(ids)}/requests`, { changes: [{ operation: 'create_row', values: {} }] });
    r('get', '/orderbooks/{id}/requests/{requestId}', (ids) => `${ob(ids)}/requests/${pick(ids, A.syncRequest)}`);
    r('post', '/orderbooks/{id}/requests/{requestId}/accept', (ids) => `${ob(ids)}/requests/${pick(ids, A.syncRequest)}/accept`, {});
    r('post', '/orderbooks/{id}/requests/{requestId}/reject', (ids) => `${ob(ids)}/requests/${pick(ids, A.syncRequest)}/reject`, {});
    r('post', '/orderbooks/{id}/rows/batch-update', (ids) => `${ob(ids)}/rows/batch-update`, { rows: [{ target: { row: 'r1' }, values: [] }] });
    r('get', '/orderbooks/{id}/sync-logs', (ids) => `${ob(ids)}/sync-logs`);

    const fakeOrg = uuid();
    for (const [method, name, path, body] of rest) {
      // A's organization and ids vs. an organization and ids that exist nowhere.
      probes.push({ name: `/organizations/{A org}${name}`, method, real: `${API}/organizations/${A.org}${path('real')}`, fake: `${API}/organizations/${fakeOrg}${path('fake')}`, body: body ? () => body : undefined });
      // B's own organization with A's ids.
      if (name.includes('{')) {
        probes.push({ name: `/organizations/{own org}${name}`, method, real: `${API}/organizations/${B.org}${path('real')}`, fake: `${API}/organizations/${B.org}${path('fake')}`, body: body ? () => body : undefined });
      }
    }
    // Ids of A's resources in B's own bodies.
    const own = `${API}/organizations/${B.org}`;
    const body = (method: Method, name: string, path: string, make: (id: string) => Record<string, unknown>, real: string): void => {
      probes.push({ name: `(own org) ${name}`, method, real: path, fake: path, body: (ids) => make(ids === 'real' ? real : uuid()) });
    };
    body('post', '/connections sourceCatalogId = A catalog', `${own}/connections`, (id) => ({ name: 'spy', sourceCatalogId: id, accessControl: 'public' }), A.catalog);
    body('post', '/orderbooks sourceConnectionIds = A whitelisted connection', `${own}/orderbooks`, (id) => ({ name: 'spy', sourceConnectionIds: [id] }), A.connection);
    body('post', '/orderbooks/{own}/bindings connectionId = A whitelisted connection', `${own}/orderbooks/${B.orderBook}/bindings`, (id) => ({ connectionId: id, fieldMapping: { unmappedFields: 'create', rules: [] } }), A.connection);
    body('post', '/orderbooks/{own}/field-mapping/preview connectionId = A whitelisted connection', `${own}/orderbooks/${B.orderBook}/field-mapping/preview`, (id) => ({ connectionId: id }), A.connection);
    body('post', '/orderbooks/{own}/bindings targetOrderBookId = A order book', `${own}/orderbooks/${B.orderBook}/bindings`, (id) => ({ connectionId: A.connection, targetOrderBookId: id }), A.orderBook);
    body('post', '/connectors sourceDocId = A catalog', `${own}/connectors`, (id) => ({ name: 'spy', connectorType: 'catalog_clone', sourceDocId: id, targetDocId: B.catalog, catalogCloneConfig: { syncMode: 'realtime' } }), A.catalog);
    body('post', '/connectors targetDocId = A catalog', `${own}/connectors`, (id) => ({ name: 'spy', connectorType: 'catalog_clone', sourceDocId: B.catalog, targetDocId: id, catalogCloneConfig: { syncMode: 'realtime' } }), A.catalog);
    body('post', '/connectors orderbook_to_catalog sourceDocId = A order book', `${own}/connectors`, (id) => ({ name: 'spy', connectorType: 'orderbook_to_catalog', sourceDocId: id, targetDocId: B.catalog, orderbookToCatalogConfig: { syncMode: 'realtime' } }), A.orderBook);
    // Catalogs are documents too: their document routes answer like any unknown document.
    probes.push({ name: '/doc/catalog/{A catalog}', method: 'get', real: `${API}/doc/catalog/${A.catalog}`, fake: `${API}/doc/catalog/${uuid()}` });
    probes.push({ name: '/doc/orderbook/{A order book}', method: 'get', real: `${API}/doc/orderbook/${A.orderBook}`, fake: `${API}/doc/orderbook/${uuid()}` });
    for (const [docType, id] of [
      ['catalog', A.catalog],
      ['orderbook', A.orderBook],
    ]) {
      for (const suffix of ['', '/data', '/metadata']) {
        probes.push({
          name: `/doc/${docType}/{A id}${suffix}?organizationId={A org}`,
          method: 'get',
          real: `${API}/doc/${docType}/${id}${suffix}?organizationId=${A.org}`,
          fake: `${API}/doc/${docType}/${uuid()}${suffix}?organizationId=${uuid()}`,
        });
      }
    }

    expect(await mismatches(probes)).toEqual([]);
    const still = await must(as(a, 'get', `${API}/organizations/${A.org}/connections/${A.connection}`), 200);
    expect(still.body.payload.status).toBe('active');
    await must(as(a, 'get', `${API}/organizations/${A.org}/connectors/${A.connector}`), 200);
  });

  it("answers ids of another tenant named inside the stranger's own resources like unknown ids", async () => {
    const probes: Probe[] = [];
    const same = (
      method: Method,
      name: string,
      path: (ids: 'real' | 'fake') => string,
      body?: (ids: 'real' | 'fake') => Record<string, unknown>,
      bothMaySucceed = false,
    ): void => {
      probes.push({ name: `(own) ${name}`, method, real: path('real'), fake: path('fake'), body, bothMaySucceed });
    };
    const pick = (ids: 'real' | 'fake', real: string, fake: () => string = uuid): string => (ids === 'real' ? real : fake());
    // Writes bound to A's change request (spec 4.4 `requestId`) on B's own document.
    const rq = (ids: 'real' | 'fake'): string => `requestId=${pick(ids, A.request)}`;
    same('post', '/doc/{own}/data?requestId={A request}', (ids) => `${B.doc}/data?${rq(ids)}`, () => ({ id: slugOf('r'), values: { name: 'x' } }));
    same('put', '/doc/{own}/data/{own row}?requestId={A request}', (ids) => `${B.doc}/data/${B.row}?${rq(ids)}`, () => ({ values: { name: 'y' } }));
    same('delete', '/doc/{own}/data/{own row}?requestId={A request}', (ids) => `${B.doc}/data/${B.row}?${rq(ids)}`);
    same('post', '/doc/{own}/rows/batch-update?requestId={A request}', (ids) => `${B.doc}/rows/batch-update?${rq(ids)}`, () => ({
      updates: [{ target: { row: B.row, field: 'name' }, value: 'z' }],
    }));
    same('patch', '/doc/{own}/properties?requestId={A request}', (ids) => `${B.doc}/properties?${rq(ids)}`, () => ({ properties: [] }));
    same('put', '/doc/{own}/metadata?requestId={A request}', (ids) => `${B.doc}/metadata?${rq(ids)}`, () => ({
      fields: [
        { id: 'name', name: 'Name', type: 'text' },
        { id: 'link', name: 'Link', type: 'relation' },
      ],
    }));
    same('put', '/doc/{own}/settings?requestId={A request}', (ids) => `${B.doc}/settings?${rq(ids)}`, () => ({ notifications: { onMerge: true } }));
    same('post', '/relations?requestId={A request}', (ids) => `${API}/relations?${rq(ids)}`, () => ({
      type: 'link',
      source: { docType: A.docType, docId: B.docId, rowId: B.row },
      target: { docType: A.docType, docId: B.docId, rowId: B.row },
    }));
    same('post', '/doc/{own}/approval/start requestId = A request', () => `${B.doc}/approval/start`, (ids) => ({ requestId: pick(ids, A.request), flowId: 'settings-sequential' }));
    same('get', '/doc/{own}/revisions/{own}/diff?base={A revision}', (ids) => `${B.doc}/revisions/${B.revision}/diff?base=${pick(ids, A.revision)}`);
    // Links to A's document and row.
    same('post', '/relations target = A row', () => `${API}/relations`, (ids) => ({
      type: 'link',
      source: { docType: A.docType, docId: B.docId, rowId: B.row },
      target: { docType: A.docType, docId: pick(ids, A.docId, () => slugOf('plan')), rowId: pick(ids, A.row, () => slugOf('row')) },
    }));
    same('post', '/doc/{own}/data relation value = A row', () => `${B.doc}/data`, (ids) => ({
      id: slugOf('r'),
      values: { name: 'x', link: { relation: [{ docType: A.docType, docId: pick(ids, A.docId, () => slugOf('plan')), rowId: pick(ids, A.row, () => slugOf('row')) }] } },
    }));
    // A named as a person in B's document.
    same('put', '/doc/{own}/settings approvers = [A]', () => `${B.doc}/settings`, (ids) => ({ workflow: { approvers: [pick(ids, a.id)] } }));
    same('post', '/doc/{own}/requests/{own}/submit-approval approvers = [A]', () => `${B.doc}/requests/${B.request}/submit-approval`, (ids) => ({ approvers: [pick(ids, a.id)] }));
    same('post', '/doc/{own}/comments mentions = [A]', () => `${B.doc}/comments`, (ids) => ({ target: { scope: 'document' }, content: 'hi', mentions: [pick(ids, a.id)] }), true);
    same('post', '/organizations/{own}/workspaces/{own}/members userId = A', () => `${API}/organizations/${B.org}/workspaces/${B.ws}/members`, (ids) => ({ userId: pick(ids, a.id) }));
    same('patch', '/organizations/{own}/workspaces/{own} dataSourceReferences source = A ws', () => `${API}/organizations/${B.org}/workspaces/${B.ws}`, (ids) => ({
      dataSourceReferences: [{ sourceWorkspaceId: pick(ids, A.ws), docType: 'ledger' }],
    }));
    // A's supply-chain ids under B's own connection, order book and catalog.
    const own = `${API}/organizations/${B.org}`;
    same('post', '/connections/{own}/bindings/{A binding}/approve', (ids) => `${own}/connections/${B.connection}/bindings/${pick(ids, A.binding)}/approve`, () => ({}));
    same('post', '/connections/{own}/bindings/{A binding}/reject', (ids) => `${own}/connections/${B.connection}/bindings/${pick(ids, A.binding)}/reject`, () => ({}));
    same('delete', '/connections/{own}/share-links/{A link}', (ids) => `${own}/connections/${B.connection}/share-links/${pick(ids, A.shareLink)}`);
    same('get', '/orderbooks/{own}/bindings/{A binding}', (ids) => `${own}/orderbooks/${B.orderBook}/bindings/${pick(ids, A.binding)}`);
    same('get', '/orderbooks/{own}/bindings/{A binding}/propagation', (ids) => `${own}/orderbooks/${B.orderBook}/bindings/${pick(ids, A.binding)}/propagation`);
    same('get', '/orderbooks/{own}/sync-logs?bindingId={A binding}', (ids) => `${own}/orderbooks/${B.orderBook}/sync-logs?bindingId=${pick(ids, A.binding)}`, undefined, true);
    same('get', '/orderbooks/{own}/requests/{A sync request}', (ids) => `${own}/orderbooks/${B.orderBook}/requests/${pick(ids, A.syncRequest)}`);
    same('post', '/orderbooks/{own}/requests/{A sync request}/accept', (ids) => `${own}/orderbooks/${B.orderBook}/requests/${pick(ids, A.syncRequest)}/accept`, () => ({}));
    same('post', '/orderbooks/{own}/requests/{A sync request}/reject', (ids) => `${own}/orderbooks/${B.orderBook}/requests/${pick(ids, A.syncRequest)}/reject`, () => ({}));
    same('get', '/catalogs/{own}/revisions?since={A revision}', (ids) => `${own}/catalogs/${B.catalog}/revisions?since=${pick(ids, A.revision)}`);
    same('post', '/catalogs/{own}/connections whitelist = [A org]', () => `${own}/catalogs/${B.catalog}/connections`, (ids) => ({
      name: slugOf('wl'),
      accessControl: { mode: 'whitelist', allowedOrganizations: [pick(ids, A.org)] },
    }), true);
    same('patch', '/catalogs/{own}/rows/{A catalog row}', (ids) => `${own}/catalogs/${B.catalog}/rows/${pick(ids, A.catalogRow, () => slugOf('cat-row'))}`, () => ({ values: { sku: 'mine' } }));
    same('delete', '/catalogs/{own}/rows/{A catalog row}', (ids) => `${own}/catalogs/${B.catalog}/rows/${pick(ids, A.catalogRow, () => slugOf('cat-row'))}`);
    same('post', '/catalogs/{own}/rows/batch-update?requestId={A request}', (ids) => `${own}/catalogs/${B.catalog}/rows/batch-update?${rq(ids)}`, () => ({
      rows: [{ values: { sku: 'S1' } }],
    }));
    // A's delivery under B's own webhook.
    same('get', '/webhooks/{own}/deliveries/{A delivery}', (ids) => `${API}/webhooks/${B.webhook}/deliveries/${pick(ids, A.delivery)}`);
    same('post', '/webhooks/{own}/deliveries/{A delivery}/redeliver', (ids) => `${API}/webhooks/${B.webhook}/deliveries/${pick(ids, A.delivery)}/redeliver`, () => ({}));
    // The workspace context as a header instead of a query parameter.
    for (const suffix of ['', '/data', `/data/${A.row}`, '/comments', '/views', '/settings']) {
      probes.push({
        name: `X-Workspace-Id: {A ws} /doc/{A doc}${suffix}`,
        method: 'get',
        real: `${A.doc}${suffix}`,
        fake: `${A.doc}${suffix}`,
        headers: (ids) => ({ 'X-Workspace-Id': pick(ids, A.ws) }),
      });
    }

    expect(await mismatches(probes)).toEqual([]);
    // A's request is still A's, untouched: open and without changes from B.
    const kept = await must(as(a, 'get', `${A.doc}/requests/${A.request}`), 200);
    expect(kept.body.payload.status).toBe('open');
    expect(kept.body.payload.contributors ?? []).not.toContain(b.id);
  });

  it("lets the stranger use A's client-chosen names in its own tenant, answering as for a free one", async () => {
    // Document id: B's own workspace takes the id A uses, exactly like a fresh one.
    const create = (docId: string): request.Test =>
      as(b, 'post', `${API}/doc/${A.docType}`).send({ id: docId, organizationId: B.org, workspaceId: B.ws, metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] } });
    const taken = await create(A.docId);
    const free = await create(slugOf('free'));
    expect(taken.status).toBe(201);
    expect(free.status).toBe(201);
    expect(taken.body.payload.document ?? taken.body.payload).toMatchObject({ organizationId: B.org, workspaceId: B.ws });
    // B reads its own document under that id; A still reads A's.
    const mine = await must(as(b, 'get', `${API}/doc/${A.docType}/${A.docId}/data`), 200);
    expect(mine.body.payload.items).toEqual([]);
    const theirs = await must(as(a, 'get', `${A.doc}/data/${A.row}`), 200);
    expect(theirs.body.payload.id).toBe(A.row);

    // Row and view ids are per document: B's document takes A's.
    const bDoc = `${API}/doc/${A.docType}/${A.docId}?workspaceId=${B.ws}`;
    const row = await as(b, 'post', bDoc.replace('?', '/data?')).send({ id: A.row, values: { name: 'mine' } });
    expect(row.status).toBe(201);
    const view = await as(b, 'post', bDoc.replace('?', '/views?')).send({ id: A.view, name: 'Mine', type: 'table' });
    expect(view.status).toBe(201);

    // Workspace slug: unique inside the organization only (spec 2.3). A second organization of B's takes A's slugs.
    const bOrg = await must(as(b, 'post', `${API}/organizations`).send({ name: 'Bee', slug: slugOf('bee'), type: 'team' }), 201);
    const takenWs = await as(b, 'post', `${API}/organizations/${bOrg.body.payload.id}/workspaces`).send({ name: 'Second', slug: A.ws2Slug });
    const freeWs = await as(b, 'post', `${API}/organizations/${bOrg.body.payload.id}/workspaces`).send({ name: 'Free', slug: slugOf('free') });
    expect(takenWs.status).toBe(201);
    expect(freeWs.status).toBe(201);
    expect(takenWs.body.payload.slug).toBe(A.ws2Slug);
    expect(Object.keys(takenWs.body.payload).sort()).toEqual(Object.keys(freeWs.body.payload).sort());
    // A sync request id may be chosen by the client (spec 4.8 `requestId`): unique within the organization only.
    const takenSync = await as(b, 'post', `${API}/organizations/${B.org}/orderbooks/${B.orderBook}/requests`).send({
      requestId: A.syncRequest,
      changes: [{ operation: 'create_row', values: {} }],
    });
    const freeSync = await as(b, 'post', `${API}/organizations/${B.org}/orderbooks/${B.orderBook}/requests`).send({
      requestId: uuid(),
      changes: [{ operation: 'create_row', values: {} }],
    });
    expect([takenSync.status, freeSync.status]).toEqual([201, 201]);
    expect(takenSync.body.payload.requestId).toBe(A.syncRequest);
    const aSync = await must(as(a, 'get', `${API}/organizations/${A.org}/orderbooks/${A.orderBook}/requests/${A.syncRequest}`), 200);
    expect(aSync.body.payload.requestId).toBe(A.syncRequest);

    // Organization slugs are globally unique by the spec (2.2), so they are not a per-tenant name: not probed here.
  });
});
