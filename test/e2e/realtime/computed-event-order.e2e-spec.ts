import request from 'supertest';
import { registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle } from '../documents/documents.fixtures.js';
import { connectInfo, listen, openStream, REALTIME_TEST_ENV, sleep, waitFor } from './realtime.fixtures.js';

/**
 * The stream hands each client the document's events after its position (docs/realtime.md, "Across instances"), so
 * a document's events must commit in id order. A merge of one document records `data_row_updated` (`computed: true`)
 * for the rows of another document whose lookups read it (docs/formulas.md) long before it commits: that event must
 * not be overtaken by a write of the other document committing meanwhile, or every open stream skips it.
 */
describe('realtime event stream: computed row events of a dependent document', () => {
  let t: TestApp;
  let base: string;
  let owner: TestUser;
  let products: DocHandle;
  let orders: DocHandle;

  beforeAll(async () => {
    t = await createTestApp(REALTIME_TEST_ENV);
    base = await listen(t);
    owner = await registerUser(t.http);
    products = await createDocument(t.http, owner, {
      docType: 'products',
      fields: [
        { id: 'name', name: 'Name', type: 'text' },
        { id: 'price', name: 'Price', type: 'number' },
      ],
    });
    orders = await createDocument(t.http, owner, {
      docType: 'orders',
      fields: [
        { id: 'name', name: 'Name', type: 'text' },
        { id: 'item', name: 'Item', type: 'relation' },
        { id: 'prices', name: 'Prices', type: 'lookup', lookup: { relationFieldId: 'item', targetFieldId: 'price' } },
      ],
    });
    await createRow(t.http, owner, products, { id: 'a', values: { name: 'A', price: 1 } });
    await createRow(t.http, owner, orders, {
      id: 'x',
      values: { name: 'X', item: [{ docType: 'products', docId: products.docId, rowId: 'a' }] },
    });
    await createRow(t.http, owner, orders, { id: 'y', values: { name: 'Y' } });
  });

  afterAll(async () => {
    await t.close();
  });

  it('reaches the stream although a write of the dependent document commits while the merge is finishing', async () => {
    const info = await connectInfo(t.http, owner, orders, owner.defaultWorkspaceId);
    const stream = openStream(info.sseUrl.replace(/^http:\/\/[^/]+/, base));
    await waitFor(() => stream.opened() === 1, 15_000, 'open');

    const eventsOfOrders = async (): Promise<Array<{ id: string; event: string }>> =>
      (
        await request(t.http)
          .get(`/realtime/doc/orders/${orders.docId}/events`)
          .query({ workspaceId: owner.defaultWorkspaceId, pageSize: 100 })
          .set(bearer(owner))
          .expect(200)
      ).body.payload.items;
    const before = BigInt((await eventsOfOrders())[0]?.id ?? '0');

    // Hold the products document row: the price change recomputes x (recording its event) and then waits to number
    // its revision.
    const holder = t.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT 1 FROM documents WHERE doc_type = 'products' AND doc_id = $1 FOR UPDATE`, [
      products.docId,
    ]);
    let priceChanged = false;
    const priceChange = request(t.http)
      .put(`${products.path}/data/a`)
      .set(bearer(owner))
      .send({ values: { price: 10 } })
      .then((res) => {
        priceChanged = true;
        return res;
      });
    await waitFor(
      async () =>
        (
          await t.dataSource.query<Array<{ n: number }>>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE documents%'`,
          )
        )[0]?.n === 1,
      15_000,
      'the price change to wait for the products document',
    );
    // A write of the orders document meanwhile (another row): it may wait, but must not commit ahead.
    let renamed = false;
    const rename = request(t.http)
      .put(`${orders.path}/data/y`)
      .set(bearer(owner))
      .send({ values: { name: 'Y2' } })
      .then((res) => {
        renamed = true;
        return res;
      });
    // Without the ordering the rename commits now and reaches the stream ahead of the computed event: give it time.
    await waitFor(
      () => renamed && stream.events.some((event) => event.type === 'revision_created'),
      3_000,
      'the rename',
    ).catch(() => undefined);
    expect(priceChanged).toBe(false);
    await holder.commitTransaction();
    await holder.release();
    expect((await priceChange).status).toBe(200);
    expect((await rename).status).toBe(200);

    const computed = () =>
      stream.events.find(
        (event) =>
          event.type === 'data_row_updated' && (event.data.payload as { computed?: boolean }).computed === true,
      );
    await waitFor(
      () => stream.events.some((event) => event.type === 'revision_created'),
      15_000,
      'the rename to be streamed',
    );
    await sleep(1_000);
    stream.es.close();
    // Every event of the orders document recorded meanwhile, as the history lists them (oldest first), streamed.
    const since = (await eventsOfOrders())
      .filter((event) => BigInt(event.id) > before)
      .map((event) => `${event.id} ${event.event}`)
      .reverse();
    expect(since).toHaveLength(5);
    expect(stream.events.map((event) => `${event.id} ${event.type}`)).toEqual(since);
    expect(computed()?.data.payload).toMatchObject({ rowId: 'x', computed: true });
    expect(JSON.stringify(computed()?.data.payload)).toContain('"list":[10]');
  });
  it('a merge of the dependent document in progress and a write its lookups follow both commit (no deadlock)', async () => {
    // The explicit merge locks the orders document, then its request, then row x; the price change locks row x's
    // dependent document before x. Lined up with the request row held: the merge waits holding the orders document,
    // the price change waits for it without holding x.
    const opened = await request(t.http).post(`${orders.path}/requests`).set(bearer(owner)).send({ title: 'x' }).expect(201);
    const reqId: string = opened.body.payload.id;
    await request(t.http)
      .put(`${orders.path}/data/x?requestId=${reqId}`)
      .set(bearer(owner))
      .send({ values: { name: 'X3' } })
      .expect(200);
    const waiting = async () =>
      (
        await t.dataSource.query<Array<{ n: number }>>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )
      )[0]?.n ?? 0;
    const holder = t.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(`SELECT 1 FROM requests WHERE id = $1 FOR UPDATE`, [reqId]);
    const merge = request(t.http).post(`${orders.path}/requests/${reqId}/merge`).set(bearer(owner)).then((res) => res);
    await waitFor(async () => (await waiting()) === 1, 15_000, 'the merge to wait for its request');
    const priceChange = request(t.http)
      .put(`${products.path}/data/a`)
      .set(bearer(owner))
      .send({ values: { price: 20 } })
      .then((res) => res);
    await waitFor(async () => (await waiting()) === 2, 15_000, 'the price change to wait');
    await holder.commitTransaction();
    await holder.release();
    const [merged, changed] = await Promise.all([merge, priceChange]);
    expect({ merge: merged.status, priceChange: changed.status, code: changed.body.code }).toEqual({
      merge: 200,
      priceChange: 200,
      code: undefined,
    });
    const x = (await request(t.http).get(`${orders.path}/data/x`).set(bearer(owner)).expect(200)).body.payload;
    expect(JSON.stringify(x.values)).toContain('"list":[20]');
  });
});
