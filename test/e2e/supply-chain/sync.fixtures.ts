import request from 'supertest';
import { bearer, type TestUser } from '../../factories/users.factory.js';
import type { TestApp } from '../../utils/test-app.js';
import type { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';

export const API = '/api/v1';

type Body = Record<string, unknown>;

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
  method: 'get' | 'post' | 'patch' | 'delete',
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

export async function deleteCatalogRow(
  t: TestApp,
  user: TestUser,
  org: string,
  catalogId: string,
  rowId: string,
): Promise<void> {
  await call(t, user, 'delete', `/organizations/${org}/catalogs/${catalogId}/rows/${rowId}`, undefined, 200);
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

export async function revisionCount(
  t: TestApp,
  user: TestUser,
  docType: string,
  docId: string,
  org: string,
): Promise<number> {
  return (
    await call<{ total: number }>(
      t,
      user,
      'get',
      `/doc/${docType}/${docId}/revisions?organizationId=${org}&pageSize=1`,
    )
  ).total;
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
