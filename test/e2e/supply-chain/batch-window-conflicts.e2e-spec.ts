import { SyncClock } from '../../../src/modules/supply-chain-sync/services/sync-clock.js';
import type { TestUser } from '../../factories/users.factory.js';
import type { TestApp } from '../../utils/test-app.js';
import type { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import {
  copyAllFields,
  createBinding,
  createOrderBook,
  number,
  openSyncApp,
  rowsOf,
  settleSync,
  shareCatalog,
  text,
  where,
  writeCatalogRows,
  writeOrderBookRows,
} from './sync.fixtures.js';

/**
 * Receiver filter and conflict resolution over a batch window (docs/supply-chain.md, "Batch window", "Conflict
 * resolution"): the order book ends as the window's changes applied one by one would leave it, and `latest_wins`
 * compares the times of the changes to the conflicting field itself, on both sides.
 */
describe('supply-chain batch window: receiver filter and conflicts', () => {
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

  const windowed = { propagationEvents: { batchMerge: true, batchWindowSeconds: 300 } };

  async function values(ob: string): Promise<Record<string, unknown>[]> {
    return (await rowsOf(t, buyer, 'orderbook', ob, B))
      .map((row) => row.values)
      .sort((x, y) => String(x.sku).localeCompare(String(y.sku)));
  }

  it('a row deleted and created again that no longer matches the receiver filter is withdrawn', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Refiltered', [text('sku'), number('price')], windowed);
    const ob = await createOrderBook(t, buyer, B, 'Refiltered book', [], [conn]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: copyAllFields,
      receiverFilter: { acceptMode: 'auto', filterGroup: where('price', 'lt', 10) },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A', price: 1 } }]);
    await closeWindow();
    expect(await values(ob)).toEqual([{ sku: 'A', price: 1 }]);

    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', operation: 'delete' }]);
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r1', operation: 'create', values: { sku: 'A', price: 99 } },
    ]);
    await closeWindow();
    // One by one: the delete removes the order-book row; the new row is filtered out by the receiver filter.
    expect(await values(ob)).toEqual([]);
  });

  it('a row deleted and created again replaces the local edits of the old order-book row (keep_local)', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Recreated local', [text('sku'), number('price')], windowed);
    const ob = await createOrderBook(t, buyer, B, 'Recreated local book', [], [conn]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: copyAllFields,
      conflictResolution: { defaultStrategy: 'keep_local' },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A', price: 1 } }]);
    await closeWindow();
    const [row] = await rowsOf(t, buyer, 'orderbook', ob, B);
    await writeOrderBookRows(t, buyer, B, ob, [{ id: row?.id, values: { price: 50 } }]);

    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', operation: 'delete' }]);
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r1', operation: 'create', values: { sku: 'B', price: 2 } },
    ]);
    await closeWindow();
    // One by one: the edited row is deleted, and the new catalog row arrives whole — no local edit left to keep.
    expect(await values(ob)).toEqual([{ sku: 'B', price: 2 }]);
  });

  it('a row deleted and another created with its dedup key in one change: the new row arrives, the deleted one goes', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Replaced', [text('sku'), number('price')]);
    const ob = await createOrderBook(t, buyer, B, 'Replaced book', [], [conn]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: copyAllFields,
      receiverFilter: { acceptMode: 'auto', deduplicationStrategy: 'by_field', deduplicationFieldIds: ['sku'] },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A', price: 1 } }]);
    await settleSync(t, worker);
    expect(await values(ob)).toEqual([{ sku: 'A', price: 1 }]);

    // One catalog revision replaces r1 by r2 with the same SKU (either order in the batch).
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r1', operation: 'delete' },
      { id: 'r2', values: { sku: 'A', price: 5 } },
    ]);
    await settleSync(t, worker);
    // One by one: the delete removes r1's order-book row, then r2 finds no row to match and is created.
    expect(await values(ob)).toEqual([{ sku: 'A', price: 5 }]);

    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r3', values: { sku: 'A', price: 7 } },
      { id: 'r2', operation: 'delete' },
    ]);
    await settleSync(t, worker);
    expect(await values(ob)).toEqual([{ sku: 'A', price: 7 }]);
  });

  it('latest_wins: a later catalog change of another field of the row does not beat a local edit of this field', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Per field up', [text('sku'), number('price')], windowed);
    const ob = await createOrderBook(t, buyer, B, 'Per field up book', [], [conn]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: copyAllFields,
      conflictResolution: { defaultStrategy: 'latest_wins' },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A', price: 1 } }]);
    await closeWindow();
    const [row] = await rowsOf(t, buyer, 'orderbook', ob, B);

    // The catalog changes the price, the buyer then edits the price, the catalog then renames the row: one window.
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { price: 2 } }]);
    await writeOrderBookRows(t, buyer, B, ob, [{ id: row?.id, values: { price: 50 } }]);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A2' } }]);
    await closeWindow();
    // The buyer's price is later than the catalog's price; the name was not edited locally.
    expect(await values(ob)).toEqual([{ sku: 'A2', price: 50 }]);
  });

  it('latest_wins: a later local edit of another field does not make an older local edit of this field win', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Per field local', [text('sku'), number('price')], windowed);
    const ob = await createOrderBook(t, buyer, B, 'Per field local book', [text('note')], [conn]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: copyAllFields,
      conflictResolution: { defaultStrategy: 'latest_wins' },
    });
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { sku: 'A', price: 1 } }]);
    await closeWindow();
    const [row] = await rowsOf(t, buyer, 'orderbook', ob, B);

    // The buyer edits the price, the catalog then changes the price, the buyer then writes a note of its own.
    await writeOrderBookRows(t, buyer, B, ob, [{ id: row?.id, values: { price: 50 } }]);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'r1', values: { price: 2 } }]);
    await writeOrderBookRows(t, buyer, B, ob, [{ id: row?.id, values: { note: 'call back' } }]);
    await closeWindow();
    // The catalog's price is later than the buyer's price; the note is the buyer's own field.
    expect(await values(ob)).toEqual([{ sku: 'A', price: 2, note: 'call back' }]);
  });
});
