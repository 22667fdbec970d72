import { SyncClock } from '../../../src/modules/supply-chain-sync/services/sync-clock.js';
import type { TestUser } from '../../factories/users.factory.js';
import type { TestApp } from '../../utils/test-app.js';
import type { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import {
  call,
  copyAllFields,
  createBinding,
  createOrderBook,
  revisionCount,
  number,
  openSyncApp,
  rowsOf,
  settleSync,
  shareCatalog,
  syncLogs,
  text,
  updateConnection,
  writeCatalogRows,
  writeOrderBookRows,
} from './sync.fixtures.js';

/**
 * A batch window folds the changes of its revisions into one change per row (docs/supply-chain.md, "Batch window").
 * The order book must end as the same changes applied one by one (immediate mode) would leave it.
 */
describe('supply-chain batch window: folded changes', () => {
  let t: TestApp;
  let worker: SyncWorker;
  let clock: SyncClock;
  let sup: TestUser;
  let buyer: TestUser;
  let S: string;
  let B: string;

  beforeAll(async () => {
    const app = await openSyncApp(2);
    ({ t, worker } = app);
    [sup, buyer] = app.users as [TestUser, TestUser];
    [S, B] = app.orgs as [string, string];
    clock = t.app.get(SyncClock);
  });

  afterAll(async () => {
    clock.reset();
    await t.close();
  });

  async function closeWindow(): Promise<void> {
    await settleSync(t, worker);
    clock.advance(301_000);
    await settleSync(t, worker);
  }

  it('a row deleted and created again (same id) inside one window arrives with its new values (field_value_changed only)', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Recreated', [text('sku'), number('price')], {
      propagationEvents: {
        eventTypes: ['row_created', 'row_deleted', 'field_value_changed'],
        batchMerge: true,
        batchWindowSeconds: 300,
      },
    });
    const ob = await createOrderBook(t, buyer, B, 'Recreated book', [], [conn]);
    const binding = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAllFields });
    expect(binding.status).toBe('active');

    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A', price: 1 } }]);
    await closeWindow();
    expect((await rowsOf(t, buyer, 'orderbook', ob, B)).map((row) => row.values)).toEqual([
      { sku: 'A', price: 1 },
    ]);

    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', operation: 'delete' }]);
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r1', operation: 'create', values: { sku: 'B', price: 2 } },
    ]);
    await closeWindow();
    // One by one: the delete removes the order-book row, the create adds one with the new values.
    expect((await rowsOf(t, buyer, 'orderbook', ob, B)).map((row) => row.values)).toEqual([
      { sku: 'B', price: 2 },
    ]);
  });

  it('a row deleted and created again inside one window is withdrawn when only the delete propagates', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Withdrawn', [text('sku'), number('price')], {
      propagationEvents: { eventTypes: ['row_created', 'row_updated', 'row_deleted'], batchMerge: true },
    });
    const ob = await createOrderBook(t, buyer, B, 'Withdrawn book', [], [conn]);
    await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAllFields });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A', price: 1 } }]);
    await closeWindow();
    expect(await rowsOf(t, buyer, 'orderbook', ob, B)).toHaveLength(1);

    // The connection stops propagating creations; the row is then deleted and created again inside one window.
    await updateConnection(t, sup, S, conn, {
      propagationEvents: { eventTypes: ['row_updated', 'row_deleted'], batchMerge: true },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', operation: 'delete' }]);
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r1', operation: 'create', values: { sku: 'B', price: 2 } },
    ]);
    await closeWindow();
    // One by one: the delete removes the order-book row, the create is not propagated.
    expect(await rowsOf(t, buyer, 'orderbook', ob, B)).toEqual([]);
  });

  it('updates then a delete of one row inside a window remove it; several updates collapse into one revision', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Collapse', [text('sku'), number('price')], {
      propagationEvents: { batchMerge: true, batchWindowSeconds: 300 },
    });
    const ob = await createOrderBook(t, buyer, B, 'Collapse book', [], [conn]);
    await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAllFields });
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r1', values: { sku: 'A', price: 1 } },
      { id: 'r2', values: { sku: 'B', price: 1 } },
    ]);
    await closeWindow();
    const revisions = await revisionCount(t, buyer, 'orderbook', ob, B);

    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { price: 2 } }]);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { price: 3 } }]);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r2', values: { price: 5 } }]);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r2', operation: 'delete' }]);
    await closeWindow();
    expect((await rowsOf(t, buyer, 'orderbook', ob, B)).map((row) => row.values)).toEqual([
      { sku: 'A', price: 3 },
    ]);
    expect(await revisionCount(t, buyer, 'orderbook', ob, B)).toBe(revisions + 1);
  });

  it("the catalog deleted inside a window: the buyer still reads its binding's ledger, the window's job skipped", async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Deleted', [text('sku'), number('price')], {
      propagationEvents: { batchMerge: true, batchWindowSeconds: 300 },
    });
    const ob = await createOrderBook(t, buyer, B, 'Deleted book', [], [conn]);
    const binding = await createBinding(t, buyer, B, ob, { connectionId: conn, fieldMapping: copyAllFields });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A', price: 1 } }]);
    await closeWindow();
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { price: 2 } }]);
    await settleSync(t, worker);
    await call(t, sup, 'delete', `/doc/catalog/${catalog}?organizationId=${S}`, undefined, 200);
    await closeWindow();

    // The binding outlives its catalog (GET answers it); so does its ledger, which says what became of the window.
    await call(t, buyer, 'get', `/organizations/${B}/orderbooks/${ob}/bindings/${binding.id}`);
    const ledger = await call<{ items: { status: string; catalogRevisionVersion: number }[] }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${ob}/bindings/${binding.id}/propagation`,
    );
    expect(ledger.items.map((job) => job.status)).toEqual(['skipped', 'applied']);
    expect((await rowsOf(t, buyer, 'orderbook', ob, B)).map((row) => row.values)).toEqual([
      { sku: 'A', price: 1 },
    ]);
  });

  it('latest_wins inside a window compares a local edit with the revision that changed that row, not the last one', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Latest', [text('sku'), number('price')], {
      propagationEvents: { batchMerge: true, batchWindowSeconds: 300 },
    });
    const ob = await createOrderBook(t, buyer, B, 'Latest book', [], [conn]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: copyAllFields,
      conflictResolution: { defaultStrategy: 'latest_wins' },
    });
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r1', values: { sku: 'A', price: 1 } },
      { id: 'r2', values: { sku: 'B', price: 1 } },
    ]);
    await closeWindow();
    const a = (await rowsOf(t, buyer, 'orderbook', ob, B)).find((row) => row.values.sku === 'A');

    // r1 changes in the catalog, then the buyer edits r1, then the catalog changes another row: all in one window.
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { price: 2 } }]);
    await writeOrderBookRows(t, buyer, B, ob, [{ id: a?.id, values: { price: 50 } }]);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r2', values: { price: 3 } }]);
    await closeWindow();
    // The buyer's edit of r1 is later than the catalog's change of r1: it wins; r2 was not edited.
    expect(
      (await rowsOf(t, buyer, 'orderbook', ob, B))
        .map((row) => row.values)
        .sort((x, y) => String(x.sku).localeCompare(String(y.sku))),
    ).toEqual([
      { sku: 'A', price: 50 },
      { sku: 'B', price: 3 },
    ]);
  });

  it('a rule whose catalog field the supplier deleted leaves its target out (with the reason), never clears it', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Dropped field', [text('sku'), number('price')]);
    const ob = await createOrderBook(t, buyer, B, 'Dropped field book', [text('code'), number('amount')]);
    const binding = await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: {
        unmappedFields: 'ignore',
        rules: [
          { sourceFieldId: 'sku', targetFieldId: 'code' },
          { sourceFieldId: 'price', targetFieldId: 'amount' },
        ],
      },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A', price: 7 } }]);
    await settleSync(t, worker);
    expect((await rowsOf(t, buyer, 'orderbook', ob, B)).map((row) => row.values)).toEqual([
      { code: 'A', amount: 7 },
    ]);

    const metadata = await call<{ fields: { id: string }[]; version: number }>(
      t,
      sup,
      'get',
      `/doc/catalog/${catalog}/metadata?organizationId=${S}`,
    );
    await call(t, sup, 'put', `/doc/catalog/${catalog}/metadata?organizationId=${S}`, {
      fields: metadata.fields.filter((field) => field.id !== 'price'),
      version: metadata.version,
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A2' } }]);
    await settleSync(t, worker);
    // The catalog no longer has the field: the rule fails like one whose target is gone, the amount stays.
    expect((await rowsOf(t, buyer, 'orderbook', ob, B)).map((row) => row.values)).toEqual([
      { code: 'A2', amount: 7 },
    ]);
    const logs = await syncLogs(t, buyer, B, ob, binding.id);
    expect(logs[0]?.reason).toContain('left out: amount (the catalog has no field "price")');
  });
});
