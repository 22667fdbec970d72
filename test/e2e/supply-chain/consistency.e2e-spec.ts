import request from 'supertest';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { problemsOf } from '../../utils/error-details.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  API,
  call,
  createBinding,
  createCatalog,
  createConnection,
  createOrderBook,
  revisionCount,
  rowsOf,
} from './sync.fixtures.js';

interface Answer {
  status: number;
  code?: string;
  details?: { errors?: unknown[] };
  payload?: Record<string, unknown>;
}

interface SyncRequest {
  requestId: string;
  status: string;
  documentRequestId: string | null;
  decidedBy: string | null;
}

/**
 * Supply-chain records that must stay in step with what happens to them elsewhere: a catalog deleted through the
 * document API, an order-book request merged or closed directly, sync-request ids across order books, and batch
 * rows in a shape the batch does not take.
 */
describe('supply chain: consistency', () => {
  let t: TestApp;
  let sup: TestUser;
  let buyer: TestUser;
  let S: string;
  let B: string;

  const send = async (
    user: TestUser,
    method: 'get' | 'post',
    path: string,
    body?: unknown,
  ): Promise<Answer> => {
    const url = path.startsWith('/connect/') ? path : `${API}${path}`;
    const req = (method === 'get' ? request(t.http).get(url) : request(t.http).post(url)).set(bearer(user));
    const res = body === undefined ? await req : await req.send(body as object);
    return { status: res.status, code: res.body.code, details: res.body.details, payload: res.body.payload };
  };
  const text = (value: string): { text: string } => ({ text: value });

  beforeAll(async () => {
    t = await createTestApp();
    [sup, buyer] = await Promise.all([registerUser(t.http), registerUser(t.http)]);
    S = sup.defaultOrganizationId;
    B = buyer.defaultOrganizationId;
  });
  afterAll(async () => {
    await t.close();
  });

  it('deleting a catalog disables its connections; connection reads keep working', async () => {
    const kept = await createCatalog(t, sup, S, 'Kept', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const keptConn = await createConnection(t, sup, S, kept, {});
    const doomed = await createCatalog(t, sup, S, 'Doomed', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const conn = await createConnection(t, sup, S, doomed, {});
    const paused = await createConnection(t, sup, S, doomed, {});
    await call(t, sup, 'post', `/organizations/${S}/connections/${paused}/pause`, undefined, 200);
    const link = await call<{ code: string }>(
      t,
      sup,
      'post',
      `/organizations/${S}/connections/${conn}/share-link`,
      {},
    );
    const book = await createOrderBook(t, buyer, B, 'Fed', [], [conn]);
    const binding = await createBinding(t, buyer, B, book, { connectionId: conn });
    expect(binding.status).toBe('active');

    await request(t.http)
      .delete(`${API}/doc/catalog/${doomed}?organizationId=${S}`)
      .set(bearer(sup))
      .expect(200);

    const list = await call<{ items: Array<{ id: string; status: string; catalog: unknown }> }>(
      t,
      sup,
      'get',
      `/organizations/${S}/connections?pageSize=100`,
    );
    const byId = new Map(list.items.map((item) => [item.id, item]));
    expect(byId.get(conn)).toMatchObject({ status: 'disabled', catalog: null });
    expect(byId.get(paused)).toMatchObject({ status: 'disabled', catalog: null });
    expect(byId.get(keptConn)).toMatchObject({ status: 'active', catalog: { id: kept } });
    expect(await call(t, sup, 'get', `/organizations/${S}/connections/${conn}`)).toMatchObject({
      status: 'disabled',
      catalog: null,
      sourceCatalogId: doomed,
    });
    const pause = await send(sup, 'post', `/organizations/${S}/connections/${conn}/pause`);
    expect([pause.status, pause.code, pause.payload]).toEqual([
      409,
      'INVALID_STATE',
      { connectionId: conn, status: 'disabled' },
    ]);
    // The buyer sees the connection disabled; its binding receives nothing more (docs: as after POST …/disable).
    expect(await call(t, buyer, 'get', `/organizations/${B}/connections/${conn}`)).toMatchObject({
      view: 'shared',
      status: 'disabled',
      catalog: null,
    });
    const resolved = await send(buyer, 'get', `/connect/share/${link.code}`);
    expect([resolved.status, resolved.code]).toEqual([410, 'SHARE_LINK_EXPIRED']);
  });

  it('a sync request follows its document request merged or closed through /doc', async () => {
    const book = await createOrderBook(t, buyer, B, 'Requests', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const base = `/organizations/${B}/orderbooks/${book}/requests`;
    const propose = (requestId: string, rowId: string): Promise<SyncRequest> =>
      call<SyncRequest>(t, buyer, 'post', base, {
        requestId,
        changes: [{ operation: 'create_row', rowId, values: { sku: text(rowId) } }],
      });
    const onDoc = (requestId: string, action: 'merge' | 'close'): Promise<unknown> =>
      call(
        t,
        buyer,
        'post',
        `/doc/orderbook/${book}/requests/${requestId}/${action}?organizationId=${B}`,
        undefined,
        200,
      );

    const merged = await propose('merged-1', 'm1');
    const closed = await propose('closed-1', 'c1');
    const decided = await propose('decided-1', 'd1');
    expect([merged.status, closed.status]).toEqual(['pending', 'pending']);
    await onDoc(merged.documentRequestId as string, 'merge');
    await onDoc(closed.documentRequestId as string, 'close');

    expect(await call(t, buyer, 'get', `${base}/merged-1`)).toMatchObject({
      status: 'accepted',
      decidedBy: buyer.id,
    });
    expect(await call(t, buyer, 'get', `${base}/closed-1`)).toMatchObject({
      status: 'rejected',
      decidedBy: buyer.id,
    });
    const pending = await call<{ items: SyncRequest[] }>(t, buyer, 'get', `${base}?status=pending`);
    expect(pending.items.map((item) => item.requestId)).toEqual(['decided-1']);
    for (const [requestId, status] of [
      ['merged-1', 'accepted'],
      ['closed-1', 'rejected'],
    ]) {
      for (const action of ['accept', 'reject']) {
        const answer = await send(buyer, 'post', `${base}/${requestId}/${action}`, {});
        expect([answer.status, answer.code, answer.payload]).toEqual([
          409,
          'INVALID_STATE',
          { requestId, status },
        ]);
      }
    }

    // Deciding through the sync route still merges the document request, once.
    const accepted = await call<SyncRequest>(
      t,
      buyer,
      'post',
      `${base}/${decided.requestId}/accept`,
      {},
      200,
    );
    expect(accepted.status).toBe('accepted');
    expect((await rowsOf(t, buyer, 'orderbook', book, B)).map((row) => row.id).sort()).toEqual(['d1', 'm1']);

    // One left pending by an earlier version (merged before the hooks existed): brought in step when decided.
    const stale = await propose('stale-1', 's1');
    await onDoc(stale.documentRequestId as string, 'merge');
    await t.dataSource.query(
      `UPDATE orderbook_sync_requests SET status = 'pending', decided_by = NULL, decided_at = NULL
        WHERE organization_id = $1 AND id = 'stale-1'`,
      [B],
    );
    const refused = await send(buyer, 'post', `${base}/stale-1/reject`, {});
    expect([refused.status, refused.code, refused.payload]).toEqual([
      409,
      'INVALID_STATE',
      { requestId: 'stale-1', status: 'accepted' },
    ]);
    expect(await call(t, buyer, 'get', `${base}/stale-1`)).toMatchObject({ status: 'accepted' });
  });

  it('a sync request id is unique within the organization, across its order books', async () => {
    const first = await createOrderBook(t, buyer, B, 'First', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const second = await createOrderBook(t, buyer, B, 'Second', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    const body = { requestId: 'req-1', changes: [{ operation: 'create_row', values: { sku: text('x') } }] };
    await call(t, buyer, 'post', `/organizations/${B}/orderbooks/${first}/requests`, body);
    const again = await send(buyer, 'post', `/organizations/${B}/orderbooks/${second}/requests`, body);
    expect([again.status, again.code]).toEqual([409, 'ALREADY_EXISTS']);
    expect(problemsOf(again as { details?: { errors?: unknown[] } }).map((problem) => problem.field)).toEqual(
      ['requestId'],
    );
    expect(again.payload).toEqual({ requestId: 'req-1' });
    // Nothing was written for the refused one.
    expect(await rowsOf(t, buyer, 'orderbook', second, B)).toEqual([]);
    expect((await send(buyer, 'get', `/organizations/${B}/orderbooks/${second}/requests/req-1`)).status).toBe(
      404,
    );
    expect((await send(buyer, 'get', `/organizations/${B}/orderbooks/${first}/requests/req-1`)).status).toBe(
      200,
    );
    // Another organization may use the same id.
    const own = await createOrderBook(t, sup, S, 'Supplier book', [{ id: 'sku', name: 'SKU', type: 'text' }]);
    await call(t, sup, 'post', `/organizations/${S}/orderbooks/${own}/requests`, body);
  });

  it('batch rows in another shape, or with a version, are refused by path and change nothing', async () => {
    const catalog = await createCatalog(t, sup, S, 'Batch', [
      { id: 'sku', name: 'SKU', type: 'text' },
      { id: 'price', name: 'Price', type: 'number' },
    ]);
    await call(
      t,
      sup,
      'post',
      `/organizations/${S}/catalogs/${catalog}/rows/batch-update`,
      { rows: [{ id: 'r1', operation: 'create', values: { sku: text('A'), price: { number: 1 } } }] },
      200,
    );
    const book = await createOrderBook(t, buyer, B, 'Batch book', [
      { id: 'price', name: 'Price', type: 'number' },
    ]);
    await call(
      t,
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${book}/rows/batch-update`,
      { rows: [{ id: 'r1', operation: 'create', values: { price: { number: 1 } } }] },
      200,
    );
    const catalogRevisions = await revisionCount(t, sup, 'catalog', catalog, S);
    const bookRevisions = await revisionCount(t, buyer, 'orderbook', book, B);

    const cases: Array<[unknown, string[]]> = [
      [
        [{ target: { row: 'r1', field: 'price' }, value: { number: 777 } }],
        ['rows[0].value', 'rows[0].target.field'],
      ],
      [[{ target: { row: 'r1' }, values: { price: { number: 777 } }, version: 1 }], ['rows[0].version']],
      [
        [
          { target: { row: 'r1' }, values: { price: { number: 777 } } },
          { id: 'r2', values: { price: { number: 2 } }, extra: true },
        ],
        ['rows[1].extra'],
      ],
    ];
    for (const [rows, fields] of cases) {
      for (const [user, path] of [
        [sup, `/organizations/${S}/catalogs/${catalog}/rows/batch-update`],
        [buyer, `/organizations/${B}/orderbooks/${book}/rows/batch-update`],
      ] as const) {
        const answer = await send(user, 'post', path, { rows });
        expect([answer.status, answer.code]).toEqual([400, 'VALIDATION_ERROR']);
        expect(
          problemsOf(answer as { details?: { errors?: unknown[] } }).map((problem) => problem.field),
        ).toEqual(fields);
      }
    }
    expect(await revisionCount(t, sup, 'catalog', catalog, S)).toBe(catalogRevisions);
    expect(await revisionCount(t, buyer, 'orderbook', book, B)).toBe(bookRevisions);
    expect((await rowsOf(t, sup, 'catalog', catalog, S)).map((row) => [row.id, row.values.price])).toEqual([
      ['r1', 1],
    ]);
    expect((await rowsOf(t, buyer, 'orderbook', book, B)).map((row) => [row.id, row.values.price])).toEqual([
      ['r1', 1],
    ]);
  });
});
