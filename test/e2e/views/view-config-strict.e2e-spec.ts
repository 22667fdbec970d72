import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle, newUser, removeField } from '../documents/documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

/**
 * A misspelt key inside a view's filters, sorts or type sections would silently change what the view shows (a filter
 * condition's `valeu`, a sort's `dir`, a chart's `yFeild`): refused with VALIDATION_ERROR naming its path, as
 * `POST /data/query` refuses it. Keys at the top of `config` stay open (clients keep UI state there). A name made of
 * whitespace only is refused like an empty one.
 */
describe('views: unknown keys inside config sections, blank names', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  const viewCount = async (): Promise<number> => Number((await t.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM views`))[0]?.n);
  const create = (body: Record<string, unknown>): request.Test => request(t.http).post(`${doc.path}/views`).set(bearer(owner)).send(body);

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner);
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses unknown keys in filters, sorts, chartConfig, kanbanConfig and calendarConfig, naming the path; writes nothing', async () => {
    const before = await viewCount();
    const cases: [string, Record<string, unknown>, string][] = [
      ['table', { filters: [{ field: 'price', operator: 'gt', value: 10, negate: true }] }, 'config.filters.conditions[0].negate'],
      ['table', { filters: { logic: 'or', conditions: [{ field: 'price', operator: 'eq', value: 1 }], grups: [] } }, 'config.filters.grups'],
      ['table', { filters: { and: [{ field: 'price', op: 'gt', value: 1, feild: 'qty' }] } }, 'config.filters.and[0].feild'],
      ['table', { sorts: [{ field: 'price', dir: 'desc' }] }, 'config.sorts[0].dir'],
      ['chart', { chartConfig: { chartType: 'bar', xField: 'status', yFeild: 'price' } }, 'config.chartConfig.yFeild'],
      ['kanban', { kanbanConfig: { groupByField: 'status', cardFeilds: ['name'] } }, 'config.kanbanConfig.cardFeilds'],
      ['calendar', { calendarConfig: { dateField: 'due', tittleField: 'name' } }, 'config.calendarConfig.tittleField'],
    ];
    for (const [type, config, path] of cases) {
      const res = await create({ name: 'Typo', type, config }).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(res.body).map((detail: { field: string }) => detail.field)).toContain(path);
    }
    expect(await viewCount()).toBe(before);

    const ok = await create({ id: 'ok', name: 'Fine', type: 'table', config: { filters: [{ field: 'price', operator: 'gt', value: 10 }], sorts: [{ field: 'price', direction: 'desc' }], uiState: { width: 3 } } }).expect(201);
    expect(ok.body.payload.config.uiState).toEqual({ width: 3 });
    const put = await request(t.http)
      .put(`${doc.path}/views/ok`)
      .set(bearer(owner))
      .send({ config: { sorts: [{ field: 'price', order: 'desc', dir: 'asc' }] } })
      .expect(400);
    expect(problemsOf(put.body).map((detail: { field: string }) => detail.field)).toContain('config.sorts[0].dir');
    const kept = await request(t.http).get(`${doc.path}/views/ok`).set(bearer(owner)).expect(200);
    expect(kept.body.payload.config.sorts).toEqual([{ field: 'price', direction: 'desc' }]);
  });

  it("takes groupBy as spec 2.12's GroupBy {fields, aggregations}, refuses it as a query would, and cleans it when a field goes", async () => {
    const groupBy = { fields: ['status'], aggregations: [{ kind: 'sum', field: 'qty' }, { kind: 'count' }] };
    const created = await create({ id: 'grouped', name: 'By status', type: 'table', config: { groupBy } }).expect(201);
    expect(created.body.payload.config.groupBy).toEqual(groupBy);
    const before = await viewCount();
    const refused = await create({ name: 'Bad', type: 'table', config: { groupBy: { fields: ['status'], aggregations: [{ kind: 'sum', field: 'name' }], order: 'x' } } }).expect(400);
    expect(problemsOf(refused.body).map((detail: { field: string }) => detail.field)).toEqual(
      expect.arrayContaining(['config.groupBy.order']),
    );
    const wrongType = await create({ name: 'Bad', type: 'table', config: { groupBy: { fields: ['status'], aggregations: [{ kind: 'sum', field: 'name' }] } } }).expect(400);
    expect(problemsOf(wrongType.body).map((detail: { field: string }) => detail.field)).toEqual(['config.groupBy.aggregations[0].field']);
    expect(await viewCount()).toBe(before);

    // Removing qty takes its aggregation out of the view; the rest of the GroupBy stays.
    await removeField(t.http, owner, doc, 'qty');
    const cleaned = await request(t.http).get(`${doc.path}/views/grouped`).set(bearer(owner)).expect(200);
    expect(cleaned.body.payload.config.groupBy).toEqual({ fields: ['status'], aggregations: [{ kind: 'count' }] });
  });

  it('refuses whitespace-only view names on create and update', async () => {
    const before = await viewCount();
    for (const name of ['   ', '\t\n']) {
      const res = await create({ name, type: 'table' }).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(problemsOf(res.body).map((detail: { field: string }) => detail.field)).toContain('name');
    }
    expect(await viewCount()).toBe(before);
    await create({ id: 'named', name: 'Named', type: 'table' }).expect(201);
    const res = await request(t.http).put(`${doc.path}/views/named`).set(bearer(owner)).send({ name: '  ' }).expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect((await request(t.http).get(`${doc.path}/views/named`).set(bearer(owner)).expect(200)).body.payload.name).toBe('Named');
  });
});
