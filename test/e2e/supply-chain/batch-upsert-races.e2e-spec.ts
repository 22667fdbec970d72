import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { listen } from '../realtime/realtime.fixtures.js';
import { API, createCatalog, createOrderBook } from './sync.fixtures.js';

/**
 * Upserts of one new row at once (docs/supply-chain.md, "Batch"): a row named without an `operation` is updated when
 * it exists, else created. Of several batches naming the same new row at once, one creates it and the others update
 * it, exactly as one after the other would; none answers 409 ALREADY_EXISTS for a row it was asked to upsert.
 */
describe('supply chain: concurrent batch upserts of one new row', () => {
  let t: TestApp;
  let owner: TestUser;
  let org: string;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp();
    base = await listen(t);
    owner = await registerUser(t.http);
    org = owner.defaultOrganizationId;
  });
  afterAll(async () => {
    await t.close();
  });

  const fields = [
    { id: 'sku', name: 'SKU', type: 'text' },
    { id: 'qty', name: 'Qty', type: 'number' },
  ];

  const race = async (path: string, rowId: string): Promise<void> => {
    // Five requests at once, each on a connection of its own to the listening server.
    const answers = await Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        const res = await fetch(`${base}${API}${path}/rows/batch-update`, {
          method: 'POST',
          headers: { ...bearer(owner), 'Content-Type': 'application/json', Connection: 'close' },
          body: JSON.stringify({ rows: [{ target: { row: rowId }, values: { sku: `s-${i}`, qty: i } }] }),
        });
        return { status: res.status, body: (await res.json()) as { code?: string; payload: Record<string, number> } };
      }),
    );
    expect(answers.map((res) => [res.status, res.body.code ?? null])).toEqual(Array.from({ length: 5 }, () => [200, null]));
    const created = answers.map((res) => res.body.payload.rowsCreated as number);
    const updated = answers.map((res) => res.body.payload.rowsUpdated as number);
    expect([created.reduce((a, b) => a + b, 0), updated.reduce((a, b) => a + b, 0)]).toEqual([1, 4]);
    const [row] = await t.dataSource.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM document_rows r JOIN documents d ON d.id = r.document_id
        WHERE d.doc_id = $1 AND r.id = $2`,
      [path.split('/').pop(), rowId],
    );
    expect(row?.n).toBe(1);
  };

  it('a catalog: one batch creates the row, the others update it', async () => {
    const catalogId = await createCatalog(t, owner, org, 'Upserts', fields);
    for (let round = 0; round < 3; round += 1) {
      await race(`/organizations/${org}/catalogs/${catalogId}`, `new-${round}`);
    }
  });

  it('an order book: one batch creates the row, the others update it', async () => {
    const orderBookId = await createOrderBook(t, owner, org, 'Upserts', fields);
    for (let round = 0; round < 3; round += 1) {
      await race(`/organizations/${org}/orderbooks/${orderBookId}`, `new-${round}`);
    }
  });
});
