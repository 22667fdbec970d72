import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { compileQuery } from '../../../src/modules/documents/query/query.compiler.js';
import { FieldIndexRepository } from '../../../src/modules/documents/repositories/field-index.repository.js';
import {
  DocumentIndexService,
  INDEX_MIN_ROWS,
  INDEX_MIN_USES,
} from '../../../src/modules/documents/services/document-index.service.js';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, type DocHandle, newUser, PRODUCT_FIELDS } from './documents.fixtures.js';

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > until) {
      throw new Error('timed out');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('documents: expression indexes on demand', () => {
  let t: TestApp;
  let owner: TestUser;
  let doc: DocHandle;
  let uuid: string;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await newUser(t.http);
    doc = await createDocument(t.http, owner);
    const [row] = await t.dataSource.query(`SELECT id FROM documents WHERE doc_id = $1`, [doc.docId]);
    uuid = row.id;
    await t.dataSource.query(
      `INSERT INTO document_rows (document_id, id, "values")
       SELECT $1, 'r' || g, jsonb_build_object('name', 'Item ' || g, 'price', (g * 7919) % 10007, 'status', (ARRAY['todo','doing','done'])[1 + g % 3])
         FROM generate_series(1, $2::int) AS g`,
      [uuid, INDEX_MIN_ROWS],
    );
    await t.dataSource.query(`UPDATE documents SET row_count = $2 WHERE id = $1`, [uuid, INDEX_MIN_ROWS]);
    await t.dataSource.query(`ANALYZE document_rows`);
  });
  afterAll(async () => {
    await t.close();
  });

  it('builds a partial expression index for a field sorted often on a large document, used by the compiled query', async () => {
    const body = { filters: { logic: 'and', conditions: [{ field: 'price', operator: 'gt', value: 10 }], groups: [] }, sorts: [{ field: 'price', direction: 'asc' }], pageSize: 20 };
    for (let i = 0; i < INDEX_MIN_USES; i += 1) {
      const res = await request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send(body).expect(200);
      expect(res.body.payload.items).toHaveLength(20);
    }
    const index = await waitFor(async () => {
      const rows = await t.dataSource.query<{ index_name: string; status: string }[]>(
        `SELECT index_name, status FROM document_field_indexes WHERE document_id = $1 AND field_id = 'price'`,
        [uuid],
      );
      return rows[0]?.status === 'ready' ? rows[0] : undefined;
    });
    const [definition] = await t.dataSource.query(`SELECT indexdef FROM pg_indexes WHERE indexname = $1`, [index.index_name]);
    expect(definition.indexdef).toContain(`WHERE (document_id = '${uuid}'::uuid)`);

    const compiled = compileQuery(body, PRODUCT_FIELDS as never, { paramOffset: 1 });
    const plan = await t.dataSource.query(
      `EXPLAIN SELECT r.id FROM document_rows r WHERE r.document_id = $1 AND ${compiled.where} ORDER BY ${compiled.orderBy} LIMIT 20`,
      [uuid, ...compiled.params],
    );
    expect(JSON.stringify(plan)).toContain(index.index_name);

    // Deleting the field drops its index after the merge.
    const fields = PRODUCT_FIELDS.filter((field) => field.id !== 'price');
    await request(t.http).put(`${doc.path}/metadata`).set(bearer(owner)).send({ fields }).expect(200);
    await waitFor(async () => {
      const rows = await t.dataSource.query(`SELECT 1 FROM pg_indexes WHERE indexname = $1`, [index.index_name]);
      return rows.length === 0 ? true : undefined;
    });
  });

  /** Writes a random (incompressible) text of about 8 KB as `name` of a new row and reads it back. */
  async function writeLongName(): Promise<void> {
    const text = randomBytes(6144).toString('base64');
    const created = await request(t.http).post(`${doc.path}/data`).set(bearer(owner)).send({ values: { name: text } });
    expect(created.status).toBe(201);
    const read = await request(t.http).get(`${doc.path}/data/${created.body.payload.id}`).set(bearer(owner)).expect(200);
    expect(JSON.stringify(read.body.payload)).toContain(text);
  }

  it('builds no btree index for a text field, so a long text value stays writable', async () => {
    const body = { sorts: [{ field: 'name', direction: 'asc' }], pageSize: 20 };
    for (let i = 0; i < INDEX_MIN_USES; i += 1) {
      await request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send(body).expect(200);
    }
    // Let the background work settle, then do what the build does for the field (earlier versions built a btree
    // index on it, and an index entry holds at most 2704 bytes: the write below answered 500).
    const service = t.app.get(DocumentIndexService);
    await service.beforeApplicationShutdown();
    await service.ensure(uuid, PRODUCT_FIELDS.find((field) => field.id === 'name') as never);
    await writeLongName();
    const recorded = await t.dataSource.query(`SELECT 1 FROM document_field_indexes WHERE document_id = $1 AND field_id = 'name'`, [uuid]);
    expect(recorded).toHaveLength(0);
  });

  it('drops at start-up a text index an earlier version built, so long values are writable again', async () => {
    // An index as earlier versions built it for `sku` (the text handler's sort expression).
    const expression = `("values" ->> 'sku'::text)`;
    const indexName = 'dfx_0123456789abcdef01234567';
    const service = t.app.get(DocumentIndexService);
    await service.beforeApplicationShutdown();
    // A wanted index (a number field's) survives the start-up pass.
    const kept = await service.ensure(uuid, PRODUCT_FIELDS.find((field) => field.id === 'qty') as never);
    expect(kept).toMatch(/^dfx_/);
    const repository = t.app.get(FieldIndexRepository);
    await repository.claim(uuid, 'sku', indexName, expression);
    await repository.build(uuid, indexName, expression);
    const write = () =>
      request(t.http)
        .post(`${doc.path}/data`)
        .set(bearer(owner))
        .send({ values: { name: 'x', sku: randomBytes(6144).toString('base64') } });
    // The state an upgrade starts from: the index refuses the long value (index row size … exceeds … 2704).
    expect((await write()).status).toBe(500);

    // Another instance starting on the same database drops it.
    const restarted = await createTestApp({}, { databaseUrl: t.config.database.url });
    try {
      await waitFor(async () => {
        const rows = await t.dataSource.query(
          `SELECT (SELECT count(*)::int FROM pg_indexes WHERE indexname = $1) + (SELECT count(*)::int FROM document_field_indexes WHERE index_name = $1) AS n`,
          [indexName],
        );
        return rows[0].n === 0 ? true : undefined;
      });
    } finally {
      await restarted.close();
    }
    expect((await write()).status).toBe(201);
    const survivors = await t.dataSource.query(`SELECT 1 FROM pg_indexes WHERE indexname = $1`, [kept]);
    expect(survivors).toHaveLength(1);
  });
});
