// The shared plumbing of the benchmarks under bench/ (docs/performance.md): arguments, statistics, building dist/,
// the PostgreSQL server and a fresh database with the migrations applied, the service as a child process, a
// keep-alive HTTP client, a registered user and a document, RSS sampling, the SQL seed and the results file. Plain
// Node ESM, no TypeScript: the benchmarks import the built service only where they must (the migrations, the
// embedded PostgreSQL and the query compiler, all from dist/). bench/speed/harness.mjs re-exports this module.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const log = (...parts) => process.stderr.write(`${parts.join(' ')}\n`);
export const sleep = (msDelay) => new Promise((resolve) => setTimeout(resolve, msDelay));

/** `--key=value` and bare `--flag` (→ 'true'). */
export function parseArgs(argv) {
  return Object.fromEntries(
    argv.map((arg) => {
      const [key, ...rest] = arg.replace(/^--/, '').split('=');
      return [key, rest.length > 0 ? rest.join('=') : 'true'];
    }),
  );
}

export function percentile(samples, p) {
  if (samples.length === 0) {
    return Number.NaN;
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
export const round2 = (n) => Math.round(n * 100) / 100;
export const p50 = (samples) => round2(percentile(samples, 50));

export function buildDist() {
  log('building dist/ …');
  try {
    execFileSync(
      process.execPath,
      [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
  } catch {
    // tsc still emits on type errors; a tree with someone's half-done file should not stop the measurement.
    if (!existsSync(join(root, 'dist/src/main.js'))) {
      throw new Error('the build failed and dist/src/main.js is missing');
    }
    log('  tsc reported errors; running the emitted dist/ anyway');
  }
}

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

/** DATABASE_URL names a server; without it the embedded PostgreSQL of the test setup starts (data under .data/). */
export async function databaseServer() {
  if (process.env.DATABASE_URL) {
    return { url: process.env.DATABASE_URL, stop: async () => undefined };
  }
  const { startEmbeddedPostgres } = await import(join(root, 'dist/src/database/embedded-postgres.js'));
  mkdirSync(join(root, '.data'), { recursive: true });
  const embedded = await startEmbeddedPostgres(join(root, '.data/bench-pg'), 'postgres');
  return { url: embedded.url, stop: () => embedded.stop() };
}

/** A fresh `quire_bench_*` database with every migration applied; `drop()` removes it. */
export async function freshDatabase(serverUrl) {
  const name = `quire_bench_${Date.now().toString(36)}`;
  await adminQuery(serverUrl, `CREATE DATABASE "${name}"`);
  const url = urlFor(serverUrl, name);
  const { DataSource } = await import('typeorm');
  const { dataSourceOptions } = await import(join(root, 'dist/src/database/data-source-options.js'));
  const { loadConfig } = await import(join(root, 'dist/src/config/app.config.js'));
  const migrator = new DataSource(dataSourceOptions(loadConfig({}), url));
  await migrator.initialize();
  await migrator.runMigrations({ transaction: 'each' });
  await migrator.destroy();
  return { name, url, drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** The services started and not stopped yet: an interrupted benchmark (Ctrl-C, timeout) stops them all. */
const running = new Set();
function onSignal(signal) {
  for (const child of running) {
    child.kill('SIGTERM');
  }
  process.exit(signal === 'SIGINT' ? 130 : 143);
}

/**
 * `node dist/src/main.js` on a free port; resolves once /health answers. `env` adds to (or overrides) the
 * environment below: an object, or a function of the port; `stdout` is the child's stdout ('ignore' or 'inherit').
 * `stop()` sends SIGTERM (once) and resolves with the exit code.
 */
export async function startService(databaseUrl, { env = {}, stdout = 'ignore' } = {}) {
  const port = await freePort();
  // The service runs as `npm start` and the image run it (docs/deployment.md, "Memory"): with a 1 GB heap limit.
  // BENCH_SERVICE_NODE_ARGS adds flags, e.g. `--cpu-prof --cpu-prof-dir=.data/prof` to profile the service.
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist/src/main.js')], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      DB_RUN_MIGRATIONS: 'false',
      LOG_LEVEL: 'warn',
      // The maximum the config accepts: the load scenarios must never meet the limiter.
      RATE_LIMIT_PER_MINUTE: '1000000',
      NODE_ENV: 'production',
      NODE_OPTIONS: `--max-old-space-size=1024 ${process.env.NODE_OPTIONS ?? ''}`.trim(),
      ...(typeof env === 'function' ? env(port) : env),
    },
    stdio: ['ignore', stdout, 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (running.size === 0) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  running.add(child);
  const stop = async () => {
    running.delete(child);
    if (running.size === 0) {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
    }
    return exited;
  };
  for (let i = 0; ; i += 1) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      if (response.ok) {
        break;
      }
    } catch {
      // not listening yet
    }
    if (i > 600 || child.exitCode !== null) {
      const code = child.exitCode;
      await stop();
      throw new Error(`the service did not start (exit code ${code})`);
    }
    await sleep(100);
  }
  return { port, pid: child.pid, stop };
}

/**
 * Builds dist/ (`build`, unless false; without a build dist/src/main.js must exist), names or starts the PostgreSQL
 * server (databaseServer), runs `run(serverUrl)` and stops the server.
 */
export async function withDatabaseServer({ build = true } = {}, run) {
  if (build) {
    buildDist();
  } else if (!existsSync(join(root, 'dist/src/main.js'))) {
    throw new Error('dist/src/main.js is missing: run `npm run build` first');
  }
  const server = await databaseServer();
  try {
    return await run(server.url);
  } finally {
    await server.stop();
  }
}

/** `--rows=N[,M…]` (`_` separators allowed), `defaultRows` without it. */
export function rowCounts(args, defaultRows) {
  return String(args.rows ?? defaultRows)
    .split(',')
    .map((n) => Number(n.replace(/_/g, '')));
}

/**
 * For the benchmarks measured per document size: builds dist/ (unless `--no-build`), names or starts the server,
 * then runs `runOne(serverUrl, rows)` for each of `counts` in turn; returns their results.
 */
export async function forEachRowCount(args, counts, runOne) {
  return withDatabaseServer({ build: args['no-build'] !== 'true' }, async (serverUrl) => {
    const results = [];
    for (const rows of counts) {
      results.push(await runOne(serverUrl, rows));
    }
    return results;
  });
}

/**
 * A fresh database on `serverUrl` (freshDatabase), `instances` services on it (startService with `service`'s
 * options) and a `pg` pool of `poolSize`: runs `run({ database, db, service, services })`, then stops the services,
 * closes the pool and drops the database (unless `keep`). `label` names the run in the progress on stderr.
 */
export async function withFreshService(
  serverUrl,
  { label = null, keep = false, poolSize = 2, instances = 1, service: serviceOptions = {} } = {},
  run,
) {
  const database = await freshDatabase(serverUrl);
  if (label) {
    log(`\n== ${label} (database ${database.name})`);
  }
  const db = new pg.Pool({ connectionString: database.url, max: poolSize });
  const services = [];
  try {
    for (let i = 0; i < instances; i += 1) {
      services.push(await startService(database.url, serviceOptions));
    }
    return await run({ database, db, service: services[0], services });
  } finally {
    for (const service of services) {
      await service.stop();
    }
    await db.end();
    if (keep) {
      log(`kept database ${database.name}`);
    } else {
      await database.drop();
    }
  }
}

/**
 * A keep-alive HTTP/1.1 client over node:http (lighter than fetch, so the client's own cost stays small next to
 * the service's). `call` returns the envelope's payload and throws on a non-2xx answer; `timed` adds the latency
 * (of the attempt that answered).
 */
export class Client {
  constructor(port, { sockets = 1, token = null, workspaceId = null } = {}) {
    this.port = port;
    this.token = token;
    this.workspaceId = workspaceId;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
  }

  headers(body) {
    const headers = {};
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    if (this.token) {
      headers.authorization = `Bearer ${this.token}`;
    }
    if (this.workspaceId) {
      headers['x-workspace-id'] = this.workspaceId;
    }
    return headers;
  }

  async timed(method, path, payload) {
    const body = payload === undefined ? undefined : JSON.stringify(payload);
    try {
      return await this.once(method, path, body);
    } catch (error) {
      // The server closes keep-alive sockets idle for 5 s; a request written on one at that moment never reached the
      // service (Node's documented race, `req.reusedSocket`), so sending it again on a new socket is safe.
      if (error.reusedSocket && (error.code === 'ECONNRESET' || error.message === 'socket hang up')) {
        return this.once(method, path, body);
      }
      throw error;
    }
  }

  once(method, path, body) {
    const start = performance.now();
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: this.port, method, path, agent: this.agent, headers: this.headers(body) },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            const ms = performance.now() - start;
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode < 200 || res.statusCode >= 300) {
              reject(new Error(`${method} ${path} → ${res.statusCode} ${text.slice(0, 400)}`));
              return;
            }
            let json = null;
            try {
              json = text ? JSON.parse(text) : null;
            } catch {
              json = text;
            }
            resolve({
              ms,
              payload: json && typeof json === 'object' && 'payload' in json ? json.payload : json,
            });
          });
          res.on('error', reject);
        },
      );
      req.on('error', (error) => {
        error.reusedSocket = req.reusedSocket;
        reject(error);
      });
      req.end(body);
    });
  }

  async call(method, path, payload) {
    return (await this.timed(method, path, payload)).payload;
  }

  close() {
    this.agent.destroy();
  }
}

/**
 * Registers a user (POST /auth/register, as `name`-<time>@example.test) and returns `{ user, api }`: the register
 * payload (`accessToken`, `user` with its default organization and workspace) and a Client with its token and
 * `sockets` (as in Client).
 */
export async function signUp(port, { name = 'bench', sockets = 1 } = {}) {
  const anon = new Client(port);
  try {
    const user = await anon.call('POST', '/api/v1/auth/register', {
      email: `${name}-${Date.now()}@example.test`,
      password: 'correct horse battery staple',
      displayName: 'Bench',
    });
    return { user, api: new Client(port, { sockets, token: user.accessToken }) };
  } finally {
    anon.close();
  }
}

/**
 * Creates document `docType`/`id` with `fields` in the default organization and workspace of `owner` (the `user`
 * of the register payload) through the API; `extra` adds to the body. Returns its API path and, given `db`, its uuid.
 */
export async function createDocument(api, owner, { id, fields, docType = 'bench', db = null, ...extra }) {
  await api.call('POST', `/api/v1/doc/${docType}`, {
    id,
    organizationId: owner.defaultOrganizationId,
    workspaceId: owner.defaultWorkspaceId,
    ...extra,
    metadata: { fields },
  });
  const path = `/api/v1/doc/${docType}/${id}`;
  if (!db) {
    return { path };
  }
  const { rows } = await db.query(`SELECT id FROM documents WHERE doc_type = $1 AND doc_id = $2`, [
    docType,
    id,
  ]);
  return { path, uuid: rows[0].id };
}

/** VmRSS and VmHWM of a process, in kB (0 when gone). */
export function rssKb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0),
      hwm: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0),
    };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

/** CPU time (user + system) a process has used so far, in ms (0 when gone): deltas show where a load's CPU went. */
export function cpuMs(pid) {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks (100/s).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * CPU time (ms) of every process named `postgres` on the machine: the database's share of a load, read before and
 * after it. A backend that ends in between takes its time out of the sum, so the reaped children's time (cutime and
 * cstime, the 14th and 15th fields, kept by the postmaster that waited for them) counts too: without it, a load whose
 * connections closed read as negative.
 */
export function postgresCpuMs() {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.includes('(postgres)')) {
        const fields = stat.split(') ')[1].split(' ');
        total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
      }
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** Samples VmRSS every `everyMs`; `stop()` returns the peak in MB. */
export function rssSampler(pid, everyMs = 50) {
  let peak = rssKb(pid).rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssKb(pid).rss);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return round2(Math.max(peak, rssKb(pid).rss) / 1024);
    },
  };
}

export const FIELDS = [
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

/** The query of bench/documents.bench.mjs: ≈ 12 % of the rows match, sorted by an indexable expression. */
export const QUERY = {
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

/** A full row's values as a client writes them (API form, docs/values.md). */
export function rowValues(n) {
  return {
    name: { text: `Item ${n}` },
    sku: { text: `SKU-${n}` },
    price: { number: ((n * 7919) % 10007) + 0.5 },
    qty: { number: n % 100 },
    due: { date: `2024-${String(1 + (n % 12)).padStart(2, '0')}-${String(1 + (n % 28)).padStart(2, '0')}` },
    status: { selectOption: ['open', 'pending', 'closed', 'archived'][n % 4] },
  };
}

/** The SQL of each field's seeded value in row `g` (the stored form of rowValues(g)). */
const SEED_VALUES = {
  name: `'Item ' || g`,
  sku: `'SKU-' || g`,
  price: `((g::bigint * 7919) % 10007) + 0.5`,
  qty: `g % 100`,
  due: `to_char(date '2024-01-01' + (g % 365), 'YYYY-MM-DD')`,
  status: `(ARRAY['open','pending','closed','archived'])[1 + g % 4]`,
};

/**
 * Rows r1..rN with SQL (generate_series, 200,000 per statement), holding the values of `fieldIds` (default: the six
 * FIELDS), then the document's row counters and VACUUM ANALYZE.
 */
export async function seedRows(db, documentUuid, rows, fieldIds = Object.keys(SEED_VALUES)) {
  const values = fieldIds.map((id) => `'${id}', ${SEED_VALUES[id]}`).join(',\n                ');
  const chunk = 200_000;
  for (let start = 1; start <= rows; start += chunk) {
    const end = Math.min(rows, start + chunk - 1);
    await db.query(
      `INSERT INTO document_rows (document_id, id, "values", created_by, updated_by)
       SELECT $1, 'r' || g,
              jsonb_build_object(
                ${values}),
              'bench', 'bench'
         FROM generate_series($2::int, $3::int) AS g`,
      [documentUuid, start, end],
    );
    log(`  seeded ${end.toLocaleString()} rows`);
  }
  await db.query(`UPDATE documents SET row_count = $2, row_seq = $2 WHERE id = $1`, [documentUuid, rows]);
  await db.query(`VACUUM ANALYZE document_rows`);
}

/** document-index.service.ts: a document with fewer rows gets no on-demand expression index. */
export const INDEX_MIN_ROWS = 10_000;

/**
 * Waits until the service's on-demand expression indexes of a document of `rows` rows (docs/documents.md) are
 * ready: calls `touch()` (a query that counts towards them), checks `document_field_indexes`, and again every
 * 250 ms, for at most 10 minutes (not at all below INDEX_MIN_ROWS rows); then ANALYZE, so that the API and direct
 * SQL get the same plan. Returns the indexes as `field:status` and the seconds waited.
 */
export async function waitForIndexes(db, documentUuid, rows, touch, { min = 2 } = {}) {
  const started = Date.now();
  let indexes = [];
  for (;;) {
    await touch();
    if (rows < INDEX_MIN_ROWS) {
      break;
    }
    const { rows: found } = await db.query(
      `SELECT field_id, status FROM document_field_indexes WHERE document_id = $1`,
      [documentUuid],
    );
    indexes = found.map((index) => `${index.field_id}:${index.status}`);
    if (found.length >= min && found.every((index) => index.status === 'ready')) {
      break;
    }
    if (Date.now() - started > 600_000) {
      log(`  expression indexes not ready after 10 minutes: ${indexes.join(', ') || 'none'}`);
      break;
    }
    await sleep(250);
  }
  const seconds = round2((Date.now() - started) / 1000);
  await db.query(`ANALYZE document_rows`);
  return { indexes, seconds };
}

/** Writes `data` as JSON to bench/results/`file` (git-ignored); returns the path. */
export function writeResults(file, data) {
  const outDir = join(root, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, file);
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
  return path;
}

/**
 * Sequential samples of several calls, interleaved so that every figure sees the same machine load, after `warmup`
 * unmeasured rounds (10 by default).
 */
export async function interleaved(iterations, calls, { warmup = 10 } = {}) {
  const samples = calls.map(() => []);
  for (let i = 0; i < iterations + warmup; i += 1) {
    for (const [k, call] of calls.entries()) {
      const ms = await call(i);
      if (i >= warmup) {
        samples[k].push(ms);
      }
    }
  }
  return samples;
}

export async function timedSql(db, sql, params) {
  const start = performance.now();
  await db.query(sql, params);
  return performance.now() - start;
}
