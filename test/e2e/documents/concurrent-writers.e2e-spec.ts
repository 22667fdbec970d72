import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser } from './documents.fixtures.js';

const PLAIN_FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'qty', name: 'Quantity', type: 'number' },
];

/**
 * Row writes lock only their rows; the document row is locked only while a merge allocates its revision number
 * (docs/performance.md, "Writers"). These tests pin what that must keep: gapless, linked revision numbers, exact
 * row counts, one winner per contended row, and no commit against fields that changed meanwhile.
 */
describe('documents: concurrent writers under row-level locking', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner, { fields: PLAIN_FIELDS });
  });
  afterAll(async () => {
    await t.close();
  });

  async function revisions(): Promise<Array<{ id: string; version: string; previous_revision_id: string | null }>> {
    return t.dataSource.query(
      `SELECT v.id, v.version, v.previous_revision_id FROM revisions v JOIN documents d ON d.id = v.document_id
        WHERE d.doc_id = $1 ORDER BY v.version`,
      [doc.docId],
    );
  }

  it('merges 40 concurrent writes to different rows into gapless, linked revisions with an exact row count', async () => {
    const rows = await Promise.all(
      Array.from({ length: 20 }, (_, i) => createRow(t.http, owner, doc, { id: `row-${i}`, values: { name: `n${i}`, qty: i } })),
    );
    const updates = await Promise.all(
      rows.map((row, i) => request(t.http).put(`${doc.path}/data/${row.id}`).set(bearer(owner)).send({ values: { qty: i + 100 }, version: row.version })),
    );
    expect(updates.map((res) => res.status)).toEqual(rows.map(() => 200));

    const history = await revisions();
    const versions = history.map((revision) => Number(revision.version));
    expect(versions).toEqual(Array.from({ length: versions.length }, (_, i) => i + 1));
    history.forEach((revision, i) => expect(revision.previous_revision_id).toBe(i === 0 ? null : history[i - 1]?.id));
    const [state] = await t.dataSource.query<Array<{ version: string; row_count: string; row_seq: string }>>(
      `SELECT version, row_count, row_seq FROM documents WHERE doc_id = $1`,
      [doc.docId],
    );
    expect(Number(state?.version)).toBe(versions.length);
    expect(Number(state?.row_count)).toBe(20);
    expect(Number(state?.row_seq)).toBeGreaterThanOrEqual(20);
    const list = await request(t.http).get(`${doc.path}/data?pageSize=100`).set(bearer(owner)).expect(200);
    expect(list.body.payload.total).toBe(20);
  });

  it('lets exactly one of many racing writers of one row and version win, and one of two racing creates of one id', async () => {
    const row = await createRow(t.http, owner, doc, { id: 'contended', values: { name: 'x', qty: 1 } });
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => request(t.http).put(`${doc.path}/data/contended`).set(bearer(owner)).send({ values: { qty: i }, version: row.version })),
    );
    expect(racers.filter((res) => res.status === 200)).toHaveLength(1);
    expect(racers.filter((res) => res.status === 409).map((res) => res.body.code)).toEqual(Array(7).fill('VERSION_CONFLICT'));

    const creates = await Promise.all(
      [1, 2].map(() => request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ id: 'twin-row', values: { name: 'x' } })),
    );
    expect(creates.map((res) => res.status).sort()).toEqual([201, 409]);
    const [count] = await t.dataSource.query<Array<{ n: string }>>(
      `SELECT count(*) AS n FROM document_rows r JOIN documents d ON d.id = r.document_id WHERE d.doc_id = $1 AND r.id = 'twin-row'`,
      [doc.docId],
    );
    expect(Number(count?.n)).toBe(1);
  });

  it('never commits a row write validated against fields that changed meanwhile', async () => {
    const raced = await createDocument(t.http, owner, { fields: PLAIN_FIELDS });
    const writes = Array.from({ length: 15 }, (_, i) => request(t.http).post(`${raced.path}/data`).set(bearer(owner)).send({ id: `w${i}`, values: { name: 'x', qty: i } }));
    const metadata = request(t.http).put(`${raced.path}/metadata`).set(bearer(owner)).send({ fields: [PLAIN_FIELDS[0]] });
    const [meta, ...results] = await Promise.all([metadata, ...writes]);
    expect(meta?.status).toBe(200);
    // Each write either merged (before or after the field went away) or was refused as a conflict: never a 500.
    for (const res of results) {
      expect([201, 400, 409]).toContain(res.status);
    }
    const stale = await t.dataSource.query<Array<{ id: string }>>(
      `SELECT r.id FROM document_rows r JOIN documents d ON d.id = r.document_id
        WHERE d.doc_id = $1 AND r."values" ? 'qty' AND r.updated_at > (SELECT max(created_at) FROM revisions v WHERE v.document_id = d.id AND v.stats->>'fieldsDeleted' = '1')`,
      [raced.docId],
    );
    expect(stale).toEqual([]);
    const history = await t.dataSource.query<Array<{ version: string }>>(
      `SELECT v.version FROM revisions v JOIN documents d ON d.id = v.document_id WHERE d.doc_id = $1 ORDER BY v.version`,
      [raced.docId],
    );
    expect(history.map((revision) => Number(revision.version))).toEqual(Array.from({ length: history.length }, (_, i) => i + 1));
  });

  it('keeps unique values unique under concurrent writers (those documents serialize on the document)', async () => {
    const unique = await createDocument(t.http, owner, { fields: [{ id: 'sku', name: 'SKU', type: 'text', unique: true }] });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => request(t.http).post(`${unique.path}/data`).set(bearer(owner)).send({ id: `u${i}`, values: { sku: 'SAME' } })),
    );
    expect(results.filter((res) => res.status === 201)).toHaveLength(1);
  });
});
