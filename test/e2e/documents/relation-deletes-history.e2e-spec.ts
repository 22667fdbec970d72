import ExcelJS from 'exceljs';
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
  valueOf,
} from './documents.fixtures.js';

interface Operation {
  type: string;
  target: { kind: string; rowId?: string; fieldId?: string };
  oldValue: unknown;
  newValue: unknown;
  note?: string | null;
}

interface Revision {
  id: string;
  version: number;
  title: string | null;
  mergedBy: string;
  stats: { rowsUpdated: number; rowsDeleted: number };
}

type Ref = { docType?: string; docId?: string; rowId: string };

function binary(res: unknown, callback: (error: Error | null, body: Buffer) => void): void {
  const stream = res as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
}

/** The row ids a relation value (as a read renders it) names. */
function refIds(value: unknown): string[] {
  const refs = (value as { relation?: Ref[] } | undefined)?.relation ?? [];
  return refs.map((ref) => ref.rowId);
}

describe('documents: row deletions record the references they take out of relation fields', () => {
  let t: TestApp;
  let owner: TestUser;
  let editor: TestUser;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string): request.Test => request(t.http).get(path).set(bearer(owner));
  const operations = async (doc: DocHandle, revisionId: string): Promise<Operation[]> =>
    (await get(`${doc.path}/revisions/${revisionId}/operations?pageSize=100`).expect(200)).body.payload.items;
  const revisions = async (doc: DocHandle): Promise<Revision[]> =>
    (await get(`${doc.path}/revisions?pageSize=100`).expect(200)).body.payload.items;
  const history = async (doc: DocHandle, rowId: string): Promise<{ type: string; revisionId: string }[]> =>
    (await get(`${doc.path}/revisions/history?rowId=${rowId}&pageSize=100`).expect(200)).body.payload.items;
  const row = async (
    doc: DocHandle,
    rowId: string,
  ): Promise<{ version: number; values: { fieldId: string; value: Record<string, unknown> }[] }> =>
    (await get(`${doc.path}/data/${rowId}`).expect(200)).body.payload;
  const csv = async (doc: DocHandle, revisionId: string): Promise<string[]> =>
    (await get(`${doc.path}/revisions/${revisionId}/export?format=csv`).expect(200)).text.trim().split('\n');
  const revert = async (
    user: TestUser,
    doc: DocHandle,
    revisionId: string,
  ): Promise<{ skipped: { type: string; reason: string }[] }> =>
    (await request(t.http).post(`${doc.path}/revisions/${revisionId}/revert`).set(bearer(user)).expect(200))
      .body.payload;

  describe('in the same document', () => {
    let doc: DocHandle;
    let createdA: string;
    let deleted: string;

    beforeAll(async () => {
      doc = await createDocument(t.http, owner, {
        docType: 'tasks',
        fields: [
          { id: 'name', name: 'Name', type: 'text' },
          { id: 'n', name: 'N', type: 'number' },
          { id: 'rel', name: 'Rel', type: 'relation' },
          { id: 'lk', name: 'Lk', type: 'lookup', lookup: { relationFieldId: 'rel', targetFieldId: 'n' } },
          {
            id: 'ru',
            name: 'Ru',
            type: 'rollup',
            rollup: { relationFieldId: 'rel', targetFieldId: 'n', agg: 'sum' },
          },
        ],
      });
      await createRow(t.http, owner, doc, { id: 'B', values: { name: 'b', n: 10 } });
      await createRow(t.http, owner, doc, { id: 'C', values: { name: 'c', n: 1 } });
      const a = await request(t.http)
        .post(`${doc.path}/data`)
        .set(bearer(owner))
        .send({ id: 'A', values: { name: 'a', rel: [{ rowId: 'B' }, { rowId: 'C' }] } })
        .expect(201);
      createdA = a.body.payload.request.revisionId;
      expect(valueOf(a.body.payload, 'ru')).toEqual({ number: 11 });
      const res = await request(t.http).delete(`${doc.path}/data/B`).set(bearer(editor)).expect(200);
      deleted = res.body.payload.request.revisionId;
    });

    it("records the referencing row's change as a row-update of the deleting revision", async () => {
      const a = await row(doc, 'A');
      expect(a.version).toBe(2);
      expect(refIds(valueOf(a, 'rel'))).toEqual(['C']);
      const ops = await operations(doc, deleted);
      expect(ops.map((op) => [op.type, op.target.rowId])).toEqual([
        ['row-delete', 'B'],
        ['relation-delete', 'B'],
        ['row-update', 'A'],
      ]);
      const update = ops[2] as Operation;
      expect(update.oldValue).toEqual({
        values: [{ fieldId: 'rel', value: { relation: [{ rowId: 'B' }, { rowId: 'C' }] } }],
        version: 1,
      });
      expect(update.newValue).toEqual({
        values: [{ fieldId: 'rel', value: { relation: [{ rowId: 'C' }] } }],
        version: 2,
      });
      expect(update.note).toBe('reference to a deleted row removed');
      const revision = (await revisions(doc)).find((item) => item.id === deleted) as Revision;
      expect(revision.stats).toMatchObject({ rowsDeleted: 1, rowsUpdated: 1 });
    });

    it("shows the change in the row's history", async () => {
      const items = await history(doc, 'A');
      expect(items.map((item) => [item.type, item.revisionId === deleted])).toEqual([
        ['row-update', true],
        ['relation-create', false],
        ['relation-create', false],
        ['row-create', false],
      ]);
    });

    it('exports an older revision with the references as they were', async () => {
      const lines = await csv(doc, createdA);
      expect(lines[0]).toBe('id,name,n,rel,lk,ru');
      const a = lines.find((line) => line.startsWith('A,')) as string;
      expect(a).toContain('""rowId"":""B""');
      expect(a).toContain('""rowId"":""C""');
    });

    it('reverting the deletion gives the references back, with their edges and lookups', async () => {
      const result = await revert(owner, doc, deleted);
      expect(result.skipped).toEqual([]);
      const a = await row(doc, 'A');
      expect(refIds(valueOf(a, 'rel'))).toEqual(['B', 'C']);
      expect(valueOf(a, 'lk')).toEqual({ list: [10, 1] });
      expect(valueOf(a, 'ru')).toEqual({ number: 11 });
      const edges = (await get(`${doc.path}/relations?rowId=A&type=rel`).expect(200)).body.payload.items as {
        target: { rowId: string };
      }[];
      expect(edges.map((edge) => edge.target.rowId).sort()).toEqual(['B', 'C']);
    });
  });

  describe('across documents', () => {
    let products: DocHandle;
    let orders: DocHandle;
    let ordersBefore: string;
    let ordersSettings: string;
    let deleted: string;
    const item = (rowId: string): Ref => ({ docType: 'products', docId: products.docId, rowId });

    beforeAll(async () => {
      products = await createDocument(t.http, owner, {
        docType: 'products',
        fields: [
          { id: 'name', name: 'Name', type: 'text' },
          { id: 'price', name: 'Price', type: 'number' },
        ],
      });
      // Approval is required for writes to orders: the follow-up is merged all the same.
      orders = await createDocument(t.http, owner, {
        docType: 'orders',
        fields: [
          { id: 'title', name: 'Title', type: 'text' },
          { id: 'items', name: 'Items', type: 'relation', required: true },
          {
            id: 'prices',
            name: 'Prices',
            type: 'lookup',
            lookup: { relationFieldId: 'items', targetFieldId: 'price' },
          },
          {
            id: 'total',
            name: 'Total',
            type: 'rollup',
            rollup: { relationFieldId: 'items', targetFieldId: 'price', agg: 'sum' },
          },
        ],
      });
      for (const [id, price] of [
        ['p1', 10],
        ['p2', 5],
      ] as const) {
        await createRow(t.http, owner, products, { id, values: { name: id, price } });
      }
      await createRow(t.http, owner, orders, {
        id: 'o1',
        values: { title: 'one', items: [item('p1'), item('p2')] },
      });
      const o2 = await request(t.http)
        .post(`${orders.path}/data`)
        .set(bearer(owner))
        .send({ id: 'o2', values: { title: 'two', items: [item('p2')] } })
        .expect(201);
      ordersBefore = o2.body.payload.request.revisionId;
      const settings = await request(t.http)
        .put(`${orders.path}/settings`)
        .set(bearer(owner))
        .send({ workflow: { requiresApproval: true } })
        .expect(200);
      ordersSettings = settings.body.payload.request.revisionId;
      const res = await request(t.http).delete(`${products.path}/data/p2`).set(bearer(editor)).expect(200);
      deleted = res.body.payload.request.revisionId;
    });

    it('records the change in a revision of the referencing document, authored by the deleter', async () => {
      const deleting = (await revisions(products)).find((item) => item.id === deleted) as Revision;
      const [latest] = await revisions(orders);
      expect(latest).toMatchObject({
        title: `References to rows deleted by products/${products.docId} revision ${deleting.version}`,
        mergedBy: editor.id,
      });
      expect(latest?.stats).toMatchObject({ rowsUpdated: 2, rowsDeleted: 0 });
      const ops = await operations(orders, latest?.id as string);
      expect(ops.map((op) => [op.type, op.target.rowId])).toEqual([
        ['row-update', 'o1'],
        ['row-update', 'o2'],
      ]);
      expect(ops[0]?.oldValue).toEqual({
        values: [{ fieldId: 'items', value: { relation: [item('p1'), item('p2')] } }],
        version: 1,
      });
      expect(ops[0]?.newValue).toEqual({
        values: [{ fieldId: 'items', value: { relation: [item('p1')] } }],
        version: 2,
      });
      expect(ops[1]?.oldValue).toEqual({
        values: [{ fieldId: 'items', value: { relation: [item('p2')] } }],
        version: 1,
      });
      expect(ops[1]?.newValue).toMatchObject({ version: 2 });
      const o1 = await row(orders, 'o1');
      expect(o1.version).toBe(2);
      expect(refIds(valueOf(o1, 'items'))).toEqual(['p1']);
      expect(valueOf(o1, 'total')).toEqual({ number: 10 });
      expect((await history(orders, 'o1')).map((entry) => entry.type)).toEqual([
        'row-update',
        'relation-create',
        'relation-create',
        'row-create',
      ]);
      // The deleting revision holds the edges' removal only.
      expect((await operations(products, deleted)).map((op) => op.type)).toEqual([
        'row-delete',
        'relation-delete',
        'relation-delete',
      ]);
    });

    it("announces the referencing rows' change once, as committed: no lookup-only event of a state never committed", async () => {
      type Event = { id: string; event: string; payload: Record<string, unknown> };
      const all: Event[] = (await get(`/realtime/doc/orders/${orders.docId}/events?pageSize=100`).expect(200)).body
        .payload.items;
      const settingsEvent = all.find(
        (item) => item.event === 'revision_created' && item.payload.revisionId === ordersSettings,
      ) as Event;
      // Oldest first, after the settings change: the follow-up revision's events, nothing else.
      const after = all.filter((item) => BigInt(item.id) > BigInt(settingsEvent.id)).reverse();
      expect(after.map((item) => item.event)).toEqual([
        'request_created',
        'request_merged',
        'data_bulk_operation',
        'revision_created',
      ]);
      const bulk = after[2]?.payload as { rows: { rowId: string; version: number; values: { fieldId: string; value: unknown }[] }[] };
      expect(bulk.rows.map((entry) => [entry.rowId, entry.version])).toEqual([
        ['o1', 2],
        ['o2', 2],
      ]);
      expect(bulk.rows[0]?.values).toEqual(
        expect.arrayContaining([
          { fieldId: 'items', value: { relation: [item('p1')] } },
          { fieldId: 'total', value: { number: 10 } },
        ]),
      );
    });

    it('exports the referencing document as it stood, references included', async () => {
      const lines = await csv(orders, ordersBefore);
      const o1 = lines.find((line) => line.startsWith('o1,')) as string;
      expect(o1).toContain('""rowId"":""p1""');
      expect(o1).toContain('""rowId"":""p2""');
      expect(lines.find((line) => line.startsWith('o2,'))).toContain('""rowId"":""p2""');
    });

    it("reverting the deletion lists the other document's references as skipped; reverting that document's revision restores them", async () => {
      const result = await revert(owner, products, deleted);
      expect(result.skipped).toHaveLength(2);
      expect(
        result.skipped.every(
          (entry) => entry.type === 'relation-delete' && entry.reason.includes(`orders/${orders.docId}`),
        ),
      ).toBe(true);
      await get(`${products.path}/data/p2`).expect(200);
      expect(refIds(valueOf(await row(orders, 'o1'), 'items'))).toEqual(['p1']);

      const followUp = (await revisions(orders)).find((item) =>
        item.title?.startsWith('References to rows deleted'),
      ) as Revision;
      // Without approval again (a settings write would itself wait for one), so the revert merges at once.
      await t.dataSource.query(
        `UPDATE documents SET settings = jsonb_set(settings, '{workflow,requiresApproval}', 'false') WHERE doc_type = 'orders' AND doc_id = $1`,
        [orders.docId],
      );
      const back = await revert(owner, orders, followUp.id);
      expect(back.skipped).toEqual([]);
      const o1 = await row(orders, 'o1');
      expect(refIds(valueOf(o1, 'items'))).toEqual(['p1', 'p2']);
      expect(valueOf(o1, 'prices')).toEqual({ list: [10, 5] });
      expect(refIds(valueOf(await row(orders, 'o2'), 'items'))).toEqual(['p2']);
    });
  });

  it('concurrent deletions of rows one row of another document names each record their change (writes run alone)', async () => {
    // Neither document has lookups: single-row writes of `parts` may commit in groups (WriteBatcher).
    const parts = await createDocument(t.http, owner, {
      docType: 'parts',
      fields: [{ id: 'name', name: 'Name', type: 'text' }],
    });
    const kits = await createDocument(t.http, owner, {
      docType: 'kits',
      fields: [{ id: 'parts', name: 'Parts', type: 'relation' }],
    });
    const ids = Array.from({ length: 24 }, (_, i) => `q${i}`);
    for (const id of ids) {
      await createRow(t.http, owner, parts, { id, values: { name: id } });
    }
    await createRow(t.http, owner, kits, {
      id: 'k1',
      values: { parts: ids.map((rowId) => ({ docType: 'parts', docId: parts.docId, rowId })) },
    });
    await Promise.all(
      ids.map((id) => request(t.http).delete(`${parts.path}/data/${id}`).set(bearer(owner)).expect(200)),
    );
    const k1 = await row(kits, 'k1');
    expect(valueOf(k1, 'parts')).toBeUndefined();
    expect(k1.version).toBe(ids.length + 1);
    expect((await history(kits, 'k1')).filter((entry) => entry.type === 'row-update')).toHaveLength(
      ids.length,
    );
    expect((await get(`${kits.path}/relations?rowId=k1`).expect(200)).body.payload.items).toEqual([]);
  });

  describe('csv export', () => {
    it('writes text cells a spreadsheet would run as formulas with a leading quote, numbers as they are', async () => {
      const doc = await createDocument(t.http, owner, {
        docType: 'sheets',
        fields: [
          { id: 't', name: 'T', type: 'text' },
          { id: 'n', name: 'N', type: 'number' },
        ],
      });
      const values = ['=1+1,"quoted"', '+1', '-x', '@SUM(A1)', '\tx', '\rx', 'plain', '1-2'];
      let revisionId = '';
      for (const [index, text] of values.entries()) {
        const res = await request(t.http)
          .post(`${doc.path}/data`)
          .set(bearer(owner))
          .send({ id: `r${index}`, values: { t: text, n: -5 - index } })
          .expect(201);
        revisionId = res.body.payload.request.revisionId;
      }
      const text = (await get(`${doc.path}/revisions/${revisionId}/export?format=csv`).expect(200)).text;
      expect(text.split('\n').slice(0, 3)).toEqual(['id,t,n', `r0,"'=1+1,""quoted""",-5`, "r1,'+1,-6"]);
      expect(text).toContain("r2,'-x,-7\n");
      expect(text).toContain("r3,'@SUM(A1),-8\n");
      expect(text).toContain("r4,'\tx,-9\n");
      // A carriage return inside a cell is quoted (RFC 4180), or readers end the record there.
      expect(text).toContain(`r5,"'\rx",-10\n`);
      expect(text).toContain('r6,plain,-11\n');
      expect(text).toContain('r7,1-2,-12\n');
      // The json export keeps the values as they are.
      const json = JSON.parse((await get(`${doc.path}/revisions/${revisionId}/export`).expect(200)).text) as {
        rows: { id: string; values: { fieldId: string; value: unknown }[] }[];
      };
      expect(json.rows[0]?.values).toEqual([
        { fieldId: 't', value: { text: '=1+1,"quoted"' } },
        { fieldId: 'n', value: { number: -5 } },
      ]);
    });

    it('quotes every text cell holding a carriage return, so a reader does not end the record there (RFC 4180)', async () => {
      const doc = await createDocument(t.http, owner, {
        docType: 'sheets',
        fields: [
          { id: 't', name: 'T', type: 'text' },
          { id: 'n', name: 'N', type: 'number' },
        ],
      });
      const values = ['a\rb', 'line\r\nbreak', 'end\r'];
      let revisionId = '';
      for (const [index, text] of values.entries()) {
        const res = await request(t.http)
          .post(`${doc.path}/data`)
          .set(bearer(owner))
          .send({ id: `r${index}`, values: { t: text, n: index } })
          .expect(201);
        revisionId = res.body.payload.request.revisionId;
      }
      const text = (await get(`${doc.path}/revisions/${revisionId}/export?format=csv`).expect(200)).text;
      expect(text).toBe(['id,t,n', 'r0,"a\rb",0', 'r1,"line\r\nbreak",1', 'r2,"end\r",2', ''].join('\n'));
    });
  });

  describe('field order of an older revision', () => {
    it('lists fields in the order of that revision, whatever was deleted, re-created or moved since', async () => {
      const doc = await createDocument(t.http, owner, {
        docType: 'ordered',
        fields: [
          { id: 'x', name: 'X', type: 'number' },
          { id: 'y', name: 'Y', type: 'text' },
          { id: 'f', name: 'F', type: 'formula', formula: '{y} & "!"' },
        ],
      });
      await createRow(t.http, owner, doc, { id: 'r1', values: { x: 5, y: 'a' } });
      const then = (
        await request(t.http)
          .post(`${doc.path}/data`)
          .set(bearer(owner))
          .send({ id: 'r2', values: { x: 6, y: 'b' } })
          .expect(201)
      ).body.payload.request.revisionId as string;
      const metadata = async (): Promise<{ fields: Record<string, unknown>[]; properties: unknown[] }> =>
        (await get(`${doc.path}/metadata`).expect(200)).body.payload;
      const put = async (fields: Record<string, unknown>[]): Promise<void> => {
        await request(t.http)
          .put(`${doc.path}/metadata`)
          .set(bearer(owner))
          .send({ fields, properties: [] })
          .expect(200);
      };
      await put((await metadata()).fields.filter((field) => field.id !== 'x'));
      await put([...(await metadata()).fields, { id: 'x', name: 'X2', type: 'text' }]);
      // A retype and a move in one change: no reorder operation is recorded for it.
      const current = (await metadata()).fields;
      await put([current[1], { ...current[0], type: 'long_text' }, current[2]] as Record<string, unknown>[]);
      expect((await metadata()).fields.map((field) => field.id)).toEqual(['f', 'y', 'x']);

      const lines = await csv(doc, then);
      expect(lines).toEqual(['id,x,y,f', 'r1,5,a,a!', 'r2,6,b,b!']);
      const json = JSON.parse((await get(`${doc.path}/revisions/${then}/export`).expect(200)).text) as {
        metadata: { fields: { id: string }[] };
      };
      expect(json.metadata.fields.map((field) => field.id)).toEqual(['x', 'y', 'f']);
      const res = await get(`${doc.path}/revisions/${then}/export?format=xlsx`)
        .buffer(true)
        .parse(binary)
        .expect(200);
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(res.body as Parameters<typeof workbook.xlsx.load>[0]);
      const header = (workbook.getWorksheet('rows')?.getRow(1).values as unknown[]).slice(1);
      expect(header).toEqual(['id', 'x', 'y', 'f']);
    });
  });
});
