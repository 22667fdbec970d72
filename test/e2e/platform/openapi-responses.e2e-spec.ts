import type { OpenAPIV3 } from 'openapi-types';
import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { eventually } from '../supply-chain/sync.fixtures.js';
import { type Method, operationRequest, type Params, ResponseChecker } from './support/openapi-responses.js';

const A = '/api/v1';
const DOC = `${A}/doc/{docType}/{docId}`;
const RT = '/realtime/doc/{docType}/{docId}';
const ORG = `${A}/organizations/{organizationId}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- payloads are read loosely; the schema check is the assertion
type Payload = any;

/**
 * Generated clients (Swagger UI, openapi-generator) read answers through the schemas the OpenAPI document declares:
 * a property it does not declare is dropped, a null it does not allow or a status it does not list breaks the
 * client. Real successful calls across the modules are checked against those schemas.
 */
describe('OpenAPI response schemas match what the API answers', () => {
  let t: TestApp;
  let checker: ResponseChecker;
  let problems: string[] = [];
  let owner: TestUser;
  let colleague: TestUser;
  let org: string;
  let ws: string;
  const docType = 'products';
  const docId = 'catalogue';
  const d = { docType, docId };

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    const doc = (await request(t.http).get('/api/docs-json').expect(200)).body as OpenAPIV3.Document;
    checker = new ResponseChecker(doc);
    [owner, colleague] = await Promise.all([registerUser(t.http), registerUser(t.http)]);
    org = owner.defaultOrganizationId;
    ws = owner.defaultWorkspaceId;
  });
  beforeEach(() => {
    problems = [];
  });
  afterAll(async () => {
    await t.close();
  });

  /** One call: its answer is checked against the document (problems collected), its envelope's payload returned. */
  async function api(user: { token: string } | null, method: Method, template: string, params: Params, options: { query?: Record<string, unknown>; body?: unknown } = {}): Promise<Payload> {
    const req = operationRequest(t.http, user, method, template, params, options.query);
    const res = options.body === undefined ? await req : await req.send(options.body as object);
    const operation = `${method.toUpperCase()} ${template}`;
    problems.push(...checker.check({ operation, status: res.status, body: res.body, contentType: res.headers['content-type'] }));
    if (res.status >= 300) {
      const failure = res.body as { code?: string; details?: unknown };
      problems.push(`${operation} ${res.status}: expected a success, got ${failure.code} ${JSON.stringify(failure.details ?? null)}`);
    }
    return (res.body as { payload?: unknown })?.payload;
  }

  it('identity and tenancy', async () => {
    const [applicant, invitee] = await Promise.all([registerUser(t.http), registerUser(t.http)]);

    // Current user, sessions, API keys.
    await api(owner, 'get', `${A}/users/me`, {});
    await api(owner, 'patch', `${A}/users/me`, {}, { body: { displayName: 'Owner', timezone: 'Europe/Berlin' } });
    await api(owner, 'get', `${A}/users/me/organizations`, {});
    await api(owner, 'get', `${A}/users/me/oauth`, {});
    await api(owner, 'get', `${A}/auth/sessions`, {});
    await api(null, 'get', `${A}/oidc/providers`, {});
    const key = await api(owner, 'post', `${A}/api-keys`, {}, { body: { name: 'ci', scopes: ['doc:read'] } });
    await api(owner, 'get', `${A}/api-keys`, {});
    await api(owner, 'post', `${A}/api-keys/{keyId}/revoke`, { keyId: key.id });

    // Organizations, members, invitations, join requests.
    const team = await api(owner, 'post', `${A}/organizations`, {}, { body: { name: 'Team', slug: `team-${Date.now()}`, type: 'team', settings: { allowJoinRequests: true } } });
    const organizationId = team.id as string;
    await api(owner, 'get', `${ORG}`, { organizationId });
    await api(owner, 'patch', `${ORG}`, { organizationId }, { body: { description: 'The team', displayName: 'Team!' } });
    const member = await api(owner, 'post', `${ORG}/members`, { organizationId }, { body: { userId: colleague.id, role: 'member' } });
    await api(owner, 'get', `${ORG}/members`, { organizationId });
    await api(owner, 'get', `${ORG}/members/{memberId}`, { organizationId, memberId: member.id });
    await api(owner, 'patch', `${ORG}/members/{memberId}`, { organizationId, memberId: member.id }, { body: { role: 'admin' } });
    const invitation = await api(owner, 'post', `${ORG}/invitations`, { organizationId }, { body: { email: 'someone@example.test', message: 'Join us' } });
    await api(owner, 'get', `${ORG}/invitations`, { organizationId });
    await api(owner, 'get', `${ORG}/invitations/{invitationId}`, { organizationId, invitationId: invitation.id });
    await api(owner, 'get', `${A}/invitations/{token}`, { token: invitation.token });
    await api(owner, 'delete', `${ORG}/invitations/{invitationId}`, { organizationId, invitationId: invitation.id });
    const join = await api(applicant, 'post', `${ORG}/join-requests`, { organizationId }, { body: { message: 'Hi' } });
    await api(owner, 'get', `${ORG}/join-requests`, { organizationId });
    await api(owner, 'get', `${ORG}/join-requests/{requestId}`, { organizationId, requestId: join.id });
    await api(owner, 'post', `${ORG}/join-requests/{requestId}/approve`, { organizationId, requestId: join.id }, { body: { role: 'member', reviewNote: 'ok' } });

    // Workspaces and their members.
    const workspace = await api(owner, 'post', `${ORG}/workspaces`, { organizationId }, { body: { name: 'Ops', slug: 'ops', description: 'Operations' } });
    const workspaceId = workspace.id as string;
    await api(owner, 'get', `${ORG}/workspaces`, { organizationId });
    await api(owner, 'get', `${ORG}/workspaces/{workspaceId}`, { organizationId, workspaceId });
    await api(owner, 'patch', `${ORG}/workspaces/{workspaceId}`, { organizationId, workspaceId }, { body: { color: '#336699' } });
    const wsMember = await api(owner, 'post', `${ORG}/workspaces/{workspaceId}/members`, { organizationId, workspaceId }, { body: { userId: colleague.id, role: 'viewer' } });
    await api(owner, 'get', `${ORG}/workspaces/{workspaceId}/members`, { organizationId, workspaceId });
    await api(owner, 'get', `${ORG}/workspaces/{workspaceId}/members/{memberId}`, { organizationId, workspaceId, memberId: wsMember.id });
    await api(owner, 'post', `${ORG}/workspaces/{workspaceId}/archive`, { organizationId, workspaceId });
    await api(owner, 'post', `${ORG}/workspaces/{workspaceId}/restore`, { organizationId, workspaceId });

    // Invitation accepted by its invitee, a data-source reference, a member leaving.
    const invited = await api(owner, 'post', `${ORG}/invitations`, { organizationId }, { body: { email: invitee.email } });
    await api(invitee, 'post', `${A}/invitations/{token}/accept`, { token: invited.token });
    const source = await api(owner, 'post', `${ORG}/workspaces`, { organizationId }, { body: { name: 'Master', slug: 'master' } });
    const refs = `${ORG}/workspaces/{workspaceId}/data-source-references`;
    const ref = await api(owner, 'post', refs, { organizationId, workspaceId }, { body: { sourceWorkspaceId: source.id, docType: 'products' } });
    await api(owner, 'get', refs, { organizationId, workspaceId });
    await api(owner, 'get', `${refs}/{refId}`, { organizationId, workspaceId, refId: ref.id });
    await api(owner, 'patch', `${refs}/{refId}`, { organizationId, workspaceId, refId: ref.id }, { body: { status: 'inactive' } });
    await api(owner, 'delete', `${refs}/{refId}`, { organizationId, workspaceId, refId: ref.id });
    await api(owner, 'delete', `${ORG}/workspaces/{workspaceId}/members/{memberId}`, { organizationId, workspaceId, memberId: wsMember.id });
    await api(invitee, 'post', `${ORG}/leave`, { organizationId });

    // Sign-in, tokens, OAuth clients, the authentication host.
    const login = await api(null, 'post', `${A}/auth/login`, {}, { body: { email: applicant.email, password: applicant.password } });
    await api(null, 'post', `${A}/auth/refresh`, {}, { body: { refreshToken: login.refreshToken } });
    await api(owner, 'get', `${A}/api-keys/{keyId}/usage`, { keyId: key.id });
    const client = await api(owner, 'post', `${A}/oauth/clients`, {}, { body: { name: 'Dashboard', allowedScopes: ['doc:read'] } });
    await api(owner, 'get', `${A}/oauth/clients`, {});
    await api(owner, 'get', `${A}/oauth/clients/{clientId}`, { clientId: client.clientId ?? client.id });
    await api(owner, 'post', `${A}/oauth/clients/{clientId}/regenerate-secret`, { clientId: client.clientId ?? client.id });
    await api(owner, 'delete', `${A}/oauth/clients/{clientId}`, { clientId: client.clientId ?? client.id });
    await api(null, 'get', '/.well-known/openid-configuration', {});
    await api(null, 'get', '/jwks.json', {});
    await api(owner, 'get', '/userinfo', {});
    // Registration, probes, second factor, sessions; a second join request rejected, a third withdrawn.
    const email = `fresh-${Date.now()}@example.test`;
    const fresh = await api(null, 'post', `${A}/auth/register`, {}, { body: { email, password: 'correct horse battery staple', displayName: 'Fresh' } });
    const freshUser = { token: fresh.accessToken as string };
    await api(null, 'get', '/health', {});
    await api(null, 'get', '/health/ready', {});
    await api(freshUser, 'post', `${A}/auth/2fa/enable`, {}, { body: { method: 'totp' } });
    const second = await api(null, 'post', `${A}/auth/login`, {}, { body: { email, password: 'correct horse battery staple' } });
    await api(freshUser, 'delete', `${A}/auth/sessions/{sessionId}`, { sessionId: second.sessionId });
    const rejected = await api(freshUser, 'post', `${ORG}/join-requests`, { organizationId }, { body: {} });
    await api(owner, 'post', `${ORG}/join-requests/{requestId}/reject`, { organizationId, requestId: rejected.id }, { body: { reviewNote: 'not now' } });
    const withdrawn = await api(invitee, 'post', `${ORG}/join-requests`, { organizationId }, { body: {} });
    await api(invitee, 'delete', `${ORG}/join-requests/{requestId}`, { organizationId, requestId: withdrawn.id });
    await api(freshUser, 'post', `${A}/auth/sessions/logout-all`, {});
    await api(owner, 'delete', `${ORG}/members/{memberId}`, { organizationId, memberId: member.id });
    await api(owner, 'delete', `${ORG}/workspaces/{workspaceId}`, { organizationId, workspaceId: source.id });
    await api(owner, 'delete', `${ORG}`, { organizationId });
    expect(problems).toEqual([]);
  });

  it('documents: metadata, rows, properties, views, settings, comments, relations, requests, revisions', async () => {
    await api(owner, 'post', `${A}/doc/{docType}`, { docType }, {
      body: {
        id: docId,
        organizationId: org,
        workspaceId: ws,
        title: 'Products',
        metadata: {
          fields: [
            { id: 'name', name: 'Name', type: 'text', required: true },
            { id: 'price', name: 'Price', type: 'number' },
            { id: 'status', name: 'Status', type: 'single_select', selectOptions: [{ id: 'todo', label: 'To do' }, { id: 'done', label: 'Done' }] },
            { id: 'total', name: 'Total', type: 'formula', formula: '{price} * 2' },
          ],
          properties: [{ id: 'supplier', name: 'Supplier', type: 'text' }],
        },
      },
    });
    await api(owner, 'get', `${A}/doc/{docType}`, { docType });
    await api(owner, 'get', `${DOC}/metadata`, d);
    await api(owner, 'put', `${DOC}/metadata`, d, {
      body: {
        fields: [
          { id: 'name', name: 'Name', type: 'text', required: true },
          { id: 'price', name: 'Price', type: 'number' },
          { id: 'status', name: 'Status', type: 'single_select', selectOptions: [{ id: 'todo', label: 'To do' }, { id: 'done', label: 'Done' }] },
          { id: 'total', name: 'Total', type: 'formula', formula: '{price} * 2' },
          { id: 'due', name: 'Due', type: 'date' },
        ],
        properties: [{ id: 'supplier', name: 'Supplier', type: 'text' }],
      },
    });
    await api(owner, 'post', `${DOC}/data`, d, { body: { id: 'r1', values: { name: 'Bolt', price: 2, status: 'todo' } } });
    await api(owner, 'post', `${DOC}/data`, d, { body: { id: 'r2', values: [{ fieldId: 'name', value: { text: 'Nut' } }] } });
    const r1 = await api(owner, 'get', `${DOC}/data/{rowId}`, { ...d, rowId: 'r1' });
    await api(owner, 'put', `${DOC}/data/{rowId}`, { ...d, rowId: 'r1' }, { body: { values: { price: 3 }, version: r1?.version ?? 1 } });
    await api(owner, 'get', `${DOC}/data`, d, { query: { page: 1, pageSize: 10, sort: 'name:asc' } });
    await api(owner, 'get', `${DOC}/data`, d, { query: { limit: 1 } });
    await api(owner, 'post', `${DOC}/data/query`, d, { body: { filters: { logic: 'and', conditions: [{ field: 'price', operator: 'range', rangeStart: 0, rangeEnd: 10 }], groups: [] }, sorts: [{ field: 'name', direction: 'asc' }] } });
    await api(owner, 'post', `${DOC}/data/bulk`, d, { body: [{ target: { row: 'r2', field: 'price' }, value: { number: 5 } }, { target: { property: 'supplier' }, value: { text: 'ACME' } }] });
    await api(owner, 'post', `${DOC}/data`, d, { body: { id: 'gone', values: { name: 'Gone' } } });
    await api(owner, 'delete', `${DOC}/data/{rowId}`, { ...d, rowId: 'gone' });
    await api(owner, 'get', `${DOC}`, d, { query: { include: 'metadata,views,data,comments,revisions,settings' } });

    // Properties.
    await api(owner, 'get', `${DOC}/properties`, d);
    await api(owner, 'patch', `${DOC}/properties`, d, { body: { properties: [{ fieldId: 'supplier', value: { text: 'Globex' } }] } });
    await api(owner, 'get', `${DOC}/properties/history`, d);

    // Views, settings, comments, relations.
    await api(owner, 'post', `${DOC}/views`, d, { body: { id: 'board', name: 'Board', type: 'kanban', config: { kanbanConfig: { groupByField: 'status', cardFields: ['name'] } } } });
    await api(owner, 'get', `${DOC}/views`, d);
    await api(owner, 'get', `${DOC}/views/{viewId}`, { ...d, viewId: 'board' });
    await api(owner, 'put', `${DOC}/views/{viewId}`, { ...d, viewId: 'board' }, { body: { name: 'Board 2', type: 'kanban', config: { kanbanConfig: { groupByField: 'status' } } } });
    await api(owner, 'post', `${DOC}/views/{viewId}/default`, { ...d, viewId: 'board' });
    await api(owner, 'get', `${DOC}/settings`, d);
    await api(owner, 'put', `${DOC}/settings`, d, { body: { notifications: { onMerge: true } } });
    await api(owner, 'get', `${A}/doc/{docType}/setting`, { docType });
    await api(owner, 'put', `${A}/doc/{docType}/setting`, { docType }, { body: { retention: { days: 30 } } });
    const comment = await api(owner, 'post', `${DOC}/comments`, d, { body: { target: { scope: 'row', rowId: 'r1' }, content: 'Check price', mentions: [] } });
    await api(owner, 'post', `${DOC}/comments`, d, { body: { parentId: comment.id, content: 'Done' } });
    await api(owner, 'get', `${DOC}/comments`, d);
    await api(owner, 'get', `${DOC}/comments/{commentId}`, { ...d, commentId: comment.id });
    await api(owner, 'put', `${DOC}/comments/{commentId}`, { ...d, commentId: comment.id }, { body: { content: 'Check the price' } });
    await api(owner, 'post', `${DOC}/comments/{commentId}/reactions`, { ...d, commentId: comment.id }, { body: { emoji: '👍' } });
    await api(owner, 'post', `${DOC}/comments/{commentId}/resolve`, { ...d, commentId: comment.id });
    await api(owner, 'post', `${DOC}/comments/{commentId}/pin`, { ...d, commentId: comment.id });
    await api(owner, 'get', `${DOC}`, d, { query: { include: 'metadata,views,data,comments,revisions,settings' } });
    await api(owner, 'post', `${A}/doc/{docType}`, { docType: 'suppliers' }, { body: { id: 'acme', organizationId: org, workspaceId: ws, metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] } } });
    await api(owner, 'post', `${DOC}/data`, { docType: 'suppliers', docId: 'acme' }, { body: { id: 's1', values: { name: 'ACME' } } });
    await api(owner, 'post', `${A}/relations`, {}, { body: { type: 'supplied-by', source: { docType, docId, rowId: 'r1' }, target: { docType: 'suppliers', docId: 'acme', rowId: 's1' }, metadata: { note: 'main' } } });
    await api(owner, 'get', `${DOC}/relations`, d);

    // Requests, revisions, history.
    const draft = await api(owner, 'post', `${DOC}/requests`, d, { body: { title: 'Price change', description: 'Raise', changes: [{ type: 'row-update', target: { kind: 'row', rowId: 'r1' }, newValue: { price: 4 } }] } });
    await api(owner, 'post', `${DOC}/data`, d, { query: { requestId: draft.id }, body: { id: 'r3', values: { name: 'Washer' } } });
    await api(owner, 'get', `${DOC}/data`, d, { query: { requestId: draft.id } });
    await api(owner, 'get', `${DOC}/requests`, d);
    await api(owner, 'get', `${DOC}/requests/{reqId}`, { ...d, reqId: draft.id });
    await api(owner, 'get', `${DOC}/requests/{reqId}/diff`, { ...d, reqId: draft.id });
    await api(owner, 'get', `${DOC}/requests/{reqId}/conflicts`, { ...d, reqId: draft.id });
    const merged = await api(owner, 'post', `${DOC}/requests/{reqId}/merge`, { ...d, reqId: draft.id });
    const closing = await api(owner, 'post', `${DOC}/requests`, d, { body: { title: 'Abandoned' } });
    await api(owner, 'post', `${DOC}/requests/{reqId}/close`, { ...d, reqId: closing.id });
    await api(owner, 'post', `${DOC}/requests/{reqId}/reopen`, { ...d, reqId: closing.id });
    const revisions = await api(owner, 'get', `${DOC}/revisions`, d);
    const revId = (merged?.generatedRevisionId ?? revisions?.items?.[0]?.id) as string;
    const first = revisions?.items?.[revisions.items.length - 1]?.id as string;
    await api(owner, 'get', `${DOC}/revisions/{revId}`, { ...d, revId });
    await api(owner, 'get', `${DOC}/revisions/{revId}/operations`, { ...d, revId });
    await api(owner, 'get', `${DOC}/revisions/{revId}/diff`, { ...d, revId }, { query: { base: first } });
    await api(owner, 'get', `${DOC}/revisions/{revId}/request`, { ...d, revId });
    await api(owner, 'get', `${DOC}/revisions/history`, d, { query: { targetKind: 'row', rowId: 'r1' } });
    await api(owner, 'post', `${DOC}/revisions/{revId}/revert`, { ...d, revId });

    // Grouped and keyset queries, the comment and view round trips, deletes.
    await api(owner, 'post', `${DOC}/data/query`, d, { body: { groupBy: { fields: ['status'], aggregations: [{ kind: 'count' }, { kind: 'sum', field: 'price' }, { kind: 'max', field: 'name' }] } } });
    await api(owner, 'post', `${DOC}/data/query`, d, { body: { sorts: [{ field: 'name', direction: 'asc' }], limit: 1 } });
    await api(owner, 'put', `${DOC}/properties`, d, { body: { properties: [{ fieldId: 'supplier', value: { text: 'Initech' } }] } });
    await api(owner, 'post', `${DOC}/comments/{commentId}/unpin`, { ...d, commentId: comment.id });
    await api(owner, 'post', `${DOC}/comments/{commentId}/unresolve`, { ...d, commentId: comment.id });
    await api(owner, 'delete', `${DOC}/comments/{commentId}/reactions/{emoji}`, { ...d, commentId: comment.id, emoji: '👍' });
    await api(owner, 'delete', `${DOC}/comments/{commentId}`, { ...d, commentId: comment.id });
    await api(owner, 'post', `${DOC}/views`, d, { body: { id: 'chart', name: 'Prices', type: 'chart', config: { chartConfig: { xField: 'status', yField: 'price', chartType: 'bar' } } } });
    await api(owner, 'get', `${DOC}/views/{viewId}/series`, { ...d, viewId: 'chart' });
    await api(owner, 'delete', `${DOC}/views/{viewId}`, { ...d, viewId: 'chart' });
    await api(owner, 'post', `${A}/doc/{docType}`, { docType: 'scratch' }, { body: { id: 'tmp', organizationId: org, workspaceId: ws, metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }], properties: [{ id: 'note', name: 'Note', type: 'text' }] } } });
    await api(owner, 'post', `${DOC}/properties`, { docType: 'scratch', docId: 'tmp' }, { body: { properties: [{ fieldId: 'note', value: { text: 'x' } }] } });
    await api(owner, 'delete', `${DOC}/properties`, { docType: 'scratch', docId: 'tmp' });
    await api(owner, 'delete', `${DOC}`, { docType: 'scratch', docId: 'tmp' });
    expect(problems).toEqual([]);
  });

  it('approvals, webhooks and realtime', async () => {
    await api(owner, 'post', `${ORG}/members`, { organizationId: org }, { body: { userId: colleague.id, role: 'member' } });
    await api(owner, 'post', `${ORG}/workspaces/{workspaceId}/members`, { organizationId: org, workspaceId: ws }, { body: { userId: colleague.id, role: 'viewer' } });
    const gated = await api(owner, 'post', `${DOC}/requests`, d, { body: { title: 'Needs approval', changes: [{ type: 'row-update', target: { kind: 'row', rowId: 'r2' }, newValue: { price: 9 } }] } });
    await api(owner, 'get', `${DOC}/approval`, d);
    const instance = await api(owner, 'post', `${DOC}/requests/{reqId}/submit-approval`, { ...d, reqId: gated.id }, { body: { approvers: [colleague.id], strategy: 'sequential' } });
    await api(owner, 'get', `${DOC}/approval/{instanceId}`, { ...d, instanceId: instance.id });
    await api(colleague, 'post', `${DOC}/approvals/{approvalId}/approve`, { ...d, approvalId: instance.id }, { body: { decision: 'approved', comment: 'fine' } });

    // Webhooks.
    const hook = await api(owner, 'post', `${A}/webhooks`, {}, { body: { name: 'hook', url: 'http://127.0.0.1:9/hook', events: ['request_merged'], filters: { docTypes: [docType] } } });
    await api(owner, 'get', `${A}/webhooks`, {});
    await api(owner, 'get', `${A}/webhooks/{webhookId}`, { webhookId: hook.id });
    await api(owner, 'put', `${A}/webhooks/{webhookId}`, { webhookId: hook.id }, { body: { description: 'merges' } });
    await api(owner, 'post', `${A}/webhooks/{webhookId}/pause`, { webhookId: hook.id });
    await api(owner, 'post', `${A}/webhooks/{webhookId}/resume`, { webhookId: hook.id });
    const delivery = await api(owner, 'post', `${A}/webhooks/{webhookId}/test`, { webhookId: hook.id }, { body: { event: 'request_merged', payload: { requestId: 'x' } } });
    await api(owner, 'get', `${A}/webhooks/{webhookId}/deliveries`, { webhookId: hook.id });
    await api(owner, 'get', `${A}/webhooks/{webhookId}/deliveries/{deliveryId}`, { webhookId: hook.id, deliveryId: delivery?.deliveryId ?? delivery?.id });
    await api(owner, 'get', `${A}/webhooks/{webhookId}/stats`, { webhookId: hook.id });

    // Realtime.
    const scope = { query: { workspaceId: ws } };
    await api(owner, 'get', `${RT}/connect`, d, scope);
    await api(owner, 'get', `${RT}/users`, d, scope);
    const lock = await api(owner, 'post', `${RT}/lock`, d, { ...scope, body: { target: { type: 'row', rowId: 'r1' }, ttlSeconds: 60 } });
    await api(owner, 'get', `${RT}/locks`, d, scope);
    await api(owner, 'delete', `${RT}/unlock/{lockId}`, { ...d, lockId: lock?.lockId }, scope);
    await api(owner, 'get', `${RT}/events`, d, scope);
    await api(owner, 'get', '/realtime/messages/schema', {});

    // A flow from the document settings, decided through the decision route.
    await api(owner, 'put', `${DOC}/settings`, d, { body: { workflow: { approvers: [colleague.id] } } });
    const flowed = await api(owner, 'post', `${DOC}/requests`, d, { body: { title: 'Flowed', changes: [{ type: 'row-update', target: { kind: 'row', rowId: 'r2' }, newValue: { price: 10 } }] } });
    const started = await api(owner, 'post', `${DOC}/approval/start`, d, { body: { requestId: flowed.id, flowId: 'settings-sequential' } });
    await api(colleague, 'post', `${DOC}/approval/{instanceId}/decision`, { ...d, instanceId: started.id }, { query: { result: 'rejected' }, body: { comment: 'no' } });

    await api(owner, 'post', `${A}/webhooks/{webhookId}/regenerate-secret`, { webhookId: hook.id });
    await api(owner, 'post', `${A}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver`, { webhookId: hook.id, deliveryId: delivery?.deliveryId ?? delivery?.id });
    await api(owner, 'delete', `${A}/webhooks/{webhookId}`, { webhookId: hook.id });

    await api(owner, 'post', `${RT}/snapshot`, d, { ...scope, body: { name: 'before-import' } });
    await api(owner, 'get', `${RT}/snapshot`, d, scope);
    await api(owner, 'get', `${RT}/snapshots`, d, scope);
    await api(owner, 'post', `${RT}/disconnect-all`, d, scope);
    expect(problems).toEqual([]);
  });

  it('supply chain: catalogs, connections, order books, bindings, connectors', async () => {
    // A catalog shared through a connection, an order book bound to it.
    const catalog = await api(owner, 'post', `${ORG}/catalogs`, { organizationId: org }, {
      body: { name: 'Parts', catalogType: 'product', sharingEnabled: true, fields: [{ name: 'sku', type: 'text', required: true }, { name: 'price', type: 'number', description: 'EUR' }] },
    });
    await api(owner, 'get', `${ORG}/catalogs`, { organizationId: org });
    await api(owner, 'get', `${ORG}/catalogs/{catalogId}`, { organizationId: org, catalogId: catalog.id });
    const catalogFields = await api(owner, 'get', `${ORG}/catalogs/{catalogId}/fields`, { organizationId: org, catalogId: catalog.id });
    const sku = catalogFields?.items?.[0]?.id as string;
    await api(owner, 'post', `${ORG}/catalogs/{catalogId}/rows/batch-update`, { organizationId: org, catalogId: catalog.id }, { body: { rows: [{ operation: 'create', id: 'p1', values: { [sku]: 'SKU-1' } }] } });
    await api(owner, 'get', `${ORG}/catalogs/{catalogId}/revisions`, { organizationId: org, catalogId: catalog.id });
    const connection = await api(owner, 'post', `${ORG}/catalogs/{catalogId}/connections`, { organizationId: org, catalogId: catalog.id }, { body: { name: 'feed', accessControl: 'public', shareMode: 'multiple' } });
    await api(owner, 'get', `${ORG}/connections`, { organizationId: org });
    await api(owner, 'get', `${ORG}/connections/{connectionId}`, { organizationId: org, connectionId: connection.id });
    const link = await api(owner, 'post', `${ORG}/connections/{connectionId}/share-link`, { organizationId: org, connectionId: connection.id }, { body: { maxUses: 5 } });
    await api(owner, 'get', '/connect/share/{code}', { code: String(link?.shareUrl ?? '').split('/').pop() as string });
    const book = await api(colleague, 'post', `${ORG}/orderbooks`, { organizationId: colleague.defaultOrganizationId }, { body: { name: 'Orders', description: 'Buying', sourceConnectionIds: [connection.id] } });
    const buyerBook = { organizationId: colleague.defaultOrganizationId, orderBookId: book.id };
    await api(colleague, 'get', `${ORG}/orderbooks/{orderBookId}`, buyerBook);
    await api(colleague, 'get', `${ORG}/orderbooks/{orderBookId}/fields`, buyerBook);
    await api(colleague, 'post', `${ORG}/orderbooks/{orderBookId}/field-mapping/preview`, buyerBook, { body: { connectionId: connection.id } });
    const binding = await api(colleague, 'post', `${ORG}/orderbooks/{orderBookId}/bindings`, buyerBook, { body: { connectionId: connection.id, targetOrderBookId: book.id } });
    await api(colleague, 'get', `${ORG}/orderbooks/{orderBookId}/bindings`, buyerBook);
    await api(colleague, 'get', `${ORG}/orderbooks/{orderBookId}/bindings/{bindingId}`, { ...buyerBook, bindingId: binding.id });
    // The binding's first propagation proposes the catalog's rows as a sync request (after commit): wait for it, so
    // the list is checked with a propagated change in it (an unset catalog field travels as a null that clears).
    await eventually(async () => {
      const res = await request(t.http).get(`${A}/organizations/${buyerBook.organizationId}/orderbooks/${book.id}/requests`).set('Authorization', `Bearer ${colleague.token}`);
      return (res.body?.payload?.items?.length ?? 0) > 0;
    }, 15_000, 'the propagated sync request');
    await api(colleague, 'get', `${ORG}/orderbooks/{orderBookId}/requests`, buyerBook);
    await api(colleague, 'get', `${ORG}/orderbooks/{orderBookId}/sync-logs`, buyerBook);
    await api(owner, 'get', `${ORG}/connections/{connectionId}/bindings`, { organizationId: org, connectionId: connection.id });

    // Owner-side changes, an approval-gated connection, rows, sync requests, connectors, currency rates.
    const catalogPath = `${ORG}/catalogs/{catalogId}`;
    const own = { organizationId: org, catalogId: catalog.id };
    await api(owner, 'patch', catalogPath, own, { body: { name: 'Parts 2' } });
    await api(owner, 'patch', `${catalogPath}/rows/{rowId}`, { ...own, rowId: 'p1' }, { body: { values: { [sku]: 'SKU-1b' } } });
    await api(owner, 'get', `${catalogPath}/connections`, own);
    const conn = { organizationId: org, connectionId: connection.id };
    await api(owner, 'patch', `${ORG}/connections/{connectionId}`, conn, { body: { name: 'feed 2' } });
    await api(owner, 'post', `${ORG}/connections/{connectionId}/pause`, conn);
    await api(owner, 'post', `${ORG}/connections/{connectionId}/resume`, conn);
    const links = await api(owner, 'get', `${ORG}/connections/{connectionId}/share-links`, conn);
    await api(owner, 'delete', `${ORG}/connections/{connectionId}/share-links/{linkId}`, { ...conn, linkId: links?.items?.[0]?.id });
    const gatedConnection = await api(owner, 'post', `${ORG}/connections`, { organizationId: org }, { body: { name: 'gated', sourceCatalogId: catalog.id, accessControl: 'approval' } });
    const pending = await api(colleague, 'post', `${ORG}/orderbooks/{orderBookId}/bindings`, buyerBook, { body: { connectionId: gatedConnection.id, targetOrderBookId: book.id } });
    await api(owner, 'post', `${ORG}/connections/{connectionId}/bindings/{bindingId}/approve`, { organizationId: org, connectionId: gatedConnection.id, bindingId: pending.id }, { body: { reviewNote: 'welcome' } });
    await api(colleague, 'get', `${ORG}/orderbooks/{orderBookId}/bindings/{bindingId}/propagation`, { ...buyerBook, bindingId: binding.id });
    await api(colleague, 'post', `${ORG}/orderbooks/{orderBookId}/rows/batch-update`, buyerBook, { body: { rows: [{ target: { row: 'o1' }, values: [] }] } });
    const syncRequest = await api(colleague, 'post', `${ORG}/orderbooks/{orderBookId}/requests`, buyerBook, { body: { requestType: 'manual', changes: [{ operation: 'create_row', values: {} }], message: 'new product' } });
    await api(colleague, 'get', `${ORG}/orderbooks/{orderBookId}/requests/{requestId}`, { ...buyerBook, requestId: syncRequest.requestId });
    await api(colleague, 'post', `${ORG}/orderbooks/{orderBookId}/requests/{requestId}/reject`, { ...buyerBook, requestId: syncRequest.requestId }, { body: {} });
    await api(colleague, 'get', `${ORG}/orderbooks`, { organizationId: colleague.defaultOrganizationId });
    await api(owner, 'delete', `${catalogPath}/rows/{rowId}`, { ...own, rowId: 'p1' });

    const clone = await api(owner, 'post', `${ORG}/catalogs`, { organizationId: org }, { body: { name: 'Storefront', catalogType: 'product', fields: [{ name: 'sku', type: 'text' }] } });
    const cloneFields = await api(owner, 'get', `${ORG}/catalogs/{catalogId}/fields`, { organizationId: org, catalogId: clone.id });
    const connector = await api(owner, 'post', `${ORG}/connectors`, { organizationId: org }, {
      body: {
        name: 'storefront',
        connectorType: 'catalog_clone',
        sourceDocId: catalog.id,
        targetDocId: clone.id,
        catalogCloneConfig: { fieldMapping: { unmappedFields: 'ignore', rules: [{ sourceFieldId: sku, targetFieldId: cloneFields?.items?.[0]?.id, transformType: 'direct' }] }, syncMode: 'realtime' },
      },
    });
    const connectorPath = `${ORG}/connectors/{connectorId}`;
    const ctr = { organizationId: org, connectorId: connector.id };
    await api(owner, 'get', `${ORG}/connectors`, { organizationId: org });
    await api(owner, 'get', connectorPath, ctr);
    await api(owner, 'post', `${connectorPath}/pause`, ctr);
    await api(owner, 'post', `${connectorPath}/resume`, ctr);
    await api(owner, 'post', `${connectorPath}/run`, ctr);
    await api(owner, 'get', `${connectorPath}/runs`, ctr);
    // Runs happen after commit: the finished runs are checked too, not only whichever state the first list caught.
    await eventually(async () => {
      const res = await request(t.http).get(`${A}/organizations/${org}/connectors/${connector.id}/runs`).set('Authorization', `Bearer ${owner.token}`);
      const runs = (res.body?.payload?.items ?? []) as Array<{ status: string }>;
      return runs.length > 0 && runs.every((run) => run.status !== 'pending');
    }, 15_000, 'the connector runs to finish');
    await api(owner, 'get', `${connectorPath}/runs`, ctr);
    await api(owner, 'get', connectorPath, ctr);
    await api(owner, 'get', `${connectorPath}/schedule`, ctr);
    await api(owner, 'delete', connectorPath, ctr);
    await api(owner, 'put', `${ORG}/currency-rates`, { organizationId: org }, { body: { rates: [{ base: 'USD', quote: 'EUR', rate: 0.92, effectiveDate: '2026-01-01' }] } });
    await api(owner, 'get', `${ORG}/currency-rates`, { organizationId: org });
    expect(problems).toEqual([]);
  });

  // The rest (set-up heavy: a real OpenID provider, second factors, files, the event stream) is in openapi-responses-more.
  it('covers a representative set of operations', () => {
    expect(checker.checked.size).toBeGreaterThanOrEqual(201);
  });
});
