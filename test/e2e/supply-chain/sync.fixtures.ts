import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';

export const API = '/api/v1';

type Body = Record<string, unknown>;

/** The app under test, its propagation worker, and users registered for the test with their own organizations. */
export interface SyncApp {
  t: TestApp;
  worker: SyncWorker;
  users: TestUser[];
  /** Each user's default organization, in the order of `users`. */
  orgs: string[];
}

/** Boots the app and registers `userCount` users at once, each with an organization of its own. */
export async function openSyncApp(userCount: number): Promise<SyncApp> {
  const t = await createTestApp();
  const worker = t.app.get(SyncWorker);
  const users = await Promise.all(Array.from({ length: userCount }, () => registerUser(t.http)));
  return { t, worker, users, orgs: users.map((user) => user.defaultOrganizationId) };
}

/** A user registered for the test and added to an organization, with the id of that membership. */
export type Member = TestUser & { membershipId: string };

/** Registers one user per role at once, then adds them to `org` in the order of `roles`. */
export async function registerMembers(
  t: TestApp,
  owner: TestUser,
  org: string,
  roles: string[],
): Promise<Member[]> {
  const users = await Promise.all(roles.map(() => registerUser(t.http)));
  const members: Member[] = [];
  for (const [index, user] of users.entries()) {
    const membership = await call<{ id: string }>(t, owner, 'post', `/organizations/${org}/members`, {
      userId: user.id,
      role: roles[index],
    });
    members.push({ ...user, membershipId: membership.id });
  }
  return members;
}

export async function removeMember(
  t: TestApp,
  owner: TestUser,
  org: string,
  membershipId: string,
): Promise<void> {
  await call(t, owner, 'delete', `/organizations/${org}/members/${membershipId}`, undefined, 200);
}

/** One API call that must answer `status`; returns the envelope's payload. */
export async function call<T = Body>(
  t: TestApp,
  user: TestUser,
  method: 'get' | 'post' | 'patch' | 'put' | 'delete',
  path: string,
  body?: unknown,
  status?: number,
): Promise<T> {
  const req = request(t.http)[method](`${API}${path}`).set(bearer(user));
  const res = body === undefined ? await req : await req.send(body as object);
  const expected = status ?? (method === 'post' ? 201 : 200);
  if (res.status !== expected) {
    throw new Error(
      `${method.toUpperCase()} ${path} answered ${res.status} (expected ${expected}): ${JSON.stringify(res.body)}`,
    );
  }
  return res.body.payload as T;
}

export interface Field {
  id: string;
  name: string;
  type: string;
  selectOptions?: { id: string; label: string }[];
}

export const text = (id: string): Field => ({ id, name: id, type: 'text' });
export const number = (id: string): Field => ({ id, name: id, type: 'number' });
/** A select field whose options are `labels`, each with its label in lower case as its id. */
export const select = (id: string, type: 'single_select' | 'multi_select', labels: string[]): Field => ({
  id,
  name: id,
  type,
  selectOptions: labels.map((label) => ({ id: label.toLowerCase(), label })),
});

/** A filter group of one condition. */
export const where = (fieldId: string, operator: string, value: unknown) => ({
  operator: 'AND',
  conditions: [{ fieldId, operator, value }],
});

/** A field mapping without rules that copies every catalog field into the order-book field of the same id. */
export const copyAllFields = { unmappedFields: 'create', rules: [] };

/** A call's status and envelope, whatever the status (for tests of refusals). */
export interface Answer {
  status: number;
  code?: string;
  details?: { field?: string; reason?: string; errors?: Array<{ field?: string }> };
  payload?: Record<string, unknown> | null;
}

export async function answerOf(
  t: TestApp,
  user: TestUser,
  method: 'get' | 'post' | 'patch' | 'put' | 'delete',
  path: string,
  body?: unknown,
): Promise<Answer> {
  const url = path.startsWith('/connect/') ? path : `${API}${path}`;
  const req = request(t.http)[method](url).set(bearer(user));
  const res = body === undefined ? await req : await req.send(body as object);
  return { status: res.status, code: res.body.code, details: res.body.details, payload: res.body.payload };
}

/** Runs the propagation worker until nothing is due. */
export async function drainSync(worker: SyncWorker): Promise<void> {
  for (let i = 0; i < 50; i += 1) {
    await worker.runDue();
  }
}

/**
 * Waits until the outbox holds no event due for dispatch, then drains the propagation worker; twice, for the events
 * the propagation itself records. Propagation jobs are queued by the revision_created subscriber, in the outbox's
 * dispatch transaction after the write committed: draining the worker right after a write can otherwise run before
 * that job exists, which a loaded machine makes likely. An event whose subscriber keeps failing is not waited for
 * beyond the time-out (what the test asserts next decides).
 */
export async function settleSync(t: TestApp, worker: SyncWorker): Promise<void> {
  for (let round = 0; round < 2; round += 1) {
    try {
      await eventually(
        async () => {
          const [row] = await t.dataSource.query<Array<{ n: number }>>(
            `SELECT count(*)::int AS n FROM outbox
              WHERE dispatched_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= now())`,
          );
          return row?.n === 0;
        },
        15_000,
        'the outbox to be dispatched',
      );
    } catch {
      // Leave it to the assertions.
    }
    await drainSync(worker);
  }
}

export async function createCatalog(
  t: TestApp,
  user: TestUser,
  org: string,
  name: string,
  fields: Field[],
): Promise<string> {
  return (
    await call<{ id: string }>(t, user, 'post', `/organizations/${org}/catalogs`, {
      name,
      catalogType: 'product',
      sharingEnabled: true,
      fields,
    })
  ).id;
}

export async function createConnection(
  t: TestApp,
  user: TestUser,
  org: string,
  catalogId: string,
  body: Body,
): Promise<string> {
  return (
    await call<{ id: string }>(t, user, 'post', `/organizations/${org}/catalogs/${catalogId}/connections`, {
      name: 'feed',
      accessControl: 'public',
      ...body,
    })
  ).id;
}

/** A catalog shared through one connection (`connection` adds to or overrides the connection's body). */
export async function shareCatalog(
  t: TestApp,
  user: TestUser,
  org: string,
  name: string,
  fields: Field[],
  connection: Body = {},
): Promise<{ catalog: string; conn: string }> {
  const catalog = await createCatalog(t, user, org, name, fields);
  return { catalog, conn: await createConnection(t, user, org, catalog, connection) };
}

export async function updateConnection(
  t: TestApp,
  user: TestUser,
  org: string,
  connectionId: string,
  body: Body,
): Promise<void> {
  await call(t, user, 'patch', `/organizations/${org}/connections/${connectionId}`, body, 200);
}

export async function createOrderBook(
  t: TestApp,
  user: TestUser,
  org: string,
  name: string,
  fields: Field[],
  sourceConnectionIds: string[] = [],
): Promise<string> {
  return (
    await call<{ id: string }>(t, user, 'post', `/organizations/${org}/orderbooks`, {
      name,
      description: 'test',
      sourceConnectionIds,
      fields,
    })
  ).id;
}

export async function createBinding(
  t: TestApp,
  user: TestUser,
  org: string,
  orderBookId: string,
  body: Body,
): Promise<{ id: string; status: string }> {
  return call(t, user, 'post', `/organizations/${org}/orderbooks/${orderBookId}/bindings`, {
    targetOrderBookId: orderBookId,
    ...body,
  });
}

/** The supplier approves or rejects a binding of its connection; returns the binding as it is then. */
export async function decideBinding(
  t: TestApp,
  user: TestUser,
  org: string,
  connectionId: string,
  bindingId: string,
  action: 'approve' | 'reject',
  body: Body = {},
): Promise<{ status: string }> {
  return call(
    t,
    user,
    'post',
    `/organizations/${org}/connections/${connectionId}/bindings/${bindingId}/${action}`,
    body,
    200,
  );
}

export async function orderBookFields(
  t: TestApp,
  user: TestUser,
  org: string,
  orderBookId: string,
): Promise<Field[]> {
  const page = await call<{ items: Field[] }>(
    t,
    user,
    'get',
    `/organizations/${org}/orderbooks/${orderBookId}/fields?pageSize=100`,
  );
  return page.items;
}

/** Rows written to a catalog in one batch (one merged request, one revision). */
export async function writeCatalogRows(
  t: TestApp,
  user: TestUser,
  org: string,
  catalogId: string,
  rows: Body[],
): Promise<void> {
  await call(t, user, 'post', `/organizations/${org}/catalogs/${catalogId}/rows/batch-update`, { rows }, 200);
}

export async function updateCatalogRow(
  t: TestApp,
  user: TestUser,
  org: string,
  catalogId: string,
  rowId: string,
  values: Body,
): Promise<void> {
  await call(t, user, 'patch', `/organizations/${org}/catalogs/${catalogId}/rows/${rowId}`, { values }, 200);
}

export async function deleteCatalogRow(
  t: TestApp,
  user: TestUser,
  org: string,
  catalogId: string,
  rowId: string,
): Promise<void> {
  await call(t, user, 'delete', `/organizations/${org}/catalogs/${catalogId}/rows/${rowId}`, undefined, 200);
}

/** Rows the buyer writes to an order book in one batch. */
export async function writeOrderBookRows(
  t: TestApp,
  user: TestUser,
  org: string,
  orderBookId: string,
  rows: Body[],
): Promise<void> {
  await call(
    t,
    user,
    'post',
    `/organizations/${org}/orderbooks/${orderBookId}/rows/batch-update`,
    { rows },
    200,
  );
}

export interface PlainRow {
  id: string;
  version: number;
  values: Record<string, unknown>;
}

/** A rendered Value back to a plain value (select → label). */
export function plain(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return value;
  }
  const object = value as Record<string, unknown>;
  if (object.selectOption && typeof object.selectOption === 'object') {
    return (object.selectOption as { label?: string }).label;
  }
  const keys = Object.keys(object);
  return keys.length === 1 ? object[keys[0] as string] : value;
}

export async function rowsOf(
  t: TestApp,
  user: TestUser,
  docType: string,
  docId: string,
  org: string,
): Promise<PlainRow[]> {
  const page = await call<{
    items: { id: string; version: number; values: { fieldId: string; value: unknown }[] }[];
  }>(t, user, 'get', `/doc/${docType}/${docId}/data?organizationId=${org}&pageSize=100`);
  return page.items.map((row) => ({
    id: row.id,
    version: row.version,
    values: Object.fromEntries(row.values.map((entry) => [entry.fieldId, plain(entry.value)])),
  }));
}

/** The SKUs an order book holds, sorted. */
export async function skusOf(
  t: TestApp,
  user: TestUser,
  org: string,
  orderBookId: string,
): Promise<unknown[]> {
  return (await rowsOf(t, user, 'orderbook', orderBookId, org)).map((row) => row.values.sku).sort();
}

/** The `total` a list answers: how many items it holds, whatever its page size. */
async function totalOf(t: TestApp, user: TestUser, path: string): Promise<number> {
  return (await call<{ total: number }>(t, user, 'get', path)).total;
}

export async function rowCount(
  t: TestApp,
  user: TestUser,
  docType: string,
  docId: string,
  org: string,
): Promise<number> {
  return totalOf(t, user, `/doc/${docType}/${docId}/data?organizationId=${org}&pageSize=1`);
}

export async function revisionCount(
  t: TestApp,
  user: TestUser,
  docType: string,
  docId: string,
  org: string,
): Promise<number> {
  return totalOf(t, user, `/doc/${docType}/${docId}/revisions?organizationId=${org}&pageSize=1`);
}

export interface SyncLog {
  bindingId: string;
  sourceRowId: string | null;
  targetRowId: string | null;
  outcome: string;
  reason: string | null;
  eventType: string | null;
  syncRequestId: string | null;
  catalogRevisionId: string | null;
}

export async function syncLogs(
  t: TestApp,
  user: TestUser,
  org: string,
  orderBookId: string,
  bindingId: string,
): Promise<SyncLog[]> {
  const page = await call<{ items: SyncLog[] }>(
    t,
    user,
    'get',
    `/organizations/${org}/orderbooks/${orderBookId}/sync-logs?bindingId=${bindingId}&pageSize=100`,
  );
  return page.items;
}

export interface SyncRequest {
  requestId: string;
  status: string;
  createdBy: string;
  decidedBy: string | null;
  changes: Array<{ operation: string; rowId: string; sourceRowId?: string }>;
}

/** An order book's sync requests, newest first, narrowed by `query` (e.g. `{ status: 'pending' }`). */
export async function syncRequests(
  t: TestApp,
  user: TestUser,
  org: string,
  orderBookId: string,
  query: Record<string, string>,
): Promise<SyncRequest[]> {
  const page = await call<{ items: SyncRequest[] }>(
    t,
    user,
    'get',
    `/organizations/${org}/orderbooks/${orderBookId}/requests?${new URLSearchParams(query)}`,
  );
  return page.items;
}

export async function acceptSyncRequest(
  t: TestApp,
  user: TestUser,
  org: string,
  orderBookId: string,
  requestId: string,
): Promise<void> {
  await call(
    t,
    user,
    'post',
    `/organizations/${org}/orderbooks/${orderBookId}/requests/${requestId}/accept`,
    {},
    200,
  );
}

/** Polls until `check` returns a value (not undefined/false) or the time is up. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) {
        return value;
      }
    } catch (error) {
      last = error;
    }
    if (Date.now() > until) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
