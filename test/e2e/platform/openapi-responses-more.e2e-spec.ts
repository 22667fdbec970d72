import type { OpenAPIV3 } from 'openapi-types';
import { generate } from 'otplib';
import request from 'supertest';
import * as Y from 'yjs';
import { encodeAwareness } from '../../../src/modules/realtime/domain/yjs-wire.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createClient, formFields, pkcePair } from '../identity/identity-helpers.js';
import { startTestIdp, type TestIdp } from '../identity/test-idp.js';
import { listen } from '../realtime/realtime.fixtures.js';
import { type Method, operationRequest, type Params, ResponseChecker } from './support/openapi-responses.js';

const A = '/api/v1';
const DOC = `${A}/doc/{docType}/{docId}`;
const RT = '/realtime/doc/{docType}/{docId}';
const ORG = `${A}/organizations/{organizationId}`;
const ISSUER = 'http://issuer.quire.test';
const CLIENT_REDIRECT = 'http://127.0.0.1/callback';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- payloads are read loosely; the schema check is the assertion
type Payload = any;
interface Options {
  query?: Record<string, unknown>;
  body?: unknown;
  /** Send the body as an HTML form (the /authorize and /token endpoints). */
  form?: boolean;
  /** The status this call is meant to answer when it is not a success (a 303 redirect, a 401 challenge). */
  status?: number;
}

/**
 * The operations openapi-responses.e2e-spec.ts leaves out because they need more set-up: a real OpenID provider,
 * second factors, the /authorize pages, files, the event stream, supply-chain decisions. Same check: each answer
 * against what the OpenAPI document declares for its path, method and status (for files and pages, the media type).
 */
describe('OpenAPI response schemas match what the API answers (set-up heavy operations)', () => {
  let t: TestApp;
  let idp: TestIdp;
  let checker: ResponseChecker;
  let problems: string[] = [];
  let admin: TestUser;
  let owner: TestUser;
  let colleague: TestUser;

  beforeAll(async () => {
    idp = await startTestIdp([`${ISSUER}/api/v1/auth/authorize/oauth/google/callback`]);
    t = await createTestApp({ AUTH_ISSUER_URL: ISSUER, ADMIN_EMAILS: 'platform-admin@example.test', ENCRYPTION_KEY: 'test-encryption-key' });
    const doc = (await request(t.http).get('/api/docs-json').expect(200)).body as OpenAPIV3.Document;
    checker = new ResponseChecker(doc);
    [admin, owner, colleague] = await Promise.all([registerUser(t.http, { email: 'platform-admin@example.test' }), registerUser(t.http), registerUser(t.http)]);
    for (const account of ['alice', 'bob', 'carol']) {
      idp.accounts.set(account, { email: `${account}@idp.test`, email_verified: true, name: account });
    }
  });
  beforeEach(() => {
    problems = [];
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  /** One call, checked against the document (problems collected); the raw answer. */
  async function call(user: { token: string } | null, method: Method, template: string, params: Params, options: Options = {}): Promise<request.Response> {
    let req = operationRequest(t.http, user, method, template, params, options.query);
    if (options.form) {
      req = req.type('form');
    }
    const res = options.body === undefined ? await req : await req.send(options.body as object);
    const operation = `${method.toUpperCase()} ${template}`;
    problems.push(...checker.check({ operation, status: res.status, body: res.body, contentType: res.headers['content-type'] }));
    if (options.status ? res.status !== options.status : res.status >= 300) {
      const failure = res.body as { code?: string; details?: unknown };
      problems.push(`${operation} ${res.status}: expected ${options.status ?? 'a success'}, got ${failure.code} ${JSON.stringify(failure.details ?? null)}`);
    }
    return res;
  }

  /** One call; its envelope's payload. */
  async function api(user: { token: string } | null, method: Method, template: string, params: Params, options: Options = {}): Promise<Payload> {
    return ((await call(user, method, template, params, options)).body as { payload?: unknown })?.payload;
  }

  it('third-party login, bindings, provider administration, signing keys', async () => {
    await api(admin, 'post', `${A}/admin/oidc/providers`, {}, { body: { provider: 'google', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret } });
    const spare = await api(admin, 'post', `${A}/admin/oidc/providers`, {}, { body: { provider: 'feishu', issuer: 'https://open.feishu.example', clientId: 'cli_1', clientSecret: 'secret' } });
    await api(admin, 'get', `${A}/admin/oidc/providers`, {});
    await api(admin, 'patch', `${A}/admin/oidc/providers/{providerId}`, { providerId: spare.id }, { body: { displayName: 'Feishu!', enabled: false } });
    await api(admin, 'delete', `${A}/admin/oidc/providers/{providerId}`, { providerId: spare.id });
    await api(admin, 'post', `${A}/admin/signing-keys/rotate`, {});

    // Sign-in through the provider (a new account), then a password account binding and unbinding it.
    const provider = { provider: 'google' };
    const start = await api(null, 'get', `${A}/auth/oauth/{provider}/authorize`, provider, { query: { redirectUri: idp.redirectUri } });
    const back = await idp.signIn(start.authorizationUrl, 'alice');
    await api(null, 'post', `${A}/auth/oauth/{provider}/callback`, provider, { body: { code: back.searchParams.get('code'), state: start.state, iss: back.searchParams.get('iss') ?? undefined } });
    const binder = await registerUser(t.http);
    const bindStart = await api(binder, 'get', `${A}/auth/oauth/{provider}/authorize`, provider, { query: { redirectUri: idp.redirectUri } });
    const bindBack = await idp.signIn(bindStart.authorizationUrl, 'bob');
    await api(binder, 'post', `${A}/users/me/oauth/{provider}`, provider, { body: { authorizationCode: bindBack.searchParams.get('code'), state: bindStart.state } });
    await api(binder, 'delete', `${A}/users/me/oauth/{provider}`, provider);
    expect(problems).toEqual([]);
  });

  it('two-step verification: enrolment, the second sign-in step, turning it off', async () => {
    const user = await registerUser(t.http);
    const enrol = await api(user, 'post', `${A}/auth/2fa/enable`, {}, { body: { method: 'totp' } });
    const secret = enrol.secret as string;
    await api(user, 'post', `${A}/auth/2fa/enable`, {}, { body: { method: 'totp', code: await generate({ secret }) } });
    const challenge = await api(null, 'post', `${A}/auth/login`, {}, { body: { email: user.email, password: user.password }, status: 401 });
    // The enrolment code is spent: the next step's code signs in.
    const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
    await api(null, 'post', `${A}/auth/2fa/verify`, {}, { body: { challengeToken: challenge.challengeToken, code } });
    await api(user, 'post', `${A}/auth/2fa/disable`, {}, { body: { password: user.password } });
    expect(problems).toEqual([]);
  });

  it('the authorization server: pages, token endpoint, their /api/v1/auth aliases, the page callback', async () => {
    const client = await createClient(t.http, owner, { redirectUris: [CLIENT_REDIRECT], allowedScopes: ['openid', 'email', 'doc:read'] });
    const authorize = async (base: string): Promise<{ location: URL; verifier: string }> => {
      const { verifier, challenge } = pkcePair();
      const query = { response_type: 'code', client_id: client.clientId, redirect_uri: CLIENT_REDIRECT, scope: 'openid email', state: 's', code_challenge: challenge, code_challenge_method: 'S256' };
      const page = await call(null, 'get', base, {}, { query });
      const consent = await call(null, 'post', base, {}, { form: true, body: { step: 'login', request: formFields(page.text).request, email: owner.email, password: owner.password } });
      const fields = formFields(consent.text);
      const done = await call(null, 'post', base, {}, { form: true, status: 303, body: { step: 'consent', request: fields.request, consent: fields.consent, decision: 'approve' } });
      return { location: new URL(done.headers.location as string), verifier };
    };
    const secret = { client_id: client.clientId, client_secret: client.clientSecret };
    const exchange = async (tokenPath: string, { location, verifier }: { location: URL; verifier: string }): Promise<Payload> => {
      const form = { grant_type: 'authorization_code', code: location.searchParams.get('code') ?? '', redirect_uri: CLIENT_REDIRECT, code_verifier: verifier, ...secret };
      return (await call(null, 'post', tokenPath, {}, { form: true, body: form })).body;
    };
    const tokens = await exchange('/token', await authorize('/authorize'));
    // The other grants answer other subsets of the token response (no id_token, no refresh_token).
    await call(null, 'post', '/token', {}, { form: true, body: { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...secret } });
    await call(null, 'post', '/token', {}, { form: true, body: { grant_type: 'client_credentials', scope: 'doc:read', ...secret } });
    const token = (await exchange(`${A}/auth/token`, await authorize(`${A}/auth/authorize`))).access_token as string;
    await call({ token }, 'get', `${A}/auth/userinfo`, {});
    await call(null, 'get', `${A}/auth/.well-known/openid-configuration`, {});
    await call(null, 'get', `${A}/auth/jwks.json`, {});

    // "Sign in with Google" on the page (the provider the first test set up): back through the page callback.
    const { challenge } = pkcePair();
    const query = { response_type: 'code', client_id: client.clientId, redirect_uri: CLIENT_REDIRECT, scope: 'openid email', state: 'p', code_challenge: challenge, code_challenge_method: 'S256' };
    const page = await call(null, 'get', '/authorize', {}, { query });
    const chosen = await call(null, 'post', '/authorize', {}, { form: true, status: 303, body: { step: 'third_party', request: formFields(page.text).request, provider: 'google' } });
    const back = await idp.signIn(chosen.headers.location as string, 'carol');
    await call(null, 'get', `${A}/auth/authorize/oauth/{provider}/callback`, { provider: 'google' }, { query: Object.fromEntries(back.searchParams) });
    expect(problems).toEqual([]);
  });

  it('tenancy: a workspace role change, a declined invitation, an ownership transfer', async () => {
    const invitee = await registerUser(t.http);
    const team = await api(owner, 'post', `${A}/organizations`, {}, { body: { name: 'Team', slug: `more-${Date.now()}`, type: 'team' } });
    const organizationId = team.id as string;
    await api(owner, 'post', `${ORG}/members`, { organizationId }, { body: { userId: colleague.id, role: 'admin' } });
    const workspace = await api(owner, 'post', `${ORG}/workspaces`, { organizationId }, { body: { name: 'Ops', slug: 'ops' } });
    const wsMember = await api(owner, 'post', `${ORG}/workspaces/{workspaceId}/members`, { organizationId, workspaceId: workspace.id }, { body: { userId: colleague.id, role: 'viewer' } });
    await api(owner, 'patch', `${ORG}/workspaces/{workspaceId}/members/{memberId}`, { organizationId, workspaceId: workspace.id, memberId: wsMember.id }, { body: { role: 'editor' } });
    const invitation = await api(owner, 'post', `${ORG}/invitations`, { organizationId }, { body: { email: invitee.email } });
    await api(invitee, 'post', `${A}/invitations/{token}/decline`, { token: invitation.token });
    await api(owner, 'post', `${ORG}/transfer-ownership`, { organizationId }, { body: { userId: colleague.id } });
    expect(problems).toEqual([]);
  });

  it('documents and realtime: the /rows aliases, a revision exported as a file, Yjs updates, awareness, the event stream', async () => {
    const d = { docType: 'parts', docId: 'more' };
    const ws = owner.defaultWorkspaceId;
    await api(owner, 'post', `${A}/doc/{docType}`, { docType: d.docType }, { body: { id: d.docId, organizationId: owner.defaultOrganizationId, workspaceId: ws, metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }, { id: 'price', name: 'Price', type: 'number' }] } } });
    await api(owner, 'post', `${DOC}/rows`, d, { body: { id: 'r1', values: { name: 'Bolt', price: 2 } } });
    const row = await api(owner, 'get', `${DOC}/rows/{rowId}`, { ...d, rowId: 'r1' });
    await api(owner, 'put', `${DOC}/rows/{rowId}`, { ...d, rowId: 'r1' }, { body: { values: { price: 3 }, version: row?.version ?? 1 } });
    await api(owner, 'get', `${DOC}/rows`, d);
    await api(owner, 'post', `${DOC}/rows/query`, d, { body: { sorts: [{ field: 'name', direction: 'asc' }] } });
    await api(owner, 'post', `${DOC}/rows/batch-update`, d, { body: [{ target: { row: 'r1', field: 'price' }, value: { number: 5 } }] });
    await api(owner, 'post', `${DOC}/rows`, d, { body: { id: 'gone', values: { name: 'Gone' } } });
    await api(owner, 'delete', `${DOC}/rows/{rowId}`, { ...d, rowId: 'gone' });

    const revisions = await api(owner, 'get', `${DOC}/revisions`, d);
    const revId = revisions.items[0].id as string;
    for (const format of ['json', 'ndjson', 'csv', 'xlsx']) {
      await call(owner, 'get', `${DOC}/revisions/{revId}/export`, { ...d, revId }, { query: { format } });
    }
    await call(owner, 'get', `${DOC}/revisions/{revId}/export`, { ...d, revId }, { query: { what: 'changes' } });

    const scope = { workspaceId: ws };
    const ydoc = new Y.Doc();
    ydoc.getMap('meta').set('from', 'http');
    await api(owner, 'post', `${RT}/apply-update`, d, { query: scope, body: { update: Buffer.from(Y.encodeStateAsUpdate(ydoc)).toString('base64') } });
    const awareness = encodeAwareness([{ clientId: 4242, clock: 1, state: { user: { name: 'Owner' } } }]);
    await api(owner, 'post', `${RT}/awareness`, d, { query: scope, body: { update: Buffer.from(awareness).toString('base64') } });

    // The event stream never ends: its status and media type are checked, then it is dropped.
    const base = await listen(t);
    const controller = new AbortController();
    const stream = await fetch(`${base}/realtime/doc/${d.docType}/${d.docId}/events/stream?workspaceId=${ws}`, { headers: bearer(owner), signal: controller.signal });
    controller.abort();
    problems.push(...checker.check({ operation: `GET ${RT}/events/stream`, status: stream.status, body: undefined, contentType: stream.headers.get('content-type') ?? undefined }));
    expect(stream.status).toBe(200);
    expect(problems).toEqual([]);
  });

  it('supply chain: a refused binding, a disabled connection, an accepted sync request', async () => {
    const org = owner.defaultOrganizationId;
    const catalog = await api(owner, 'post', `${ORG}/catalogs`, { organizationId: org }, { body: { name: 'Parts', catalogType: 'product', sharingEnabled: true, fields: [{ name: 'sku', type: 'text' }] } });
    const gated = await api(owner, 'post', `${ORG}/connections`, { organizationId: org }, { body: { name: 'gated', sourceCatalogId: catalog.id, accessControl: 'approval' } });
    const book = await api(colleague, 'post', `${ORG}/orderbooks`, { organizationId: colleague.defaultOrganizationId }, { body: { name: 'Orders' } });
    const buyerBook = { organizationId: colleague.defaultOrganizationId, orderBookId: book.id };
    const pending = await api(colleague, 'post', `${ORG}/orderbooks/{orderBookId}/bindings`, buyerBook, { body: { connectionId: gated.id, targetOrderBookId: book.id, fieldMapping: { unmappedFields: 'create', rules: [] } } });
    await api(owner, 'post', `${ORG}/connections/{connectionId}/bindings/{bindingId}/reject`, { organizationId: org, connectionId: gated.id, bindingId: pending.id }, { body: { note: 'no' } });
    await api(owner, 'post', `${ORG}/connections/{connectionId}/disable`, { organizationId: org, connectionId: gated.id });
    const syncRequest = await api(colleague, 'post', `${ORG}/orderbooks/{orderBookId}/requests`, buyerBook, { body: { requestType: 'manual', changes: [{ operation: 'create_row', values: {} }], message: 'new product' } });
    await api(colleague, 'post', `${ORG}/orderbooks/{orderBookId}/requests/{requestId}/accept`, { ...buyerBook, requestId: syncRequest.requestId }, { body: { reviewNote: 'fine' } });
    expect(problems).toEqual([]);
  });

  it('the checker holds files and pages to their declared media types', () => {
    const file = { content: { 'text/csv': { schema: { type: 'string', format: 'binary' } }, 'application/json': { schema: { type: 'string', format: 'binary' } } } };
    const page = { content: { 'text/html': { schema: { type: 'string' } } } };
    const own = new ResponseChecker({ openapi: '3.0.0', info: { title: 't', version: '1' }, paths: { '/f': { get: { responses: { 200: file } } }, '/p': { get: { responses: { 200: page } } } } } as unknown as OpenAPIV3.Document);
    const answer = (operation: string, contentType?: string): string[] => own.check({ operation, status: 200, body: {}, contentType });
    expect(answer('GET /f', 'text/csv; charset=utf-8')).toEqual([]);
    expect(answer('GET /f', 'application/json; charset=utf-8')).toEqual([]);
    expect(answer('GET /f', 'text/plain')).toEqual(['GET /f 200: declared text/csv or application/json, answered text/plain']);
    expect(answer('GET /p', 'text/html; charset=utf-8')).toEqual([]);
    expect(answer('GET /p', 'application/json')).toEqual(['GET /p 200: declared text/html, answered application/json']);
    expect(answer('GET /p')).toEqual(['GET /p 200: declared text/html, answered no content type']);
  });

  it('covers the operations openapi-responses.e2e-spec.ts leaves out: together, every operation of the document', () => {
    const rest = [
      `POST ${A}/auth/2fa/verify`, `POST ${A}/auth/2fa/disable`, `POST ${A}/users/me/oauth/{provider}`, `DELETE ${A}/users/me/oauth/{provider}`,
      'GET /authorize', 'POST /authorize', 'POST /token', `GET ${A}/auth/authorize/oauth/{provider}/callback`,
      `GET ${A}/auth/.well-known/openid-configuration`, `GET ${A}/auth/jwks.json`, `GET ${A}/auth/authorize`, `POST ${A}/auth/authorize`,
      `POST ${A}/auth/token`, `GET ${A}/auth/userinfo`, `GET ${A}/admin/oidc/providers`, `POST ${A}/admin/oidc/providers`,
      `PATCH ${A}/admin/oidc/providers/{providerId}`, `DELETE ${A}/admin/oidc/providers/{providerId}`, `POST ${A}/admin/signing-keys/rotate`,
      `GET ${A}/auth/oauth/{provider}/authorize`, `POST ${A}/auth/oauth/{provider}/callback`, `POST ${ORG}/transfer-ownership`,
      `POST ${A}/invitations/{token}/decline`, `PATCH ${ORG}/workspaces/{workspaceId}/members/{memberId}`,
      `GET ${DOC}/rows`, `POST ${DOC}/rows`, `POST ${DOC}/rows/query`, `POST ${DOC}/rows/batch-update`, `GET ${DOC}/rows/{rowId}`,
      `PUT ${DOC}/rows/{rowId}`, `DELETE ${DOC}/rows/{rowId}`, `GET ${DOC}/revisions/{revId}/export`, `GET ${RT}/events/stream`,
      `POST ${RT}/apply-update`, `POST ${RT}/awareness`, `POST ${ORG}/connections/{connectionId}/disable`,
      `POST ${ORG}/connections/{connectionId}/bindings/{bindingId}/reject`, `POST ${ORG}/orderbooks/{orderBookId}/requests/{requestId}/accept`,
    ];
    expect(rest.filter((operation) => !checker.checked.has(operation))).toEqual([]);
  });
});
