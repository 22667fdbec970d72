import type { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import type { TestUser } from '../../factories/users.factory.js';
import type { TestApp } from '../../utils/test-app.js';
import {
  answerOf,
  call,
  copyAllFields,
  createBinding,
  createCatalog,
  createConnection,
  createOrderBook,
  deleteCatalogRow,
  settleSync,
  type Field,
  number,
  openSyncApp,
  orderBookFields,
  rowsOf,
  shareCatalog,
  type SyncLog,
  syncLogs,
  type SyncRequest,
  syncRequests,
  text,
  updateCatalogRow,
  writeCatalogRows,
  writeOrderBookRows,
} from './sync.fixtures.js';

interface LogWithDetails extends SyncLog {
  details: { mappingErrors?: Array<{ targetFieldId: string; reason: string }> } | null;
}

interface ApiRow {
  id: string;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  updatedBy: string;
}

interface Metadata {
  version: number;
  fields: Array<Field & { selectOptions?: Array<{ id: string; label: string; color?: string }> }>;
}

/**
 * Values propagated into order-book fields (docs/supply-chain.md, "Propagation"): generated fields receive converted
 * values (collaborators, relations → text; created/updated time and by from the row's columns), a value that fits
 * nowhere is left out of its row alone, generated select fields follow the catalog's options, a deletion of a row
 * whose create is still pending is proposed too, and deduplication by field ignores case and surrounding spaces.
 */
describe('supply chain: propagated values', () => {
  let t: TestApp;
  let worker: SyncWorker;
  let sup: TestUser;
  let buyer: TestUser;
  let colleague: TestUser;
  let S: string;
  let B: string;

  /** Dispatches the catalog's events (the revision listener queues the jobs) and runs the propagation. */
  const settle = (): Promise<void> => settleSync(t, worker);
  const rowsOfBook = (ob: string) => rowsOf(t, buyer, 'orderbook', ob, B);
  /** The values of the order book's rows, by SKU. */
  const valuesBySku = async (ob: string) =>
    (await rowsOfBook(ob))
      .map((row) => row.values)
      .sort((x, y) => String(x.sku).localeCompare(String(y.sku)));
  const logsOf = async (ob: string, binding: string) =>
    (await syncLogs(t, buyer, B, ob, binding)) as LogWithDetails[];
  const generatedBook = (name: string, conn: string): Promise<string> =>
    createOrderBook(t, buyer, B, name, [], [conn]);
  const catalogRows = async (catalog: string): Promise<Map<string, ApiRow>> =>
    new Map(
      (
        await call<{ items: ApiRow[] }>(
          t,
          sup,
          'get',
          `/doc/catalog/${catalog}/data?organizationId=${S}&pageSize=100`,
        )
      ).items.map((row) => [row.id, row]),
    );
  const putCatalogFields = async (
    catalog: string,
    change: (fields: Metadata['fields']) => Metadata['fields'],
  ): Promise<void> => {
    const metadata = await call<Metadata>(
      t,
      sup,
      'get',
      `/doc/catalog/${catalog}/metadata?organizationId=${S}`,
    );
    await call(
      t,
      sup,
      'put',
      `/doc/catalog/${catalog}/metadata?organizationId=${S}`,
      { fields: change(metadata.fields), version: metadata.version },
      200,
    );
  };

  beforeAll(async () => {
    ({
      t,
      worker,
      users: [sup, buyer, colleague],
      orgs: [S, B],
    } = await openSyncApp(3));
  });

  afterAll(async () => {
    await t.close();
  });

  it('F1. collaborator and relation values reach generated text fields as their ids joined with ", "', async () => {
    const catalog = await createCatalog(t, sup, S, 'People', [
      text('sku'),
      { id: 'team', name: 'Team', type: 'collaborator' },
      { id: 'rel', name: 'Rel', type: 'relation' },
      { id: 'owner', name: 'Owner', type: 'user' },
    ]);
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'a', values: { sku: 'A' } },
      { id: 'b', values: { sku: 'B', team: [sup.id, colleague.id], owner: sup.id } },
      { id: 'c', values: { sku: 'C', rel: ['a', 'b'] } },
    ]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await generatedBook('People', conn);
    const fields = await orderBookFields(t, buyer, B, ob);
    expect(fields.map((field) => `${field.id}:${field.type}`)).toEqual([
      'sku:text',
      'team:text',
      'rel:text',
      'owner:text',
    ]);
    const binding = await createBinding(t, buyer, B, ob, { connectionId: conn });
    await settle();

    const rows = await valuesBySku(ob);
    expect(rows).toEqual([
      { sku: 'A' },
      { sku: 'B', team: `${sup.id}, ${colleague.id}`, owner: sup.id },
      { sku: 'C', rel: 'a, b' },
    ]);
    expect((await logsOf(ob, binding.id)).map((log) => [log.sourceRowId, log.outcome]).sort()).toEqual([
      ['a', 'accepted'],
      ['b', 'accepted'],
      ['c', 'accepted'],
    ]);
  });

  it('F1. a value that fits its order-book field in no form is left out; the rest of the row goes, and the log says so', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Notes', [text('sku'), text('note')]);
    const ob = await createOrderBook(t, buyer, B, 'Quantities', [text('sku'), number('qty')]);
    const binding = await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: {
        rules: [
          { sourceFieldId: 'sku', targetFieldId: 'sku' },
          { sourceFieldId: 'note', targetFieldId: 'qty' },
        ],
      },
    });
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'n1', values: { sku: 'N1', note: 'lots' } },
      { id: 'n2', values: { sku: 'N2', note: ' 12 ' } },
    ]);
    await settle();

    const rows = await valuesBySku(ob);
    expect(rows).toEqual([{ sku: 'N1' }, { sku: 'N2', qty: 12 }]);
    const logs = await logsOf(ob, binding.id);
    const n1 = logs.find((log) => log.sourceRowId === 'n1');
    expect(n1).toMatchObject({
      outcome: 'accepted',
      reason: 'created; left out: qty (expected a finite number, got "lots")',
      details: { mappingErrors: [{ targetFieldId: 'qty', reason: 'expected a finite number, got "lots"' }] },
    });
    expect(logs.find((log) => log.sourceRowId === 'n2')).toMatchObject({
      outcome: 'accepted',
      reason: 'created',
    });
  });

  it('F2. a new select option and a renamed label reach the generated field; later rows keep propagating', async () => {
    const catalog = await createCatalog(t, sup, S, 'Colors', [
      text('sku'),
      number('price'),
      {
        id: 'color',
        name: 'Color',
        type: 'single_select',
        selectOptions: [
          { id: 'red', label: 'Red' },
          { id: 'blue', label: 'Blue' },
        ],
      },
    ]);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'x1', values: { sku: 'X1', price: 1, color: 'red' } }]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await generatedBook('Colors', conn);
    const binding = await createBinding(t, buyer, B, ob, { connectionId: conn });
    await settle();

    await putCatalogFields(catalog, (fields) =>
      fields.map((field) =>
        field.id === 'color'
          ? { ...field, selectOptions: [...(field.selectOptions ?? []), { id: 'green', label: 'Green' }] }
          : field,
      ),
    );
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'x2', values: { sku: 'X2', price: 2, color: 'green' } },
    ]);
    await settle();
    await putCatalogFields(catalog, (fields) =>
      fields.map((field) =>
        field.id === 'color'
          ? {
              ...field,
              selectOptions: (field.selectOptions ?? []).map((option) =>
                option.id === 'red' ? { ...option, label: 'Crimson' } : option,
              ),
            }
          : field,
      ),
    );
    await updateCatalogRow(t, sup, S, catalog, 'x1', { price: 10 });
    await settle();

    const rows = await valuesBySku(ob);
    expect(rows).toEqual([
      { sku: 'X1', price: 10, color: 'Crimson' },
      { sku: 'X2', price: 2, color: 'Green' },
    ]);
    const fields = await orderBookFields(t, buyer, B, ob);
    expect(fields.find((field) => field.id === 'color')?.selectOptions).toEqual([
      { id: 'red', label: 'Crimson' },
      { id: 'blue', label: 'Blue' },
      { id: 'green', label: 'Green' },
    ]);
    expect((await logsOf(ob, binding.id)).filter((log) => log.outcome === 'error')).toEqual([]);
    // The order book's metadata change is a propagation write: a merged request titled like the row writes.
    const revisions = await call<{ items: Array<{ title?: string | null; requestTitle?: string | null }> }>(
      t,
      buyer,
      'get',
      `/doc/orderbook/${ob}/revisions?organizationId=${B}&pageSize=100`,
    );
    expect(JSON.stringify(revisions.items)).toContain('fields in step with the catalog');
  });

  it('F2. an initial sync brings generated select fields in step first: options the catalog gained before the binding arrive with their rows', async () => {
    const catalog = await createCatalog(t, sup, S, 'Shades', [
      text('sku'),
      { id: 'color', name: 'Color', type: 'single_select', selectOptions: [{ id: 'red', label: 'Red' }] },
    ]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await generatedBook('Shades', conn);
    // The catalog gains an option while the order book has no binding: no revision brings its fields in step.
    await putCatalogFields(catalog, (fields) =>
      fields.map((field) =>
        field.id === 'color'
          ? { ...field, selectOptions: [...(field.selectOptions ?? []), { id: 'green', label: 'Green' }] }
          : field,
      ),
    );
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 's1', values: { sku: 'S1', color: 'red' } },
      { id: 's2', values: { sku: 'S2', color: 'green' } },
    ]);
    await settle();

    const binding = await createBinding(t, buyer, B, ob, { connectionId: conn });
    await settle();

    expect(await valuesBySku(ob)).toEqual([
      { sku: 'S1', color: 'Red' },
      { sku: 'S2', color: 'Green' },
    ]);
    const fields = await orderBookFields(t, buyer, B, ob);
    expect(fields.find((field) => field.id === 'color')?.selectOptions).toEqual([
      { id: 'red', label: 'Red' },
      { id: 'green', label: 'Green' },
    ]);
    expect((await logsOf(ob, binding.id)).filter((log) => log.outcome === 'error')).toEqual([]);
  });

  it('F2. a retyped catalog field converts where it can; a value that cannot convert is left out of its row alone', async () => {
    const catalog = await createCatalog(t, sup, S, 'Weights', [text('sku'), number('weight')]);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'w1', values: { sku: 'W1', weight: 5 } }]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await generatedBook('Weights', conn);
    const binding = await createBinding(t, buyer, B, ob, { connectionId: conn });
    await settle();

    await putCatalogFields(catalog, (fields) =>
      fields.map((field) => (field.id === 'weight' ? { ...field, type: 'text' } : field)),
    );
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'w1', values: { sku: 'W1b', weight: '5 kg' } },
      { id: 'w2', values: { sku: 'W2', weight: ' 7 ' } },
    ]);
    await settle();

    const rows = await valuesBySku(ob);
    expect(rows).toEqual([
      { sku: 'W1b', weight: 5 },
      { sku: 'W2', weight: 7 },
    ]);
    const w1 = (await logsOf(ob, binding.id)).find(
      (log) => log.sourceRowId === 'w1' && log.eventType === 'row_updated',
    );
    expect(w1).toMatchObject({
      outcome: 'accepted',
      reason: 'updated; left out: weight (expected a finite number, got "5 kg")',
    });
  });

  it('F4. fields generated from created/updated time and by get their values on create and update', async () => {
    const fields: Field[] = [
      text('sku'),
      { id: 'made', name: 'Made', type: 'created_time' },
      { id: 'changed', name: 'Changed', type: 'updated_time' },
      { id: 'by', name: 'By', type: 'created_by' },
      { id: 'editedby', name: 'Edited by', type: 'updated_by' },
    ];
    const catalog = await createCatalog(t, sup, S, 'Stamps', fields);
    await writeCatalogRows(t, sup, S, catalog, [{ id: 'a', values: { sku: 'A' } }]);
    const conn = await createConnection(t, sup, S, catalog, {});
    // Only the changed fields of an update propagate: the update stamps count as changed.
    const changedOnly = await createConnection(t, sup, S, catalog, {
      propagationEvents: { eventTypes: ['row_created', 'field_value_changed'] },
    });
    const ob = await generatedBook('Stamps', conn);
    const ob2 = await generatedBook('Stamps (changed fields)', changedOnly);
    await createBinding(t, buyer, B, ob, { connectionId: conn });
    await createBinding(t, buyer, B, ob2, { connectionId: changedOnly });
    await settle();

    const created = (await catalogRows(catalog)).get('a') as ApiRow;
    for (const book of [ob, ob2]) {
      expect((await rowsOfBook(book)).map((row) => row.values)).toEqual([
        { sku: 'A', made: created.createdAt, changed: created.updatedAt, by: sup.id, editedby: sup.id },
      ]);
    }

    await new Promise((resolve) => setTimeout(resolve, 20));
    await updateCatalogRow(t, sup, S, catalog, 'a', { sku: 'A2' });
    await settle();
    const updated = (await catalogRows(catalog)).get('a') as ApiRow;
    expect(updated.updatedAt).not.toBe(created.updatedAt);
    for (const book of [ob, ob2]) {
      expect((await rowsOfBook(book)).map((row) => row.values)).toEqual([
        { sku: 'A2', made: created.createdAt, changed: updated.updatedAt, by: sup.id, editedby: sup.id },
      ]);
    }
  });

  it('F5. manual mode: a catalog row deleted while its create is pending gets a pending delete; accepted in order, the row is gone', async () => {
    const { catalog, conn } = await shareCatalog(t, sup, S, 'Withdrawn', [text('sku')]);
    const ob = await createOrderBook(t, buyer, B, 'Withdrawn', [text('sku')]);
    const binding = await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: copyAllFields,
      receiverFilter: { acceptMode: 'manual' },
    });
    const pending = (): Promise<SyncRequest[]> => syncRequests(t, buyer, B, ob, { status: 'pending' });
    const accept = (request: SyncRequest) =>
      answerOf(
        t,
        buyer,
        'post',
        `/organizations/${B}/orderbooks/${ob}/requests/${request.requestId}/accept`,
        {},
      );

    await writeCatalogRows(t, sup, S, catalog, [{ id: 'n1', values: { sku: 'N1' } }]);
    await settle();
    await deleteCatalogRow(t, sup, S, catalog, 'n1');
    await settle();

    const [deletion, creation] = (await pending()) as [SyncRequest, SyncRequest];
    expect(creation.changes).toEqual([
      expect.objectContaining({ operation: 'create_row', sourceRowId: 'n1' }),
    ]);
    expect(deletion.changes).toEqual([
      expect.objectContaining({
        operation: 'delete_row',
        sourceRowId: 'n1',
        rowId: creation.changes[0]?.rowId,
      }),
    ]);
    expect((await logsOf(ob, binding.id)).find((log) => log.eventType === 'row_deleted')).toMatchObject({
      outcome: 'pending',
      reason: 'deleted in a pending request: its create still waits in a pending request',
    });

    // Out of order the deletion finds no row yet (409 CONFLICT) and both stay pending.
    expect((await accept(deletion)).status).toBe(409);
    expect(await pending()).toHaveLength(2);
    expect((await accept(creation)).status).toBe(200);
    expect(await rowsOfBook(ob)).toHaveLength(1);
    expect((await accept(deletion)).status).toBe(200);
    expect(await rowsOfBook(ob)).toEqual([]);
  });

  it('F8. deduplication by_field matches values that differ only in case or surrounding spaces', async () => {
    const catalog = await createCatalog(t, sup, S, 'Dedup', [text('sku'), number('price')]);
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'd1', values: { sku: 'abc-1', price: 1 } },
      { id: 'd2', values: { sku: 'XYZ-2 ', price: 2 } },
      { id: 'd3', values: { sku: 'EXACT', price: 3 } },
      { id: 'd4', values: { sku: 'new-4', price: 4 } },
    ]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'Dedup', [text('sku'), number('price'), text('mine')]);
    await writeOrderBookRows(t, buyer, B, ob, [
      { id: 'p1', values: { sku: 'ABC-1', mine: 'x' } },
      { id: 'p2', values: { sku: '  xyz-2', mine: 'y' } },
      { id: 'p3', values: { sku: 'EXACT', mine: 'z' } },
      { id: 'p4', values: { sku: 'abc-10', mine: 'w' } },
    ]);
    await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: {
        rules: [
          { sourceFieldId: 'sku', targetFieldId: 'sku' },
          { sourceFieldId: 'price', targetFieldId: 'price' },
        ],
      },
      receiverFilter: { deduplicationStrategy: 'by_field', deduplicationFieldIds: ['sku'] },
    });
    await settle();

    const rows = new Map((await rowsOfBook(ob)).map((row) => [row.id, row.values]));
    expect(rows.size).toBe(5);
    expect(rows.get('p1')).toMatchObject({ price: 1, mine: 'x' });
    expect(rows.get('p2')).toMatchObject({ price: 2, mine: 'y' });
    expect(rows.get('p3')).toMatchObject({ price: 3, mine: 'z' });
    expect(rows.get('p4')).toEqual({ sku: 'abc-10', mine: 'w' });
    expect([...rows.values()].filter((values) => values.sku === 'new-4')).toHaveLength(1);
  });
});
