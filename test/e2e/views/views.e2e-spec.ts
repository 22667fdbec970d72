import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import {
  addToWorkspace,
  bearer,
  createDocument,
  createRow,
  type DocHandle,
  newUser,
  PRODUCT_FIELDS,
  scopedToken,
} from '../documents/documents.fixtures.js';
import { problemsOf } from '../../utils/error-details.js';

interface RowDto {
  id: string;
  values: { fieldId: string; value: Record<string, unknown> }[];
}

const ROWS = [
  { id: 'r1', values: { name: 'Apple', price: 10, qty: 1, status: 'todo' } },
  { id: 'r2', values: { name: 'Banana', price: 50, qty: 2, status: 'doing' } },
  { id: 'r3', values: { name: 'Cherry', price: 90, qty: 1, status: 'todo' } },
  { id: 'r4', values: { name: 'Date', price: 120, qty: 2, status: 'todo' } },
  { id: 'r5', values: { name: 'Elder', price: 30, qty: 2, status: 'done' } },
  { id: 'r6', values: { name: 'Fig', price: 70, qty: 1, status: 'doing' } },
];

describe('views: CRUD, validation, access, applied views, chart series, field clean-up, defaults', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;
  let doc: DocHandle;

  const ids = (res: request.Response): string[] => res.body.payload.items.map((row: RowDto) => row.id);

  async function events(type: string, viewId: string): Promise<Array<{ payload: Record<string, unknown>; triggered_by: string; workspace_id: string }>> {
    return t.dataSource.query(`SELECT payload, triggered_by, workspace_id FROM outbox WHERE event_type = $1 AND payload->>'viewId' = $2 ORDER BY seq`, [type, viewId]);
  }

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    viewer = await newUser(t.http);
    stranger = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    await addToWorkspace(t.dataSource, owner, viewer, 'viewer');
    doc = await createDocument(t.http, owner);
    for (const row of ROWS) {
      await createRow(t.http, owner, doc, row);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates, lists, reads, updates and deletes a view, each with its event in the spec payload; unknown config keys are kept', async () => {
    const config = {
      columns: ['name', 'price'],
      filters: { logic: 'and', conditions: [{ field: 'status', operator: 'ne', value: 'done' }], groups: [] },
      sorts: [{ field: 'price', direction: 'desc' }],
      ui: { widths: { name: 200 } },
    };
    const created = await request(t.http).post(`${doc.path}/views`).set(bearer(editor)).send({ id: 'crud', name: 'Open', type: 'table', config }).expect(201);
    expect(created.body.payload).toMatchObject({ id: 'crud', name: 'Open', type: 'table', config, isDefault: false, createdBy: editor.id });

    const list = await request(t.http).get(`${doc.path}/views`).set(bearer(viewer)).expect(200);
    expect(list.body.payload.items.map((v: { id: string }) => v.id)).toContain('crud');
    await request(t.http).get(`${doc.path}/views/crud`).set(bearer(viewer)).expect(200);

    const dup = await request(t.http).post(`${doc.path}/views`).set(bearer(editor)).send({ id: 'crud', name: 'Again', type: 'table' }).expect(409);
    expect(dup.body.code).toBe('ALREADY_EXISTS');

    const updated = await request(t.http).put(`${doc.path}/views/crud`).set(bearer(editor)).send({ name: 'Renamed', type: 'gallery' }).expect(200);
    expect(updated.body.payload).toMatchObject({ name: 'Renamed', type: 'gallery', config });

    await request(t.http).delete(`${doc.path}/views/crud`).set(bearer(editor)).expect(200);
    const gone = await request(t.http).get(`${doc.path}/views/crud`).set(bearer(editor)).expect(404);
    expect(gone.body.code).toBe('NOT_FOUND');

    for (const type of ['view_created', 'view_updated', 'view_deleted']) {
      const [event] = await events(type, 'crud');
      expect(event?.payload).toMatchObject({ viewId: 'crud', filters: config.filters, createdBy: editor.id, createdAt: expect.any(String) });
      expect(event?.payload).toHaveProperty('name');
      expect(event?.payload).toHaveProperty('type');
      expect(event?.triggered_by).toBe(editor.id);
      expect(event?.workspace_id).toBe(owner.defaultWorkspaceId);
    }
  });

  it('refuses a config that does not fit the metadata with VALIDATION_ERROR naming the path, and stores nothing', async () => {
    const attempt = async (body: Record<string, unknown>): Promise<string[]> => {
      const res = await request(t.http).post(`${doc.path}/views`).set(bearer(editor)).send({ name: 'Bad', type: 'table', ...body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      return problemsOf(res.body).map((detail: { field: string }) => detail.field);
    };
    expect(await attempt({ type: 'spreadsheet' })).toContain('type');
    expect(await attempt({ config: { columns: ['name', 'nope'] } })).toEqual(['config.columns[1]']);
    expect(await attempt({ config: { displayFields: 'name' } })).toEqual(['config.displayFields']);
    expect((await attempt({ config: { filters: { conditions: [{ field: 'ghost', operator: 'eq', value: 1 }] } } }))[0]).toMatch(/^config\.filters\.conditions\[0\]/);
    expect((await attempt({ config: { filters: { and: [{ field: 'price', op: 'bogus', value: 1 }] } } }))[0]).toMatch(/^config\.filters\.and\[0\]/);
    expect((await attempt({ config: { sorts: [{ field: 'ghost', direction: 'asc' }] } }))[0]).toMatch(/^config\.sorts\[0\]/);
    expect(await attempt({ type: 'chart', config: { chartConfig: { xField: 'status', yField: 'price', chartType: 'donut' } } })).toEqual(['config.chartConfig.chartType']);
    expect(await attempt({ type: 'chart', config: { chartConfig: { xField: 'status', yField: 'name', chartType: 'bar' } } })).toEqual(['config.chartConfig.yField']);
    expect(await attempt({ type: 'kanban', config: { kanbanConfig: { groupByField: 'price' } } })).toEqual(['config.kanbanConfig.groupByField']);
    expect(await attempt({ type: 'calendar', config: { calendarConfig: { dateField: 'name', titleField: 'name' } } })).toEqual(['config.calendarConfig.dateField']);
    expect(await attempt({ config: { groupBy: ['status', 'ghost'] } })).toEqual(['config.groupBy[1]']);
    const [{ count }] = await t.dataSource.query<{ count: string }[]>(`SELECT count(*) FROM views WHERE name = 'Bad'`);
    expect(count).toBe('0');
    // The valid forms of the same keys pass.
    await request(t.http)
      .post(`${doc.path}/views`)
      .set(bearer(editor))
      .send({ id: 'board', name: 'Board', type: 'kanban', config: { kanbanConfig: { groupByField: 'status', cardFields: ['name'] }, calendarConfig: { dateField: 'due' }, groupBy: 'status' } })
      .expect(201);
  });

  it('refuses viewers, credentials without views:manage, and other tenants (who learn nothing)', async () => {
    const body = { name: 'X', type: 'table' };
    const byViewer = await request(t.http).post(`${doc.path}/views`).set(bearer(viewer)).send(body).expect(403);
    expect(byViewer.body.code).toBe('FORBIDDEN');
    await request(t.http).post(`${doc.path}/views/board/default`).set(bearer(viewer)).expect(403);
    await request(t.http).delete(`${doc.path}/views/board`).set(bearer(viewer)).expect(403);

    const noScope = await scopedToken(t, editor, ['doc:read', 'doc:write', 'data:read', 'data:write']);
    const refused = await request(t.http).post(`${doc.path}/views`).set(bearer(noScope)).send(body).expect(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    await request(t.http).get(`${doc.path}/views`).set(bearer(noScope)).expect(200);
    const withScope = await scopedToken(t, editor, ['views:manage']);
    await request(t.http).post(`${doc.path}/views`).set(bearer(withScope)).send({ id: 'scoped', ...body }).expect(201);
    const readOnlyScope = await scopedToken(t, editor, ['views:manage']);
    await request(t.http).get(`${doc.path}/views`).set(bearer(readOnlyScope)).expect(403);

    const foreign = await request(t.http).get(`${doc.path}/views?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(stranger)).expect(404);
    const unknown = await request(t.http).get(`${doc.path}/views?workspaceId=00000000-0000-4000-8000-000000000000`).set(bearer(stranger)).expect(404);
    expect(foreign.body).toEqual(unknown.body);
    expect(foreign.body.code).toBe('DOC_NOT_FOUND');
    await request(t.http).post(`${doc.path}/views?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(stranger)).send(body).expect(404);
    await request(t.http).get(`${doc.path}/views/board?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(stranger)).expect(404);
  });

  it('applies a view to GET /data, POST /data/query and the bundle: its filter, its sort, only its columns; explicit parameters narrow', async () => {
    const config = {
      columns: ['price', 'name'],
      filters: { and: [{ field: 'status', op: 'ne', value: 'done' }, { field: 'price', op: 'lt', value: 100 }] },
      sorts: [{ field: 'price', order: 'desc' }],
    };
    await request(t.http).post(`${doc.path}/views`).set(bearer(editor)).send({ id: 'cheap-open', name: 'Cheap open', type: 'table', config }).expect(201);

    const applied = await request(t.http).get(`${doc.path}/data?viewId=cheap-open`).set(bearer(viewer)).expect(200);
    expect(ids(applied)).toEqual(['r3', 'r6', 'r2', 'r1']);
    expect(applied.body.payload.total).toBe(4);
    for (const row of applied.body.payload.items as RowDto[]) {
      expect(row.values.map((entry) => entry.fieldId).sort()).toEqual(['name', 'price']);
    }
    // Without the view: every row and every field.
    const plain = await request(t.http).get(`${doc.path}/data`).set(bearer(viewer)).expect(200);
    expect(plain.body.payload.items).toHaveLength(6);
    expect((plain.body.payload.items[0] as RowDto).values.map((entry) => entry.fieldId)).toEqual(expect.arrayContaining(['qty', 'status']));

    // An explicit sort comes first; the view's filter still applies.
    const sorted = await request(t.http).get(`${doc.path}/data?viewId=cheap-open&sort=name:desc`).set(bearer(viewer)).expect(200);
    expect(ids(sorted)).toEqual(['r6', 'r3', 'r2', 'r1']);
    // Paging over the view.
    const page2 = await request(t.http).get(`${doc.path}/data?viewId=cheap-open&page=2&pageSize=3`).set(bearer(viewer)).expect(200);
    expect(ids(page2)).toEqual(['r1']);
    // The body's filter narrows the view further.
    const narrowed = await request(t.http)
      .post(`${doc.path}/data/query?viewId=cheap-open`)
      .set(bearer(viewer))
      .send({ filters: { logic: 'and', conditions: [{ field: 'qty', operator: 'eq', value: 1 }] } })
      .expect(200);
    expect(ids(narrowed)).toEqual(['r3', 'r6', 'r1']);

    const bundle = await request(t.http).get(`${doc.path}?viewId=cheap-open&include=data,views&pageSize=2`).set(bearer(viewer)).expect(200);
    expect(bundle.body.payload.data.items.map((row: RowDto) => row.id)).toEqual(['r3', 'r6']);
    expect(bundle.body.payload.data.total).toBe(4);
    expect(bundle.body.payload.views.map((v: { id: string }) => v.id)).toContain('cheap-open');
    expect(bundle.body.payload).not.toHaveProperty('metadata');

    const missing = await request(t.http).get(`${doc.path}/data?viewId=nope`).set(bearer(viewer)).expect(404);
    expect(missing.body.code).toBe('NOT_FOUND');
  });

  it('reads a chart view as its series: rows grouped by xField, yField aggregated, the view filter applied', async () => {
    await request(t.http)
      .post(`${doc.path}/views`)
      .set(bearer(editor))
      .send({
        id: 'chart',
        name: 'Price by status',
        type: 'chart',
        config: { chartConfig: { xField: 'status', yField: 'price', chartType: 'bar' }, filters: [{ field: 'price', operator: 'range', rangeStart: 20, rangeEnd: 100 }] },
      })
      .expect(201);
    const series = await request(t.http).get(`${doc.path}/views/chart/series`).set(bearer(viewer)).expect(200);
    expect(series.body.payload).toMatchObject({ viewId: 'chart', chartType: 'bar', xField: 'status', yField: 'price', aggregation: 'sum' });
    const points = new Map((series.body.payload.points as { x: { selectOption?: { id: string } } | null; y: number }[]).map((p) => [JSON.stringify(p.x), p.y]));
    expect([...points.values()].sort((a, b) => a - b)).toEqual([30, 90, 120]);

    await request(t.http)
      .post(`${doc.path}/views`)
      .set(bearer(editor))
      .send({ id: 'counts', name: 'Count', type: 'chart', config: { chartConfig: { xField: 'qty', chartType: 'pie' } } })
      .expect(201);
    const counts = await request(t.http).get(`${doc.path}/views/counts/series`).set(bearer(viewer)).expect(200);
    expect(counts.body.payload.aggregation).toBe('count');
    expect(counts.body.payload.points).toEqual(expect.arrayContaining([{ x: { number: 1 }, y: 3 }, { x: { number: 2 }, y: 3 }]));

    const notChart = await request(t.http).get(`${doc.path}/views/cheap-open/series`).set(bearer(viewer)).expect(400);
    expect(notChart.body.code).toBe('VALIDATION_ERROR');
    const noDataScope = await scopedToken(t, viewer, ['doc:read']);
    await request(t.http).get(`${doc.path}/views/chart/series`).set(bearer(noDataScope)).expect(403);
  });

  it('charts a computed number (a formula) as the query engine aggregates it, and refuses a text formula', async () => {
    const fields = [
      { id: 'status', name: 'Status', type: 'text' },
      { id: 'price', name: 'Price', type: 'number' },
      { id: 'qty', name: 'Qty', type: 'number' },
      { id: 'total', name: 'Total', type: 'formula', formula: '{price} * {qty}' },
      { id: 'label', name: 'Label', type: 'formula', formula: 'UPPER({status})' },
    ];
    const sales = await createDocument(t.http, owner, { fields });
    await createRow(t.http, owner, sales, { id: 's1', values: { status: 'open', price: 10, qty: 2 } });
    await createRow(t.http, owner, sales, { id: 's2', values: { status: 'open', price: 5, qty: 3 } });
    await createRow(t.http, owner, sales, { id: 's3', values: { status: 'done', price: 7, qty: 1 } });
    const grouped = await request(t.http)
      .post(`${sales.path}/data/query`)
      .set(bearer(owner))
      .send({ groupBy: { fields: ['status'], aggregations: [{ kind: 'sum', field: 'total' }] } })
      .expect(200);
    expect(grouped.body.payload.groups).toHaveLength(2);

    await request(t.http)
      .post(`${sales.path}/views`)
      .set(bearer(editor))
      .send({ id: 'totals', name: 'Totals', type: 'chart', config: { chartConfig: { xField: 'status', yField: 'total', chartType: 'bar' } } })
      .expect(201);
    const series = await request(t.http).get(`${sales.path}/views/totals/series`).set(bearer(viewer)).expect(200);
    expect(series.body.payload.points).toEqual([
      { x: { text: 'done' }, y: 7 },
      { x: { text: 'open' }, y: 35 },
    ]);
    const text = await request(t.http)
      .post(`${sales.path}/views`)
      .set(bearer(editor))
      .send({ name: 'Labels', type: 'chart', config: { chartConfig: { xField: 'status', yField: 'label', chartType: 'bar' } } })
      .expect(400);
    expect(problemsOf(text.body)).toEqual([expect.objectContaining({ field: 'config.chartConfig.yField', fieldId: 'label' })]);
  });

  it('reads every group of a chart series, beyond one page of groups', async () => {
    const wide = await createDocument(t.http, owner);
    for (let start = 0; start < 150; start += 25) {
      await Promise.all(Array.from({ length: 25 }, (_, i) => createRow(t.http, owner, wide, { id: `w${start + i}`, values: { name: `n${String(start + i).padStart(3, '0')}` } })));
    }
    await request(t.http)
      .post(`${wide.path}/views`)
      .set(bearer(owner))
      .send({ id: 'names', name: 'Names', type: 'chart', config: { chartConfig: { xField: 'name', chartType: 'bar' } } })
      .expect(201);
    const series = await request(t.http).get(`${wide.path}/views/names/series`).set(bearer(owner)).expect(200);
    const points = series.body.payload.points as { x: { text: string }; y: number }[];
    expect(points).toHaveLength(150);
    expect(new Set(points.map((point) => point.x.text)).size).toBe(150);
    expect(points.every((point) => point.y === 1)).toBe(true);
  });

  it('removes references to a deleted field from every view in the same merge and records the change', async () => {
    const own = await createDocument(t.http, owner);
    await createRow(t.http, owner, own, ROWS[0] as Record<string, unknown>);
    const config = {
      columns: ['name', 'qty', 'price'],
      filters: { logic: 'and', conditions: [{ field: 'qty', operator: 'eq', value: 1 }, { field: 'status', operator: 'eq', value: 'todo' }] },
      sorts: [{ field: 'qty', direction: 'asc' }, { field: 'name', direction: 'asc' }],
      kanbanConfig: { groupByField: 'status', cardFields: ['qty', 'name'] },
      chartConfig: { xField: 'status', yField: 'qty', chartType: 'line' },
      ui: { keep: true },
    };
    await request(t.http).post(`${own.path}/views`).set(bearer(owner)).send({ id: 'v1', name: 'V1', type: 'kanban', config }).expect(201);
    await request(t.http).post(`${own.path}/views`).set(bearer(owner)).send({ id: 'untouched', name: 'V2', type: 'table', config: { columns: ['name'] } }).expect(201);

    // Delete `qty` and make `status` a text field in one metadata change.
    const fields = PRODUCT_FIELDS.filter((field) => field.id !== 'qty').map((field) => (field.id === 'status' ? { id: 'status', name: 'Status', type: 'text' } : field));
    const put = await request(t.http).put(`${own.path}/metadata`).set(bearer(owner)).send({ fields }).expect(200);
    const revisionId = put.body.payload.request.revisionId as string;

    const view = await request(t.http).get(`${own.path}/views/v1`).set(bearer(owner)).expect(200);
    expect(view.body.payload.config).toEqual({
      columns: ['name', 'price'],
      filters: { logic: 'and', conditions: [{ field: 'status', operator: 'eq', value: 'todo' }] },
      sorts: [{ field: 'name', direction: 'asc' }],
      kanbanConfig: { cardFields: ['name'] },
      chartConfig: { xField: 'status', chartType: 'line' },
      ui: { keep: true },
    });
    const [event] = await events('view_updated', 'v1');
    expect(event?.payload).toMatchObject({ reason: 'fields-changed', revisionId, deletedFieldIds: ['qty'], previousConfig: config, updatedBy: owner.id });
    expect(await events('view_updated', 'untouched')).toHaveLength(0);
    // The cleaned view still applies.
    await request(t.http).get(`${own.path}/data?viewId=v1`).set(bearer(owner)).expect(200);
  });

  it('serializes concurrent default changes: every call succeeds and one view is the default', async () => {
    const raced = await createDocument(t.http, owner);
    const viewIds = Array.from({ length: 8 }, (_, i) => `d${i}`);
    for (const id of viewIds) {
      await request(t.http).post(`${raced.path}/views`).set(bearer(owner)).send({ id, name: id, type: 'table' }).expect(201);
    }
    // Two users choosing a default at once used to get 409 ALREADY_EXISTS (the one-default index) for a valid call.
    const answers = await Promise.all(viewIds.map((id) => request(t.http).post(`${raced.path}/views/${id}/default`).set(bearer(owner))));
    expect(answers.map((res) => res.status)).toEqual(viewIds.map(() => 200));
    const views = await request(t.http).get(`${raced.path}/views`).set(bearer(owner)).expect(200);
    expect(views.body.payload.items.filter((view: { isDefault: boolean }) => view.isDefault)).toHaveLength(1);
    // Each change names the default it replaced: they form one chain, the first from none.
    const changes = (await t.dataSource.query(
      `SELECT payload FROM outbox WHERE event_type = 'view_default_changed' AND doc_id = $1 ORDER BY seq`,
      [raced.docId],
    )) as Array<{ payload: { viewId: string; previousDefaultViewId: string | null } }>;
    expect(changes).toHaveLength(viewIds.length);
    expect(changes.map((row) => row.payload.previousDefaultViewId)).toEqual([null, ...changes.slice(0, -1).map((row) => row.payload.viewId)]);
  });

  it('keeps one default view per document; the type-level defaultViewId is the fallback', async () => {
    await request(t.http).post(`${doc.path}/views`).set(bearer(editor)).send({ id: 'a', name: 'A', type: 'table' }).expect(201);
    await request(t.http).post(`${doc.path}/views`).set(bearer(editor)).send({ id: 'b', name: 'B', type: 'table' }).expect(201);
    const first = await request(t.http).post(`${doc.path}/views/a/default`).set(bearer(editor)).expect(200);
    expect(first.body.payload).toMatchObject({ id: 'a', isDefault: true, defaultSource: 'document' });
    await request(t.http).post(`${doc.path}/views/b/default`).set(bearer(editor)).expect(200);
    const list = await request(t.http).get(`${doc.path}/views?pageSize=100`).set(bearer(viewer)).expect(200);
    const defaults = list.body.payload.items.filter((v: { isDefault: boolean }) => v.isDefault).map((v: { id: string }) => v.id);
    expect(defaults).toEqual(['b']);
    const [changed] = (await events('view_default_changed', 'b')).slice(-1);
    expect(changed?.payload).toMatchObject({ viewId: 'b', previousDefaultViewId: 'a' });

    // Another document of the type without a default of its own falls back to the type-level setting.
    const other = await createDocument(t.http, owner);
    await request(t.http).post(`${other.path}/views`).set(bearer(owner)).send({ id: 'shared', name: 'Shared', type: 'table' }).expect(201);
    let views = await request(t.http).get(`${other.path}/views`).set(bearer(owner)).expect(200);
    expect(views.body.payload.items[0]).toMatchObject({ id: 'shared', isDefault: false });
    await request(t.http).put(`/api/v1/doc/${other.docType}/setting?workspaceId=${owner.defaultWorkspaceId}`).set(bearer(owner)).send({ defaultViewId: 'shared' }).expect(200);
    views = await request(t.http).get(`${other.path}/views`).set(bearer(owner)).expect(200);
    expect(views.body.payload.items[0]).toMatchObject({ id: 'shared', isDefault: true, defaultSource: 'type' });
    // The document's own default wins over the type's.
    const list2 = await request(t.http).get(`${doc.path}/views/b`).set(bearer(owner)).expect(200);
    expect(list2.body.payload).toMatchObject({ isDefault: true, defaultSource: 'document' });

    // Deleting a document's own default changes its default: to the type-level fallback, or to none.
    const defaultChanges = async (previous: string) =>
      (await t.dataSource.query(
        `SELECT payload FROM outbox WHERE event_type = 'view_default_changed' AND payload->>'previousDefaultViewId' = $1 AND doc_id = $2 ORDER BY seq`,
        [previous, other.docId],
      )) as Array<{ payload: Record<string, unknown> }>;
    await request(t.http).post(`${other.path}/views`).set(bearer(owner)).send({ id: 'mine', name: 'Mine', type: 'table' }).expect(201);
    await request(t.http).post(`${other.path}/views/mine/default`).set(bearer(owner)).expect(200);
    await request(t.http).delete(`${other.path}/views/mine`).set(bearer(owner)).expect(200);
    expect((await defaultChanges('mine')).map((row) => row.payload)).toEqual([
      expect.objectContaining({ viewId: 'shared', name: 'Shared', type: 'table', previousDefaultViewId: 'mine', updatedBy: owner.id }),
    ]);
    await request(t.http).delete(`${other.path}/views/shared`).set(bearer(owner)).expect(200);
    // The type-level default was the effective one (no default of its own left): the default is now none.
    expect((await defaultChanges('shared')).map((row) => row.payload)).toEqual([
      expect.objectContaining({ viewId: null, name: null, type: null, previousDefaultViewId: 'shared' }),
    ]);
    await request(t.http).post(`${other.path}/views`).set(bearer(owner)).send({ id: 'last', name: 'Last', type: 'table' }).expect(201);
    await request(t.http).post(`${other.path}/views/last/default`).set(bearer(owner)).expect(200);
    await request(t.http).delete(`${other.path}/views/last`).set(bearer(owner)).expect(200);
    expect((await defaultChanges('last')).map((row) => row.payload)).toEqual([
      expect.objectContaining({ viewId: null, name: null, type: null, filters: null, createdBy: null, createdAt: null, previousDefaultViewId: 'last' }),
    ]);
  });
});
