import request from 'supertest';
import { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { blockedSessions, holdLock } from '../../utils/row-locks.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  type Answer,
  answerOf,
  API,
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

/**
 * Defects of the regression audit of the supply-chain fixes (docs/supply-chain.md): a binding created while the
 * access control narrows, initial syncs of a rebound order book, formula rounding of large numbers, bindings to a
 * disabled connection, bindings without mapping rules, blank names, archived buyer organizations and concurrent
 * accepts of pending creates.
 */
describe('supply chain: regression fixes', () => {
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

  it('1. a binding created while the access control narrows ends under the new access control', async () => {
    const catalog = await createCatalog(t, sup, S, 'Narrow race', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, other, O, 'Stranger', [text('sku')]);
    // The worst order: the binding has read the (public) connection, then waits — here on the order book's row,
    // which its insert references — while the whitelist that excludes O commits.
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM orderbooks WHERE id = $1 FOR UPDATE`, [ob]);
    const binding = send(other, 'post', `/organizations/${O}/orderbooks/${ob}/bindings`, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
    });
    await blockedSessions(t.dataSource, 1);
    let narrowed = false;
    const narrowing = send(sup, 'patch', `/organizations/${S}/connections/${conn}`, {
      accessControl: { mode: 'whitelist', allowedOrganizations: [B] },
    }).then((answer) => {
      narrowed = true;
      return answer;
    });
    await blockedSessions(t.dataSource, 2, () => narrowed);
    await lock.release();
    const [created, patched] = await Promise.all([binding, narrowing]);
    expect(patched.status).toBe(200);
    if (created.status === 201) {
      const id = (created.payload as { id: string }).id;
      const seen = await call<{ status: string; reviewNote: string }>(
        t,
        other,
        'get',
        `/organizations/${O}/orderbooks/${ob}/bindings/${id}`,
      );
      expect(seen.status).toBe('rejected');
      expect(seen.reviewNote).toMatch(/no longer admits/);
    } else {
      expect([created.status, created.code]).toEqual([404, 'NOT_FOUND']);
    }
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'n1', values: { sku: 'N1' } }]);
    await drain();
    expect(await rowsOfBook(ob, other, O)).toHaveLength(0);
  });

  it('2. rebinding an order book, or binding it to another connection of the catalog, continues its rows', async () => {
    const catalog = await createCatalog(t, sup, S, 'Rebind', [text('sku'), number('price')]);
    const asked = await createConnection(t, sup, S, catalog, { accessControl: 'approval' });
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'a1', values: { sku: 'A1', price: 1 } },
      { id: 'a2', values: { sku: 'A2', price: 2 } },
    ]);
    const ob = await createOrderBook(t, buyer, B, 'Rebind', [text('sku'), number('price')]);
    const body = { connectionId: asked, fieldMapping: { unmappedFields: 'create', rules: [] } };
    const decide = (id: string, action: 'approve' | 'reject') =>
      call(t, sup, 'post', `/organizations/${S}/connections/${asked}/bindings/${id}/${action}`, {}, 200);
    const skus = async (): Promise<unknown[]> => (await rowsOfBook(ob)).map((row) => row.values.sku).sort();

    const first = await createBinding(t, buyer, B, ob, body);
    await decide(first.id, 'approve');
    await drain();
    expect(await skus()).toEqual(['A1', 'A2']);
    await decide(first.id, 'reject');
    const second = await createBinding(t, buyer, B, ob, body);
    await decide(second.id, 'approve');
    await drain();
    expect(await skus()).toEqual(['A1', 'A2']);
    // The new binding now carries the rows: a catalog change updates them.
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'a1', values: { price: 10 } }]);
    await drain();
    const rows = await rowsOfBook(ob);
    expect(rows).toHaveLength(2);
    expect(rows.find((row) => row.values.sku === 'A1')?.values.price).toBe(10);

    // A second binding of the order book to another connection of the same catalog.
    const open = await createConnection(t, sup, S, catalog, {});
    const third = await createBinding(t, buyer, B, ob, {
      connectionId: open,
      fieldMapping: { unmappedFields: 'create', rules: [] },
    });
    expect(third.status).toBe('active');
    await drain();
    expect(await skus()).toEqual(['A1', 'A2']);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'a3', values: { sku: 'A3', price: 3 } }]);
    await drain();
    expect(await skus()).toEqual(['A1', 'A2', 'A3']);
  });

  it('3. formula results keep 15 significant digits: large numbers intact, float noise removed', async () => {
    const catalog = await createCatalog(t, sup, S, 'Large', [text('sku'), number('price')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Large', [text('sku'), number('plus'), number('gross')]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: {
        rules: [
          { sourceFieldId: 'sku', targetFieldId: 'sku' },
          { sourceFieldId: 'price', targetFieldId: 'plus', transformType: 'formula', formula: 'price + 1' },
          { sourceFieldId: 'price', targetFieldId: 'gross', transformType: 'formula', formula: 'price * 1.2' },
        ],
      },
    });
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'big', values: { sku: 'BIG', price: 12345678901234 } },
      { id: 'small', values: { sku: 'SMALL', price: 31 } },
    ]);
    await drain();
    const rows = await rowsOfBook(ob);
    expect(rows.find((row) => row.values.sku === 'BIG')?.values.plus).toBe(12345678901235);
    expect(rows.find((row) => row.values.sku === 'SMALL')?.values.gross).toBe(37.2);
  });

  it('4. a binding to a connection whose catalog was deleted answers 409 INVALID_STATE', async () => {
    const catalog = await createCatalog(t, sup, S, 'Deleted catalog', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Deleted catalog', [text('sku')], [conn]);
    expect((await send(sup, 'delete', `/doc/catalog/${catalog}?organizationId=${S}`)).status).toBeLessThan(
      300,
    );
    const bound = await send(buyer, 'post', `/organizations/${B}/orderbooks/${ob}/bindings`, {
      connectionId: conn,
    });
    expect([bound.status, bound.code]).toEqual([409, 'INVALID_STATE']);
    expect(bound.payload).toEqual({ connectionId: conn, status: 'disabled' });
  });

  it('5. without a fieldMapping, a binding maps the fields generated from the catalog, or by id, or is refused', async () => {
    const catalog = await createCatalog(t, sup, S, 'Unmapped', [text('sku'), number('price')]);
    const c1 = await createConnection(t, sup, S, catalog, {});
    const c2 = await createConnection(t, sup, S, catalog, {});
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'u1', values: { sku: 'U1', price: 5 } }]);
    const generated = await createOrderBook(t, buyer, B, 'From C1', [], [c1]);
    const bound = await call<{ fieldMapping: { rules: Array<{ sourceFieldId: string }> } }>(
      t,
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${generated}/bindings`,
      { connectionId: c2 },
    );
    expect(bound.fieldMapping.rules.map((rule) => rule.sourceFieldId).sort()).toEqual(['price', 'sku']);
    await drain();
    const rows = await rowsOfBook(generated);
    expect(rows).toHaveLength(1);
    expect(Object.values(rows[0]?.values ?? {}).sort()).toEqual([5, 'U1']);

    // Fields of the same id in both.
    const sameIds = await createOrderBook(t, buyer, B, 'Same ids', [text('sku'), text('note')]);
    const byId = await call<{ fieldMapping: { rules: Array<{ sourceFieldId: string; targetFieldId: string }> } }>(
      t,
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${sameIds}/bindings`,
      { connectionId: c2 },
    );
    expect(byId.fieldMapping.rules).toEqual([expect.objectContaining({ sourceFieldId: 'sku', targetFieldId: 'sku' })]);

    // Nothing in common: refused rather than one blank row per catalog row.
    const unrelated = await createOrderBook(t, buyer, B, 'Unrelated', [text('note')]);
    const refused = await send(buyer, 'post', `/organizations/${B}/orderbooks/${unrelated}/bindings`, {
      connectionId: c2,
    });
    expect([refused.status, refused.code]).toEqual([400, 'VALIDATION_ERROR']);
    expect(JSON.stringify(refused.details)).toContain('no field of the catalog maps to this order book');
    expect(await rowsOfBook(unrelated)).toHaveLength(0);
  });

  it('6. a blank catalog, order book or connection name is refused like an empty one', async () => {
    const catalog = await createCatalog(t, sup, S, 'Named', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const answers = [
      await send(sup, 'post', `/organizations/${S}/catalogs`, { name: '   ', catalogType: 'product' }),
      await send(sup, 'patch', `/organizations/${S}/catalogs/${catalog}`, { name: ' \t ' }),
      await send(buyer, 'post', `/organizations/${B}/orderbooks`, { name: '   ' }),
      await send(sup, 'post', `/organizations/${S}/catalogs/${catalog}/connections`, {
        name: '   ',
        accessControl: 'public',
      }),
      await send(sup, 'patch', `/organizations/${S}/connections/${conn}`, { name: '  ' }),
    ];
    for (const answer of answers) {
      expect([answer.status, answer.code]).toEqual([400, 'VALIDATION_ERROR']);
      expect(JSON.stringify(answer.details)).toContain('name');
    }
    const trimmed = await call<{ name: string }>(t, sup, 'post', `/organizations/${S}/catalogs`, {
      name: '  Spaced  ',
      catalogType: 'product',
    });
    expect(trimmed.name).toBe('Spaced');
  });

  it('7. archiving the buyer organization ends its bindings; catalog changes no longer reach its order book', async () => {
    const gone = await registerUser(t.http);
    const G = gone.defaultOrganizationId;
    const catalog = await createCatalog(t, sup, S, 'Archived buyer', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, gone, G, 'Soon archived', [text('sku')]);
    const binding = await createBinding(t, gone, G, ob, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'g1', values: { sku: 'G1' } }]);
    await drain();
    expect(await rowsOfBook(ob, gone, G)).toHaveLength(1);
    const jobsOf = async (): Promise<number> =>
      (
        await t.dataSource.query<Array<{ n: number }>>(
          `SELECT count(*)::int AS n FROM sync_propagation_jobs WHERE binding_id = $1`,
          [binding.id],
        )
      )[0]?.n ?? 0;
    const before = await jobsOf();

    await request(t.http).delete(`${API}/organizations/${G}`).set(bearer(gone)).expect(200);
    await drain();
    const seen = await call<{ items: Array<{ id: string; status: string; reviewNote: string }> }>(
      t,
      sup,
      'get',
      `/organizations/${S}/connections/${conn}/bindings`,
    );
    expect(seen.items).toEqual([
      expect.objectContaining({ id: binding.id, status: 'rejected', reviewNote: 'the organization was deleted' }),
    ]);
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'g1', values: { sku: 'G1 changed' } },
      { id: 'g2', values: { sku: 'G2' } },
    ]);
    await drain();
    expect(await jobsOf()).toBe(before);
    const rows = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM sync_row_links WHERE owner_id = $1`,
      [binding.id],
    );
    expect(rows[0]?.n).toBe(1);
  });

  it('8. two concurrent accepts of pending creates of one row both succeed, as one after the other', async () => {
    const catalog = await createCatalog(t, sup, S, 'Concurrent accepts', [text('sku'), number('price')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Concurrent accepts', [text('sku'), number('price')]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: { unmappedFields: 'create', rules: [] },
      receiverFilter: { acceptMode: 'manual' },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'c1', values: { sku: 'C', price: 1 } }]);
    await drain();
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'c1', values: { price: 2 } }]);
    await drain();
    const pending = await call<{ items: Array<{ requestId: string; changes: Array<{ operation: string }> }> }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${ob}/requests?status=pending`,
    );
    expect(pending.items.map((item) => item.changes[0]?.operation)).toEqual(['create_row', 'create_row']);
    // Both decisions have read the order book before either merges: the merge's document lock is held meanwhile.
    const [book] = await t.dataSource.query<Array<{ documentId: string }>>(
      `SELECT document_id AS "documentId" FROM orderbooks WHERE id = $1`,
      [ob],
    );
    const lock = await holdLock(t.dataSource, `SELECT 1 FROM documents WHERE id = $1 FOR UPDATE`, [book?.documentId]);
    const accepts = pending.items.map((item) =>
      send(buyer, 'post', `/organizations/${B}/orderbooks/${ob}/requests/${item.requestId}/accept`, {}),
    );
    await blockedSessions(t.dataSource, 2);
    await lock.release();
    const answers = await Promise.all(accepts);
    expect(answers.map((answer) => [answer.status, answer.payload?.status])).toEqual([
      [200, 'accepted'],
      [200, 'accepted'],
    ]);
    const rows = await rowsOfBook(ob);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.values.sku).toBe('C');
  });
});
