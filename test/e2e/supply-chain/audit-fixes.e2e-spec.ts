import { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  type Answer,
  answerOf,
  call,
  createBinding,
  createCatalog,
  createConnection,
  createOrderBook,
  settleSync,
  number,
  rowsOf,
  text,
  writeCatalogRows,
} from './sync.fixtures.js';

interface SyncRequest {
  requestId: string;
  status: string;
  message: string | null;
  reviewNote: string | null;
  changes: Array<{ operation: string; rowId: string }>;
}

/**
 * Defects of the fourth black-box audit (docs/supply-chain.md): one-element `values` in filter conditions, pending
 * creates accepted in order, initial sync of a new binding, cutting off a buyer, deleted order books, suggested
 * mappings, sync-request notes, concurrent duplicate bindings, error paths, paged lists, disabled connections,
 * formula rounding and the OpenAPI answers.
 */
describe('supply chain: audit fixes', () => {
  let t: TestApp;
  let worker: SyncWorker;
  let sup: TestUser;
  let buyer: TestUser;
  let other: TestUser;
  let S: string;
  let B: string;
  let O: string;

  const send = (user: TestUser, method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: unknown): Promise<Answer> =>
    answerOf(t, user, method, path, body);
  /** Dispatches the outbox (the revision listener queues the jobs) and runs the propagation until nothing is due. */
  const drain = (): Promise<void> => settleSync(t, worker);
  const rowsOfBook = (ob: string, user = buyer, org = B) => rowsOf(t, user, 'orderbook', ob, org);

  beforeAll(async () => {
    t = await createTestApp();
    worker = t.app.get(SyncWorker);
    [sup, buyer, other] = await Promise.all([
      registerUser(t.http),
      registerUser(t.http),
      registerUser(t.http),
    ]);
    [S, B, O] = [sup, buyer, other].map((user) => user.defaultOrganizationId);
  });

  afterAll(async () => {
    await t.close();
  });

  it('1. eq/ne (and every operator) read a one-element values like value, in receiver filters', async () => {
    const catalog = await createCatalog(t, sup, S, 'Filters', [text('title'), number('qty')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    // r1 ok/5, r2 other/10, r3 (no title)/20
    const cases: Array<[string, Record<string, unknown>, string[]]> = [
      ['eq', { value: 'ok' }, ['r1']],
      ['eq', { values: ['ok'] }, ['r1']],
      ['ne', { value: 'ok' }, ['r2', 'r3']],
      ['ne', { values: ['ok'] }, ['r2', 'r3']],
      ['in', { value: ['ok', 'other'] }, ['r1', 'r2']],
      ['in', { values: ['ok', 'other'] }, ['r1', 'r2']],
      ['notIn', { value: ['ok'] }, ['r2', 'r3']],
      ['notIn', { values: ['ok'] }, ['r2', 'r3']],
      ['contains', { value: 'k' }, ['r1']],
      ['contains', { values: ['k'] }, ['r1']],
      ['startsWith', { value: 'ot' }, ['r2']],
      ['startsWith', { values: ['ot'] }, ['r2']],
      ['endsWith', { value: 'er' }, ['r2']],
      ['endsWith', { values: ['er'] }, ['r2']],
      ['exists', { value: true }, ['r1', 'r2']],
      ['exists', { values: [false] }, ['r3']],
      ['is_empty', {}, ['r3']],
      ['is_not_empty', {}, ['r1', 'r2']],
    ];
    const numeric: Array<[string, Record<string, unknown>, string[]]> = [
      ['gt', { value: 5 }, ['r2', 'r3']],
      ['gt', { values: [5] }, ['r2', 'r3']],
      ['gte', { value: 10 }, ['r2', 'r3']],
      ['gte', { values: [10] }, ['r2', 'r3']],
      ['lt', { value: 10 }, ['r1']],
      ['lt', { values: [10] }, ['r1']],
      ['lte', { value: 10 }, ['r1', 'r2']],
      ['lte', { values: [10] }, ['r1', 'r2']],
      ['range', { value: [6, 20] }, ['r2', 'r3']],
      ['range', { values: [6, 20] }, ['r2', 'r3']],
      ['eq', { values: [10] }, ['r2']],
      ['ne', { values: [10] }, ['r1', 'r3']],
    ];
    const all = [
      ...cases.map(([operator, operand, expected]) => ['title', operator, operand, expected] as const),
      ...numeric.map(([operator, operand, expected]) => ['qty', operator, operand, expected] as const),
    ];
    const books: string[] = [];
    for (const [fieldId, operator, operand] of all) {
      const ob = await createOrderBook(t, buyer, B, `${fieldId} ${operator}`, [text('title'), number('qty')]);
      await createBinding(t, buyer, B, ob, {
        connectionId: conn,
        fieldMapping: { unmappedFields: 'create', rules: [] },
        receiverFilter: {
          acceptMode: 'auto',
          filterGroup: { operator: 'AND', conditions: [{ fieldId, operator, ...operand }] },
        },
      });
      books.push(ob);
    }
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r1', values: { title: 'ok', qty: 5 } },
      { id: 'r2', values: { title: 'other', qty: 10 } },
      { id: 'r3', values: { qty: 20 } },
    ]);
    await drain();
    const byTitle = new Map([
      ['ok', 'r1'],
      ['other', 'r2'],
    ]);
    for (const [index, [fieldId, operator, operand, expected]] of all.entries()) {
      const rows = await rowsOfBook(books[index] as string);
      const got = rows
        .map((row) => (row.values.title ? byTitle.get(row.values.title as string) : 'r3'))
        .sort();
      expect({ fieldId, operator, operand, got }).toEqual({ fieldId, operator, operand, got: expected });
    }
  });

  it('1. a share scope with eq and a one-element values shares the equal rows', async () => {
    const catalog = await createCatalog(t, sup, S, 'Scoped', [text('title')]);
    const conn = await createConnection(t, sup, S, catalog, {
      shareScope: {
        mode: 'filter',
        filterGroup: { operator: 'AND', conditions: [{ fieldId: 'title', operator: 'eq', values: ['ok'] }] },
      },
    });
    const ob = await createOrderBook(t, buyer, B, 'Scoped', [text('title')]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
    });
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 's1', values: { title: 'ok' } },
      { id: 's2', values: { title: 'no' } },
    ]);
    await drain();
    expect((await rowsOfBook(ob)).map((row) => row.values.title)).toEqual(['ok']);
  });

  it('2 + 7. two pending creates of one catalog row are accepted in arrival order; deciding keeps the message', async () => {
    const catalog = await createCatalog(t, sup, S, 'Manual', [text('sku'), number('price')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Manual', [text('sku'), number('price')]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
      receiverFilter: { acceptMode: 'manual' },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'm1', values: { sku: 'M', price: 25 } }]);
    await drain();
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'm1', values: { price: 26 } }]);
    await drain();
    const pending = await call<{ items: SyncRequest[] }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${ob}/requests?status=pending`,
    );
    expect(pending.items).toHaveLength(2);
    const [r2, r1] = pending.items as [SyncRequest, SyncRequest];
    expect(r1.changes[0]?.operation).toBe('create_row');
    expect(r2.changes[0]?.operation).toBe('create_row');
    expect(r2.changes[0]?.rowId).toBe(r1.changes[0]?.rowId);

    const accepted1 = await call<SyncRequest>(
      t,
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${ob}/requests/${r1.requestId}/accept`,
      {},
      200,
    );
    expect(accepted1.status).toBe('accepted');
    const accepted2 = await call<SyncRequest>(
      t,
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${ob}/requests/${r2.requestId}/accept`,
      { reviewNote: 'fine' },
      200,
    );
    expect(accepted2.status).toBe('accepted');
    // The proposer's message stays; the note does not replace it.
    expect(accepted2.message).toBe(r2.message);
    expect(accepted2.reviewNote).toBe('fine');
    const rows = await rowsOfBook(ob);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.values).toMatchObject({ sku: 'M', price: 26 });
    expect(
      (
        await call<{ items: SyncRequest[] }>(
          t,
          buyer,
          'get',
          `/organizations/${B}/orderbooks/${ob}/requests?status=pending`,
        )
      ).items,
    ).toHaveLength(0);

    // 7: a rejection keeps the message too.
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'm1', values: { price: 27 } }]);
    await drain();
    const [third] = (
      await call<{ items: SyncRequest[] }>(
        t,
        buyer,
        'get',
        `/organizations/${B}/orderbooks/${ob}/requests?status=pending`,
      )
    ).items as [SyncRequest];
    const rejected = await call<SyncRequest>(
      t,
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${ob}/requests/${third.requestId}/reject`,
      { reviewNote: 'no thanks' },
      200,
    );
    expect(rejected).toMatchObject({ status: 'rejected', message: third.message, reviewNote: 'no thanks' });
    const reread = await call<SyncRequest>(t, buyer, 'get', `/organizations/${B}/orderbooks/${ob}/requests/${third.requestId}`);
    expect(reread).toMatchObject({ status: 'rejected', reviewNote: 'no thanks' });
  });

  it('2. a merge conflict of an accepted sync request names the sync request', async () => {
    const catalog = await createCatalog(t, sup, S, 'Conflict', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Conflict', [text('sku')]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
      receiverFilter: { acceptMode: 'manual' },
    });
    const pendingOf = async (): Promise<SyncRequest[]> =>
      (
        await call<{ items: SyncRequest[] }>(
          t,
          buyer,
          'get',
          `/organizations/${B}/orderbooks/${ob}/requests?status=pending`,
        )
      ).items;
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'c1', values: { sku: 'C' } }]);
    await drain();
    const [create] = (await pendingOf()) as [SyncRequest];
    await call(
      t,
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${ob}/requests/${create.requestId}/accept`,
      {},
      200,
    );
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'c1', values: { sku: 'C2' } }]);
    await drain();
    const [update] = (await pendingOf()) as [SyncRequest];
    expect(update.changes[0]?.operation).toBe('update_row');
    // The buyer deletes the row meanwhile: the update conflicts (row-deleted), and the answer names the sync request.
    const rowId = create.changes[0]?.rowId as string;
    expect(
      (await send(buyer, 'delete', `/doc/orderbook/${ob}/data/${rowId}?organizationId=${B}`)).status,
    ).toBeLessThan(300);
    const answer = await send(
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${ob}/requests/${update.requestId}/accept`,
      {},
    );
    expect([answer.status, answer.code]).toEqual([409, 'CONFLICT']);
    expect(answer.payload).toMatchObject({
      requestId: update.requestId,
      documentRequestId: expect.any(String),
    });
    expect(answer.payload?.documentRequestId).not.toBe(update.requestId);
  });

  it('3. a new binding receives the catalog rows that already exist, once', async () => {
    const catalog = await createCatalog(t, sup, S, 'Existing', [text('sku'), number('price')]);
    const open = await createConnection(t, sup, S, catalog, {});
    const asked = await createConnection(t, sup, S, catalog, { accessControl: 'approval' });
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'e1', values: { sku: 'E1', price: 1 } },
      { id: 'e2', values: { sku: 'E2', price: 2 } },
      { id: 'e3', values: { sku: 'E3', price: 3 } },
    ]);
    const ob = await createOrderBook(t, buyer, B, 'Existing', [text('sku'), number('price')]);
    const binding = await createBinding(t, buyer, B, ob, {
      connectionId: open,
      fieldMapping: { unmappedFields: 'create', rules: [] },
      receiverFilter: {
        acceptMode: 'auto',
        filterGroup: { operator: 'AND', conditions: [{ fieldId: 'price', operator: 'gte', value: 2 }] },
      },
    });
    expect(binding.status).toBe('active');
    await drain();
    expect((await rowsOfBook(ob)).map((row) => row.values.sku).sort()).toEqual(['E2', 'E3']);
    await drain();
    expect(await rowsOfBook(ob)).toHaveLength(2);
    const jobs = await call<{
      items: Array<{ status: string; result: Record<string, unknown> }>;
      total: number;
    }>(t, buyer, 'get', `/organizations/${B}/orderbooks/${ob}/bindings/${binding.id}/propagation`);
    expect(jobs.total).toBe(1);
    expect(jobs.items[0]).toMatchObject({
      status: 'applied',
      result: expect.objectContaining({ kind: 'initial_sync' }),
    });
    // Later changes flow as usual.
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'e2', values: { price: 20 } }]);
    await drain();
    expect((await rowsOfBook(ob)).find((row) => row.values.sku === 'E2')?.values.price).toBe(20);

    // An approved binding gets them when approved (manual accept: one pending request), not before.
    const ob2 = await createOrderBook(t, buyer, B, 'Existing 2', [text('sku'), number('price')]);
    const pendingBinding = await createBinding(t, buyer, B, ob2, {
      connectionId: asked,
      fieldMapping: { unmappedFields: 'create', rules: [] },
      receiverFilter: { acceptMode: 'manual' },
    });
    expect(pendingBinding.status).toBe('pending');
    await drain();
    expect(await rowsOfBook(ob2)).toHaveLength(0);
    await call(
      t,
      sup,
      'post',
      `/organizations/${S}/connections/${asked}/bindings/${pendingBinding.id}/approve`,
      {},
      200,
    );
    await drain();
    const requests = await call<{ items: SyncRequest[] }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${ob2}/requests?status=pending`,
    );
    expect(requests.items).toHaveLength(1);
    expect(requests.items[0]?.changes.map((change) => change.operation)).toEqual([
      'create_row',
      'create_row',
      'create_row',
    ]);
  });

  it('4. narrowing a whitelist ends the live bindings of organizations it drops; reject revokes an active binding', async () => {
    const catalog = await createCatalog(t, sup, S, 'Whitelist', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {
      accessControl: { mode: 'whitelist', allowedOrganizations: [B, O] },
    });
    const obB = await createOrderBook(t, buyer, B, 'WB', [text('sku')]);
    const obO = await createOrderBook(t, other, O, 'WO', [text('sku')]);
    const bB = await createBinding(t, buyer, B, obB, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
    });
    const bO = await createBinding(t, other, O, obO, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
    });
    expect([bB.status, bO.status]).toEqual(['active', 'active']);
    await call(
      t,
      sup,
      'patch',
      `/organizations/${S}/connections/${conn}`,
      { accessControl: { mode: 'whitelist', allowedOrganizations: [O] } },
      200,
    );
    const ofB = await call<{ status: string; reviewNote: string }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${obB}/bindings/${bB.id}`,
    );
    expect(ofB.status).toBe('rejected');
    expect(ofB.reviewNote).toMatch(/no longer admits/);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'w1', values: { sku: 'W1' } }]);
    await drain();
    expect(await rowsOfBook(obB)).toHaveLength(0);
    expect(await rowsOfBook(obO, other, O)).toHaveLength(1);

    // The supplier revokes O's active binding with reject.
    const revoked = await call<{ status: string; reviewNote: string }>(
      t,
      sup,
      'post',
      `/organizations/${S}/connections/${conn}/bindings/${bO.id}/reject`,
      { reviewNote: 'contract ended' },
      200,
    );
    expect(revoked).toMatchObject({ status: 'rejected', reviewNote: 'contract ended' });
    const again = await send(
      sup,
      'post',
      `/organizations/${S}/connections/${conn}/bindings/${bO.id}/reject`,
      {},
    );
    expect([again.status, again.code]).toEqual([409, 'INVALID_STATE']);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'w2', values: { sku: 'W2' } }]);
    await drain();
    expect(await rowsOfBook(obO, other, O)).toHaveLength(1);
  });

  it('5. deleting an order book ends its bindings', async () => {
    const catalog = await createCatalog(t, sup, S, 'Deleted book', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Gone', [text('sku')]);
    const binding = await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
    });
    expect((await send(buyer, 'delete', `/doc/orderbook/${ob}?organizationId=${B}`)).status).toBeLessThan(
      300,
    );
    const seen = await call<{ items: Array<{ id: string; status: string }> }>(
      t,
      sup,
      'get',
      `/organizations/${S}/connections/${conn}/bindings`,
    );
    expect(seen.items).toEqual([expect.objectContaining({ id: binding.id, status: 'rejected' })]);
  });

  it('6. suggested mappings: unknown catalog fields refused on the connection, unfit rules skipped at binding time', async () => {
    const catalog = await createCatalog(t, sup, S, 'Suggest', [text('sku'), number('price')]);
    const bad = await send(sup, 'post', `/organizations/${S}/catalogs/${catalog}/connections`, {
      name: 'bad',
      accessControl: 'public',
      defaultReceiverConfig: {
        suggestedFieldMapping: { rules: [{ sourceFieldId: 'nope', targetFieldId: 'x' }] },
      },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.details)).toContain(
      'defaultReceiverConfig.suggestedFieldMapping.rules[0].sourceFieldId',
    );
    const conn = await createConnection(t, sup, S, catalog, {
      defaultReceiverConfig: {
        suggestedFieldMapping: {
          unmappedFields: 'ignore',
          rules: [
            { sourceFieldId: 'sku', targetFieldId: 'sku' },
            { sourceFieldId: 'price', targetFieldId: 'cost' },
          ],
        },
      },
    });
    const patched = await send(sup, 'patch', `/organizations/${S}/connections/${conn}`, {
      defaultReceiverConfig: {
        suggestedFieldMapping: { rules: [{ sourceFieldId: 'nope', targetFieldId: 'x' }] },
      },
    });
    expect(patched.status).toBe(400);
    const ob = await createOrderBook(t, buyer, B, 'Suggest', [text('sku')]);
    const binding = await call<{ fieldMapping: { rules: Array<{ targetFieldId: string }> } }>(
      t,
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${ob}/bindings`,
      { connectionId: conn },
    );
    expect(binding.fieldMapping.rules.map((rule) => rule.targetFieldId)).toEqual(['sku']);
  });

  it('8. concurrent duplicate bindings: every loser answers like a sequential duplicate', async () => {
    const catalog = await createCatalog(t, sup, S, 'Race', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Race', [text('sku')]);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        send(buyer, 'post', `/organizations/${B}/orderbooks/${ob}/bindings`, {
          connectionId: conn,
          fieldMapping: { unmappedFields: 'create', rules: [] },
        }),
      ),
    );
    const winners = answers.filter((answer) => answer.status === 201);
    expect(winners).toHaveLength(1);
    const winner = winners[0]?.payload as { id: string };
    for (const loser of answers.filter((answer) => answer.status !== 201)) {
      expect(loser.status).toBe(409);
      expect(loser.code).toBe('ALREADY_EXISTS');
      expect(loser.details?.field).toBe('connectionId');
      expect(loser.payload).toEqual({ bindingId: winner.id, status: 'active' });
    }
  });

  it('9. value errors name the path the client sent', async () => {
    const catalog = await createCatalog(t, sup, S, 'Paths', [
      text('sku'),
      number('qty'),
      { id: 'color', name: 'color', type: 'single_select', selectOptions: [{ id: 'red', label: 'Red' }] },
    ]);
    const batch = await send(sup, 'post', `/organizations/${S}/catalogs/${catalog}/rows/batch-update`, {
      rows: [{ id: 'p1', values: { sku: 'P', qty: 1, color: 'nope' } }],
    });
    expect(batch.status).toBe(400);
    const fields = [batch.details?.field, ...(batch.details?.errors ?? []).map((error) => error.field)];
    expect(fields).toContain('rows[0].values.color');
    const asArray = await send(sup, 'post', `/organizations/${S}/catalogs/${catalog}/rows/batch-update`, {
      rows: [
        {
          id: 'p2',
          values: [
            { fieldId: 'sku', value: 'P' },
            { fieldId: 'qty', value: 'many' },
          ],
        },
      ],
    });
    expect(asArray.status).toBe(400);
    expect([
      asArray.details?.field,
      ...(asArray.details?.errors ?? []).map((error) => error.field),
    ]).toContain('rows[0].values[1].value');
    const ob = await createOrderBook(t, buyer, B, 'Paths', [text('sku'), number('qty')]);
    const sync = await send(buyer, 'post', `/organizations/${B}/orderbooks/${ob}/requests`, {
      changes: [{ operation: 'create_row', values: { sku: 'S', qty: 'many' } }],
    });
    expect(sync.status).toBe(400);
    expect([sync.details?.field, ...(sync.details?.errors ?? []).map((error) => error.field)]).toContain(
      'changes[0].values.qty',
    );
  });

  it('10. share links and the propagation ledger are paged lists', async () => {
    const catalog = await createCatalog(t, sup, S, 'Paged', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    for (let i = 0; i < 3; i += 1) {
      await call(t, sup, 'post', `/organizations/${S}/connections/${conn}/share-link`, {});
    }
    const page = await call<{
      items: unknown[];
      page: number;
      pageSize: number;
      total: number;
      totalPages: number;
    }>(t, sup, 'get', `/organizations/${S}/connections/${conn}/share-links?page=2&pageSize=2`);
    expect(page).toMatchObject({ page: 2, pageSize: 2, total: 3, totalPages: 2 });
    expect(page.items).toHaveLength(1);
    const ob = await createOrderBook(t, buyer, B, 'Paged', [text('sku')]);
    const binding = await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'g1', values: { sku: 'G' } }]);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'g2', values: { sku: 'G2' } }]);
    await drain();
    const ledger = await call<{ items: unknown[]; total: number; pageSize: number }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${ob}/bindings/${binding.id}/propagation?pageSize=1`,
    );
    // Two catalog revisions (and the initial sync at the catalog's creation revision, when it made one).
    expect(ledger.pageSize).toBe(1);
    expect(ledger.total).toBeGreaterThanOrEqual(2);
    expect(ledger.items).toHaveLength(1);
  });

  it('11. GET /catalogs/{id}/connections takes no catalogId query parameter', async () => {
    const catalog = await createCatalog(t, sup, S, 'Query', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const operation =
      t.openApi.paths['/api/v1/organizations/{organizationId}/catalogs/{catalogId}/connections']?.get;
    const query = (operation?.parameters ?? []).flatMap((parameter) =>
      'in' in parameter && parameter.in === 'query' ? [parameter.name] : [],
    );
    expect(query).toEqual(expect.arrayContaining(['page', 'pageSize', 'status']));
    expect(query).not.toContain('catalogId');
    const listed = await send(
      sup,
      'get',
      `/organizations/${S}/catalogs/${catalog}/connections?catalogId=${catalog}`,
    );
    if (listed.status === 200) {
      expect((listed.payload as { items: Array<{ id: string }> }).items.map((item) => item.id)).toEqual([
        conn,
      ]);
    } else {
      expect(listed.status).toBe(400);
    }
  });

  it('12. OpenAPI declares the 404, 409 and 410 answers', () => {
    const paths = t.openApi.paths;
    const responses = (path: string, method: 'get' | 'post' | 'patch') =>
      Object.keys(paths[path]?.[method]?.responses ?? {});
    const org = '/api/v1/organizations/{organizationId}';
    expect(responses(`${org}/orderbooks/{orderBookId}/bindings`, 'post')).toEqual(
      expect.arrayContaining(['409', '410']),
    );
    expect(responses(`${org}/connections/{connectionId}/pause`, 'post')).toContain('409');
    expect(responses(`${org}/orderbooks/{orderBookId}/requests/{requestId}/accept`, 'post')).toContain('409');
    expect(responses(`${org}/catalogs/{catalogId}/rows/{rowId}`, 'patch')).toContain('409');
    expect(responses('/connect/share/{code}', 'get')).toEqual(expect.arrayContaining(['404', '410']));
    expect(responses(`${org}/currency-rates`, 'get')).toContain('404');
    expect(responses(`${org}/connectors/{connectorId}/run`, 'post')).toContain('404');
    expect(responses(`${org}/orderbooks/{orderBookId}/bindings/{bindingId}/propagation`, 'get')).toContain(
      '404',
    );
  });

  it('13. a disabled connection answers 409 for previews and order-book creation', async () => {
    const catalog = await createCatalog(t, sup, S, 'Disabled', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Disabled', [text('sku')], [conn]);
    expect((await send(sup, 'delete', `/doc/catalog/${catalog}?organizationId=${S}`)).status).toBeLessThan(
      300,
    );
    const preview = await send(buyer, 'post', `/organizations/${B}/orderbooks/${ob}/field-mapping/preview`, {
      connectionId: conn,
    });
    expect([preview.status, preview.code]).toEqual([409, 'INVALID_STATE']);
    expect(preview.payload).toEqual({ connectionId: conn, status: 'disabled' });
    const created = await send(buyer, 'post', `/organizations/${B}/orderbooks`, {
      name: 'after',
      sourceConnectionIds: [conn],
    });
    expect([created.status, created.code]).toEqual([409, 'INVALID_STATE']);
  });

  it('14. formula results are rounded to 15 significant digits', async () => {
    const catalog = await createCatalog(t, sup, S, 'Formula', [number('price')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Formula', [number('gross')]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: {
        rules: [
          {
            sourceFieldId: 'price',
            targetFieldId: 'gross',
            transformType: 'formula',
            formula: 'price * 1.2',
          },
        ],
      },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'f1', values: { price: 31 } }]);
    await drain();
    expect((await rowsOfBook(ob))[0]?.values.gross).toBe(37.2);
  });
});
