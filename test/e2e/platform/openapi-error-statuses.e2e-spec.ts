import { randomUUID } from 'node:crypto';
import type { OpenAPIV3 } from 'openapi-types';
import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { type Method, operationRequest, type Params, ResponseChecker } from './support/openapi-responses.js';
import { type Fill, RequestValues } from './support/openapi-values.js';

const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete'];
const ADMIN_EMAIL = 'sweep-admin@example.test';
/** Path parameters the sweep fills with a real resource of its user (the others get an unknown id). */
const PARENTS = ['organizationId', 'workspaceId', 'docType', 'docId'] as const;
const CONCURRENCY = 8;
const TIMEOUT_MS = 30_000;

/**
 * Operations whose probes would change state the sweep shares: they run as a throwaway user of their own, so the
 * sweep's user keeps its session and its sign-in (logging out every session, turning on a second factor).
 */
const THROWAWAY_USER = new Set(['POST /api/v1/auth/sessions/logout-all', 'POST /api/v1/auth/2fa/enable', 'POST /api/v1/auth/2fa/disable']);

/** Operations run as a platform administrator (as anyone else they all answer 403 before reading the request). */
const AS_ADMIN = /^\S+ \/api\/v1\/admin\//;

/**
 * Administrator operations probed as the ordinary user instead (they answer 403), with why: rotating the signing keys
 * as an administrator changes the keys every other probe's token is checked with.
 */
const ADMIN_SKIPPED = new Set(['POST /api/v1/admin/signing-keys/rotate']);

/**
 * Undeclared statuses known and not yet fixed, each with its reason, keyed as reported without the probe name
 * (`'GET /api/v1/x/{id} 404: status not declared'`). An entry fails the test once it is no longer answered, so the
 * list cannot outlive the problem. Empty: every status the sweep saw is declared.
 */
const KNOWN: Record<string, string> = {};

/** The same for the probes with bodies built from the request schemas. */
const KNOWN_VALID_BODIES: Record<string, string> = {};

/**
 * Operations no generated (or hand-written) body gets past validation, with why: the sweep cannot reach what they
 * answer behind it. An entry fails the test once the operation gets through.
 */
const REFUSED: Record<string, string> = {
  'POST /api/v1/organizations/{organizationId}/transfer-ownership':
    'the new owner must be another active member, and the sweep organization has only its owner: an unknown user and the owner are both VALIDATION_ERROR on userId (docs/tenancy.md)',
};

/**
 * Bodies written by hand where one built from the request schema cannot get past validation, keyed by operation, with
 * why: from the generated body, the known names it was built with (the sweep's organization, workspace, document,
 * row and user for the probes at the real parents, none for the probes with unknown ids) and its fill.
 */
const BODY_OVERRIDES: Record<string, (generated: Record<string, unknown>, names: Params, fill: Fill) => unknown> = {
  // The first provider is the one the provider routes are probed with (their unknown value): configuring it would make
  // their answers depend on which probe ran first. Explicit endpoints: no discovery, so nothing is fetched.
  'POST /api/v1/admin/oidc/providers': (generated) => ({
    ...generated,
    provider: 'feishu',
    authorizationEndpoint: 'https://example.com/authorize',
    tokenEndpoint: 'https://example.com/token',
  }),
  // E-mail and password, or phone (and code): every property is optional, one of the pairs is required.
  'POST /api/v1/auth/login': () => ({ email: `sweep-${randomUUID().slice(0, 8)}@example.com`, password: 'not the password' }),
  // One of code and authorizationCode is required (both optional in the schema).
  'POST /api/v1/auth/oauth/{provider}/callback': (generated) => ({ state: generated.state, code: 'sweep-code' }),
  // The URL must resolve, and this machine resolves no public name; loopback addresses are allowed outside production.
  'POST /api/v1/webhooks': (generated) => ({ ...generated, url: 'http://127.0.0.1:9/sweep' }),
  // The schema's example filters and sorts on a field "price" the sweep's document does not have.
  'POST /api/v1/doc/{docType}/{docId}/data/query': (generated) => ({ ...generated, filters: undefined, sorts: undefined }),
  'POST /api/v1/doc/{docType}/{docId}/rows/query': (generated) => ({ ...generated, filters: undefined, sorts: undefined }),
  // The example writes rows r1 to r3 and fields the document does not have: its own row and field instead. With every
  // property the example stays, refused with a problem naming each unknown row (details.rowId).
  'POST /api/v1/doc/{docType}/{docId}/data/bulk': (generated, names, fill) =>
    fill === 'all' ? generated : [{ target: { row: names.rowId ?? 'r1', field: 'name' }, value: { text: 'Bulk' } }],
  'POST /api/v1/doc/{docType}/{docId}/rows/batch-update': (generated, names, fill) =>
    fill === 'all' ? generated : [{ target: { row: names.rowId ?? 'r1', field: 'name' }, value: { text: 'Bulk' } }],
  // The required fields list replaces the document's fields: it keeps the one the other probes write.
  'PUT /api/v1/doc/{docType}/{docId}/metadata': (generated) => ({ ...generated, fields: [{ id: 'name', name: 'Name', type: 'text' }], properties: undefined }),
  // Settings that change how later probes' writes are answered (the examples turn on approval workflows and narrow
  // permissions, and probes run eight at a time): neutral settings instead, so every answer is the same whatever ran first.
  'PUT /api/v1/doc/{docType}/{docId}/settings': () => ({}),
  'PUT /api/v1/doc/{docType}/setting': () => ({}),
  // A top-level comment needs a target (optional in the schema: a reply has none).
  'POST /api/v1/doc/{docType}/{docId}/comments': (generated) => ({ target: { scope: 'document' }, ...generated }),
  // An emoji is free text in the schema; one emoji (or short name) in fact.
  'POST /api/v1/doc/{docType}/{docId}/comments/{commentId}/reactions': (generated) => ({ ...generated, emoji: '👍' }),
  // A row lock needs rowId and refuses fieldId (both optional in the schema, which covers every lock type).
  'POST /realtime/doc/{docType}/{docId}/lock': (generated, names) => ({ ...generated, target: { type: 'row', rowId: names.rowId ?? 'r1' } }),
  // Base64 of an empty Yjs update, and of the awareness of one client (1, clock 1, state {}); the schema says string.
  'POST /realtime/doc/{docType}/{docId}/apply-update': (generated) => ({ ...generated, update: 'AAA=' }),
  'POST /realtime/doc/{docType}/{docId}/awareness': (generated) => ({ ...generated, update: Buffer.from([1, 1, 1, 2, 0x7b, 0x7d]).toString('base64') }),
  // Approvers must be users who can read the document: the sweep's user (a fresh id at unknown ids).
  'POST /api/v1/doc/{docType}/{docId}/requests/{reqId}/submit-approval': (generated, names) => ({ ...generated, approvers: [names.userId ?? randomUUID()] }),
  // Required without a catalog in the path (the catalog route takes it from there).
  'POST /api/v1/organizations/{organizationId}/connections': (generated) => ({ sourceCatalogId: randomUUID(), ...generated }),
  // The configuration of the connector type is required (both configurations optional in the schema).
  'POST /api/v1/organizations/{organizationId}/connectors': (generated) => ({ ...generated, orderbookToCatalogConfig: {}, catalogCloneConfig: undefined }),
};

interface Probe {
  name: string;
  operation: string;
  user: 'anonymous' | 'user' | 'admin' | 'throwaway' | 'stranger';
  params: Params;
  body?: unknown;
  query?: Record<string, unknown>;
}

/** What one probe was answered: the status, and the error code of a failure. */
interface Answer {
  probe: Probe;
  status: number;
  code?: string;
}

/**
 * Error answers are part of the contract too: a generated client decodes a 404 or a 409 only when the document lists
 * it. Every operation of the OpenAPI document is called a few ways that must fail — without credentials, with ids that
 * do not exist, with a body of the wrong shape — and each answered status must be one the document declares for the
 * operation, its error envelope matching the declared schema. A 5xx is a failure by itself. Most routes refuse a body
 * of the wrong shape before any lookup, so a second sweep sends bodies (and required query parameters) built from the
 * operation's own request schema: what answers behind validation (404, 403, 409 …) is held to the same rules.
 */
describe('OpenAPI declares the error statuses the API answers', () => {
  let t: TestApp;
  let doc: OpenAPIV3.Document;
  let checker: ResponseChecker;
  let user: TestUser;
  let admin: TestUser;
  let stranger: TestUser;
  const real: Params = {};
  /** Values of body properties by name at the real parents: the parents, the sweep's user and its document's row. */
  const known: Params = {};

  beforeAll(async () => {
    t = await createTestApp({ ADMIN_EMAILS: ADMIN_EMAIL, ENCRYPTION_KEY: 'test-encryption-key' });
    doc = (await request(t.http).get('/api/docs-json').expect(200)).body as OpenAPIV3.Document;
    checker = new ResponseChecker(doc);
    [user, admin, stranger] = await Promise.all([registerUser(t.http), registerUser(t.http, { email: ADMIN_EMAIL }), registerUser(t.http)]);
    Object.assign(real, { organizationId: user.defaultOrganizationId, workspaceId: user.defaultWorkspaceId, docType: 'sweep', docId: 'sweep-doc' });
    await operationRequest(t.http, user, 'post', '/api/v1/doc/{docType}', { docType: real.docType! })
      .send({
        id: real.docId,
        organizationId: real.organizationId,
        workspaceId: real.workspaceId,
        title: 'Sweep',
        metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] },
      })
      .expect(201);
    // A row for the bodies that name rows of the document (relations, bulk writes): the row ids of paths stay unknown.
    await operationRequest(t.http, user, 'post', '/api/v1/doc/{docType}/{docId}/data', real)
      .send({ id: 'sweep-row', values: [{ fieldId: 'name', value: { text: 'Row' } }] })
      .expect(201);
    Object.assign(known, real, { userId: user.id, rowId: 'sweep-row' });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A value for a path parameter that names nothing: the first value of an enum (a valid provider), else a fresh id. */
  function unknownValue(parameter: OpenAPIV3.ParameterObject): string {
    const schema = parameter.schema as OpenAPIV3.SchemaObject | undefined;
    return schema?.enum ? String(schema.enum[0]) : randomUUID();
  }

  /**
   * The path parameters of an operation: every one unknown, and the sweep's real parents around the unknown others;
   * whether the path has parents, whether it has an id of its own, and who calls it.
   */
  function pathOf(name: string, operation: OpenAPIV3.OperationObject) {
    const pathParameters = (operation.parameters ?? []).filter((p): p is OpenAPIV3.ParameterObject => 'in' in p && p.in === 'path');
    const unknown: Params = Object.fromEntries(pathParameters.map((p) => [p.name, unknownValue(p)]));
    const withParents: Params = { ...unknown };
    let leafUnknown = false;
    for (const p of pathParameters) {
      if ((PARENTS as readonly string[]).includes(p.name)) {
        withParents[p.name] = real[p.name]!;
      } else {
        leafUnknown = true;
      }
    }
    const changesParents = pathParameters.some((p) => (PARENTS as readonly string[]).includes(p.name));
    const as: Probe['user'] = THROWAWAY_USER.has(name) ? 'throwaway' : AS_ADMIN.test(name) && !ADMIN_SKIPPED.has(name) ? 'admin' : 'user';
    return { unknown, withParents, leafUnknown, changesParents, as };
  }

  /** The probes of one operation: the first list runs before the second (see `stranger`). */
  function probesOf(path: string, method: Method, operation: OpenAPIV3.OperationObject): [Probe[], Probe[]] {
    const name = `${method.toUpperCase()} ${path}`;
    const { unknown, withParents, leafUnknown, changesParents, as } = pathOf(name, operation);
    const probes: Probe[] = [
      { name: 'no credentials', operation: name, user: 'anonymous', params: unknown },
      { name: 'unknown ids', operation: name, user: as, params: unknown },
    ];
    // The sweep's own organization, workspace and document around an unknown id: the inner lookup answers.
    if (changesParents && leafUnknown) {
      probes.push({ name: 'unknown id in a real parent', operation: name, user: as, params: withParents });
    }
    const content = (operation.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content ?? {};
    if (content['application/json']) {
      for (const body of [{}, [], 'x']) {
        probes.push({ name: `body ${JSON.stringify(body)}`, operation: name, user: as, params: withParents, body });
      }
    }
    // Another user at the sweep user's organization, workspace and document (403 or 404). Run last: were a route to
    // let the stranger through, what it changed could not spoil the other probes.
    const last: Probe[] = changesParents ? [{ name: 'another user', operation: name, user: 'stranger', params: withParents }] : [];
    return [probes, last];
  }

  /**
   * The probes of one operation with a JSON body or required query parameters, both built from its request schemas
   * (`RequestValues`): with unknown ids everywhere; at the sweep's real organization, workspace and document (in the
   * path, the document context and the body) around unknown ids; and as another user there, last. Each with the
   * required properties only, then with every declared one; `BODY_OVERRIDES` where the schema cannot say enough.
   */
  function validProbesOf(path: string, method: Method, operation: OpenAPIV3.OperationObject): [Probe[], Probe[]] {
    const name = `${method.toUpperCase()} ${path}`;
    const hasBody = Boolean((operation.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content?.['application/json']);
    if (!hasBody && Object.keys(new RequestValues(doc).query(operation, 'required')).length === 0) {
      return [[], []];
    }
    const { unknown, withParents, changesParents, as } = pathOf(name, operation);
    const override = Object.hasOwn(BODY_OVERRIDES, name) ? BODY_OVERRIDES[name] : undefined;
    const probes: Probe[] = [];
    const last: Probe[] = [];
    for (const fill of ['required', 'all'] satisfies Fill[]) {
      if (fill === 'all' && !hasBody) {
        continue;
      }
      const build = (names: Params): Pick<Probe, 'body' | 'query'> => {
        const values = new RequestValues(doc, names);
        const generated = hasBody ? values.body(operation, fill) : undefined;
        const query = values.query(operation, 'required');
        // The document context of the sweep's workspace, where the operation takes one (/doc, /realtime/doc, /relations).
        if (names.workspaceId && values.parameter(operation, 'query', 'workspaceId')) {
          query.workspaceId = names.workspaceId;
        }
        return { body: override && hasBody ? override(generated as Record<string, unknown>, names, fill) : generated, query };
      };
      const atParents = build(known);
      const parentsInBody = Object.values(known).some((value) => JSON.stringify(atParents.body ?? null).includes(JSON.stringify(value)));
      probes.push({ name: `${fill} body, unknown ids`, operation: name, user: as, params: unknown, ...build({}) });
      probes.push({ name: `${fill} body, real parents`, operation: name, user: as, params: withParents, ...atParents });
      if (changesParents || parentsInBody) {
        last.push({ name: `${fill} body, another user`, operation: name, user: 'stranger', params: withParents, ...build(known) });
      }
    }
    return [probes, last];
  }

  /** Calls the API as the probe says; the problems of its answer (none when the document declares it as answered). */
  async function run(probe: Probe, answers: Answer[]): Promise<string[]> {
    const [method, template] = probe.operation.split(' ') as [string, string];
    const callers = { anonymous: null, user, admin, stranger };
    const caller = probe.user === 'throwaway' ? await registerUser(t.http) : callers[probe.user];
    let req = operationRequest(t.http, caller, method.toLowerCase() as Method, template, probe.params, probe.query).timeout(TIMEOUT_MS);
    if (probe.body !== undefined) {
      // JSON text as sent: supertest would send the string 'x' unquoted.
      req = req.set('Content-Type', 'application/json').send(JSON.stringify(probe.body));
    }
    let res: request.Response;
    try {
      res = await req;
    } catch (error) {
      return [`${probe.operation} [${probe.name}]: no answer (${(error as Error).message})`];
    }
    answers.push({ probe, status: res.status, code: (res.body as { code?: string } | undefined)?.code });
    const label = `${probe.operation} [${probe.name}]`;
    if (res.status >= 500) {
      const failure = res.body as { code?: string; details?: unknown };
      return [`${label}: 5xx ${res.status} ${failure?.code ?? ''} ${JSON.stringify(failure?.details ?? null)}`];
    }
    return checker.check({ operation: probe.operation, status: res.status, body: res.body, contentType: res.headers['content-type'] }).map((line) => `${line} [${probe.name}]`);
  }

  /** Runs the probes of every operation `probesFor` makes, `CONCURRENCY` at a time: all first lists, then the last ones. */
  async function sweep(probesFor: (path: string, method: Method, operation: OpenAPIV3.OperationObject) => [Probe[], Probe[]]) {
    const first: Probe[] = [];
    const last: Probe[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of METHODS) {
        const operation = (item as Record<string, OpenAPIV3.OperationObject | undefined>)[method];
        if (operation) {
          const [now, later] = probesFor(path, method, operation);
          first.push(...now);
          last.push(...later);
        }
      }
    }
    const problems: string[] = [];
    const answers: Answer[] = [];
    for (const probes of [first, last]) {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < probes.length) {
            problems.push(...(await run(probes[next++]!, answers)));
          }
        }),
      );
    }
    return { operations: new Set(first.map((probe) => probe.operation)), problems, answers };
  }

  /** One line per undeclared status (the first probe that showed it); a known one is expected, not reported. */
  function expectOnlyKnown(problems: string[], expected: Record<string, string>): void {
    const seen = new Map<string, string>();
    for (const line of problems.sort()) {
      const key = line.replace(/ \[[^\]]*\]$/, '').replace(/ \(declared: [^)]*\)/, '');
      if (!seen.has(key)) {
        seen.set(key, line);
      }
    }
    const unexpected = [...seen].filter(([key]) => !(key in expected)).map(([, line]) => line);
    const stale = Object.keys(expected).filter((key) => !seen.has(key));
    expect({ unexpected, stale }).toEqual({ unexpected: [], stale: [] });
  }

  it('every operation answers only declared statuses to failing calls, and never a 5xx', async () => {
    const { operations, problems } = await sweep(probesOf);
    expect(checker.checked.size).toBe(operations.size);
    expectOnlyKnown(problems, KNOWN);
    // About 1,100 calls: ~8 s alone, several times that on a loaded machine.
  }, 240_000);

  it('with bodies and queries built from the request schemas, every operation answers only declared statuses, and never a 5xx', async () => {
    const { operations, problems, answers } = await sweep(validProbesOf);
    expectOnlyKnown(problems, KNOWN_VALID_BODIES);
    // Past validation: a probe at the real parents was answered neither VALIDATION_ERROR nor a guard's refusal
    // (UNAUTHORIZED, FORBIDDEN: the guards run before the validation pipe, so they say nothing about the body). A
    // service's own 401 behind a valid body (INVALID_CREDENTIALS, INVALID_TOKEN, INVALID_CLIENT) counts as past.
    const pastValidation = (a: Answer): boolean => a.code === undefined || !['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN'].includes(a.code);
    const passed = new Set(answers.filter((a) => a.probe.name.endsWith('real parents') && pastValidation(a)).map((a) => a.probe.operation));
    const refused = [...operations].filter((operation) => !passed.has(operation)).sort();
    expect(refused).toEqual(Object.keys(REFUSED).sort());
    // About 470 calls (84 operations with a body, one with a required query parameter): ~3 s alone.
  }, 240_000);
});
