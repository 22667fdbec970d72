import { TransactionHost } from '../../../src/database/transaction-host.js';
import { toDomainEvent } from '../../../src/modules/events/outbox.dispatcher.js';
import type { OutboxEventEntity } from '../../../src/modules/events/outbox-event.entity.js';
import { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import { RevisionCreatedListener } from '../../../src/modules/supply-chain-sync/listeners/revision-created.listener.js';
import { PropagationService } from '../../../src/modules/supply-chain-sync/services/propagation.service.js';
import { SyncClock } from '../../../src/modules/supply-chain-sync/services/sync-clock.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { WebhookReceiver } from '../webhooks/webhook-receiver.js';
import {
  call,
  createBinding,
  createCatalog,
  createConnection,
  createOrderBook,
  deleteCatalogRow,
  eventually,
  type Field,
  revisionCount,
  rowsOf,
  type SyncLog,
  syncLogs,
  writeCatalogRows,
} from './sync.fixtures.js';

const text = (id: string, name = id): Field => ({ id, name, type: 'text' });
const number = (id: string, name = id): Field => ({ id, name, type: 'number' });
const select = (id: string, labels: string[], name = id): Field => ({
  id,
  name,
  type: 'single_select',
  selectOptions: labels.map((label) => ({ id: label.toLowerCase(), label })),
});

const CATALOG_FIELDS: Field[] = [
  text('sku', 'SKU'),
  text('name', 'Name'),
  text('brand', 'Brand'),
  number('price', 'Price'),
  number('weight', 'Weight'),
  select('category', ['Hardware', 'Food'], 'Category'),
  text('dims', 'Dims'),
  text('origin', 'Origin'),
];

interface Job {
  status: string;
  attempts: number;
  lastError: string | null;
  catalogRevisionId: string;
}

describe('supply-chain propagation (spec 3, rules 1–8)', () => {
  let t: TestApp;
  let sup: TestUser;
  let b1: TestUser;
  let b2: TestUser;
  let S: string;
  let B1: string;
  let B2: string;
  let clock: SyncClock;
  let worker: SyncWorker;
  const receiver = new WebhookReceiver();
  let c1: string;
  let c2: string;
  let ob1: string;
  let ob2: string;
  let ob3: string;
  let binding1: string;
  let binding2: string;
  let binding3: string;
  let conn2: string;

  const logsFor = (logs: SyncLog[], sourceRowId: string): SyncLog[] =>
    logs.filter((log) => log.sourceRowId === sourceRowId);
  const jobsOf = async (user: TestUser, org: string, ob: string, binding: string): Promise<Job[]> =>
    (
      await call<{ items: Job[] }>(
        t,
        user,
        'get',
        `/organizations/${org}/orderbooks/${ob}/bindings/${binding}/propagation?pageSize=100`,
      )
    ).items;
  const flush = async (): Promise<void> => {
    clock.advance(301_000);
    await worker.runDue();
  };

  beforeAll(async () => {
    await receiver.start();
    t = await createTestApp({
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '100',
      OUTBOX_POLL_INTERVAL_MS: '100',
    });
    clock = t.app.get(SyncClock);
    worker = t.app.get(SyncWorker);
    [sup, b1, b2] = [await registerUser(t.http), await registerUser(t.http), await registerUser(t.http)];
    [S, B1, B2] = [sup.defaultOrganizationId, b1.defaultOrganizationId, b2.defaultOrganizationId];

    c1 = await createCatalog(t, sup, S, 'Parts', CATALOG_FIELDS);
    const conn1 = await createConnection(t, sup, S, c1, {
      shareScope: {
        mode: 'filter',
        filterGroup: { operator: 'AND', conditions: [{ fieldId: 'price', operator: 'lt', value: 10000 }] },
      },
      propagationEvents: {
        eventTypes: ['row_created', 'row_updated', 'row_deleted', 'field_value_changed'],
        batchMerge: false,
      },
    });
    c2 = await createCatalog(t, sup, S, 'Batch parts', CATALOG_FIELDS);
    conn2 = await createConnection(t, sup, S, c2, {
      propagationEvents: {
        eventTypes: ['row_created', 'row_updated'],
        batchMerge: true,
        batchWindowSeconds: 300,
      },
    });

    // Buyer 1: every transform, auto, dedup by_field, keep_local by default but keep_upstream for the price.
    await call(t, b1, 'put', `/organizations/${B1}/currency-rates`, {
      rates: [{ base: 'USD', quote: 'EUR', rate: 0.5, effectiveDate: '2020-01-01' }],
    });
    ob1 = await createOrderBook(t, b1, B1, 'Purchasing', [
      text('tsku'),
      text('tname'),
      number('tprice'),
      number('tweight'),
      number('tcny'),
      select('tcat', ['Tools', 'Groceries']),
      text('tlabel'),
      text('w'),
      text('h'),
      text('d'),
      number('tdouble'),
      text('tpricetext'),
      text('ob_origin', 'Origin'),
      text('note'),
    ]);
    await call(
      t,
      b1,
      'post',
      `/organizations/${B1}/orderbooks/${ob1}/rows/batch-update`,
      { rows: [{ operation: 'create', id: 'local-1', values: { tsku: 'SKU-1', note: 'mine' } }] },
      200,
    );
    const hook = await call<{ id: string }>(t, b1, 'post', '/webhooks', {
      name: 'sync',
      url: receiver.url,
      events: ['orderbook_sync_request_created'],
    });
    expect(hook.id).toBeDefined();
    binding1 = (
      await createBinding(t, b1, B1, ob1, {
        connectionId: conn1,
        fieldMapping: {
          unmappedFields: 'create',
          rules: [
            { sourceFieldId: 'sku', targetFieldId: 'tsku', transformType: 'direct' },
            {
              sourceFieldId: 'name',
              targetFieldId: 'tname',
              transformType: 'format',
              formatConfig: { template: 'Item ${value}' },
            },
            {
              sourceFieldId: 'price',
              targetFieldId: 'tprice',
              transformType: 'unit_convert',
              unitConversion: {
                sourceUnit: 'USD',
                targetUnit: 'EUR',
                conversionType: 'currency',
                exchangeRateSource: 'daily',
              },
            },
            {
              sourceFieldId: 'weight',
              targetFieldId: 'tweight',
              transformType: 'unit_convert',
              unitConversion: { sourceUnit: 'kg', targetUnit: 'g', conversionType: 'weight' },
            },
            {
              sourceFieldId: 'price',
              targetFieldId: 'tcny',
              transformType: 'unit_convert',
              unitConversion: { fromUnit: 'USD', toUnit: 'CNY', rate: 7 },
            },
            {
              sourceFieldId: 'category',
              targetFieldId: 'tcat',
              transformType: 'option_mapping',
              optionMapping: {
                // A source option by its label (Hardware) or by its option id (food).
                mappings: { Hardware: 'Tools', food: 'Groceries' },
                unmappedStrategy: 'keep_original',
              },
            },
            {
              sourceFieldId: 'brand',
              sourceFieldIds: ['brand', 'name'],
              targetFieldId: 'tlabel',
              transformType: 'merge',
              separator: ' / ',
            },
            {
              sourceFieldId: 'dims',
              targetFieldId: 'w',
              targetFieldIds: ['w', 'h', 'd'],
              transformType: 'split',
              separator: 'x',
            },
            {
              sourceFieldId: 'price',
              targetFieldId: 'tdouble',
              transformType: 'formula',
              // Spec 2.14's form: a source field id (no braces) times a constant.
              formula: 'price * 2',
            },
            { sourceFieldId: 'price', targetFieldId: 'tpricetext', transformType: 'type_convert' },
          ],
        },
        receiverFilter: {
          filterGroup: { operator: 'AND', conditions: [{ fieldId: 'price', operator: 'gt', value: 0 }] },
          acceptMode: 'auto',
          deduplicationStrategy: 'by_field',
          deduplicationFieldIds: ['tsku'],
        },
        conflictResolution: {
          defaultStrategy: 'keep_local',
          fieldStrategies: { tprice: { strategy: 'keep_upstream' } },
        },
      })
    ).id;

    // Buyer 2: a manual order book on the same connection, and a selective one on the batched connection.
    ob2 = await createOrderBook(t, b2, B2, 'Watch list', [text('tsku'), text('tname')]);
    binding2 = (
      await createBinding(t, b2, B2, ob2, {
        connectionId: conn1,
        fieldMapping: {
          unmappedFields: 'ignore',
          rules: [
            { sourceFieldId: 'sku', targetFieldId: 'tsku' },
            { sourceFieldId: 'name', targetFieldId: 'tname' },
          ],
        },
        receiverFilter: { acceptMode: 'manual' },
        conflictResolution: { defaultStrategy: 'keep_upstream' },
      })
    ).id;
    ob3 = await createOrderBook(t, b2, B2, 'Selective', [
      text('tsku'),
      text('tname'),
      number('tprice'),
      select('tcat', ['Hardware', 'Food']),
    ]);
    await call(
      t,
      b2,
      'post',
      `/organizations/${B2}/orderbooks/${ob3}/rows/batch-update`,
      { rows: [{ operation: 'create', id: 'pre-a', values: { tsku: 'A', tcat: 'hardware', tname: 'pre' } }] },
      200,
    );
    binding3 = (
      await createBinding(t, b2, B2, ob3, {
        connectionId: conn2,
        fieldMapping: {
          unmappedFields: 'ignore',
          rules: ['sku', 'name', 'price', 'category'].map((id) => ({
            sourceFieldId: id,
            targetFieldId: id === 'category' ? 'tcat' : `t${id}`,
          })),
        },
        receiverFilter: {
          acceptMode: 'selective',
          manualAcceptRules: {
            autoAcceptIf: { operator: 'AND', conditions: [{ fieldId: 'price', operator: 'lt', value: 50 }] },
            requireApprovalIf: {
              operator: 'AND',
              conditions: [{ fieldId: 'category', operator: 'eq', value: 'Food' }],
            },
            autoRejectIf: {
              operator: 'AND',
              conditions: [{ fieldId: 'price', operator: 'gt', value: 1000 }],
            },
            defaultAction: 'manual',
          },
          deduplicationStrategy: 'by_fields',
          deduplicationFieldIds: ['tcat', 'tsku'],
        },
        conflictResolution: { defaultStrategy: 'latest_wins' },
      })
    ).id;
  });

  afterAll(async () => {
    await t?.close();
    await receiver.stop();
  });

  it('propagates with every transform, share scope, receiver filter and by_field dedup; notifies the buyer', async () => {
    await writeCatalogRows(t, sup, S, c1, [
      {
        operation: 'create',
        id: 'r1',
        values: {
          sku: 'SKU-1',
          name: 'Bolt',
          brand: 'Acme',
          price: 10,
          weight: 2,
          category: 'hardware',
          dims: '1x2x3',
          origin: 'DE',
        },
      },
      {
        operation: 'create',
        id: 'r2',
        values: {
          sku: 'SKU-2',
          name: 'Nut',
          brand: 'Acme',
          price: 4,
          weight: 0.5,
          category: 'food',
          dims: '4x5x6',
          origin: 'FR',
        },
      },
      { operation: 'create', id: 'r3', values: { sku: 'SKU-3', name: 'Gold bar', price: 20000 } },
      { operation: 'create', id: 'r4', values: { sku: 'SKU-4', name: 'Free sample', price: 0 } },
    ]);
    const logs = await eventually(
      async () => {
        const found = await syncLogs(t, b1, B1, ob1, binding1);
        return found.length >= 3 ? found : undefined;
      },
      20_000,
      'binding 1 logs',
    );
    expect(logsFor(logs, 'r1')[0]).toMatchObject({
      outcome: 'accepted',
      eventType: 'row_created',
      targetRowId: 'local-1',
    });
    expect(logsFor(logs, 'r2')[0]?.outcome).toBe('accepted');
    // r3 is outside the share scope: the supplier does not share it, so the buyer's logs say nothing of it.
    expect(logsFor(logs, 'r3')).toEqual([]);
    expect(logsFor(logs, 'r4')[0]).toMatchObject({
      outcome: 'filtered',
      reason: 'does not match the receiver filter',
    });

    const rows = await rowsOf(t, b1, 'orderbook', ob1, B1);
    expect(rows).toHaveLength(2);
    const deduped = rows.find((row) => row.id === 'local-1');
    expect(deduped?.values).toMatchObject({
      tsku: 'SKU-1',
      tname: 'Item Bolt',
      tprice: 5,
      tweight: 2000,
      tcny: 70,
      tcat: 'Tools',
      tlabel: 'Acme / Bolt',
      w: '1',
      h: '2',
      d: '3',
      tdouble: 20,
      tpricetext: '10',
      ob_origin: 'DE',
      note: 'mine',
    });
    expect(rows.find((row) => row.values.tsku === 'SKU-2')?.values).toMatchObject({
      tcat: 'Groceries',
      tweight: 500,
      tprice: 2,
    });

    // The sync request, its webhook event (same transaction, outbox) and the e-mail to the binding's creator.
    const requests = await call<{ items: { requestId: string; requestType: string; status: string }[] }>(
      t,
      b1,
      'get',
      `/organizations/${B1}/orderbooks/${ob1}/requests`,
    );
    const accepted = requests.items.find((item) => item.status === 'accepted');
    expect(accepted?.requestType).toBe('catalog_sync');
    expect(accepted).toBeDefined();
    expect(logsFor(logs, 'r1')[0]?.syncRequestId).toBe(accepted?.requestId);
    const delivered = await eventually(
      async () => receiver.of('orderbook_sync_request_created')[0],
      15_000,
      'webhook',
    );
    expect(delivered.body.docType).toBe('orderbook');
    expect(delivered.body.payload).toMatchObject({
      requestId: accepted?.requestId,
      orderBookId: ob1,
      productInfo: { catalogId: c1, rowCount: 2 },
    });
    expect(delivered.body.payload.requestId).toBe(accepted?.requestId);
    const mails = await t.dataSource.query(
      `SELECT data FROM notifications WHERE recipient = $1 AND kind = 'orderbook_sync_request'`,
      [b1.email],
    );
    expect(mails.length).toBeGreaterThanOrEqual(1);

    // Manual: buyer 2 gets one pending request with the in-scope rows, nothing applied.
    const pendingLogs = await eventually(
      async () => {
        const found = await syncLogs(t, b2, B2, ob2, binding2);
        return found.length >= 3 ? found : undefined;
      },
      15_000,
      'binding 2 logs',
    );
    expect(
      pendingLogs
        .filter((log) => log.outcome === 'pending')
        .map((log) => log.sourceRowId)
        .sort(),
    ).toEqual(['r1', 'r2', 'r4']);
    expect(logsFor(pendingLogs, 'r3')).toEqual([]);
    expect(await rowsOf(t, b2, 'orderbook', ob2, B2)).toHaveLength(0);
    const pending = await call<{ items: { requestId: string; status: string; changes: unknown[] }[] }>(
      t,
      b2,
      'get',
      `/organizations/${B2}/orderbooks/${ob2}/requests?status=pending`,
    );
    expect(pending.items).toHaveLength(1);
    expect(pending.items[0]?.changes).toHaveLength(3);
    // Values as spec 2.6 ValueEntry {fieldId, value: Value}, as a sync request created through the API shows them.
    for (const change of pending.items[0]?.changes as { values?: { fieldId: string; value: unknown }[] }[]) {
      for (const entry of change.values ?? []) {
        expect(entry.value === null || (typeof entry.value === 'object' && !Array.isArray(entry.value))).toBe(true);
      }
    }
    expect((pending.items[0]?.changes as { values?: unknown[] }[]).some((change) => (change.values ?? []).length > 0)).toBe(true);
    // The buyer accepts: the open document request is merged.
    await call(
      t,
      b2,
      'post',
      `/organizations/${B2}/orderbooks/${ob2}/requests/${pending.items[0]?.requestId}/accept`,
      {},
      200,
    );
    expect((await rowsOf(t, b2, 'orderbook', ob2, B2)).map((row) => row.values.tsku).sort()).toEqual([
      'SKU-1',
      'SKU-2',
      'SKU-4',
    ]);
  });

  it('resolves local edits per field: keep_local by default, keep_upstream for the price', async () => {
    const row = (await rowsOf(t, b1, 'orderbook', ob1, B1)).find((item) => item.values.tsku === 'SKU-2') as {
      id: string;
    };
    await call(
      t,
      b1,
      'post',
      `/organizations/${B1}/orderbooks/${ob1}/rows/batch-update`,
      { rows: [{ target: { row: row.id }, values: { tname: 'My nut', tprice: 99 } }] },
      200,
    );
    await call(t, sup, 'patch', `/organizations/${S}/catalogs/${c1}/rows/r2`, {
      values: { name: 'Nut v2', price: 6 },
    });
    const logs = await eventually(
      async () => {
        const found = logsFor(await syncLogs(t, b1, B1, ob1, binding1), 'r2');
        return found.length >= 2 ? found : undefined;
      },
      15_000,
      'update log',
    );
    expect(
      logs.some((log) => log.outcome === 'conflict' && (log.reason ?? '').includes('tname: keep_local')),
    ).toBe(true);
    const after = (await rowsOf(t, b1, 'orderbook', ob1, B1)).find((item) => item.id === row.id);
    expect(after?.values).toMatchObject({ tname: 'My nut', tprice: 3, tdouble: 12 });
  });

  it('honours deletions', async () => {
    await deleteCatalogRow(t, sup, S, c1, 'r2');
    const logs = await eventually(
      async () => {
        const found = logsFor(await syncLogs(t, b1, B1, ob1, binding1), 'r2').filter(
          (log) => log.eventType === 'row_deleted',
        );
        return found.length > 0 ? found : undefined;
      },
      15_000,
      'delete log',
    );
    expect(logs[0]?.outcome).toBe('accepted');
    expect((await rowsOf(t, b1, 'orderbook', ob1, B1)).map((row) => row.values.tsku)).toEqual(['SKU-1']);
    // Buyer 2 (manual) gets a pending delete.
    const pendingDelete = await eventually(
      async () =>
        logsFor(await syncLogs(t, b2, B2, ob2, binding2), 'r2').find(
          (log) => log.eventType === 'row_deleted',
        ),
      15_000,
      'b2 delete log',
    );
    expect(pendingDelete.outcome).toBe('pending');
    expect((await rowsOf(t, b2, 'orderbook', ob2, B2)).some((row) => row.values.tsku === 'SKU-2')).toBe(true);
    // A row the catalog deletes that never reached an order book (in the share scope, outside binding 1's receiver
    // filter price > 0): nothing to do. (Outside the share scope it would not be logged at all.)
    await writeCatalogRows(t, sup, S, c1, [
      { operation: 'create', id: 'r9', values: { sku: 'SKU-9', name: 'Gone', price: 0 } },
    ]);
    await deleteCatalogRow(t, sup, S, c1, 'r9');
    const skipped = await eventually(
      async () =>
        logsFor(await syncLogs(t, b1, B1, ob1, binding1), 'r9').find(
          (log) => log.eventType === 'row_deleted',
        ),
      15_000,
      'r9 delete log',
    );
    expect(skipped).toMatchObject({
      outcome: 'skipped',
      reason: 'the row was never propagated to this order book',
    });

    // A propagated row that leaves the share scope (price < 10000) is withdrawn like a deleted one.
    await writeCatalogRows(t, sup, S, c1, [
      { operation: 'create', id: 'r5', values: { sku: 'SKU-5', name: 'Washer', price: 50 } },
    ]);
    await eventually(
      async () => (await rowsOf(t, b1, 'orderbook', ob1, B1)).find((row) => row.values.tsku === 'SKU-5'),
      15_000,
      'r5 propagated',
    );
    await call(t, sup, 'patch', `/organizations/${S}/catalogs/${c1}/rows/r5`, { values: { price: 20000 } });
    const withdrawn = await eventually(
      async () =>
        logsFor(await syncLogs(t, b1, B1, ob1, binding1), 'r5').find((log) => log.eventType === 'row_updated'),
      15_000,
      'r5 withdrawal log',
    );
    expect(withdrawn).toMatchObject({ outcome: 'accepted', reason: 'deleted: left the connection share scope' });
    expect((await rowsOf(t, b1, 'orderbook', ob1, B1)).some((row) => row.values.tsku === 'SKU-5')).toBe(false);
  });

  it('merges a batch window into one revision; selective rules, by_fields dedup and latest_wins', async () => {
    const before = await revisionCount(t, b2, 'orderbook', ob3, B2);
    await writeCatalogRows(t, sup, S, c2, [
      { operation: 'create', id: 'a', values: { sku: 'A', name: 'Alpha', price: 10, category: 'hardware' } },
      { operation: 'create', id: 'b', values: { sku: 'B', name: 'Bravo', price: 100, category: 'food' } },
      {
        operation: 'create',
        id: 'c',
        values: { sku: 'C', name: 'Charlie', price: 5000, category: 'hardware' },
      },
      { operation: 'create', id: 'd', values: { sku: 'D', name: 'Delta', price: 100, category: 'hardware' } },
      { operation: 'create', id: 'e', values: { sku: 'A', name: 'Echo', price: 20, category: 'food' } },
    ]);
    await call(t, sup, 'patch', `/organizations/${S}/catalogs/${c2}/rows/a`, { values: { price: 12 } });
    const jobs = await eventually(
      async () => {
        const found = await jobsOf(b2, B2, ob3, binding3);
        return found.length >= 2 ? found : undefined;
      },
      15_000,
      'two pending jobs',
    );
    expect(jobs.map((job) => job.status)).toEqual(['pending', 'pending']);
    await worker.runDue();
    expect(await revisionCount(t, b2, 'orderbook', ob3, B2)).toBe(before);

    await flush();
    expect(await revisionCount(t, b2, 'orderbook', ob3, B2)).toBe(before + 1);
    expect((await jobsOf(b2, B2, ob3, binding3)).map((job) => job.status)).toEqual(['applied', 'applied']);
    const rows = await rowsOf(t, b2, 'orderbook', ob3, B2);
    expect(rows.find((row) => row.id === 'pre-a')?.values).toMatchObject({
      tsku: 'A',
      tname: 'Alpha',
      tprice: 12,
      tcat: 'Hardware',
    });
    expect(rows.find((row) => row.values.tname === 'Echo')?.values).toMatchObject({
      tsku: 'A',
      tcat: 'Food',
    });
    expect(rows).toHaveLength(2);
    const logs = await syncLogs(t, b2, B2, ob3, binding3);
    const outcome = (id: string): string | undefined => logsFor(logs, id)[0]?.outcome;
    expect([outcome('a'), outcome('b'), outcome('c'), outcome('d'), outcome('e')]).toEqual([
      'accepted',
      'pending',
      'rejected',
      'pending',
      'accepted',
    ]);
    const pending = await call<{ items: { changes: unknown[] }[] }>(
      t,
      b2,
      'get',
      `/organizations/${B2}/orderbooks/${ob3}/requests?status=pending`,
    );
    expect(pending.items[0]?.changes).toHaveLength(2);

    // latest_wins: a catalog change after the buyer's edit wins …
    await call(
      t,
      b2,
      'post',
      `/organizations/${B2}/orderbooks/${ob3}/rows/batch-update`,
      { rows: [{ target: { row: 'pre-a' }, values: { tname: 'Local A' } }] },
      200,
    );
    await call(t, sup, 'patch', `/organizations/${S}/catalogs/${c2}/rows/a`, { values: { name: 'Alpha 2' } });
    await eventually(
      async () =>
        (await jobsOf(b2, B2, ob3, binding3)).some((job) => job.status === 'pending') ? true : undefined,
      15_000,
      'pending job',
    );
    await flush();
    expect((await rowsOf(t, b2, 'orderbook', ob3, B2)).find((row) => row.id === 'pre-a')?.values.tname).toBe(
      'Alpha 2',
    );
    // … and a buyer's edit after the catalog change (inside the window) wins.
    await call(t, sup, 'patch', `/organizations/${S}/catalogs/${c2}/rows/a`, { values: { name: 'Alpha 3' } });
    await eventually(
      async () =>
        (await jobsOf(b2, B2, ob3, binding3)).some((job) => job.status === 'pending') ? true : undefined,
      15_000,
      'pending job',
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    await call(
      t,
      b2,
      'post',
      `/organizations/${B2}/orderbooks/${ob3}/rows/batch-update`,
      { rows: [{ target: { row: 'pre-a' }, values: { tname: 'Local again' } }] },
      200,
    );
    await flush();
    expect((await rowsOf(t, b2, 'orderbook', ob3, B2)).find((row) => row.id === 'pre-a')?.values.tname).toBe(
      'Local again',
    );
    expect(
      logsFor(await syncLogs(t, b2, B2, ob3, binding3), 'a').some(
        (log) => log.outcome === 'conflict' && (log.reason ?? '').includes('latest_wins'),
      ),
    ).toBe(true);

    // row_deleted is not among the connection's event types: the delete is filtered.
    await deleteCatalogRow(t, sup, S, c2, 'a');
    await eventually(
      async () =>
        (await jobsOf(b2, B2, ob3, binding3)).some((job) => job.status === 'pending') ? true : undefined,
      15_000,
      'pending job',
    );
    await flush();
    expect(
      logsFor(await syncLogs(t, b2, B2, ob3, binding3), 'a').find((log) => log.eventType === 'row_deleted')
        ?.outcome,
    ).toBe('filtered');
    expect((await rowsOf(t, b2, 'orderbook', ob3, B2)).some((row) => row.id === 'pre-a')).toBe(true);
  });

  it('applies each (binding, revision) exactly once: replayed events, a failing binding, concurrent workers', async () => {
    // A replayed revision_created event enqueues nothing twice.
    const [event] = await t.dataSource.query<OutboxEventEntity[]>(
      `SELECT id, seq, event_type AS "eventType", organization_id AS "organizationId", workspace_id AS "workspaceId", doc_type AS "docType",
              doc_id AS "docId", triggered_by AS "triggeredBy", payload, occurred_at AS "occurredAt", attempts
         FROM outbox WHERE event_type = 'revision_created' AND doc_id = $1 ORDER BY seq DESC LIMIT 1`,
      [c1],
    );
    const jobCount = async (): Promise<number> =>
      Number((await t.dataSource.query(`SELECT count(*) FROM sync_propagation_jobs`))[0].count);
    const countBefore = await jobCount();
    await t.app
      .get(TransactionHost)
      .run(() => t.app.get(RevisionCreatedListener).onRevision(toDomainEvent(event as OutboxEventEntity)));
    expect(await jobCount()).toBe(countBefore);

    // Binding 1 fails (an injected database error); binding 2 is not held back; binding 1 recovers, once.
    await t.dataSource.query(
      `CREATE FUNCTION sync_fail() RETURNS trigger AS $$ BEGIN IF NEW.owner_id = '${binding1}' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    );
    await t.dataSource.query(
      `CREATE TRIGGER sync_fail BEFORE INSERT OR UPDATE ON sync_row_links FOR EACH ROW EXECUTE FUNCTION sync_fail()`,
    );
    await writeCatalogRows(t, sup, S, c1, [
      { operation: 'create', id: 'r6', values: { sku: 'SKU-6', name: 'Washer', price: 1 } },
    ]);
    await eventually(
      async () => logsFor(await syncLogs(t, b2, B2, ob2, binding2), 'r6')[0],
      15_000,
      'binding 2 went on',
    );
    const failed = await eventually(
      async () => (await syncLogs(t, b1, B1, ob1, binding1)).find((log) => log.outcome === 'error'),
      15_000,
      'error log',
    );
    expect(failed.reason).toContain('injected failure');
    const retrying = (await jobsOf(b1, B1, ob1, binding1)).find((job) => job.status === 'pending');
    // Retried with back-off (2 s, 4 s, …): the background worker may have tried again meanwhile.
    expect(retrying?.attempts).toBeGreaterThanOrEqual(1);
    expect(retrying?.lastError).toContain('injected failure');
    expect((await rowsOf(t, b1, 'orderbook', ob1, B1)).some((row) => row.values.tsku === 'SKU-6')).toBe(
      false,
    );
    await t.dataSource.query(`DROP TRIGGER sync_fail ON sync_row_links; DROP FUNCTION sync_fail()`);
    clock.advance(3_600_000);
    await worker.runDue();
    expect(
      (await rowsOf(t, b1, 'orderbook', ob1, B1)).filter((row) => row.values.tsku === 'SKU-6'),
    ).toHaveLength(1);
    expect((await jobsOf(b1, B1, ob1, binding1)).every((job) => job.status === 'applied')).toBe(true);

    // Several workers at once (this instance's timer, runDue and direct calls): each job is applied by one of them.
    await writeCatalogRows(t, sup, S, c1, [
      { operation: 'create', id: 'r7', values: { sku: 'SKU-7', name: 'Spring', price: 2 } },
    ]);
    const propagation = t.app.get(PropagationService);
    await eventually(
      async () =>
        Number(
          (
            await t.dataSource.query(`SELECT count(*) FROM sync_propagation_jobs WHERE binding_id = $1`, [
              binding1,
            ])
          )[0].count,
        ) > 0 && true,
      15_000,
      'a job for r7',
    );
    await Promise.all([worker.runDue(), propagation.runNext(), propagation.runNext(), propagation.runNext()]);
    await eventually(
      async () => logsFor(await syncLogs(t, b1, B1, ob1, binding1), 'r7')[0],
      15_000,
      'r7 applied',
    );
    expect(
      (await rowsOf(t, b1, 'orderbook', ob1, B1)).filter((row) => row.values.tsku === 'SKU-7'),
    ).toHaveLength(1);
    expect(logsFor(await syncLogs(t, b1, B1, ob1, binding1), 'r7')).toHaveLength(1);
  });

  it('a paused connection propagates nothing; after resume the next change goes', async () => {
    const lastDispatched = async (): Promise<boolean> => {
      const [row] = await t.dataSource.query<{ dispatched_at: Date | null }[]>(
        `SELECT dispatched_at FROM outbox WHERE event_type = 'revision_created' AND doc_id = $1 ORDER BY seq DESC LIMIT 1`,
        [c2],
      );
      return row?.dispatched_at !== null && row?.dispatched_at !== undefined;
    };
    const jobsBefore = (await jobsOf(b2, B2, ob3, binding3)).length;
    await call(t, sup, 'post', `/organizations/${S}/connections/${conn2}/pause`, {}, 200);
    await writeCatalogRows(t, sup, S, c2, [
      { operation: 'create', id: 'p1', values: { sku: 'P1', name: 'Paused', price: 1 } },
    ]);
    await eventually(async () => ((await lastDispatched()) ? true : undefined), 15_000, 'dispatch');
    expect((await jobsOf(b2, B2, ob3, binding3)).length).toBe(jobsBefore);
    await call(t, sup, 'post', `/organizations/${S}/connections/${conn2}/resume`, {}, 200);
    await writeCatalogRows(t, sup, S, c2, [
      { operation: 'create', id: 'p2', values: { sku: 'P2', name: 'Resumed', price: 1 } },
    ]);
    await eventually(
      async () => ((await jobsOf(b2, B2, ob3, binding3)).length > jobsBefore ? true : undefined),
      15_000,
      'job after resume',
    );
    await flush();
    const logs = await syncLogs(t, b2, B2, ob3, binding3);
    expect(logsFor(logs, 'p2')[0]?.outcome).toBe('accepted');
    expect(logsFor(logs, 'p1')).toHaveLength(0);
  });

  it('keeps the rate table per organization and validates it', async () => {
    const rates = await call<{ rates: { base: string; quote: string; rate: number }[] }>(
      t,
      b1,
      'get',
      `/organizations/${B1}/currency-rates`,
    );
    expect(rates.rates).toEqual([
      expect.objectContaining({ base: 'USD', quote: 'EUR', rate: 0.5, effectiveDate: '2020-01-01' }),
    ]);
    await call(
      t,
      b1,
      'put',
      `/organizations/${B1}/currency-rates`,
      { rates: [{ base: 'USD', quote: 'USD', rate: 1, effectiveDate: '2020-01-01' }] },
      400,
    );
    await call(
      t,
      b1,
      'put',
      `/organizations/${B1}/currency-rates`,
      { rates: [{ base: 'USD', quote: 'EUR', rate: -1, effectiveDate: 'soon' }] },
      400,
    );
    // Another organization's table is not reachable.
    await call(t, b2, 'get', `/organizations/${B1}/currency-rates`, undefined, 404);
    expect(
      (await call<{ rates: unknown[] }>(t, b2, 'get', `/organizations/${B2}/currency-rates`)).rates,
    ).toEqual([]);
  });
});
