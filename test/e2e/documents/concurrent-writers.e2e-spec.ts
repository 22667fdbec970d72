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

  /**
   * Holds `rowId` of `target` locked from a connection of its own; two writes of that row then take the document's
   * two lanes (WriteBatcher) and wait, so every write sent before `release()` queues and commits in a group.
   */
  async function holdLanes(target: DocHandle, rowId: string): Promise<{ blockers: Promise<request.Response[]>; release: () => Promise<void> }> {
    const runner = t.dataSource.createQueryRunner();
    await runner.startTransaction();
    await runner.query(`SELECT 1 FROM document_rows r JOIN documents d ON d.id = r.document_id WHERE d.doc_id = $1 AND r.id = $2 FOR UPDATE OF r`, [target.docId, rowId]);
    const blockers = Promise.all([1, 2].map((n) => request(t.http).put(`${target.path}/data/${rowId}`).set(bearer(owner)).send({ values: { qty: n } })));
    // Both blockers wait on the row lock before anything else is sent.
    for (let i = 0; i < 500; i += 1) {
      const [waiting] = await t.dataSource.query<Array<{ n: string }>>(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (Number(waiting?.n) >= 2) {
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return {
      blockers,
      // The writes sent meanwhile reach the service and queue behind the blockers first (generous for a loaded CI).
      release: async () => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        await runner.rollbackTransaction();
        await runner.release();
      },
    };
  }

  /** Sends a request now: supertest sends one only when it is awaited, and these must queue before the release. */
  function sentNow(test: request.Test): Promise<request.Response> {
    return test.then((res) => res);
  }

  /** Revisions of `target` with their request, time and inserting transaction (`xmin`), by version. */
  async function revisionsOf(
    target: DocHandle,
  ): Promise<Array<{ version: string; request_id: string; created_at: string; xmin: string; previous_revision_id: string | null; id: string }>> {
    return t.dataSource.query(
      `SELECT v.id, v.version, v.request_id, v.created_at::text AS created_at, v.xmin::text AS xmin, v.previous_revision_id
         FROM revisions v JOIN documents d ON d.id = v.document_id
        WHERE d.doc_id = $1 ORDER BY v.version`,
      [target.docId],
    );
  }

  it('commits writes that queued behind their document in one transaction, each with its own request, revision and answer', async () => {
    const grouped = await createDocument(t.http, owner, { fields: PLAIN_FIELDS });
    const rows = await Promise.all(Array.from({ length: 12 }, (_, i) => createRow(t.http, owner, grouped, { id: `g${i}`, values: { name: `n${i}`, qty: i } })));
    await createRow(t.http, owner, grouped, { id: 'held', values: { name: 'held', qty: 0 } });
    const before = (await revisionsOf(grouped)).length;

    const lanes = await holdLanes(grouped, 'held');
    const updates = rows.map((row, i) => sentNow(request(t.http).put(`${grouped.path}/data/${row.id}`).set(bearer(owner)).send({ values: { qty: 1000 + i }, version: row.version })));
    const invalid = sentNow(request(t.http).put(`${grouped.path}/data/g0`).set(bearer(owner)).send({ values: { qty: 'not a number' } }));
    await lanes.release();
    const [answers, refused, blockers] = await Promise.all([Promise.all(updates), invalid, lanes.blockers]);

    expect(blockers.map((res) => res.status)).toEqual([200, 200]);
    expect(answers.map((res) => res.status)).toEqual(rows.map(() => 200));
    // A write refused before it changed anything fails alone; the others of its group commit.
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('VALIDATION_ERROR');

    const history = (await revisionsOf(grouped)).slice(before);
    expect(history.map((revision) => Number(revision.version))).toEqual(Array.from({ length: 14 }, (_, i) => before + i + 1));
    // Each answer names its own request and revision, and that revision is the request's.
    const revisionOf = new Map(history.map((revision) => [revision.id, revision.request_id]));
    for (const res of answers) {
      expect(revisionOf.get(res.body.payload.request.revisionId)).toBe(res.body.payload.request.requestId);
      expect(res.body.payload.version).toBe(2);
    }
    expect(new Set(answers.map((res) => res.body.payload.request.revisionId)).size).toBe(12);
    // The queued writes committed together: their revisions were inserted by one transaction, at one time.
    const byTransaction = new Map<string, string[]>();
    history.forEach((revision) => byTransaction.set(revision.xmin, [...(byTransaction.get(revision.xmin) ?? []), revision.created_at]));
    const largest = [...byTransaction.values()].sort((a, b) => b.length - a.length)[0] ?? [];
    expect(largest.length).toBeGreaterThanOrEqual(3);
    expect(new Set(largest).size).toBe(1);
    // Revisions stay linked one to the next across the group.
    const all = await revisionsOf(grouped);
    all.forEach((revision, i) => expect(revision.previous_revision_id).toBe(i === 0 ? null : all[i - 1]?.id));
  });

  it('runs a group again write by write when one write fails after changing the database: nothing of it stays half-applied', async () => {
    const grouped = await createDocument(t.http, owner, { fields: PLAIN_FIELDS });
    await Promise.all(Array.from({ length: 6 }, (_, i) => createRow(t.http, owner, grouped, { id: `f${i}`, values: { name: `n${i}`, qty: i } })));
    await createRow(t.http, owner, grouped, { id: 'held', values: { name: 'held', qty: 0 } });
    await createRow(t.http, owner, grouped, { id: 'boom', values: { name: 'boom', qty: 0 } });
    const before = (await revisionsOf(grouped)).length;
    // The row write of `boom` fails inside PostgreSQL, after the write began changing the database; every attempt
    // is counted by a sequence, which no rollback undoes.
    await t.dataSource.query(`CREATE SEQUENCE group_boom_attempts`);
    await t.dataSource.query(`CREATE FUNCTION group_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM nextval('group_boom_attempts'); RAISE EXCEPTION 'boom'; END $$`);
    await t.dataSource.query(`CREATE TRIGGER group_boom BEFORE UPDATE ON document_rows FOR EACH ROW WHEN (NEW.id = 'boom') EXECUTE FUNCTION group_boom()`);
    try {
      const lanes = await holdLanes(grouped, 'held');
      const updates = Array.from({ length: 6 }, (_, i) => sentNow(request(t.http).put(`${grouped.path}/data/f${i}`).set(bearer(owner)).send({ values: { qty: 500 + i } })));
      const failing = sentNow(request(t.http).put(`${grouped.path}/data/boom`).set(bearer(owner)).send({ values: { qty: 1 } }));
        await lanes.release();
      const [answers, failed] = await Promise.all([Promise.all(updates), failing, lanes.blockers]);

      expect(answers.map((res) => res.status)).toEqual(Array(6).fill(200));
      expect(failed.status).toBeGreaterThanOrEqual(500);
      // Tried in its group, which rolled back, then alone.
      const [attempts] = await t.dataSource.query<Array<{ last_value: string }>>(`SELECT last_value FROM group_boom_attempts`);
      expect(Number(attempts?.last_value)).toBe(2);
    } finally {
      await t.dataSource.query(`DROP TRIGGER group_boom ON document_rows`);
      await t.dataSource.query(`DROP FUNCTION group_boom()`);
      await t.dataSource.query(`DROP SEQUENCE group_boom_attempts`);
    }
    // Every other write applied exactly once, with one revision each; the failed one left nothing.
    const rows = await t.dataSource.query<Array<{ id: string; version: number; qty: number }>>(
      `SELECT r.id, r.version, (r."values"->>'qty')::int AS qty FROM document_rows r JOIN documents d ON d.id = r.document_id
        WHERE d.doc_id = $1 AND r.id LIKE 'f%' ORDER BY r.id`,
      [grouped.docId],
    );
    expect(rows.map((row) => [row.id, Number(row.version), Number(row.qty)])).toEqual(Array.from({ length: 6 }, (_, i) => [`f${i}`, 2, 500 + i]));
    const history = (await revisionsOf(grouped)).slice(before);
    expect(history.map((revision) => Number(revision.version))).toEqual(Array.from({ length: 8 }, (_, i) => before + i + 1));
    const [boom] = await t.dataSource.query<Array<{ version: number }>>(
      `SELECT r.version FROM document_rows r JOIN documents d ON d.id = r.document_id WHERE d.doc_id = $1 AND r.id = 'boom'`,
      [grouped.docId],
    );
    expect(Number(boom?.version)).toBe(1);
  });

  it('applies writes of one row that queued together one after the other, none lost', async () => {
    const fields = Array.from({ length: 6 }, (_, i) => ({ id: `f${i}`, name: `F${i}`, type: 'number' }));
    const shared = await createDocument(t.http, owner, { fields });
    await createRow(t.http, owner, shared, { id: 'one', values: {} });
    await createRow(t.http, owner, shared, { id: 'held', values: {} });
    const lanes = await holdLanes(shared, 'held');
    // Each write sets another field of the same row; a group takes one of them, the others wait for the next.
    const writes = fields.map((field, i) => sentNow(request(t.http).put(`${shared.path}/data/one`).set(bearer(owner)).send({ values: { [field.id]: i + 1 } })));
    await lanes.release();
    const answers = await Promise.all(writes);
    await lanes.blockers;
    expect(answers.map((res) => res.status)).toEqual(Array(6).fill(200));
    expect(answers.map((res) => res.body.payload.version).sort((a: number, b: number) => a - b)).toEqual([2, 3, 4, 5, 6, 7]);
    const row = await request(t.http).get(`${shared.path}/data/one`).set(bearer(owner)).expect(200);
    expect(row.body.payload.version).toBe(7);
    expect(fields.map((field) => row.body.payload.values.find((value: { fieldId: string }) => value.fieldId === field.id)?.value)).toEqual(
      fields.map((_, i) => ({ number: i + 1 })),
    );
  });

  it('writes of a document that lookups read run one by one and keep every rollup over it right', async () => {
    const parts = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }, { id: 'weight', name: 'Weight', type: 'number' }] });
    const kits = await createDocument(t.http, owner, {
      fields: [
        { id: 'parts', name: 'Parts', type: 'relation' },
        { id: 'mass', name: 'Mass', type: 'rollup', rollup: { relationFieldId: 'parts', targetFieldId: 'weight', agg: 'sum' } },
      ],
    });
    await Promise.all(Array.from({ length: 8 }, (_, i) => createRow(t.http, owner, parts, { id: `p${i}`, values: { name: `p${i}`, weight: 1 } })));
    await createRow(t.http, owner, parts, { id: 'held', values: { name: 'held', weight: 0 } });
    const refs = Array.from({ length: 8 }, (_, i) => ({ docType: parts.docType, docId: parts.docId, rowId: `p${i}` }));
    await createRow(t.http, owner, kits, { id: 'kit', values: { parts: refs } });

    const lanes = await holdLanes(parts, 'held');
    const updates = Array.from({ length: 8 }, (_, i) => sentNow(request(t.http).put(`${parts.path}/data/p${i}`).set(bearer(owner)).send({ values: { weight: 10 + i } })));
    await lanes.release();
    const answers = await Promise.all(updates);
    await lanes.blockers;
    expect(answers.map((res) => res.status)).toEqual(Array(8).fill(200));

    // Every write of the dependents' source is counted: 10 + 11 + … + 17.
    const kit = await request(t.http).get(`${kits.path}/data/kit`).set(bearer(owner)).expect(200);
    expect(kit.body.payload.values.find((value: { fieldId: string }) => value.fieldId === 'mass')?.value).toEqual({ number: 108 });
    // Not grouped: each write had a transaction of its own.
    const history = (await revisionsOf(parts)).slice(-10);
    expect(new Set(history.map((revision) => revision.xmin)).size).toBe(history.length);
  });

  it('never lets a relation point at a row whose deletion commits meanwhile', async () => {
    const parts = await createDocument(t.http, owner, { fields: [{ id: 'name', name: 'Name', type: 'text' }] });
    const kits = await createDocument(t.http, owner, { fields: [{ id: 'parts', name: 'Parts', type: 'relation' }] });
    await createRow(t.http, owner, parts, { id: 'doomed', values: { name: 'doomed' } });
    await createRow(t.http, owner, kits, { id: 'kit', values: { parts: [] } });
    // A deletion of the target, not committed yet, holds its row.
    const runner = t.dataSource.createQueryRunner();
    await runner.startTransaction();
    await runner.query(`DELETE FROM document_rows r USING documents d WHERE d.id = r.document_id AND d.doc_id = $1 AND r.id = 'doomed'`, [parts.docId]);
    const linking = request(t.http)
      .put(`${kits.path}/data/kit`)
      .set(bearer(owner))
      .send({ values: { parts: [{ docType: parts.docType, docId: parts.docId, rowId: 'doomed' }] } });
    const settled = linking.then((res) => res);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await runner.commitTransaction();
    await runner.release();
    // The link waited for the deletion and found the row gone.
    const res = await settled;
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    const [edges] = await t.dataSource.query<Array<{ n: string }>>(
      `SELECT count(*) AS n FROM document_relations e JOIN documents d ON d.id = e.source_document_id WHERE d.doc_id = $1`,
      [kits.docId],
    );
    expect(Number(edges?.n)).toBe(0);
  });

  it('keeps unique values unique under concurrent writers (those documents serialize on the document)', async () => {
    const unique = await createDocument(t.http, owner, { fields: [{ id: 'sku', name: 'SKU', type: 'text', unique: true }] });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => request(t.http).post(`${unique.path}/data`).set(bearer(owner)).send({ id: `u${i}`, values: { sku: 'SAME' } })),
    );
    expect(results.filter((res) => res.status === 201)).toHaveLength(1);
  });
});
