#!/usr/bin/env node
// Point-in-time export benchmark (issue 11, docs/documents.md "Point-in-time export", docs/performance.md).
// Plain Node, run by hand:
//
//   node bench/export.bench.mjs                          # 1,000,000 rows, csv
//   node bench/export.bench.mjs --rows=100000 --format=xlsx --no-build --keep
//
// DATABASE_URL names a PostgreSQL server (a fresh `quire_bench_*` database is created and dropped); without it the
// embedded server of the test setup is started. The script builds dist/, starts the service as a child process,
// seeds the rows with SQL (they count as present at revision 1, the document's creation), then changes the document
// through the API so that the old revision differs from the current one — a 1000-row bulk update, 100 rows deleted,
// 100 created, and a field deleted (its values snapshot covers every row) — and finally exports the document as of
// revision 1, reading the stream to its end. It reports the time to the first byte and to the end, the bytes and
// rows received, and the service's peak RSS during the export (sampled every 20 ms from /proc).
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
const ROW_COUNTS = (args.rows ?? '1000000').split(',').map((n) => Number(n.replace(/_/g, '')));
const FORMAT = args.format ?? 'csv';
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
];

async function seed(db, documentUuid, rows) {
  const chunk = 200_000;
  for (let start = 1; start <= rows; start += chunk) {
    const end = Math.min(rows, start + chunk - 1);
    await db.query(
      `INSERT INTO document_rows (document_id, id, "values", created_by, updated_by)
       SELECT $1, 'r' || g,
              jsonb_build_object('name', 'Item ' || g, 'sku', 'SKU-' || g, 'price', ((g::bigint * 7919) % 10007) + 0.5,
                                 'qty', g % 100, 'due', to_char(date '2024-01-01' + (g % 365), 'YYYY-MM-DD')),
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
      // The set-up converts a field of every row (one statement over the whole document): no statement time limit.
      DB_STATEMENT_TIMEOUT_MS: '0',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const db = new pg.Pool({ connectionString: dbUrl, max: 2 });
  const result = { rows, format: FORMAT };
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
    const docPath = `/api/v1/doc/bench/export-${rows}`;
    await api.call('POST', '/api/v1/doc/bench', {
      id: `export-${rows}`,
      organizationId: user.user.defaultOrganizationId,
      workspaceId: user.user.defaultWorkspaceId,
      metadata: { fields: FIELDS },
    });
    const {
      rows: [{ id: documentUuid }],
    } = await db.query(`SELECT id FROM documents WHERE doc_id = $1`, [`export-${rows}`]);
    const { rows: [{ id: firstRevision }] } = await db.query(`SELECT id FROM revisions WHERE document_id = $1 AND version = 1`, [documentUuid]);
    await seed(db, documentUuid, rows);

    // Later revisions: what the export has to undo.
    const changeStart = Date.now();
    await api.call('POST', `${docPath}/data/bulk`, Array.from({ length: 1000 }, (_, i) => ({ target: { row: `r${i + 1}`, field: 'qty' }, value: { number: 1000 } })));
    for (let i = 0; i < 100; i += 1) {
      await api.call('DELETE', `${docPath}/data/r${rows - i}`);
      await api.call('POST', `${docPath}/data`, { id: `n${i}`, values: { name: `New ${i}` } });
    }
    await api.call('PUT', `${docPath}/metadata`, { fields: FIELDS.filter((field) => field.id !== 'sku') });
    result.changesSeconds = ms((Date.now() - changeStart) / 1000);
    const { rows: [{ count: laterOps }] } = await db.query(`SELECT count(*)::int AS count FROM revision_operations WHERE document_id = $1`, [documentUuid]);
    result.laterOperations = laterOps;
    log(`  later revisions written (${laterOps} operations, ${result.changesSeconds} s)`);

    const before = rssKb(child.pid);
    let peak = before.rss;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssKb(child.pid).rss);
    }, 20);
    const start = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}${docPath}/revisions/${firstRevision}/export?format=${FORMAT}`, { headers: { authorization: `Bearer ${api.token}` } });
    if (!response.ok) {
      throw new Error(`export → ${response.status} ${await response.text()}`);
    }
    let firstByte = null;
    let bytes = 0;
    let newlines = 0;
    for await (const chunk of response.body) {
      firstByte ??= performance.now() - start;
      bytes += chunk.length;
      for (let i = 0; i < chunk.length; i += 1) {
        if (chunk[i] === 10) {
          newlines += 1;
        }
      }
    }
    const seconds = (performance.now() - start) / 1000;
    clearInterval(sampler);
    result.export = {
      firstByteMs: ms(firstByte ?? 0),
      seconds: ms(seconds),
      megabytes: ms(bytes / 1024 / 1024),
      lines: newlines,
      rowsPerSecond: Math.round(rows / seconds),
      rssBeforeMb: ms(before.rss / 1024),
      peakRssMb: ms(Math.max(peak, rssKb(child.pid).rss) / 1024),
      contentDisposition: response.headers.get('content-disposition'),
    };
    if (FORMAT === 'csv' && newlines !== rows + 1) {
      throw new Error(`csv export has ${newlines} lines, expected ${rows + 1} (header + every row as of revision 1)`);
    }
    log(`  export: ${JSON.stringify(result.export)}`);
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
    `Node ${process.version}; export of revision 1 after a 1000-row bulk update, 100 deletes, 100 creates and a field deletion`,
    '',
    '| rows | format | later operations | first byte | total | MB | rows/s | peak RSS (before) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.rows.toLocaleString()} | ${r.format} | ${r.laterOperations.toLocaleString()} | ${r.export.firstByteMs} ms | ${r.export.seconds} s | ${r.export.megabytes} | ${r.export.rowsPerSecond.toLocaleString()} | ${r.export.peakRssMb} MB (${r.export.rssBeforeMb} MB) |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const outDir = join(root, 'bench/results');
  if (!existsSync(outDir)) {
    mkdirSync(outDir, { recursive: true });
  }
  writeFileSync(join(outDir, `export-${FORMAT}-${ROW_COUNTS.join('-')}.json`), `${JSON.stringify(results, null, 2)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
