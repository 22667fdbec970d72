import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser, removeField } from '../documents/documents.fixtures.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'qty', name: 'Quantity', type: 'number' },
  { id: 'kind', name: 'Kind', type: 'text' },
];

/**
 * Deleting a field a chart view uses leaves the view valid (docs/views.md, "Fields deleted or changed"): losing its
 * xField drops chartConfig, losing its yField drops an explicit aggregation (the chart counts). A view an earlier
 * clean-up left invalid reads as a valid one, so that writing back what was read is accepted.
 */
describe('views: charts after their fields are deleted', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, { fields: FIELDS });
    await createRow(t.http, owner, doc, { id: 'r1', values: { name: 'A', qty: 1, kind: 'x' } });
    await createRow(t.http, owner, doc, { id: 'r2', values: { name: 'B', qty: 2, kind: 'x' } });
  });
  afterAll(async () => {
    await t.close();
  });

  async function chart(id: string, chartConfig: Record<string, unknown>): Promise<void> {
    await request(t.http).post(`${doc.path}/views`).set(bearer(owner)).send({ id, name: id, type: 'chart', config: { chartConfig, columns: ['name'] } }).expect(201);
  }

  async function writeBackAsRead(id: string): Promise<Record<string, unknown>> {
    const read = await request(t.http).get(`${doc.path}/views/${id}`).set(bearer(owner)).expect(200);
    await request(t.http).put(`${doc.path}/views/${id}`).set(bearer(owner)).send(read.body.payload).expect(200);
    return read.body.payload.config;
  }

  it('keeps chart views valid when their yField or xField is deleted', async () => {
    await chart('by-kind', { chartType: 'bar', xField: 'kind', yField: 'qty', aggregation: 'avg' });
    await chart('by-qty', { chartType: 'pie', xField: 'qty' });
    await removeField(t.http, owner, doc, 'qty');

    // yField gone: the chart counts rows per kind.
    expect(await writeBackAsRead('by-kind')).toEqual({ chartConfig: { chartType: 'bar', xField: 'kind' }, columns: ['name'] });
    const series = await request(t.http).get(`${doc.path}/views/by-kind/series`).set(bearer(owner)).expect(200);
    expect(series.body.payload).toMatchObject({ xField: 'kind', yField: null, aggregation: 'count', points: [{ x: { text: 'x' }, y: 2 }] });
    // xField gone: chartConfig goes; the view stays, to be configured again.
    expect(await writeBackAsRead('by-qty')).toEqual({ columns: ['name'] });
  });

  it('shows a chart an earlier clean-up left without its xField as a valid view', async () => {
    await chart('legacy', { chartType: 'line', xField: 'kind' });
    await t.dataSource.query(`UPDATE views SET config = jsonb_set(config, '{chartConfig}', (config->'chartConfig') - 'xField') WHERE id = 'legacy'`);
    expect(await writeBackAsRead('legacy')).toEqual({ columns: ['name'] });
  });
});
