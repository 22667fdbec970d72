import http from 'node:http';
import type { AddressInfo } from 'node:net';
import ExcelJS from 'exceljs';
import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { addToWorkspace, bearer, createDocument, type DocHandle, newUser, scopedToken } from './documents.fixtures.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'qty', name: 'Quantity', type: 'number' },
  { id: 'note', name: 'Note', type: 'text' },
];
const PROPERTIES = [{ id: 'region', name: 'Region', type: 'text' }];

type Entry = { fieldId: string; value: Record<string, unknown> };
type ExportedRow = { type: string; id: string; values: Entry[] };

function cells(row: ExportedRow): Record<string, unknown> {
  return Object.fromEntries(row.values.map((entry) => [entry.fieldId, Object.values(entry.value)[0]]));
}

function binary(res: unknown, callback: (error: Error | null, body: Buffer) => void): void {
  const stream = res as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
}

describe('documents: point-in-time export', () => {
  let t: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  let doc: DocHandle;
  let asOf: string;
  let first: string;
  let latest: string;
  let deleteB: string;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    stranger = await newUser(t.http);
    doc = await createDocument(t.http, owner, { fields: FIELDS, properties: PROPERTIES });
    const revisions = await request(t.http).get(`${doc.path}/revisions`).set(bearer(owner)).expect(200);
    first = revisions.body.payload.items[0].id;
    await write('post', '/data', { id: 'a', values: { name: 'A', qty: 1, note: 'x' } });
    await write('post', '/data', { id: 'b', values: { name: 'B', qty: 2 } });
    asOf = await write('post', '/properties', { properties: { region: 'eu' } });
    // After the exported revision: every later change must be undone by the export.
    await write('put', '/data/a', { values: { qty: 5 }, version: 1 });
    deleteB = await write('delete', '/data/b', undefined);
    await write('post', '/data', { id: 'c', values: { name: 'C', qty: 3 } });
    await write('patch', '/properties?version=1', { properties: { region: 'us' } });
    await write('put', '/metadata', { fields: FIELDS.filter((field) => field.id !== 'note'), properties: PROPERTIES });
    latest = await write('put', '/data/a', { values: { name: 'A2' }, version: 2 });
  });
  afterAll(async () => {
    await t.close();
  });

  async function write(method: 'post' | 'put' | 'delete' | 'patch', path: string, body: unknown): Promise<string> {
    const res = await request(t.http)[method](`${doc.path}${path}`).set(bearer(owner)).send(body as object);
    if (res.status >= 300) {
      throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body.payload.request.revisionId as string;
  }

  async function exportJson(revisionId: string): Promise<{ metadata: { fields: { id: string }[] }; properties: Entry[]; rows: ExportedRow[]; version: number }> {
    const res = await request(t.http).get(`${doc.path}/revisions/${revisionId}/export`).set(bearer(owner)).expect(200);
    expect(res.headers['content-type']).toContain('application/json');
    return JSON.parse(res.text);
  }

  it('exports the document as it stood at an old revision (json): rows, metadata and properties of that time', async () => {
    const past = await exportJson(asOf);
    expect(past.metadata.fields.map((field) => field.id)).toEqual(['name', 'qty', 'note']);
    expect(past.properties).toEqual([{ fieldId: 'region', value: { text: 'eu' } }]);
    expect(past.rows.map((row) => [row.id, cells(row)])).toEqual([
      ['a', { name: 'A', qty: 1, note: 'x' }],
      ['b', { name: 'B', qty: 2 }],
    ]);
    const now = await exportJson(latest);
    expect(now.metadata.fields.map((field) => field.id)).toEqual(['name', 'qty']);
    expect(now.properties).toEqual([{ fieldId: 'region', value: { text: 'us' } }]);
    expect(now.rows.map((row) => [row.id, cells(row)])).toEqual([
      ['a', { name: 'A2', qty: 5 }],
      ['c', { name: 'C', qty: 3 }],
    ]);
    const empty = await exportJson(first);
    expect(empty.rows).toEqual([]);
  });

  it('works formulas out from the values of that time (their stored values are the current ones)', async () => {
    const priced = await createDocument(t.http, owner, {
      fields: [
        { id: 'price', name: 'Price', type: 'number' },
        { id: 'qty', name: 'Quantity', type: 'number' },
        { id: 'total', name: 'Total', type: 'formula', formula: 'price * qty' },
      ],
    });
    const created = await request(t.http).post(`${priced.path}/data`).set(bearer(owner)).send({ id: 'r1', values: { price: 2.5, qty: 4 } }).expect(201);
    const then: string = created.body.payload.request.revisionId;
    await request(t.http).put(`${priced.path}/data/r1`).set(bearer(owner)).send({ values: { price: 3 } }).expect(200);
    const past = await request(t.http).get(`${priced.path}/revisions/${then}/export`).set(bearer(owner)).expect(200);
    expect(JSON.parse(past.text).rows.map((row: ExportedRow) => cells(row))).toEqual([{ price: 2.5, qty: 4, total: 10 }]);
    const csv = await request(t.http).get(`${priced.path}/revisions/${then}/export?format=csv`).set(bearer(owner)).expect(200);
    expect(csv.text.trim().split('\n')).toEqual(['id,price,qty,total', 'r1,2.5,4,10']);
  });

  it('shows row columns (created/updated time and by) and property formulas as they stood at the revision', async () => {
    const editor = await newUser(t.http);
    await addToWorkspace(t.dataSource, owner, editor, 'editor');
    const sys = await createDocument(t.http, owner, {
      docType: 'sys-export',
      fields: [
        { id: 'qty', name: 'Qty', type: 'number' },
        { id: 'ct', name: 'Created', type: 'created_time' },
        { id: 'cb', name: 'Created by', type: 'created_by' },
        { id: 'ut', name: 'Updated', type: 'updated_time' },
        { id: 'ub', name: 'Updated by', type: 'updated_by' },
        { id: 'stamp', name: 'Stamp', type: 'formula', formula: 'CONCAT({ub}, "@", {qty})' },
      ],
      properties: [{ id: 'total', name: 'Total', type: 'formula', formula: 'SUM({qty})' }],
    });
    await request(t.http).post(`${sys.path}/data`).set(bearer(owner)).send({ id: 'r1', values: { qty: 1 } }).expect(201);
    const edited = await request(t.http).put(`${sys.path}/data/r1`).set(bearer(editor)).send({ values: { qty: 2 } }).expect(200);
    const then: string = edited.body.payload.request.revisionId;
    const live = (await request(t.http).get(`${sys.path}/data/r1`).set(bearer(owner)).expect(200)).body.payload;
    const liveProps = (await request(t.http).get(`${sys.path}/properties`).set(bearer(owner)).expect(200)).body.payload.properties;
    expect(liveProps).toEqual([{ fieldId: 'total', value: { number: 2 } }]);
    // Later: another writer changes r1, a row is created and deleted.
    await request(t.http).put(`${sys.path}/data/r1`).set(bearer(owner)).send({ values: { qty: 3 } }).expect(200);
    const r2 = await request(t.http).post(`${sys.path}/data`).set(bearer(editor)).send({ id: 'r2', values: { qty: 10 } }).expect(201);
    const r2Live = (await request(t.http).get(`${sys.path}/data/r2`).set(bearer(owner)).expect(200)).body.payload;
    await request(t.http).delete(`${sys.path}/data/r2`).set(bearer(owner)).expect(200);

    const past = JSON.parse((await request(t.http).get(`${sys.path}/revisions/${then}/export`).set(bearer(owner)).expect(200)).text);
    expect(past.properties).toEqual(liveProps);
    expect(past.rows).toEqual([{ type: 'row', id: 'r1', values: live.values }]);
    expect(cells(past.rows[0])).toMatchObject({ ct: live.createdAt, ut: live.updatedAt, cb: { id: owner.id }, ub: { id: editor.id }, stamp: `${editor.id}@2` });
    const csv = await request(t.http).get(`${sys.path}/revisions/${then}/export?format=csv`).set(bearer(owner)).expect(200);
    expect(csv.text.trim().split('\n')).toEqual(['id,qty,ct,cb,ut,ub,stamp', `r1,2,${live.createdAt},${owner.id},${live.updatedAt},${editor.id},${editor.id}@2`]);
    // A row deleted since: its columns come from its history.
    const restored = JSON.parse((await request(t.http).get(`${sys.path}/revisions/${r2.body.payload.request.revisionId}/export`).set(bearer(owner)).expect(200)).text);
    expect(restored.properties).toEqual([{ fieldId: 'total', value: { number: 13 } }]);
    expect(restored.rows.find((row: ExportedRow) => row.id === 'r2')).toEqual({ type: 'row', id: 'r2', values: r2Live.values });
  });

  it('differs from the current document exactly as the later revisions say (the diff from that revision)', async () => {
    const past = await exportJson(asOf);
    const now = await exportJson(latest);
    const diff = (await request(t.http).get(`${doc.path}/revisions/${latest}/diff?base=${asOf}&pageSize=100`).set(bearer(owner)).expect(200)).body.payload;
    const pastIds = new Set(past.rows.map((row) => row.id));
    const nowIds = new Set(now.rows.map((row) => row.id));
    expect(diff.addedRows.map((row: { id: string }) => row.id)).toEqual([...nowIds].filter((id) => !pastIds.has(id)));
    expect(diff.deletedRows.map((row: { id: string }) => row.id)).toEqual([...pastIds].filter((id) => !nowIds.has(id)));
    expect(diff.fields.deleted).toEqual(['note']);
    for (const cell of diff.updatedCells as { rowId: string; fieldId: string; oldValue: unknown; newValue: unknown }[]) {
      const before = past.rows.find((row) => row.id === cell.rowId)?.values.find((entry) => entry.fieldId === cell.fieldId)?.value ?? null;
      const after = now.rows.find((row) => row.id === cell.rowId)?.values.find((entry) => entry.fieldId === cell.fieldId)?.value ?? null;
      expect([before, after]).toEqual([cell.oldValue, cell.newValue]);
    }
    expect(diff.updatedCells).toHaveLength(2);
  });

  it('streams ndjson and csv with a Content-Disposition filename', async () => {
    const nd = await request(t.http).get(`${doc.path}/revisions/${asOf}/export?format=ndjson`).set(bearer(owner)).expect(200);
    expect(nd.headers['content-type']).toContain('application/x-ndjson');
    const lines = nd.text.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ type: 'document', revisionId: asOf, metadata: { fields: expect.any(Array) } });
    expect(lines.slice(1).map((line: ExportedRow) => [line.type, line.id])).toEqual([
      ['row', 'a'],
      ['row', 'b'],
    ]);

    const csv = await request(t.http).get(`${doc.path}/revisions/${asOf}/export?format=csv`).set(bearer(owner)).expect(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.headers['content-disposition']).toMatch(new RegExp(`attachment; filename="products-${doc.docId}-v\\d+\\.csv"`));
    expect(csv.text.trim().split('\n')).toEqual(['id,name,qty,note', 'a,A,1,x', 'b,B,2,']);
  });

  it('streams xlsx readable by a spreadsheet reader', async () => {
    const res = await request(t.http).get(`${doc.path}/revisions/${asOf}/export?format=xlsx`).set(bearer(owner)).buffer(true).parse(binary).expect(200);
    expect(res.headers['content-disposition']).toContain('.xlsx"');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.body as Parameters<typeof workbook.xlsx.load>[0]);
    const sheet = workbook.getWorksheet('rows');
    const values: unknown[][] = [];
    sheet?.eachRow((row) => values.push((row.values as unknown[]).slice(1)));
    expect(values).toEqual([
      ['id', 'name', 'qty', 'note'],
      ['a', 'A', 1, 'x'],
      ['b', 'B', 2],
    ]);
  });

  it('cuts xlsx text cells at 32,767 characters, the most a spreadsheet cell holds (csv and json carry them whole)', async () => {
    const long = await createDocument(t.http, owner, { fields: [{ id: 'body', name: 'Body', type: 'long_text' }] });
    // An emoji (two UTF-16 units) across the limit is not split in half.
    const text = `${'a'.repeat(32766)}😀${'b'.repeat(5000)}`;
    const created = await request(t.http).post(`${long.path}/data`).set(bearer(owner)).send({ id: 'r1', values: { body: text } }).expect(201);
    const revisionId = created.body.payload.request.revisionId as string;
    const res = await request(t.http).get(`${long.path}/revisions/${revisionId}/export?format=xlsx`).set(bearer(owner)).buffer(true).parse(binary).expect(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.body as Parameters<typeof workbook.xlsx.load>[0]);
    const cell = workbook.getWorksheet('rows')?.getRow(2).getCell(2).value;
    // Compared as booleans: a failure would print 37,000 characters.
    expect(typeof cell === 'string' ? cell.length : cell).toBe(32766);
    expect(cell === 'a'.repeat(32766)).toBe(true);
    const csv = await request(t.http).get(`${long.path}/revisions/${revisionId}/export?format=csv`).set(bearer(owner)).expect(200);
    expect(csv.text === `id,body\nr1,${text}\n`).toBe(true);
  });

  it('exports a revision\'s operations with what=changes', async () => {
    const res = await request(t.http).get(`${doc.path}/revisions/${deleteB}/export?what=changes&format=csv`).set(bearer(owner)).expect(200);
    expect(res.headers['content-disposition']).toContain('-changes.csv"');
    const [header, ...rows] = res.text.trim().split('\n');
    expect(header).toBe('ordinal,type,kind,rowId,fieldId,oldValue,newValue,operator,timestamp,note');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(/^1,row-delete,row,b,/);
    const json = await request(t.http).get(`${doc.path}/revisions/${deleteB}/export?what=changes`).set(bearer(owner)).expect(200);
    expect(JSON.parse(json.text)).toMatchObject({ kind: 'changes', changes: [{ ordinal: 1, type: 'row-delete', target: { kind: 'row', rowId: 'b' } }] });
    const nd = await request(t.http).get(`${doc.path}/revisions/${deleteB}/export?what=changes&format=ndjson`).set(bearer(owner)).expect(200);
    expect(nd.text.trim().split('\n').map((line) => JSON.parse(line).type)).toEqual(['document', 'row-delete']);
    const xlsx = await request(t.http).get(`${doc.path}/revisions/${deleteB}/export?what=changes&format=xlsx`).set(bearer(owner)).buffer(true).parse(binary).expect(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.body as Parameters<typeof workbook.xlsx.load>[0]);
    expect(workbook.getWorksheet('changes')?.getRow(2).getCell(2).value).toBe('row-delete');
  });

  it('releases its transaction and connection when the client goes away before a write (it used to wait for ever)', async () => {
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const idleInTransaction = async (): Promise<number> =>
      Number(
        (await t.dataSource.query<{ n: string }[]>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'`))[0]?.n,
      );
    // The client drops the request a few milliseconds after sending it: while the export reads the revision and
    // the metadata, before its first byte (a response already closed emits no 'close' or 'drain' any more). Fewer
    // attempts than the pool has connections, so that a leak shows as a count rather than a hang.
    for (const format of ['csv', 'ndjson', 'json', 'xlsx']) {
      for (const delay of [5, 15]) {
        await new Promise<void>((resolve) => {
          const req = http.get({ host: '127.0.0.1', port, path: `${doc.path}/revisions/${asOf}/export?format=${format}`, headers: bearer(owner) }, (res) => {
            res.resume();
            res.on('close', () => resolve());
          });
          req.on('error', () => resolve());
          req.on('close', () => resolve());
          setTimeout(() => req.destroy(), delay);
        });
      }
    }
    let left = await idleInTransaction();
    for (let waited = 0; left > 0 && waited < 5000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      left = await idleInTransaction();
    }
    expect(left).toBe(0);
    // The pool is whole: the service still answers.
    await request(t.http).get(`${doc.path}/revisions/${asOf}/export?format=csv`).set(bearer(owner)).expect(200);
  });

  it('refuses bad formats and unknown revisions with an envelope, and hides exports from other tenants', async () => {
    const bad = await request(t.http).get(`${doc.path}/revisions/${asOf}/export?format=pdf`).set(bearer(owner)).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    const badWhat = await request(t.http).get(`${doc.path}/revisions/${asOf}/export?what=all`).set(bearer(owner)).expect(400);
    expect(badWhat.body.code).toBe('VALIDATION_ERROR');
    const unknown = await request(t.http).get(`${doc.path}/revisions/00000000-0000-4000-8000-000000000000/export`).set(bearer(owner)).expect(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    const hidden = await request(t.http).get(`${doc.path}/revisions/${asOf}/export?format=csv`).set(bearer(stranger)).expect(404);
    expect(hidden.text).not.toContain('a,A');
  });

  it('needs data:read besides doc:read: the export carries row values', async () => {
    const docOnly = await scopedToken(t, owner, ['doc:read']);
    const refused = await request(t.http).get(`${doc.path}/revisions/${asOf}/export?format=csv`).set(bearer(docOnly)).expect(403);
    expect(refused.body).toMatchObject({ code: 'FORBIDDEN' });
    expect(refused.text).not.toContain('a,A');
    const both = await scopedToken(t, owner, ['doc:read', 'data:read']);
    const csv = await request(t.http).get(`${doc.path}/revisions/${asOf}/export?format=csv`).set(bearer(both)).expect(200);
    expect(csv.text).toContain('a,A,1,x');
  });
});
