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
  registerMembers,
  rowsOf,
  text,
  where,
  writeCatalogRows,
} from './sync.fixtures.js';

interface SyncLog {
  sourceRowId: string | null;
  eventType: string | null;
  outcome: string;
  reason: string | null;
}

/**
 * Defects of the supply-chain audit (NAME=supply): unknown keys inside sync configurations, null for non-nullable
 * PATCH fields, the buyer's logs of rows outside the share scope, catalog deletion by a member, impossible calendar
 * dates, connector state moves and paged field lists. Then (issue-14 audit): concurrent batch writes, value paths of
 * a batch appended to a request, rows created through updates without row_created, rules whose target field is gone,
 * unknown filter fields named by their condition (and connector source-filter operands checked), bindings activated
 * while their connection was paused, and local edits the catalog overwrites.
 */
describe('supply chain: supply audit fixes', () => {
  let t: TestApp;
  let worker: SyncWorker;
  let sup: TestUser;
  let buyer: TestUser;
  let S: string;
  let B: string;

  const send = (
    user: TestUser,
    method: 'get' | 'post' | 'patch' | 'put' | 'delete',
    path: string,
    body?: unknown,
  ): Promise<Answer> => answerOf(t, user, method, path, body);
  // One problem: details {field, reason}; several: details {errors: [{field, reason}]}.
  const fieldsOf = (answer: Answer): Array<string | undefined> =>
    answer.details?.errors ? answer.details.errors.map((error) => error.field) : [answer.details?.field];

  beforeAll(async () => {
    t = await createTestApp();
    worker = t.app.get(SyncWorker);
    [sup, buyer] = await Promise.all([registerUser(t.http), registerUser(t.http)]);
    [S, B] = [sup, buyer].map((user) => user.defaultOrganizationId);
  });

  afterAll(async () => {
    await t.close();
  });

  describe('1. unknown keys inside sync configurations are refused, naming their path', () => {
    let catalog: string;
    let conn: string;
    let ob: string;

    beforeAll(async () => {
      catalog = await createCatalog(t, sup, S, 'Keys', [text('sku'), number('price')]);
      conn = await createConnection(t, sup, S, catalog, {});
      ob = await createOrderBook(t, buyer, B, 'Keys OB', [], [conn]);
    });

    it.each([
      [
        {
          shareScope: {
            mode: 'filter',
            filterGroup: { operator: 'AND', conditons: [where('price', 'lt', 1).conditions[0]] },
          },
        },
        'shareScope.filterGroup.conditons',
      ],
      [
        {
          shareScope: {
            mode: 'filter',
            filterGroup: { conditions: [{ fieldId: 'price', operator: 'lt', value: 1, bogus: 1 }] },
          },
        },
        'shareScope.filterGroup.conditions[0].bogus',
      ],
      [{ shareScope: { type: 'all', extra: true } }, 'shareScope.extra'],
      [
        {
          accessControl: { mode: 'approval', allowedOrganisations: ['00000000-0000-4000-8000-000000000001'] },
        },
        'accessControl.allowedOrganisations',
      ],
      [{ propagationEvents: { eventtypes: ['row_created'] } }, 'propagationEvents.eventtypes'],
      [
        { defaultReceiverConfig: { suggestedAcceptmode: 'manual' } },
        'defaultReceiverConfig.suggestedAcceptmode',
      ],
    ])('connection create %j', async (body, path) => {
      const refused = await send(sup, 'post', `/organizations/${S}/catalogs/${catalog}/connections`, {
        name: 'typo',
        ...body,
      });
      expect([refused.status, refused.code, fieldsOf(refused)]).toEqual([400, 'VALIDATION_ERROR', [path]]);
    });

    it('connection PATCH refuses them too and changes nothing', async () => {
      const refused = await send(sup, 'patch', `/organizations/${S}/connections/${conn}`, {
        shareScope: { mode: 'filter', filterGroup: { operator: 'AND', conditons: [] } },
      });
      expect([refused.status, fieldsOf(refused)]).toEqual([400, ['shareScope.filterGroup.conditons']]);
      const stored = await call<{ shareScope: unknown }>(
        t,
        sup,
        'get',
        `/organizations/${S}/connections/${conn}`,
      );
      expect(stored.shareScope).toEqual({ type: 'all' });
    });

    it.each([
      [{ receiverFilter: { acceptmode: 'manual' } }, 'receiverFilter.acceptmode'],
      [
        { receiverFilter: { acceptMode: 'selective', manualAcceptRules: { defaultaction: 'accept' } } },
        'receiverFilter.manualAcceptRules.defaultaction',
      ],
      [
        { fieldMapping: { rules: [{ sourceFieldId: 'sku', targetFieldId: 'sku', bogus: 1 }] } },
        'fieldMapping.rules[0].bogus',
      ],
      [{ fieldMapping: { rule: [] } }, 'fieldMapping.rule'],
      [
        {
          fieldMapping: {
            rules: [
              {
                sourceFieldId: 'price',
                targetFieldId: 'price',
                transformType: 'unit_convert',
                unitConversion: { fromUnit: 'USD', toUnit: 'EUR', rate: 2, rouding: 2 },
              },
            ],
          },
        },
        'fieldMapping.rules[0].unitConversion.rouding',
      ],
      [{ conflictResolution: { defaultstrategy: 'keep_local' } }, 'conflictResolution.defaultstrategy'],
      [
        { conflictResolution: { fieldStrategies: { price: { strategy: 'keep_local', why: 1 } } } },
        'conflictResolution.fieldStrategies.price.why',
      ],
    ])('binding create %j', async (body, path) => {
      const refused = await send(buyer, 'post', `/organizations/${B}/orderbooks/${ob}/bindings`, {
        connectionId: conn,
        ...body,
      });
      expect([refused.status, refused.code, fieldsOf(refused)]).toEqual([400, 'VALIDATION_ERROR', [path]]);
    });

    it('connector configs refuse them', async () => {
      const target = await createCatalog(t, sup, S, 'Keys clone', [text('sku')]);
      const base = {
        name: 'clone',
        connectorType: 'catalog_clone',
        sourceDocId: catalog,
        targetDocId: target,
      };
      const mapping = { rules: [{ sourceFieldId: 'sku', targetFieldId: 'sku' }] };
      for (const [config, path] of [
        [{ fieldMapping: mapping, syncmode: 'scheduled' }, 'catalogCloneConfig.syncmode'],
        [
          { fieldMapping: mapping, syncMode: 'scheduled', scheduleConfig: { cron: '0 * * * *', tz: 'UTC' } },
          'catalogCloneConfig.scheduleConfig.tz',
        ],
        [
          { fieldMapping: mapping, sourceFilter: { operator: 'AND', condition: [] } },
          'catalogCloneConfig.sourceFilter.condition',
        ],
      ] as const) {
        const refused = await send(sup, 'post', `/organizations/${S}/connectors`, {
          ...base,
          catalogCloneConfig: config,
        });
        expect([refused.status, fieldsOf(refused)]).toEqual([400, [path]]);
      }
      // The documented aliases stay accepted.
      await call(t, sup, 'post', `/organizations/${S}/connectors`, {
        ...base,
        catalogCloneConfig: {
          fieldMapping: mapping,
          sourceFilter: { logic: 'or', conditions: [{ field: 'sku', operator: 'exists' }] },
        },
      });
    });
  });

  it('2. PATCH connection refuses null for accessControl, shareScope, propagationEvents (and keeps them)', async () => {
    const catalog = await createCatalog(t, sup, S, 'Nulls', [text('sku'), number('price')]);
    const conn = await createConnection(t, sup, S, catalog, {
      accessControl: { mode: 'whitelist', allowedOrganizations: [B] },
      shareScope: { mode: 'filter', filterGroup: where('price', 'lt', 25) },
    });
    for (const key of ['accessControl', 'shareScope', 'propagationEvents', 'name', 'shareMode']) {
      const refused = await send(sup, 'patch', `/organizations/${S}/connections/${conn}`, { [key]: null });
      expect([key, refused.status, refused.code, fieldsOf(refused)]).toEqual([
        key,
        400,
        'VALIDATION_ERROR',
        [key],
      ]);
    }
    const stored = await call<{ accessControl: unknown; shareScope: { type: string } }>(
      t,
      sup,
      'get',
      `/organizations/${S}/connections/${conn}`,
    );
    expect(stored.accessControl).toEqual({ mode: 'whitelist', allowedOrganizations: [B] });
    expect(stored.shareScope.type).toBe('filter');
    // description and defaultReceiverConfig stay nullable.
    await call(t, sup, 'patch', `/organizations/${S}/connections/${conn}`, {
      description: null,
      defaultReceiverConfig: null,
    });
  });

  it('3. the buyer sees nothing of rows outside the share scope; withdrawals stay logged', async () => {
    const catalog = await createCatalog(t, sup, S, 'Scope', [text('sku'), number('price'), text('secret')]);
    const conn = await createConnection(t, sup, S, catalog, {
      shareScope: { mode: 'filter', filterGroup: where('price', 'lt', 25) },
    });
    await writeCatalogRows(t, sup, S, catalog, [
      { id: 'r1', values: { sku: 'S1', price: 10, secret: 's-1' } },
      { id: 'r3', values: { sku: 'S3', price: 30, secret: 'TOPSECRET' } },
    ]);
    const ob = await createOrderBook(t, buyer, B, 'Scope OB', [], [conn]);
    await createBinding(t, buyer, B, ob, { connectionId: conn });
    await settleSync(t, worker);
    await call(t, sup, 'patch', `/organizations/${S}/catalogs/${catalog}/rows/r3`, { values: { price: 35 } });
    await call(t, sup, 'delete', `/organizations/${S}/catalogs/${catalog}/rows/r3`);
    // r1 leaves the scope: the buyer held it, so its withdrawal is logged.
    await call(t, sup, 'patch', `/organizations/${S}/catalogs/${catalog}/rows/r1`, { values: { price: 50 } });
    await settleSync(t, worker);
    const logs = (
      await call<{ items: SyncLog[] }>(
        t,
        buyer,
        'get',
        `/organizations/${B}/orderbooks/${ob}/sync-logs?pageSize=100`,
      )
    ).items;
    expect(logs.filter((log) => log.sourceRowId === 'r3')).toEqual([]);
    expect(
      logs.find(
        (log) => log.sourceRowId === 'r1' && log.reason === 'deleted: left the connection share scope',
      ),
    ).toMatchObject({ outcome: 'accepted' });
    expect(await rowsOf(t, buyer, 'orderbook', ob, B)).toEqual([]);
  });

  it('4. a plain member cannot delete a catalog through /doc (its connections stay); an admin can', async () => {
    const [member, admin] = await registerMembers(t, sup, S, ['member', 'admin']);
    const catalog = await createCatalog(t, sup, S, 'C4', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const refused = await send(member as TestUser, 'delete', `/doc/catalog/${catalog}?organizationId=${S}`);
    expect([refused.status, refused.code]).toEqual([403, 'FORBIDDEN']);
    expect(
      (await call<{ status: string }>(t, sup, 'get', `/organizations/${S}/connections/${conn}`)).status,
    ).toBe('active');
    await call(t, sup, 'get', `/organizations/${S}/catalogs/${catalog}`);
    // Other documents stay deletable by members.
    await call(t, member as TestUser, 'post', '/doc/sheet', { id: 'member-sheet', organizationId: S });
    await call(t, member as TestUser, 'delete', `/doc/sheet/member-sheet?organizationId=${S}`);
    await call(t, admin as TestUser, 'delete', `/doc/catalog/${catalog}?organizationId=${S}`);
    expect(
      (await call<{ status: string }>(t, sup, 'get', `/organizations/${S}/connections/${conn}`)).status,
    ).toBe('disabled');
  });

  it('5. share link expiresAt must be a real calendar day in a form that names an instant (not a week date or the basic format)', async () => {
    const catalog = await createCatalog(t, sup, S, 'Links', [text('sku')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    for (const expiresAt of ['2030-02-30', '2030-02-31T10:00:00Z', '2030-04-31', '2030-W01-1', '20300101T000000Z', '2030-012']) {
      const refused = await send(sup, 'post', `/organizations/${S}/connections/${conn}/share-link`, {
        expiresAt,
      });
      expect([expiresAt, refused.status, refused.code, fieldsOf(refused)]).toEqual([
        expiresAt,
        400,
        'VALIDATION_ERROR',
        ['expiresAt'],
      ]);
    }
    const link = await call<{ expiresAt: string }>(
      t,
      sup,
      'post',
      `/organizations/${S}/connections/${conn}/share-link`,
      {
        expiresAt: '2032-02-29T10:00:00Z',
      },
    );
    expect(link.expiresAt).toBe('2032-02-29T10:00:00.000Z');
    // Date operands of filters on date fields: an impossible day is refused like a non-date.
    const dated = await call<{ id: string }>(t, sup, 'post', `/organizations/${S}/catalogs`, {
      name: 'Dated',
      catalogType: 'product',
      sharingEnabled: true,
      fields: [{ id: 'day', name: 'day', type: 'date' }],
    });
    const badDay = await send(sup, 'post', `/organizations/${S}/catalogs/${dated.id}/connections`, {
      name: 'dated',
      shareScope: { mode: 'filter', filterGroup: where('day', 'gte', '2030-02-30') },
    });
    expect([badDay.status, fieldsOf(badDay)]).toEqual([400, ['shareScope.filterGroup.conditions[0].value']]);
  });

  it('6. connector pause on a paused one and resume on an active one are 409 INVALID_STATE', async () => {
    const source = await createCatalog(t, sup, S, 'K src', [text('sku')]);
    const target = await createCatalog(t, sup, S, 'K dst', [text('sku')]);
    const connector = await call<{ id: string }>(t, sup, 'post', `/organizations/${S}/connectors`, {
      name: 'k',
      connectorType: 'catalog_clone',
      sourceDocId: source,
      targetDocId: target,
      catalogCloneConfig: { fieldMapping: { rules: [{ sourceFieldId: 'sku', targetFieldId: 'sku' }] } },
    });
    const path = `/organizations/${S}/connectors/${connector.id}`;
    const resumed = await send(sup, 'post', `${path}/resume`);
    expect([resumed.status, resumed.code, resumed.payload]).toEqual([
      409,
      'INVALID_STATE',
      { connectorId: connector.id, status: 'active' },
    ]);
    expect((await call<{ status: string }>(t, sup, 'post', `${path}/pause`, undefined, 200)).status).toBe(
      'paused',
    );
    const paused = await send(sup, 'post', `${path}/pause`);
    expect([paused.status, paused.code, paused.payload]).toEqual([
      409,
      'INVALID_STATE',
      { connectorId: connector.id, status: 'paused' },
    ]);
    expect((await call<{ status: string }>(t, sup, 'post', `${path}/resume`, undefined, 200)).status).toBe(
      'active',
    );
  });

  it('7. an impossible currency-rate effectiveDate is a 400 naming the row and field', async () => {
    const refused = await send(buyer, 'put', `/organizations/${B}/currency-rates`, {
      rates: [
        { base: 'USD', quote: 'EUR', rate: 1, effectiveDate: '2026-01-01' },
        { base: 'USD', quote: 'EUR', rate: 1, effectiveDate: '2026-02-30' },
      ],
    });
    expect([refused.status, refused.code, fieldsOf(refused)]).toEqual([
      400,
      'VALIDATION_ERROR',
      ['rates[1].effectiveDate'],
    ]);
  });

  it('8. catalog and order-book fields are paged lists refusing unknown parameters', async () => {
    const catalog = await createCatalog(t, sup, S, 'Paged', [text('a'), text('b'), text('c')]);
    const page = await call<{
      items: Array<{ id: string }>;
      page: number;
      pageSize: number;
      total: number;
      totalPages: number;
    }>(t, sup, 'get', `/organizations/${S}/catalogs/${catalog}/fields?page=2&pageSize=2`);
    expect(page).toMatchObject({ page: 2, pageSize: 2, total: 3, totalPages: 2 });
    expect(page.items.map((field) => field.id)).toEqual(['c']);
    const unknown = await send(sup, 'get', `/organizations/${S}/catalogs/${catalog}/fields?foo=1`);
    expect([unknown.status, unknown.code]).toEqual([400, 'VALIDATION_ERROR']);
    const ob = await createOrderBook(t, buyer, B, 'Paged OB', [text('x'), text('y')]);
    const obPage = await call<{ items: Array<{ id: string }>; total: number }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${ob}/fields?pageSize=1`,
    );
    expect([obPage.items.map((field) => field.id), obPage.total]).toEqual([['x'], 2]);
    expect((await send(buyer, 'get', `/organizations/${B}/orderbooks/${ob}/fields?foo=1`)).status).toBe(400);
  });

  it('9. PATCH catalog refuses null sharingEnabled, catalogType and name', async () => {
    const catalog = await createCatalog(t, sup, S, 'C9', [text('sku')]);
    for (const key of ['sharingEnabled', 'catalogType', 'name']) {
      const refused = await send(sup, 'patch', `/organizations/${S}/catalogs/${catalog}`, { [key]: null });
      expect([key, refused.status, refused.code, fieldsOf(refused)]).toEqual([
        key,
        400,
        'VALIDATION_ERROR',
        [key],
      ]);
    }
    const stored = await call<{ sharingEnabled: boolean; catalogType: string }>(
      t,
      sup,
      'get',
      `/organizations/${S}/catalogs/${catalog}`,
    );
    expect([stored.sharingEnabled, stored.catalogType]).toEqual([true, 'product']);
  });

  it('10. concurrent batch-updates of different rows all apply (no deadlock answered 409)', async () => {
    const catalog = await createCatalog(t, sup, S, 'C10', [text('sku'), number('price')]);
    await writeCatalogRows(t, sup, S, catalog, [{ target: { row: 'r0' }, values: { sku: 'R0', price: 0 } }]);
    const writers = 6;
    // Upserts (create and update), explicit creates, and order-book sync requests merged at once: each was one
    // request created and then merged in one transaction, which deadlocked on the document row under concurrency.
    const batches = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        send(sup, 'post', `/organizations/${S}/catalogs/${catalog}/rows/batch-update`, {
          rows: [
            { target: { row: `n${i}` }, values: { sku: `N${i}`, price: i } },
            ...(i === 0 ? [{ target: { row: 'r0' }, values: { price: 100 } }] : []),
          ],
        }),
      ),
    );
    expect(batches.map((answer) => [answer.status, answer.code])).toEqual(
      Array.from({ length: writers }, () => [200, undefined]),
    );
    const rows = await rowsOf(t, sup, 'catalog', catalog, S);
    expect(rows.map((row) => row.id).sort()).toEqual(
      ['r0', ...Array.from({ length: writers }, (_, i) => `n${i}`)].sort(),
    );
    expect(rows.find((row) => row.id === 'r0')?.values.price).toBe(100);
    const creates = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        send(sup, 'post', `/organizations/${S}/catalogs/${catalog}/rows/batch-update`, {
          rows: [{ target: { row: `c${i}` }, values: { sku: `C${i}` }, operation: 'create' }],
        }),
      ),
    );
    expect(creates.map((answer) => answer.status)).toEqual(Array.from({ length: writers }, () => 200));

    const ob = await createOrderBook(t, buyer, B, 'OB10', [text('sku')]);
    const accepted = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        send(buyer, 'post', `/organizations/${B}/orderbooks/${ob}/requests`, {
          status: 'accepted',
          message: `erp ${i}`,
          changes: [{ operation: 'create_row', rowId: `o${i}`, values: { sku: `O${i}` } }],
        }),
      ),
    );
    expect(
      accepted.map((answer) => [answer.status, (answer.payload as { status?: string } | null)?.status]),
    ).toEqual(Array.from({ length: writers }, () => [201, 'accepted']));
    expect((await rowsOf(t, buyer, 'orderbook', ob, B)).length).toBe(writers);
  });

  it('11. a batch appended to an open request names a value problem by the path the client sent', async () => {
    const catalog = await createCatalog(t, sup, S, 'C11', [text('sku'), number('qty')]);
    const opened = await call<{ id: string }>(
      t,
      sup,
      'post',
      `/doc/catalog/${catalog}/requests?organizationId=${S}`,
      {
        title: 'draft',
      },
    );
    const path = `/organizations/${S}/catalogs/${catalog}/rows/batch-update?requestId=${opened.id}`;
    const asObject = await send(sup, 'post', path, {
      rows: [{ id: 'p1', values: { sku: 'P', qty: 'many' } }],
    });
    expect([asObject.status, fieldsOf(asObject)]).toEqual([400, ['rows[0].values.qty']]);
    const asArray = await send(sup, 'post', path, {
      rows: [
        { id: 'p1', values: { sku: 'P' } },
        {
          id: 'p2',
          values: [
            { fieldId: 'sku', value: 'P' },
            { fieldId: 'qty', value: 'many' },
          ],
        },
      ],
    });
    expect([asArray.status, fieldsOf(asArray)]).toEqual([400, ['rows[1].values[1].value']]);
  });

  it('13. without row_created in eventTypes, an update of a row the order book lacks creates nothing', async () => {
    const catalog = await createCatalog(t, sup, S, 'C13', [text('sku'), number('price')]);
    const conn = await createConnection(t, sup, S, catalog, {
      propagationEvents: { eventTypes: ['row_updated', 'field_value_changed', 'row_deleted'] },
    });
    await writeCatalogRows(t, sup, S, catalog, [
      { target: { row: 'old' }, values: { sku: 'OLD', price: 1 } },
    ]);
    // The buyer already holds OLD (matched by sku); NEW is never created in the order book.
    const ob = await createOrderBook(t, buyer, B, 'OB13', [], [conn]);
    await call(
      t,
      buyer,
      'post',
      `/organizations/${B}/orderbooks/${ob}/rows/batch-update`,
      {
        rows: [{ target: { row: 'mine' }, values: { sku: 'OLD', price: 1 } }],
      },
      200,
    );
    const binding = await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      receiverFilter: { deduplicationStrategy: 'by_field', deduplicationFieldIds: ['sku'] },
    });
    await settleSync(t, worker);
    await writeCatalogRows(t, sup, S, catalog, [
      { target: { row: 'new' }, values: { sku: 'NEW', price: 2 } },
    ]);
    await settleSync(t, worker);
    await writeCatalogRows(t, sup, S, catalog, [
      { target: { row: 'new' }, values: { price: 3 } },
      { target: { row: 'old' }, values: { price: 4 } },
    ]);
    await settleSync(t, worker);
    const rows = await rowsOf(t, buyer, 'orderbook', ob, B);
    const logs = await call<{ items: SyncLog[] }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${ob}/sync-logs?bindingId=${binding.id}&pageSize=100`,
    );
    expect(rows.map((row) => [row.id, row.values.sku, row.values.price])).toEqual([['mine', 'OLD', 4]]);
    expect(
      logs.items
        .filter((log) => log.sourceRowId === 'new')
        .map((log) => [log.eventType, log.outcome, log.reason]),
    ).toEqual([
      [
        'row_updated',
        'filtered',
        'event type row_created is not propagated by this connection: the row is not in the order book',
      ],
      ['row_created', 'filtered', 'event type row_created is not propagated by this connection'],
    ]);
  });

  it('14. a rule whose order-book field was deleted is reported as left out, not dropped silently', async () => {
    const catalog = await createCatalog(t, sup, S, 'C14', [text('sku'), number('price')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    await writeCatalogRows(t, sup, S, catalog, [{ target: { row: 'p1' }, values: { sku: 'P1', price: 1 } }]);
    const ob = await createOrderBook(t, buyer, B, 'OB14', [], [conn]);
    const binding = await createBinding(t, buyer, B, ob, { connectionId: conn });
    await settleSync(t, worker);
    const meta = await call<{ fields: Array<{ id: string }> }>(
      t,
      buyer,
      'get',
      `/doc/orderbook/${ob}/metadata?organizationId=${B}`,
    );
    await call(t, buyer, 'put', `/doc/orderbook/${ob}/metadata?organizationId=${B}`, {
      ...meta,
      fields: meta.fields.filter((field) => field.id !== 'price'),
    });
    await writeCatalogRows(t, sup, S, catalog, [
      { target: { row: 'p1' }, values: { sku: 'P1b', price: 2 } },
      { target: { row: 'p2' }, values: { sku: 'P2', price: 3 } },
    ]);
    await settleSync(t, worker);
    const logs = await call<{ items: Array<SyncLog & { details: Record<string, unknown> | null }> }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${ob}/sync-logs?bindingId=${binding.id}&pageSize=2`,
    );
    const left = '; left out: price (the target has no field "price")';
    expect(logs.items.map((log) => [log.sourceRowId, log.outcome, log.reason]).sort()).toEqual([
      ['p1', 'accepted', `updated${left}`],
      ['p2', 'accepted', `created${left}`],
    ]);
    expect(logs.items[0]?.details).toEqual({
      mappingErrors: [{ targetFieldId: 'price', reason: 'the target has no field "price"' }],
    });
    expect((await rowsOf(t, buyer, 'orderbook', ob, B)).map((row) => row.values.sku).sort()).toEqual([
      'P1b',
      'P2',
    ]);
  });

  it('15. an unknown filter field is named by its condition; connector source-filter operands must fit', async () => {
    const catalog = await createCatalog(t, sup, S, 'C15', [text('sku'), number('price')]);
    const nested = {
      operator: 'OR',
      conditions: [{ fieldId: 'sku', operator: 'eq', value: 'A' }],
      groups: [
        {
          operator: 'AND',
          conditions: [
            { fieldId: 'price', operator: 'gt', value: 1 },
            { fieldId: 'ghost', operator: 'eq', value: 1 },
          ],
        },
      ],
    };
    const scope = await send(sup, 'post', `/organizations/${S}/catalogs/${catalog}/connections`, {
      name: 'c15',
      shareScope: { mode: 'filter', filterGroup: nested },
    });
    expect([scope.status, fieldsOf(scope)]).toEqual([
      400,
      ['shareScope.filterGroup.groups[0].conditions[1].fieldId'],
    ]);
    const conn = await createConnection(t, sup, S, catalog, {});
    const ob = await createOrderBook(t, buyer, B, 'OB15', [], [conn]);
    const filtered = await send(buyer, 'post', `/organizations/${B}/orderbooks/${ob}/bindings`, {
      connectionId: conn,
      receiverFilter: {
        filterGroup: nested,
        acceptMode: 'selective',
        manualAcceptRules: {
          autoAcceptIf: { operator: 'AND', conditions: [{ fieldId: 'nope', operator: 'eq', value: 1 }] },
        },
      },
    });
    expect([filtered.status, fieldsOf(filtered)]).toEqual([
      400,
      [
        'receiverFilter.filterGroup.groups[0].conditions[1].fieldId',
        'receiverFilter.manualAcceptRules.autoAcceptIf.conditions[0].fieldId',
      ],
    ]);
    const target = await createCatalog(t, sup, S, 'C15 copy', [text('sku'), number('price')]);
    const connector = (sourceFilter: unknown): Promise<Answer> =>
      send(sup, 'post', `/organizations/${S}/connectors`, {
        name: 'k15',
        connectorType: 'catalog_clone',
        sourceDocId: catalog,
        targetDocId: target,
        catalogCloneConfig: { sourceFilter },
      });
    const misfit = await connector({
      operator: 'AND',
      conditions: [{ fieldId: 'price', operator: 'gt', value: 'abc' }],
    });
    expect([misfit.status, fieldsOf(misfit)]).toEqual([
      400,
      ['catalogCloneConfig.sourceFilter.conditions[0].value'],
    ]);
    const ghost = await connector(nested);
    expect([ghost.status, fieldsOf(ghost)]).toEqual([
      400,
      ['catalogCloneConfig.sourceFilter.groups[0].conditions[1].fieldId'],
    ]);
    const fits = await connector({
      operator: 'AND',
      conditions: [{ fieldId: 'price', operator: 'gt', value: 5 }],
    });
    expect(fits.status).toBe(201);
  });

  it('16. a binding activated while its connection is paused gets its initial sync on resume', async () => {
    const catalog = await createCatalog(t, sup, S, 'C16', [text('sku'), number('price')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    await writeCatalogRows(t, sup, S, catalog, [
      { target: { row: 'p1' }, values: { sku: 'P1', price: 1 } },
      { target: { row: 'p2' }, values: { sku: 'P2', price: 2 } },
    ]);
    const synced = await createOrderBook(t, buyer, B, 'OB16 synced', [], [conn]);
    await createBinding(t, buyer, B, synced, { connectionId: conn });
    await settleSync(t, worker);
    await call(t, sup, 'post', `/organizations/${S}/connections/${conn}/pause`, undefined, 200);
    // Changes made while paused are not replayed (docs): p3 reaches neither order book on resume.
    await writeCatalogRows(t, sup, S, catalog, [{ target: { row: 'p3' }, values: { sku: 'P3', price: 3 } }]);
    const late = await createOrderBook(t, buyer, B, 'OB16 late', [], [conn]);
    const binding = await createBinding(t, buyer, B, late, { connectionId: conn });
    expect(binding.status).toBe('active');
    await settleSync(t, worker);
    expect(await rowsOf(t, buyer, 'orderbook', late, B)).toEqual([]);
    await call(t, sup, 'post', `/organizations/${S}/connections/${conn}/resume`, undefined, 200);
    await settleSync(t, worker);
    const skus = async (ob: string): Promise<unknown[]> =>
      (await rowsOf(t, buyer, 'orderbook', ob, B)).map((row) => row.values.sku).sort();
    expect(await skus(late)).toEqual(['P1', 'P2', 'P3']);
    expect(await skus(synced)).toEqual(['P1', 'P2']);
    // Resuming again later queues nothing more for it.
    await call(t, sup, 'post', `/organizations/${S}/connections/${conn}/pause`, undefined, 200);
    await call(t, sup, 'post', `/organizations/${S}/connections/${conn}/resume`, undefined, 200);
    const [{ n }] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM sync_propagation_jobs WHERE binding_id = $1`,
      [binding.id],
    );
    expect(n).toBe(1);
  });

  it('12. a local edit the catalog overwrites (keep_upstream, or a sync field) is traced in the sync log', async () => {
    const catalog = await createCatalog(t, sup, S, 'C12', [text('sku'), number('price'), number('qty')]);
    const conn = await createConnection(t, sup, S, catalog, {});
    await writeCatalogRows(t, sup, S, catalog, [
      { target: { row: 'p1' }, values: { sku: 'P1', price: 10, qty: 1 } },
    ]);
    const ob = await createOrderBook(t, buyer, B, 'OB12', [], [conn]);
    const binding = await createBinding(t, buyer, B, ob, {
      connectionId: conn,
      fieldMapping: {
        rules: [
          { sourceFieldId: 'sku', targetFieldId: 'sku' },
          { sourceFieldId: 'price', targetFieldId: 'price', propagationMode: 'sync' },
          { sourceFieldId: 'qty', targetFieldId: 'qty' },
        ],
      },
      conflictResolution: {
        defaultStrategy: 'keep_local',
        fieldStrategies: { qty: { strategy: 'keep_upstream' } },
      },
    });
    await settleSync(t, worker);
    const [row] = await rowsOf(t, buyer, 'orderbook', ob, B);
    await call(t, buyer, 'put', `/doc/orderbook/${ob}/data/${row?.id ?? ''}?organizationId=${B}`, {
      values: { price: 1, qty: 2 },
    });
    await call(t, sup, 'patch', `/organizations/${S}/catalogs/${catalog}/rows/p1`, {
      values: { price: 11, qty: 5 },
    });
    await settleSync(t, worker);
    expect((await rowsOf(t, buyer, 'orderbook', ob, B))[0]?.values).toMatchObject({ price: 11, qty: 5 });
    const logs = await call<{ items: Array<SyncLog & { details: Record<string, unknown> | null }> }>(
      t,
      buyer,
      'get',
      `/organizations/${B}/orderbooks/${ob}/sync-logs?bindingId=${binding.id}&pageSize=1`,
    );
    const [latest] = logs.items;
    expect(latest?.outcome).toBe('accepted');
    expect(latest?.reason).toBe(
      "updated; replaced the order book's local values (price: keep_upstream, qty: keep_upstream)",
    );
    expect(latest?.details).toEqual({
      overwritten: [
        { fieldId: 'price', strategy: 'keep_upstream' },
        { fieldId: 'qty', strategy: 'keep_upstream' },
      ],
    });
  });
});
