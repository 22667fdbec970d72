#!/usr/bin/env node
// Documents benchmark (issue 5, docs/performance.md). Plain Node, run by hand:
//
//   node bench/documents.bench.mjs                      # 100,000 rows
//   node bench/documents.bench.mjs --rows=1000000       # 1,000,000 rows
//   node bench/documents.bench.mjs --rows=100000,1000000 --iterations=300 --no-build --keep
//
// DATABASE_URL names a PostgreSQL server (any database on it; a fresh `quire_bench_*` database is created and
// dropped); without it the embedded server of the test setup is started. The script builds dist/, starts the
// service as a child process, seeds rows with SQL (generate_series), then reports:
//   1. p50/p99 of a filtered + sorted page of 20 through the API, and of the same SQL (compiled by the service's
//      own query compiler: the page and its count, in parallel as the service runs them) directly through `pg`;
//   2. a 1000-row bulk write merged (POST /data/bulk): time and rows/s;
//   3. the service's peak RSS while paging the whole document with cursors (limit 1000).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, '').split('=');
    return [key, value ?? 'true'];
  }),
);
const ROW_COUNTS = (args.rows ?? '100000').split(',').map((n) => Number(n.replace(/_/g, '')));
const ITERATIONS = Number(args.iterations ?? 200);
const BULK_RUNS = Number(args['bulk-runs'] ?? 5);
const log = (...parts) => process.stderr.write(`${parts.join(' ')}\n`);

function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const ms = (n) => Math.round(n * 100) / 100;

async function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function urlFor(serverUrl, database) {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function adminQuery(serverUrl, sql) {
  const client = new pg.Client({ connectionString: urlFor(serverUrl, 'postgres') });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

function rssKb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /VmRSS:\s+(\d+)/.exec(status);
    const hwm = /VmHWM:\s+(\d+)/.exec(status);
    return { rss: rss ? Number(rss[1]) : 0, hwm: hwm ? Number(hwm[1]) : 0 };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

class Api {
  constructor(base) {
    this.base = base;
    this.token = null;
  }
  async call(method, path, body) {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) {
      throw new Error(`${method} ${path} → ${response.status} ${JSON.stringify(json).slice(0, 500)}`);
    }
    return json.payload;
  }
}

const FIELDS = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'sku', name: 'SKU', type: 'text' },
  { id: 'price', name: 'Price', type: 'number' },
  { id: 'qty', name: 'Quantity', type: 'number' },
  { id: 'due', name: 'Due', type: 'date' },
  {
    id: 'status',
    name: 'Status',
    type: 'single_select',
    selectOptions: [{ id: 'open' }, { id: 'pending' }, { id: 'closed' }, { id: 'archived' }],
  },
];
const QUERY = {
  filters: {
    logic: 'and',
    conditions: [
      { field: 'status', operator: 'eq', value: 'open' },
      { field: 'price', operator: 'range', rangeStart: 100, rangeEnd: 5000 },
    ],
    groups: [],
  },
  sorts: [{ field: 'price', direction: 'desc' }],
  page: 1,
  pageSize: 20,
};

async function seed(db, documentUuid, rows) {
  const chunk = 200_000;
  for (let start = 1; start <= rows; start += chunk) {
    const end = Math.min(rows, start + chunk - 1);
    await db.query(
      `INSERT INTO document_rows (document_id, id, "values", created_by, updated_by)
       SELECT $1, 'r' || g,
              jsonb_build_object(
                'name', 'Item ' || g,
                'sku', 'SKU-' || g,
                'price', ((g::bigint * 7919) % 10007) + 0.5,
                'qty', g % 100,
                'due', to_char(date '2024-01-01' + (g % 365), 'YYYY-MM-DD'),
                'status', (ARRAY['open','pending','closed','archived'])[1 + g % 4]),
              'bench', 'bench'
         FROM generate_series($2::int, $3::int) AS g`,
      [documentUuid, start, end],
    );
    log(`  seeded ${end.toLocaleString()} rows`);
  }
  await db.query(`UPDATE documents SET row_count = $2, row_seq = $2 WHERE id = $1`, [documentUuid, rows]);
  await db.query(`VACUUM ANALYZE document_rows`);
}

async function runOne(serverUrl, rows, compiler) {
  const database = `quire_bench_${Date.now().toString(36)}`;
  log(`\n== ${rows.toLocaleString()} rows (database ${database})`);
  await adminQuery(serverUrl, `CREATE DATABASE "${database}"`);
  const dbUrl = urlFor(serverUrl, database);
  const { DataSource } = await import('typeorm');
  const { dataSourceOptions } = await import(join(root, 'dist/src/database/data-source-options.js'));
  const { loadConfig } = await import(join(root, 'dist/src/config/app.config.js'));
  const migrator = new DataSource(dataSourceOptions(loadConfig({}), dbUrl));
  await migrator.initialize();
  await migrator.runMigrations({ transaction: 'each' });
  await migrator.destroy();

  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'dist/src/main.js')], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: dbUrl,
      DB_RUN_MIGRATIONS: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '1000000',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const db = new pg.Pool({ connectionString: dbUrl, max: 4 });
  const result = { rows };
  try {
    const api = new Api(`http://127.0.0.1:${port}`);
    for (let i = 0; ; i += 1) {
      try {
        await fetch(`http://127.0.0.1:${port}/health`);
        break;
      } catch {
        if (i > 300 || child.exitCode !== null) {
          throw new Error('service did not start');
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const user = await api.call('POST', '/api/v1/auth/register', { email: `bench-${Date.now()}@example.test`, password: 'correct horse battery staple', displayName: 'Bench' });
    api.token = user.accessToken;
    const docPath = `/api/v1/doc/bench/bench-${rows}`;
    await api.call('POST', '/api/v1/doc/bench', {
      id: `bench-${rows}`,
      organizationId: user.user.defaultOrganizationId,
      workspaceId: user.user.defaultWorkspaceId,
      metadata: { fields: FIELDS },
    });
    const {
      rows: [{ id: documentUuid }],
    } = await db.query(`SELECT id FROM documents WHERE doc_id = $1`, [`bench-${rows}`]);
    const seedStart = Date.now();
    await seed(db, documentUuid, rows);
    result.seedSeconds = ms((Date.now() - seedStart) / 1000);

    // Warm up: the service builds expression indexes for fields queried often (docs/documents.md); wait for them.
    for (let i = 0; i < 5; i += 1) {
      await api.call('POST', `${docPath}/data/query`, QUERY);
    }
    const indexStart = Date.now();
    for (;;) {
      const { rows: indexes } = await db.query(`SELECT field_id, status FROM document_field_indexes WHERE document_id = $1`, [documentUuid]);
      result.indexes = indexes.map((index) => `${index.field_id}:${index.status}`);
      if (indexes.length >= 2 && indexes.every((index) => index.status === 'ready')) {
        break;
      }
      if (Date.now() - indexStart > 600_000) {
        log(`  expression indexes not ready after 10 minutes: ${result.indexes.join(', ')}`);
        break;
      }
      // Queries keep counting towards the indexes of fields not indexed yet (for example after a failed build).
      await api.call('POST', `${docPath}/data/query`, QUERY);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    result.indexBuildSeconds = ms((Date.now() - indexStart) / 1000);
    await db.query(`ANALYZE document_rows`);

    // 1. Filtered + sorted page of 20: API vs the same SQL through pg.
    const compiled = compiler.compileQuery(QUERY, FIELDS, { paramOffset: 1 });
    const pageSql = `SELECT r.id, r.seq, r."values", r.version, r.created_at, r.created_by, r.updated_at, r.updated_by
                       FROM document_rows r WHERE r.document_id = $1 AND ${compiled.where}
                      ORDER BY ${compiled.orderBy} LIMIT $${compiled.params.length + 2} OFFSET $${compiled.params.length + 3}`;
    const countSql = `SELECT count(*) AS total FROM document_rows r WHERE r.document_id = $1 AND ${compiled.where}`;
    const plan = await db.query(`EXPLAIN ${pageSql}`, [documentUuid, ...compiled.params, 20, 0]);
    result.pagePlan = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    const apiSamples = [];
    const pgSamples = [];
    const pgPageOnly = [];
    for (let i = 0; i < ITERATIONS + 10; i += 1) {
      let start = performance.now();
      const page = await api.call('POST', `${docPath}/data/query`, QUERY);
      const apiTime = performance.now() - start;
      start = performance.now();
      await Promise.all([db.query(pageSql, [documentUuid, ...compiled.params, 20, 0]), db.query(countSql, [documentUuid, ...compiled.countParams])]);
      const pgTime = performance.now() - start;
      start = performance.now();
      await db.query(pageSql, [documentUuid, ...compiled.params, 20, 0]);
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
      const body = Array.from({ length: 1000 }, (_, i) => ({ target: { row: `r${run * 1000 + i + 1}`, field: 'qty' }, value: { number: 1000 + run } }));
      const start = performance.now();
      const written = await api.call('POST', `${docPath}/data/bulk`, body);
      bulkTimes.push(performance.now() - start);
      if (!written.merged) {
        throw new Error('bulk write was not merged');
      }
    }
    const bulkMedian = percentile(bulkTimes, 50);
    result.bulk = { runs: BULK_RUNS, medianMs: ms(bulkMedian), maxMs: ms(Math.max(...bulkTimes)), rowsPerSecond: Math.round(1000 / (bulkMedian / 1000)) };
    log(`  bulk: ${JSON.stringify(result.bulk)}`);

    // 3. Peak RSS while paging the whole document with cursors.
    const before = rssKb(child.pid);
    let peak = before.rss;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssKb(child.pid).rss);
    }, 20);
    const pagingStart = performance.now();
    let cursor = null;
    let seen = 0;
    let pages = 0;
    const timeline = [];
    const step = Math.max(1, Math.floor(rows / 1000 / 10));
    do {
      const page = await api.call('GET', `${docPath}/data?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen += page.items.length;
      pages += 1;
      cursor = page.nextCursor;
      if (pages % step === 0) {
        timeline.push(Math.round(rssKb(child.pid).rss / 1024));
      }
    } while (cursor);
    clearInterval(sampler);
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
      peakRssMb: ms(Math.max(peak, rssKb(child.pid).rss) / 1024),
      processPeakRssMb: ms(rssKb(child.pid).hwm / 1024),
      rssTimelineMb: timeline,
    };
    log(`  paging: ${JSON.stringify(result.paging)}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await db.end();
    if (args.keep !== 'true') {
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
  }
  return result;
}

async function main() {
  if (args['no-build'] !== 'true') {
    log('building dist/ …');
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  }
  let serverUrl = process.env.DATABASE_URL;
  let embedded;
  if (!serverUrl) {
    const { startEmbeddedPostgres } = await import(join(root, 'dist/src/database/embedded-postgres.js'));
    mkdirSync(join(root, '.data'), { recursive: true });
    embedded = await startEmbeddedPostgres(join(root, '.data/bench-pg'), 'postgres');
    serverUrl = embedded.url;
  }
  const compiler = await import(join(root, 'dist/src/modules/documents/query/query.compiler.js'));
  const results = [];
  try {
    for (const rows of ROW_COUNTS) {
      results.push(await runOne(serverUrl, rows, compiler));
    }
  } finally {
    await embedded?.stop();
  }
  const { rows: [version] } = await (async () => ({ rows: [process.version] }))();
  const lines = [
    `Node ${version}, ${ITERATIONS} iterations per figure, query: status = open AND 100 ≤ price ≤ 5000, sort price desc, page of 20 (+ total)`,
    '',
    '| rows | API p50 | API p99 | pg p50 | pg p99 | ratio p50 | ratio p99 | bulk 1000 rows (median) | bulk rows/s | cursor paging (limit 1000) | peak RSS while paging |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.rows.toLocaleString()} | ${r.query.apiP50} ms | ${r.query.apiP99} ms | ${r.query.pgP50} ms | ${r.query.pgP99} ms | ${r.query.ratioP50}× | ${r.query.ratioP99}× | ${r.bulk.medianMs} ms | ${r.bulk.rowsPerSecond.toLocaleString()} | ${r.paging.seconds} s (${r.paging.rowsPerSecond.toLocaleString()} rows/s) | ${r.paging.peakRssMb} MB (before ${r.paging.rssBeforeMb} MB) |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const outDir = join(root, 'bench/results');
  if (!existsSync(outDir)) {
    mkdirSync(outDir, { recursive: true });
  }
  writeFileSync(join(outDir, `documents-${ROW_COUNTS.join('-')}.json`), `${JSON.stringify(results, null, 2)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
