import { registerUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { createTestDatabase } from '../../utils/test-database.js';
import {
  call,
  createBinding,
  createCatalog,
  createConnection,
  createOrderBook,
  eventually,
  rowsOf,
  syncLogs,
  writeCatalogRows,
} from './sync.fixtures.js';

/** Two service instances on one database: every (binding, catalog revision) is applied by exactly one of them. */
describe('supply-chain propagation with two instances', () => {
  let database: { url: string; drop: () => Promise<void> };
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = { OUTBOX_POLL_INTERVAL_MS: '50' };
    first = await createTestApp(env, { databaseUrl: database.url });
    second = await createTestApp(env, { databaseUrl: database.url });
  });

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await database?.drop();
  });

  it('applies each job once, in revision order, whichever instance takes it', async () => {
    const sup = await registerUser(first.http);
    const buyer = await registerUser(second.http);
    const S = sup.defaultOrganizationId;
    const B = buyer.defaultOrganizationId;
    const catalog = await createCatalog(first, sup, S, 'Shared', [
      { id: 'sku', name: 'SKU', type: 'text' },
      { id: 'qty', name: 'Qty', type: 'number' },
    ]);
    const connection = await createConnection(first, sup, S, catalog, {});
    const books: { id: string; binding: string }[] = [];
    for (let i = 0; i < 3; i += 1) {
      const id = await createOrderBook(second, buyer, B, `Book ${i}`, [
        { id: 'tsku', name: 'SKU', type: 'text' },
        { id: 'tqty', name: 'Qty', type: 'number' },
      ]);
      const binding = await createBinding(second, buyer, B, id, {
        connectionId: connection,
        fieldMapping: {
          unmappedFields: 'ignore',
          rules: [
            { sourceFieldId: 'sku', targetFieldId: 'tsku' },
            { sourceFieldId: 'qty', targetFieldId: 'tqty' },
          ],
        },
        receiverFilter: { acceptMode: 'auto' },
      });
      books.push({ id, binding: binding.id });
    }
    // Eight revisions in quick succession, alternately through each instance: creates, then updates of the same rows.
    for (let round = 0; round < 8; round += 1) {
      const app = round % 2 === 0 ? first : second;
      await writeCatalogRows(app, sup, S, catalog, [
        round === 0
          ? { operation: 'create', id: 'x', values: { sku: 'X', qty: 0 } }
          : { target: { row: 'x' }, values: { qty: round } },
        { operation: 'create', id: `n${round}`, values: { sku: `N${round}`, qty: round } },
      ]);
    }
    const jobs = async (): Promise<{ status: string; n: number }[]> =>
      first.dataSource.query(`SELECT status, count(*)::int AS n FROM sync_propagation_jobs GROUP BY status`);
    await eventually(
      async () => {
        const counts = await jobs();
        return counts.length === 1 && counts[0]?.status === 'applied' && counts[0].n === 24
          ? true
          : undefined;
      },
      30_000,
      '24 applied jobs',
    );

    for (const book of books) {
      const rows = await rowsOf(second, buyer, 'orderbook', book.id, B);
      expect(rows).toHaveLength(9);
      // The last revision wins: applied in order, never an older value over a newer one.
      expect(rows.find((row) => row.values.tsku === 'X')?.values.tqty).toBe(7);
      const logs = await syncLogs(second, buyer, B, book.id, book.binding);
      const keys = logs.map((log) => `${log.catalogRevisionId}:${log.sourceRowId}`);
      expect(new Set(keys).size).toBe(keys.length);
      const requests = await call<{ total: number }>(
        second,
        buyer,
        'get',
        `/organizations/${B}/orderbooks/${book.id}/requests?pageSize=1`,
      );
      expect(requests.total).toBeLessThanOrEqual(8);
    }
  });
});
