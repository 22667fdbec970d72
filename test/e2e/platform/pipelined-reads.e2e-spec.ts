import pg from 'pg';
import request from 'supertest';
import { PipelinedReader } from '../../../src/database/pipelined-reader.js';
import { prepared } from '../../../src/database/prepared-statements.js';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { urlFor } from '../../utils/test-database.js';
import {
  bearer,
  createDocument,
  type DocHandle,
  newUser,
  seedRows,
  valueOf,
} from '../documents/documents.fixtures.js';

/**
 * The pipelined connection of the access checks (docs/performance.md, "Eighth pass"): the reads of concurrent
 * requests share one connection and one socket write per event-loop turn, each gets its own answer, a failing
 * statement fails only its own read, and a connection that breaks is replaced.
 */
describe('pipelined reads', () => {
  const url = urlFor(process.env.QUIRE_TEST_SERVER_URL as string, 'postgres');
  const name = `quire-pipeline-spec-${process.pid}`;
  const reader = new PipelinedReader({ connectionString: url, application_name: name });
  const admin = new pg.Client({ connectionString: url });

  beforeAll(() => admin.connect());
  afterAll(async () => {
    await reader.close();
    await admin.end();
  });

  async function sessions(): Promise<number[]> {
    const { rows } = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [`${name}-reads`],
    );
    return rows.map((row) => row.pid);
  }

  it('answers each of many concurrent reads with its own rows, over one connection', async () => {
    const text = prepared('SELECT $1::int * 2 AS n, pg_backend_pid() AS pid /* pipelined-reads spec */');
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => reader.query<{ n: number; pid: number }>(text, [i])),
    );
    expect(answers.map((rows) => rows[0]?.n)).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    expect(new Set(answers.map((rows) => rows[0]?.pid)).size).toBe(1);
    expect(await sessions()).toHaveLength(1);
  });

  it('fails only the read whose statement fails', async () => {
    const text = prepared('SELECT 10 / $1::int AS n /* pipelined-reads division */');
    const results = await Promise.allSettled(
      [1, 0, 2, 0, 5].map((d) => reader.query<{ n: number }>(text, [d])),
    );
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value[0]?.n : 'failed'))).toEqual([
      10,
      'failed',
      5,
      'failed',
      2,
    ]);
    const failure = results[1] as PromiseRejectedResult;
    expect(String(failure.reason)).toMatch(/division by zero/);
  });

  it('opens a new connection when PostgreSQL ends the one it had, and the read still answers', async () => {
    const [before] = await sessions();
    expect(before).toBeDefined();
    await admin.query('SELECT pg_terminate_backend($1)', [before]);
    const rows = await reader.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', []);
    expect(rows[0]?.pid).not.toBe(before);
    expect(await sessions()).toEqual([rows[0]?.pid]);
  });

  describe('through the API', () => {
    let t: TestApp;
    let owner: TestUser;
    let doc: DocHandle;

    beforeAll(async () => {
      t = await createTestApp();
      owner = await newUser(t.http);
      doc = await createDocument(t.http, owner);
      await seedRows(
        t.dataSource,
        doc,
        Array.from({ length: 30 }, (_, i) => ({ id: `p${i}`, values: { name: `row ${i}`, price: i } })),
      );
    });
    afterAll(async () => {
      await t.close();
    });

    it('gives every one of 30 concurrent row reads its own row', async () => {
      const reads = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          request(t.http).get(`${doc.path}/data/p${i}`).set(bearer(owner)),
        ),
      );
      expect(reads.map((res) => res.status)).toEqual(Array(30).fill(200));
      expect(reads.map((res) => res.body.payload.id)).toEqual(Array.from({ length: 30 }, (_, i) => `p${i}`));
      expect(reads.map((res) => valueOf(res.body.payload, 'name'))).toEqual(
        Array.from({ length: 30 }, (_, i) => ({ text: `row ${i}` })),
      );
    });
  });
});
