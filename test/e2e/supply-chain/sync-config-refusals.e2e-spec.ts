import { randomUUID } from 'node:crypto';
import type { SyncWorker } from '../../../src/modules/supply-chain-sync/jobs/sync.worker.js';
import type { TestUser } from '../../factories/users.factory.js';
import type { TestApp } from '../../utils/test-app.js';
import {
  type Answer,
  answerOf,
  call,
  createBinding,
  createCatalog,
  createConnection,
  createOrderBook,
  decideBinding,
  drainSync,
  number,
  openSyncApp,
  rowsOf,
  select,
  shareCatalog,
  skusOf,
  text,
  where,
  writeCatalogRows,
} from './sync.fixtures.js';

/** The mapping every binding here uses: the SKU alone. */
const skuOnly = { rules: [{ sourceFieldId: 'sku', targetFieldId: 'sku' }] };

/**
 * Configurations a spec reader writes and the supplier's refusals (docs/supply-chain.md, "Connections" and
 * "Bindings"): select filters naming an option by id, a supplier's reject that stands for the buyer organization,
 * filter operands that cannot fit their field, the `since` of the revisions route and formula fields of a catalog.
 */
describe('supply chain: filter operands, standing rejections, catalog field forms', () => {
  let t: TestApp;
  let worker: SyncWorker;
  let sup: TestUser;
  let buyer: TestUser;
  let other: TestUser;
  let S: string;
  let B: string;
  let O: string;

  /** Every problem's path (spec 7: `details` is the problem, or lists several in `errors`). */
  const fieldsOf = (answer: Answer): Array<string | undefined> =>
    answer.details?.errors ? answer.details.errors.map((error) => error.field) : [answer.details?.field];
  const skus = (ob: string): Promise<unknown[]> => skusOf(t, buyer, B, ob);

  beforeAll(async () => {
    ({
      t,
      worker,
      users: [sup, buyer, other],
      orgs: [S, B, O],
    } = await openSyncApp(3));
  });

  afterAll(async () => {
    await t.close();
  });

  describe('select filters name an option by id or by label (F3)', () => {
    let catalog: string;
    let everything: string;
    const books: string[] = [];

    /** A fresh order book bound to `connection`, synced; the SKUs it received. */
    const received = async (connection: string, receiverFilter?: unknown): Promise<unknown[]> => {
      const ob = await createOrderBook(t, buyer, B, `Book ${books.length}`, [text('sku')]);
      books.push(ob);
      await createBinding(t, buyer, B, ob, {
        connectionId: connection,
        fieldMapping: skuOnly,
        ...(receiverFilter ? { receiverFilter } : {}),
      });
      await drainSync(worker);
      return skus(ob);
    };
    const scoped = (filterGroup: unknown): Promise<string> =>
      createConnection(t, sup, S, catalog, { shareScope: { mode: 'filter', filterGroup } });

    beforeAll(async () => {
      catalog = await createCatalog(t, sup, S, 'Colours', [
        text('sku'),
        select('color', 'single_select', ['Red', 'Blue']),
        select('tags', 'multi_select', ['Hot', 'Cold']),
      ]);
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'a', values: { sku: 'A', color: 'red', tags: ['hot'] } },
        { id: 'b', values: { sku: 'B', color: 'blue', tags: ['cold', 'hot'] } },
        { id: 'c', values: { sku: 'C', color: 'blue', tags: ['cold'] } },
      ]);
      everything = await createConnection(t, sup, S, catalog, {});
    });

    it('a share scope names the option by id, as a Value, or by label', async () => {
      expect(await received(await scoped(where('color', 'eq', 'red')))).toEqual(['A']);
      const asValue = await call<{ shareScope: { filterGroup: { conditions: unknown[] } }; id: string }>(
        t,
        sup,
        'post',
        `/organizations/${S}/catalogs/${catalog}/connections`,
        {
          name: 'as value',
          accessControl: 'public',
          shareScope: {
            mode: 'filter',
            filterGroup: where('color', 'eq', { selectOption: { id: 'red' } }),
          },
        },
      );
      expect(asValue.shareScope.filterGroup.conditions).toEqual([
        { fieldId: 'color', operator: 'eq', value: 'red' },
      ]);
      expect(await received(asValue.id)).toEqual(['A']);
      // Labels keep working (documented, and configurations use them).
      expect(await received(await scoped(where('color', 'eq', 'Red')))).toEqual(['A']);
      expect(await received(await scoped(where('color', 'ne', 'red')))).toEqual(['B', 'C']);
    });

    it('a receiver filter names options by id, multi-selects included', async () => {
      expect(await received(everything, { filterGroup: where('color', 'eq', 'red') })).toEqual(['A']);
      expect(
        await received(everything, {
          filterGroup: where('color', 'in', [{ selectOption: { id: 'blue' } }]),
        }),
      ).toEqual(['B', 'C']);
      expect(await received(everything, { filterGroup: where('tags', 'in', ['hot']) })).toEqual(['A', 'B']);
      expect(await received(everything, { filterGroup: where('tags', 'contains', 'cold') })).toEqual([
        'B',
        'C',
      ]);
      expect(await received(everything, { filterGroup: where('tags', 'notIn', ['hot']) })).toEqual(['C']);
      // Accept rules run on the catalog row too: an id selects the rows accepted at once.
      const ob = await createOrderBook(t, buyer, B, 'Selective', [text('sku')]);
      await createBinding(t, buyer, B, ob, {
        connectionId: everything,
        fieldMapping: skuOnly,
        receiverFilter: {
          acceptMode: 'selective',
          manualAcceptRules: { autoAcceptIf: where('color', 'eq', 'red'), defaultAction: 'manual' },
        },
      });
      await drainSync(worker);
      expect(await skus(ob)).toEqual(['A']);
    });

    it('an operand naming no option of a select field is VALIDATION_ERROR', async () => {
      const connection = await answerOf(
        t,
        sup,
        'post',
        `/organizations/${S}/catalogs/${catalog}/connections`,
        {
          name: 'green',
          accessControl: 'public',
          shareScope: { mode: 'filter', filterGroup: where('color', 'eq', 'green') },
        },
      );
      expect([connection.status, connection.code]).toEqual([400, 'VALIDATION_ERROR']);
      expect(fieldsOf(connection)).toEqual(['shareScope.filterGroup.conditions[0].value']);
      const patched = await answerOf(t, sup, 'patch', `/organizations/${S}/connections/${everything}`, {
        shareScope: {
          mode: 'filter',
          filterGroup: { operator: 'OR', conditions: [], groups: [where('tags', 'contains', 'warm')] },
        },
      });
      expect([patched.status, fieldsOf(patched)]).toEqual([
        400,
        ['shareScope.filterGroup.groups[0].conditions[0].value'],
      ]);
      const ob = await createOrderBook(t, buyer, B, 'Refused filter', [text('sku')]);
      const binding = await answerOf(t, buyer, 'post', `/organizations/${B}/orderbooks/${ob}/bindings`, {
        connectionId: everything,
        receiverFilter: {
          filterGroup: where('tags', 'in', ['hot', 'warm']),
          acceptMode: 'selective',
          manualAcceptRules: { autoRejectIf: where('color', 'eq', { selectOption: { id: 'pink' } }) },
        },
      });
      expect([binding.status, binding.code]).toEqual([400, 'VALIDATION_ERROR']);
      expect(fieldsOf(binding)).toEqual([
        'receiverFilter.filterGroup.conditions[0].value',
        'receiverFilter.manualAcceptRules.autoRejectIf.conditions[0].value',
      ]);
      // Nothing was created by the refused requests.
      const bindings = await call<{ total: number }>(
        t,
        buyer,
        'get',
        `/organizations/${B}/orderbooks/${ob}/bindings`,
      );
      expect(bindings.total).toBe(0);
    });
  });

  describe("a supplier's reject stands for the buyer organization on the connection (F10)", () => {
    const body = (connectionId: string) => ({
      connectionId,
      fieldMapping: skuOnly,
    });
    const decide = (connection: string, binding: string, action: 'approve' | 'reject') =>
      decideBinding(t, sup, S, connection, binding, action, {
        reviewNote: action === 'reject' ? 'contract ended' : 'welcome back',
      });

    it('whitelist: the buyer binding again waits for approval until the supplier approves it', async () => {
      const catalog = await createCatalog(t, sup, S, 'Cut off', [text('sku')]);
      await writeCatalogRows(t, sup, S, catalog, [{ id: 'a', values: { sku: 'A' } }]);
      const conn = await createConnection(t, sup, S, catalog, {
        accessControl: { mode: 'whitelist', allowedOrganizations: [B, O] },
      });
      const ob = await createOrderBook(t, buyer, B, 'Cut off', [text('sku')]);
      const first = await createBinding(t, buyer, B, ob, body(conn));
      expect(first.status).toBe('active');
      await drainSync(worker);
      expect(await skus(ob)).toEqual(['A']);

      expect((await decide(conn, first.id, 'reject')).status).toBe('rejected');
      const again = await createBinding(t, buyer, B, ob, body(conn));
      expect(again).toMatchObject({ status: 'pending', admittedVia: 'whitelist' });
      // Another order book of the same organization is no way around it.
      const second = await createOrderBook(t, buyer, B, 'Cut off 2', [text('sku')]);
      expect(await createBinding(t, buyer, B, second, body(conn))).toMatchObject({ status: 'pending' });
      await writeCatalogRows(t, sup, S, catalog, [{ id: 'b', values: { sku: 'B' } }]);
      await drainSync(worker);
      expect(await skus(ob)).toEqual(['A']);
      expect(await skus(second)).toEqual([]);

      // Another organization of the whitelist is not concerned.
      const theirs = await createOrderBook(t, other, O, 'Other', [text('sku')]);
      expect(await createBinding(t, other, O, theirs, body(conn))).toMatchObject({ status: 'active' });

      // The supplier lets the buyer back by approving: the binding is active and later bindings are admitted again.
      expect((await decide(conn, again.id, 'approve')).status).toBe('active');
      await drainSync(worker);
      expect(await skus(ob)).toEqual(['A', 'B']);
      const third = await createOrderBook(t, buyer, B, 'Cut off 3', [text('sku')]);
      expect(await createBinding(t, buyer, B, third, body(conn))).toMatchObject({ status: 'active' });
    });

    it('public: a rejected pending or active binding makes the next one pending; approval mode is unchanged', async () => {
      const { catalog, conn: open } = await shareCatalog(t, sup, S, 'Public cut off', [text('sku')], {
        accessControl: 'public',
      });
      const ob = await createOrderBook(t, buyer, B, 'Public', [text('sku')]);
      const first = await createBinding(t, buyer, B, ob, body(open));
      await decide(open, first.id, 'reject');
      const second = await createBinding(t, buyer, B, ob, body(open));
      expect(second).toMatchObject({ status: 'pending', admittedVia: 'public' });
      // Rejecting the pending one keeps the buyer waiting.
      await decide(open, second.id, 'reject');
      expect(await createBinding(t, buyer, B, ob, body(open))).toMatchObject({ status: 'pending' });

      const asked = await createConnection(t, sup, S, catalog, { accessControl: 'approval' });
      const pending = await createBinding(t, buyer, B, ob, body(asked));
      expect(pending).toMatchObject({ status: 'pending', admittedVia: 'approval' });
      await decide(asked, pending.id, 'reject');
      const retry = await createBinding(t, buyer, B, ob, body(asked));
      expect(retry).toMatchObject({ status: 'pending', admittedVia: 'approval' });
      expect((await decide(asked, retry.id, 'approve')).status).toBe('active');
    });
  });

  describe('operands that cannot fit their field, and request paths (F11)', () => {
    let catalog: string;
    let conn: string;
    let ob: string;

    beforeAll(async () => {
      catalog = await createCatalog(t, sup, S, 'Typed', [
        text('sku'),
        number('price'),
        { id: 'due', name: 'due', type: 'date' },
        { id: 'active', name: 'active', type: 'boolean' },
      ]);
      await writeCatalogRows(t, sup, S, catalog, [
        { id: 'a', values: { sku: 'A', price: 5, due: '2026-01-10', active: true } },
        { id: 'b', values: { sku: 'B', price: 50, due: '2026-03-10', active: false } },
      ]);
      conn = await createConnection(t, sup, S, catalog, {});
      ob = await createOrderBook(t, buyer, B, 'Typed', [text('sku')]);
    });

    const bind = (filterGroup: unknown): Promise<Answer> =>
      answerOf(t, buyer, 'post', `/organizations/${B}/orderbooks/${ob}/bindings`, {
        connectionId: conn,
        fieldMapping: skuOnly,
        receiverFilter: { filterGroup },
      });

    it('an object operand that is not a one-key typed Value is refused, not stored as its content', async () => {
      const refused = await bind(where('price', 'eq', { min: 5 }));
      expect([refused.status, refused.code, fieldsOf(refused)]).toEqual([
        400,
        'VALIDATION_ERROR',
        ['receiverFilter.filterGroup.conditions[0].value'],
      ]);
    });

    it('operands that do not fit the field type are refused; fitting ones filter', async () => {
      for (const [fieldId, operator, value] of [
        ['price', 'gt', 'abc'],
        ['price', 'in', [5, 'five']],
        ['price', 'contains', '5'],
        ['due', 'lt', 5],
        ['due', 'gte', 'yesterday'],
        ['active', 'eq', 'yes'],
      ] as const) {
        const refused = await bind(where(fieldId, operator, value));
        expect([fieldId, operator, refused.status, fieldsOf(refused)]).toEqual([
          fieldId,
          operator,
          400,
          ['receiverFilter.filterGroup.conditions[0].value'],
        ]);
      }
      const range = await bind({ conditions: [{ fieldId: 'due', operator: 'range', rangeStart: 'soon' }] });
      expect([range.status, fieldsOf(range)]).toEqual([400, ['receiverFilter.filterGroup.conditions[0]']]);

      const fitting = await bind({
        operator: 'AND',
        conditions: [
          { fieldId: 'price', operator: 'gt', value: '4' },
          { fieldId: 'due', operator: 'lt', value: '2026-02-01' },
          { fieldId: 'active', operator: 'eq', value: { boolean: true } },
        ],
      });
      expect(fitting.status).toBe(201);
      await drainSync(worker);
      expect(await skus(ob)).toEqual(['A']);
    });

    it('revisions?since= names since when the id is no revision of the catalog', async () => {
      const unknown = await answerOf(
        t,
        sup,
        'get',
        `/organizations/${S}/catalogs/${catalog}/revisions?since=${randomUUID()}`,
      );
      expect([unknown.status, unknown.code, unknown.details?.field]).toEqual([404, 'NOT_FOUND', 'since']);
    });

    it('POST /catalogs creates formula fields with the /doc field definition, errors named as sent', async () => {
      const created = await call<{ id: string; fields: Array<{ id: string; type: string }> }>(
        t,
        sup,
        'post',
        `/organizations/${S}/catalogs`,
        {
          name: 'With formula',
          catalogType: 'product',
          fields: [
            { name: 'Price', type: 'number' },
            { id: 'total', name: 'Total', type: 'formula', formula: '{price} * 2' },
          ],
        },
      );
      expect(created.fields.map((field) => [field.id, field.type])).toEqual([
        ['price', 'number'],
        ['total', 'formula'],
      ]);
      await writeCatalogRows(t, sup, S, created.id, [{ id: 'r', values: { price: 21 } }]);
      const [row] = await rowsOf(t, sup, 'catalog', created.id, S);
      expect(row?.values).toMatchObject({ price: 21, total: 42 });

      for (const [field, path] of [
        [{ name: 'Total', type: 'formula', formula: '{nope} + 1' }, 'fields[1].formula'],
        [{ name: 'Total', type: 'formula', formula: 42 }, 'fields[1].formula'],
      ] as const) {
        const refused = await answerOf(t, sup, 'post', `/organizations/${S}/catalogs`, {
          name: 'Bad formula',
          catalogType: 'product',
          fields: [{ name: 'Price', type: 'number' }, field],
        });
        expect([refused.status, refused.code]).toEqual([400, 'VALIDATION_ERROR']);
        expect(fieldsOf(refused)).toContain(path);
        expect(fieldsOf(refused).every((name) => !name?.startsWith('metadata.'))).toBe(true);
      }
    });
  });
});
