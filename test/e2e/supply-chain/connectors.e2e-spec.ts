import { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import { SyncClock } from '../../../src/modules/supply-chain-sync/services/sync-clock.js';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  call,
  createCatalog,
  createOrderBook,
  eventually,
  number,
  revisionCount,
  rowsOf,
  text,
  writeCatalogRows,
} from './sync.fixtures.js';

interface Run {
  id: string;
  trigger: string;
  direction: string;
  status: string;
  scheduledFor: string | null;
  rowsCreated: number;
  rowsUpdated: number;
  rowsDeleted: number;
  error: string | null;
}

describe('supply-chain connectors (orderbook_to_catalog, catalog_clone)', () => {
  let t: TestApp;
  let u: TestUser;
  let other: TestUser;
  let S: string;
  let clock: SyncClock;
  let worker: SyncWorker;
  let src: string;
  let clone: string;
  let cloneConnector: string;

  const runsOf = async (connectorId: string): Promise<Run[]> =>
    (
      await call<{ items: Run[] }>(
        t,
        u,
        'get',
        `/organizations/${S}/connectors/${connectorId}/runs?pageSize=100`,
      )
    ).items;
  const byId = async (
    docType: string,
    docId: string,
    rowId: string,
  ): Promise<Record<string, unknown> | undefined> =>
    (await rowsOf(t, u, docType, docId, S)).find((row) => row.id === rowId)?.values;

  beforeAll(async () => {
    t = await createTestApp({ OUTBOX_POLL_INTERVAL_MS: '100' });
    clock = t.app.get(SyncClock);
    worker = t.app.get(SyncWorker);
    u = await registerUser(t.http);
    other = await registerUser(t.http);
    S = u.defaultOrganizationId;
    src = await createCatalog(t, u, S, 'Master', [
      text('sku'),
      text('name'),
      number('price'),
      {
        id: 'status',
        name: 'status',
        type: 'single_select',
        selectOptions: [
          { id: 'on', label: 'Active' },
          { id: 'off', label: 'Retired' },
        ],
      },
    ]);
    clone = await createCatalog(t, u, S, 'Storefront', [text('sku'), text('name'), number('price')]);
    cloneConnector = (
      await call<{ id: string }>(t, u, 'post', `/organizations/${S}/connectors`, {
        name: 'storefront',
        connectorType: 'catalog_clone',
        sourceDocId: src,
        targetDocId: clone,
        catalogCloneConfig: {
          fieldMapping: {
            unmappedFields: 'ignore',
            rules: ['sku', 'name', 'price'].map((id) => ({
              sourceFieldId: id,
              targetFieldId: id,
              transformType: 'direct',
            })),
          },
          sourceFilter: {
            operator: 'AND',
            conditions: [{ fieldId: 'status', operator: 'eq', value: 'Active' }],
          },
          syncMode: 'realtime',
          conflictResolution: 'source_wins',
          bidirectional: true,
        },
      })
    ).id;
  });

  afterAll(async () => {
    await t?.close();
  });

  it('catalog_clone realtime: every merge of the source is applied, the source filter holds rows back', async () => {
    await writeCatalogRows(t, u, S, src, [
      { operation: 'create', id: 's1', values: { sku: 'S1', name: 'One', price: 1, status: 'on' } },
      { operation: 'create', id: 's2', values: { sku: 'S2', name: 'Two', price: 2, status: 'off' } },
    ]);
    const runs = await eventually(
      async () => {
        const found = await runsOf(cloneConnector);
        return found.some((run) => run.status === 'succeeded') ? found : undefined;
      },
      15_000,
      'realtime run',
    );
    expect(runs[0]).toMatchObject({
      trigger: 'realtime',
      direction: 'forward',
      status: 'succeeded',
      rowsCreated: 1,
    });
    const rows = await rowsOf(t, u, 'catalog', clone, S);
    expect(rows.map((row) => row.values)).toEqual([{ sku: 'S1', name: 'One', price: 1 }]);
  });

  it('bidirectional: a change in the target goes back to the source, and is not sent back again', async () => {
    const target = (await rowsOf(t, u, 'catalog', clone, S))[0] as { id: string };
    await call(t, u, 'patch', `/organizations/${S}/catalogs/${clone}/rows/${target.id}`, {
      values: { name: 'Renamed in the storefront' },
    });
    await eventually(
      async () =>
        (await byId('catalog', src, 's1'))?.name === 'Renamed in the storefront' ? true : undefined,
      15_000,
      'reverse run',
    );
    // The reverse run is recorded as succeeded (waited for: a loaded machine may take a while to get there).
    await eventually(
      async () =>
        (await runsOf(cloneConnector)).some((run) => run.direction === 'reverse' && run.status === 'succeeded')
          ? true
          : undefined,
      15_000,
      'the reverse run to be recorded',
    );
    const cloneRevisions = await revisionCount(t, u, 'catalog', clone, S);
    // Let the outbox and the worker settle: the source revision the reverse run wrote must not start a forward run.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await worker.runDue();
    const runs = await runsOf(cloneConnector);
    expect(runs.map((run) => `${run.trigger}/${run.direction}/${run.status}`)).toEqual([
      'realtime/reverse/succeeded',
      'realtime/forward/succeeded',
    ]);
    expect(await revisionCount(t, u, 'catalog', clone, S)).toBe(cloneRevisions);
  });

  it('orderbook_to_catalog scheduled (cron with a time zone, driven by the fake clock); source_wins; deletions', async () => {
    const ob = await createOrderBook(t, u, S, 'Stock', [text('sku'), number('qty')]);
    const agg = await createCatalog(t, u, S, 'Availability', [text('sku'), number('available')]);
    const connector = (
      await call<{ id: string }>(t, u, 'post', `/organizations/${S}/connectors`, {
        name: 'availability',
        connectorType: 'orderbook_to_catalog',
        sourceDocId: ob,
        targetDocId: agg,
        orderbookToCatalogConfig: {
          fieldMapping: {
            unmappedFields: 'ignore',
            rules: [
              { sourceFieldId: 'sku', targetFieldId: 'sku' },
              { sourceFieldId: 'qty', targetFieldId: 'available' },
            ],
          },
          syncMode: 'scheduled',
          scheduleConfig: { cron: '0 9 * * *', timezone: 'Asia/Tokyo' },
          conflictResolution: 'source_wins',
        },
      })
    ).id;
    clock.set(new Date('2030-01-01T12:00:00Z'));
    await worker.runDue();
    const schedule = await call<{ nextRunAt: string }>(
      t,
      u,
      'get',
      `/organizations/${S}/connectors/${connector}/schedule`,
    );
    // 09:00 in Tokyo is 00:00 UTC.
    expect(schedule.nextRunAt).toBe('2030-01-02T00:00:00.000Z');

    // At most 1000 rows per batch (spec 8): a larger one is refused whole (the run below counts only o1 and o2).
    await call(
      t,
      u,
      'post',
      `/organizations/${S}/orderbooks/${ob}/rows/batch-update`,
      {
        rows: Array.from({ length: 1001 }, (_, i) => ({
          operation: 'create',
          id: `big-${i}`,
          values: { sku: 'Z', qty: 1 },
        })),
      },
      400,
    );
    await call(
      t,
      u,
      'post',
      `/organizations/${S}/orderbooks/${ob}/rows/batch-update`,
      {
        rows: [
          { operation: 'create', id: 'o1', values: { sku: 'X', qty: 5 } },
          { operation: 'create', id: 'o2', values: { sku: 'Y', qty: 7 } },
        ],
      },
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    await worker.runDue();
    expect(await rowsOf(t, u, 'catalog', agg, S)).toHaveLength(0);

    clock.set(new Date('2030-01-02T00:00:01Z'));
    await worker.runDue();
    let runs = await runsOf(connector);
    expect(runs[0]).toMatchObject({
      trigger: 'scheduled',
      status: 'succeeded',
      scheduledFor: '2030-01-02T00:00:00.000Z',
      rowsCreated: 2,
    });
    const rows = await rowsOf(t, u, 'catalog', agg, S);
    expect(rows.map((row) => row.values).sort((a, b) => String(a.sku).localeCompare(String(b.sku)))).toEqual([
      { sku: 'X', available: 5 },
      { sku: 'Y', available: 7 },
    ]);
    expect(
      (await call<{ nextRunAt: string }>(t, u, 'get', `/organizations/${S}/connectors/${connector}/schedule`))
        .nextRunAt,
    ).toBe('2030-01-03T00:00:00.000Z');

    // source_wins: a local edit of the target is overwritten by the next run; a deleted source row goes.
    const x = rows.find((row) => row.values.sku === 'X') as { id: string };
    await call(t, u, 'patch', `/organizations/${S}/catalogs/${agg}/rows/${x.id}`, {
      values: { available: 999 },
    });
    await call(
      t,
      u,
      'post',
      `/organizations/${S}/orderbooks/${ob}/rows/batch-update`,
      { rows: [{ operation: 'delete', id: 'o2', values: [] }] },
      200,
    );
    clock.set(new Date('2030-01-03T00:00:05Z'));
    await worker.runDue();
    runs = await runsOf(connector);
    expect(runs[0]).toMatchObject({
      trigger: 'scheduled',
      status: 'succeeded',
      rowsUpdated: 1,
      rowsDeleted: 1,
    });
    expect((await rowsOf(t, u, 'catalog', agg, S)).map((row) => row.values)).toEqual([
      { sku: 'X', available: 5 },
    ]);

    // A manual run answers 202 and runs after the answer; nothing changed, so nothing is written.
    const manual = await call<Run>(
      t,
      u,
      'post',
      `/organizations/${S}/connectors/${connector}/run`,
      undefined,
      202,
    );
    expect(manual).toMatchObject({ trigger: 'manual', status: 'pending' });
    await worker.runDue();
    expect((await runsOf(connector)).find((run) => run.id === manual.id)).toMatchObject({
      status: 'succeeded',
      rowsCreated: 0,
      rowsUpdated: 0,
      rowsDeleted: 0,
    });

    // Runs and schedules are the organization's: another tenant gets NOT_FOUND.
    await call(t, other, 'get', `/organizations/${S}/connectors/${connector}/runs`, undefined, 404);
    await call(t, other, 'post', `/organizations/${S}/connectors/${connector}/run`, undefined, 404);
    await call(
      t,
      u,
      'get',
      `/organizations/${S}/connectors/00000000-0000-4000-8000-000000000000/runs`,
      undefined,
      404,
    );
  });
});
