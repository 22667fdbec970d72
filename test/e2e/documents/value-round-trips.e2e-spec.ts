import ExcelJS from 'exceljs';
import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { API, bearer, createDocument, type DocHandle, newUser } from './documents.fixtures.js';

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'att', name: 'Files', type: 'attachment' },
  { id: 'rel', name: 'Linked', type: 'relation' },
];

type Entry = { fieldId: string; value: Record<string, unknown> };
type Row = { id: string; version: number; values: Entry[] };
type Operation = { type: string; oldValue: { values: Entry[] } | null; newValue: { values: Entry[] } | null };

function binary(res: unknown, callback: (error: Error | null, body: Buffer) => void): void {
  const stream = res as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => callback(null, Buffer.concat(chunks)));
}

/** What a spreadsheet shows of an xlsx text (ECMA-376 ST_Xstring: `_xHHHH_` is the character U+HHHH). */
function spreadsheetText(xml: string): string {
  return xml.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** One value read back through every channel must stay the value written (docs/values.md, "Shapes"). */
describe('documents: values read back and written again', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, { fields: FIELDS, properties: [{ id: 'cover', name: 'Cover', type: 'attachment' }] });
    await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'target', values: { name: 'T' } }).expect(201);
  });
  afterAll(async () => {
    await t.close();
  });

  async function row(id: string): Promise<Row> {
    return (await request(t.http).get(`${doc.path}/data/${id}`).set(bearer(owner)).expect(200)).body.payload;
  }

  it('records no change of an attachment or relation value written back as it was read', async () => {
    await request(t.http)
      .post(`${doc.path}/data`)
      .set(bearer(owner))
      .send({
        id: 'a',
        values: {
          name: 'A',
          att: [{ name: 'spec.pdf', url: 'https://files.test/spec.pdf', mimeType: 'application/pdf', size: 10 }],
          rel: [{ docType: doc.docType, docId: doc.docId, rowId: 'target' }],
        },
      })
      .expect(201);
    const read = await row('a');
    const again = read.values.filter((entry) => entry.fieldId === 'att' || entry.fieldId === 'rel');
    expect(again).toHaveLength(2);
    const put = await request(t.http).put(`${doc.path}/data/a`).set(bearer(owner)).send({ values: again, version: read.version }).expect(200);
    expect(put.body.payload.values).toEqual(read.values);

    // The cell histories of both fields hold the create (and the relation's edge) alone: the same value is no change.
    for (const fieldId of ['att', 'rel']) {
      const history = await request(t.http).get(`${doc.path}/revisions/history?targetKind=row&rowId=a&fieldId=${fieldId}`).set(bearer(owner)).expect(200);
      const types = history.body.payload.items.map((item: Operation) => item.type);
      expect({ fieldId, types }).toEqual({ fieldId, types: expect.not.arrayContaining(['row-update']) });
      expect(types).toContain('row-create');
    }
    const revisionId = put.body.payload.request.revisionId as string;
    const ops = await request(t.http).get(`${API}/doc/${doc.docType}/${doc.docId}/revisions/${revisionId}/operations`).set(bearer(owner)).expect(200);
    const update = (ops.body.payload.items ?? ops.body.payload).find((op: Operation) => op.type === 'row-update') as Operation;
    expect(update.oldValue?.values).toEqual([]);
    expect(update.newValue?.values).toEqual([]);
  });

  it('records no property change for an attachment property written back as it was read', async () => {
    await request(t.http)
      .post(`${doc.path}/properties`)
      .set(bearer(owner))
      .send({ properties: { cover: [{ name: 'cover.jpg', url: 'https://files.test/cover.jpg', mimeType: 'image/jpeg' }] } })
      .expect(201);
    const read = (await request(t.http).get(`${doc.path}/properties`).set(bearer(owner)).expect(200)).body.payload;
    await request(t.http).patch(`${doc.path}/properties`).set(bearer(owner)).send({ properties: read.properties }).expect(200);
    const history = await request(t.http).get(`${doc.path}/properties/history`).set(bearer(owner)).expect(200);
    const updates = (history.body.payload.items as { type: string; target: { fieldId?: string } }[]).filter((item) => item.type.startsWith('property-'));
    // The POST alone: the PATCH with the same value changed nothing.
    expect(updates.map((item) => `${item.type}:${item.target.fieldId ?? ''}`)).toEqual(['property-update:cover']);
  });

  it('writes a field id that reads as an xlsx escape in the header as itself', async () => {
    const escaped = await createDocument(t.http, owner, { fields: [{ id: '_x0041_', name: 'Escaped', type: 'text' }] });
    const created = await request(t.http).post(`${escaped.path}/data`).set(bearer(owner)).send({ id: 'h1', values: { _x0041_: 'v' } }).expect(201);
    const revisionId = created.body.payload.request.revisionId as string;
    const res = await request(t.http).get(`${escaped.path}/revisions/${revisionId}/export?format=xlsx`).set(bearer(owner)).buffer(true).parse(binary).expect(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.body as Parameters<typeof workbook.xlsx.load>[0]);
    const header = workbook.getWorksheet('rows')?.getRow(1).getCell(2).value;
    expect(spreadsheetText(String(header))).toBe('_x0041_');
  });

  it('keeps control characters and carriage returns of a text in the xlsx export, as csv and json do', async () => {
    const text = 'a\u000Bb\u001Fc\u0001d\r\ne_x0041_';
    const created = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'ctl', values: { name: text } }).expect(201);
    const revisionId = created.body.payload.request.revisionId as string;
    const res = await request(t.http).get(`${doc.path}/revisions/${revisionId}/export?format=xlsx`).set(bearer(owner)).buffer(true).parse(binary).expect(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.body as Parameters<typeof workbook.xlsx.load>[0]);
    const sheet = workbook.getWorksheet('rows');
    let cell: unknown;
    sheet?.eachRow((row) => {
      if (row.getCell(1).value === 'ctl') {
        cell = row.getCell(2).value;
      }
    });
    expect(typeof cell).toBe('string');
    expect(spreadsheetText(cell as string)).toBe(text);
    const json = await request(t.http).get(`${doc.path}/revisions/${revisionId}/export?format=json`).set(bearer(owner)).expect(200);
    const exported = (json.body.rows as Row[]).find((item) => item.id === 'ctl');
    expect(exported?.values.find((entry) => entry.fieldId === 'name')?.value).toEqual({ text });
  });

  it('refuses attachment URLs a browser reads as another scheme once it drops tabs, newlines and leading controls', async () => {
    // The WHATWG URL parser strips leading and trailing C0 controls and spaces and removes every tab and newline:
    // each of these is `javascript:alert(1)` in an href (docs/values.md: other schemes are refused).
    for (const url of ['java\nscript:alert(1)', 'java\tscript:alert(1)', 'javascript\r:alert(1)', '\u0001javascript:alert(1)', '\u001f data:text/html,x']) {
      const res = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ values: { att: [{ name: 'x', url }] } });
      expect({ url, status: res.status, details: res.body.details }).toMatchObject({
        url,
        status: 400,
        details: { fieldId: 'att', reason: 'attachments[0].url must be an http(s) URL or a path' },
      });
    }
    // A path and an http(s) URL with surrounding spaces stay accepted, as written.
    const ok = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ values: { att: [{ name: 'p', url: '/files/a b.pdf' }, { name: 'q', url: ' https://files.test/q ' }] } }).expect(201);
    expect(ok.body.payload.values.find((entry: Entry) => entry.fieldId === 'att')?.value).toEqual({
      attachments: [
        { name: 'p', url: '/files/a b.pdf' },
        { name: 'q', url: ' https://files.test/q ' },
      ],
    });
  });

  it('names the length limit when an option id is too long (docs/documents.md: option ids of at most 255 characters)', async () => {
    const res = await request(t.http)
      .post(`${API}/doc/${doc.docType}`)
      .set(bearer(owner))
      .send({
        id: `opt-${Date.now()}`,
        organizationId: owner.defaultOrganizationId,
        workspaceId: owner.defaultWorkspaceId,
        metadata: { fields: [{ id: 'pick', name: 'Pick', type: 'single_select', selectOptions: [{ id: 'o'.repeat(256), label: 'Long' }] }] },
      })
      .expect(400);
    expect(res.body.details).toMatchObject({ field: 'metadata.fields[0].selectOptions[0].id', reason: 'option id must be a non-empty string of at most 255 characters' });
  });
});

