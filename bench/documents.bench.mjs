#!/usr/bin/env node
// Documents benchmark (issue 5, docs/performance.md). Plain Node, run by hand:
//
//   node bench/documents.bench.mjs                      # 100,000 rows
//   node bench/documents.bench.mjs --rows=1000000       # 1,000,000 rows
//   node bench/documents.bench.mjs --rows=100000,1000000 --iterations=300 --no-build --keep
//
// Per size, on a fresh database with the service running on it (DATABASE_URL and the plumbing:
// bench/lib/harness.mjs) and a document of the six benchmark fields seeded with SQL, it reports:
//   1. p50/p99 of a filtered + sorted page of 20 through the API, and of the same SQL (compiled by the service's
//      own query compiler: the page and its count, in parallel as the service runs them) directly through `pg`;
//   2. a 1000-row bulk write merged (POST /data/bulk): time and rows/s;
//   3. the service's peak RSS while paging the whole document with cursors (limit 1000).
import { join } from 'node:path';
import {
  FIELDS,
  QUERY,
  createDocument,
  forEachRowCount,
  log,
  parseArgs,
  percentile,
  root,
  round2 as ms,
  rssKb,
  rowCounts,
  rssSampler,
  seedRows,
  signUp,
  waitForIndexes,
  withFreshService,
  writeResults,
} from './lib/harness.mjs';

const args = parseArgs(process.argv.slice(2));
const ROW_COUNTS = rowCounts(args, '100000');
const ITERATIONS = Number(args.iterations ?? 200);
const BULK_RUNS = Number(args['bulk-runs'] ?? 5);

async function runOne(serverUrl, rows) {
  const options = { label: `${rows.toLocaleString()} rows`, keep: args.keep === 'true', poolSize: 4 };
  return withFreshService(serverUrl, options, async ({ db, service }) => {
    const result = { rows };
    const { user, api } = await signUp(service.port);
    const { path: docPath, uuid: documentUuid } = await createDocument(api, user.user, {
      id: `bench-${rows}`,
      fields: FIELDS,
      db,
    });
    const seedStart = Date.now();
    await seedRows(db, documentUuid, rows);
    result.seedSeconds = ms((Date.now() - seedStart) / 1000);

    // Warm up: the service builds expression indexes for fields queried often (docs/documents.md); wait for them.
    // Queries keep counting towards the indexes of fields not indexed yet (for example after a failed build).
    for (let i = 0; i < 5; i += 1) {
      await api.call('POST', `${docPath}/data/query`, QUERY);
    }
    const indexes = await waitForIndexes(db, documentUuid, rows, () =>
      api.call('POST', `${docPath}/data/query`, QUERY),
    );
    result.indexes = indexes.indexes;
    result.indexBuildSeconds = indexes.seconds;

    // 1. Filtered + sorted page of 20: API vs the same SQL through pg.
    const { compileQuery } = await import(join(root, 'dist/src/modules/documents/query/query.compiler.js'));
    const compiled = compileQuery(QUERY, FIELDS, { paramOffset: 1 });
    const pageSql = `SELECT r.id, r.seq, r."values", r.version, r.created_at, r.created_by, r.updated_at, r.updated_by
                       FROM document_rows r WHERE r.document_id = $1 AND ${compiled.where}
                      ORDER BY ${compiled.orderBy} LIMIT $${compiled.params.length + 2} OFFSET $${compiled.params.length + 3}`;
    const countSql = `SELECT count(*) AS total FROM document_rows r WHERE r.document_id = $1 AND ${compiled.where}`;
    const pageParams = [documentUuid, ...compiled.params, 20, 0];
    const plan = await db.query(`EXPLAIN ${pageSql}`, pageParams);
    result.pagePlan = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    const apiSamples = [];
    const pgSamples = [];
    const pgPageOnly = [];
    for (let i = 0; i < ITERATIONS + 10; i += 1) {
      let start = performance.now();
      const page = await api.call('POST', `${docPath}/data/query`, QUERY);
      const apiTime = performance.now() - start;
      start = performance.now();
      await Promise.all([
        db.query(pageSql, pageParams),
        db.query(countSql, [documentUuid, ...compiled.countParams]),
      ]);
      const pgTime = performance.now() - start;
      start = performance.now();
      await db.query(pageSql, pageParams);
      const pageOnly = performance.now() - start;
      if (i >= 10) {
        apiSamples.push(apiTime);
        pgSamples.push(pgTime);
        pgPageOnly.push(pageOnly);
      }
      if (i === 0) {
        result.total = page.total;
      }
    }
    result.query = {
      apiP50: ms(percentile(apiSamples, 50)),
      apiP99: ms(percentile(apiSamples, 99)),
      pgP50: ms(percentile(pgSamples, 50)),
      pgP99: ms(percentile(pgSamples, 99)),
      pgPageOnlyP50: ms(percentile(pgPageOnly, 50)),
      ratioP50: ms(percentile(apiSamples, 50) / percentile(pgSamples, 50)),
      ratioP99: ms(percentile(apiSamples, 99) / percentile(pgSamples, 99)),
    };
    log(`  query: ${JSON.stringify(result.query)}`);

    // 2. 1000-row bulk write, merged at once.
    const bulkTimes = [];
    for (let run = 0; run < BULK_RUNS; run += 1) {
      const body = Array.from({ length: 1000 }, (_, i) => ({
        target: { row: `r${run * 1000 + i + 1}`, field: 'qty' },
        value: { number: 1000 + run },
      }));
      const start = performance.now();
      const written = await api.call('POST', `${docPath}/data/bulk`, body);
      bulkTimes.push(performance.now() - start);
      if (!written.merged) {
        throw new Error('bulk write was not merged');
      }
    }
    const bulkMedian = percentile(bulkTimes, 50);
    result.bulk = {
      runs: BULK_RUNS,
      medianMs: ms(bulkMedian),
      maxMs: ms(Math.max(...bulkTimes)),
      rowsPerSecond: Math.round(1000 / (bulkMedian / 1000)),
    };
    log(`  bulk: ${JSON.stringify(result.bulk)}`);

    // 3. Peak RSS while paging the whole document with cursors.
    const before = rssKb(service.pid);
    const sampler = rssSampler(service.pid, 20);
    const pagingStart = performance.now();
    let cursor = null;
    let seen = 0;
    let pages = 0;
    const timeline = [];
    const step = Math.max(1, Math.floor(rows / 1000 / 10));
    do {
      const page = await api.call(
        'GET',
        `${docPath}/data?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      seen += page.items.length;
      pages += 1;
      cursor = page.nextCursor;
      if (pages % step === 0) {
        timeline.push(Math.round(rssKb(service.pid).rss / 1024));
      }
    } while (cursor);
    const peakRssMb = sampler.stop();
    const pagingSeconds = (performance.now() - pagingStart) / 1000;
    if (seen !== rows) {
      throw new Error(`cursor paging saw ${seen} rows, expected ${rows}`);
    }
    result.paging = {
      pages,
      rows: seen,
      seconds: ms(pagingSeconds),
      rowsPerSecond: Math.round(seen / pagingSeconds),
      rssBeforeMb: ms(before.rss / 1024),
      peakRssMb,
      processPeakRssMb: ms(rssKb(service.pid).hwm / 1024),
      rssTimelineMb: timeline,
    };
    log(`  paging: ${JSON.stringify(result.paging)}`);
    api.close();
    return result;
  });
}

async function main() {
  const results = await forEachRowCount(args, ROW_COUNTS, runOne);
  const lines = [
    `Node ${process.version}, ${ITERATIONS} iterations per figure, query: status = open AND 100 ≤ price ≤ 5000, sort price desc, page of 20 (+ total)`,
    '',
    '| rows | API p50 | API p99 | pg p50 | pg p99 | ratio p50 | ratio p99 | bulk 1000 rows (median) | bulk rows/s | cursor paging (limit 1000) | peak RSS while paging |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.rows.toLocaleString()} | ${r.query.apiP50} ms | ${r.query.apiP99} ms | ${r.query.pgP50} ms | ${r.query.pgP99} ms | ${r.query.ratioP50}× | ${r.query.ratioP99}× | ${r.bulk.medianMs} ms | ${r.bulk.rowsPerSecond.toLocaleString()} | ${r.paging.seconds} s (${r.paging.rowsPerSecond.toLocaleString()} rows/s) | ${r.paging.peakRssMb} MB (before ${r.paging.rssBeforeMb} MB) |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  writeResults(`documents-${ROW_COUNTS.join('-')}.json`, results);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
