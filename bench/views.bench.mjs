#!/usr/bin/env node
// Views benchmark (issue 9, docs/performance.md "Views"). Plain Node, run by hand:
//
//   node bench/views.bench.mjs                          # 100,000 rows
//   node bench/views.bench.mjs --rows=100000 --iterations=300 --no-build
//
// DATABASE_URL names a PostgreSQL server (a fresh `quire_bench_*` database is created and dropped); without it the
// embedded server of the test setup is started. The script builds dist/, starts the service as a child process,
// seeds rows with SQL (generate_series), creates a table view whose config holds the filter and the sort of the
// documents benchmark, and reports p50/p99 of a page of 20:
//   - through the view: GET /data?viewId=<view>&pageSize=20
//   - the same query without the view: POST /data/query with the filter and sort in the body
// Both run the same compiled SQL (the view is resolved by one primary-key lookup of `views`), alternating, after
// the expression indexes the service builds on demand are ready.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
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


async function runOne(serverUrl, rows) {
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
    stdio: ['ignore', args.verbose === 'true' ? 'inherit' : 'ignore', 'inherit'],
  });
  const db = new pg.Pool({ connectionString: dbUrl, max: 2 });
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
    const docPath = `/api/v1/doc/bench/views-${rows}`;
    await api.call('POST', '/api/v1/doc/bench', {
      id: `views-${rows}`,
      organizationId: user.user.defaultOrganizationId,
      workspaceId: user.user.defaultWorkspaceId,
      metadata: { fields: FIELDS },
    });
    const {
      rows: [{ id: documentUuid }],
    } = await db.query(`SELECT id FROM documents WHERE doc_id = $1`, [`views-${rows}`]);
    await seed(db, documentUuid, rows);
    await api.call('POST', `${docPath}/views`, {
      id: 'open-by-price',
      name: 'Open, 100–5000, by price',
      type: 'table',
      config: { filters: QUERY.filters, sorts: QUERY.sorts },
    });

    // Warm up until the expression indexes on status and price are ready (docs/documents.md).
    const indexStart = Date.now();
    for (;;) {
      await api.call('GET', `${docPath}/data?viewId=open-by-price&pageSize=20`);
      const { rows: indexes } = await db.query(`SELECT field_id, status FROM document_field_indexes WHERE document_id = $1`, [documentUuid]);
      if (indexes.length >= 2 && indexes.every((index) => index.status === 'ready')) {
        break;
      }
      if (Date.now() - indexStart > 600_000) {
        log('  expression indexes not ready after 10 minutes');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await db.query(`ANALYZE document_rows`);

    const viewSamples = [];
    const querySamples = [];
    let same = true;
    for (let i = 0; i < ITERATIONS + 10; i += 1) {
      let start = performance.now();
      const viewPage = await api.call('GET', `${docPath}/data?viewId=open-by-price&pageSize=20`);
      const viewTime = performance.now() - start;
      start = performance.now();
      const queryPage = await api.call('POST', `${docPath}/data/query`, QUERY);
      const queryTime = performance.now() - start;
      if (i >= 10) {
        viewSamples.push(viewTime);
        querySamples.push(queryTime);
      }
      if (i === 0) {
        same = JSON.stringify(viewPage.items.map((row) => row.id)) === JSON.stringify(queryPage.items.map((row) => row.id));
        result.total = viewPage.total;
      }
    }
    if (!same) {
      throw new Error('the view and the query returned different rows');
    }
    result.view = { p50: ms(percentile(viewSamples, 50)), p99: ms(percentile(viewSamples, 99)) };
    result.query = { p50: ms(percentile(querySamples, 50)), p99: ms(percentile(querySamples, 99)) };
    log(`  view: ${JSON.stringify(result.view)} query: ${JSON.stringify(result.query)}`);
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
  const results = [];
  try {
    for (const rows of ROW_COUNTS) {
      results.push(await runOne(serverUrl, rows));
    }
  } finally {
    await embedded?.stop();
  }
  const lines = [
    `Node ${process.version}, ${ITERATIONS} iterations per figure, filter status = open AND 100 ≤ price ≤ 5000, sort price desc, page of 20 (+ total)`,
    '',
    '| rows | through the view p50 | p99 | same query, no view p50 | p99 | matching rows |',
    '|---:|---:|---:|---:|---:|---:|',
    ...results.map((r) => `| ${r.rows.toLocaleString()} | ${r.view.p50} ms | ${r.view.p99} ms | ${r.query.p50} ms | ${r.query.p99} ms | ${r.total ?? 'n/a'} |`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const outDir = join(root, 'bench/results');
  if (!existsSync(outDir)) {
    mkdirSync(outDir, { recursive: true });
  }
  writeFileSync(join(outDir, `views-${ROW_COUNTS.join('-')}.json`), `${JSON.stringify(results, null, 2)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
