#!/usr/bin/env node
// Webhooks benchmark (issue 12, docs/performance.md "Webhooks"). Plain Node, run by hand:
//
//   node bench/webhooks.bench.mjs                          # 10,000 events at 200 events/s
//   node bench/webhooks.bench.mjs --events=10000 --rate=0  # all at once (a backlog of 10,000)
//   node bench/webhooks.bench.mjs --source=api --events=500 --concurrency=8   # row writes through the API
//   node bench/webhooks.bench.mjs --no-build --instances=2 --keep   # keep the quire_bench_* database
//
// DATABASE_URL names a PostgreSQL server (a fresh `quire_bench_*` database is created and dropped); without it
// the embedded server of the test setup is started. The script builds dist/, starts the service as child
// process(es) with WEBHOOK_ALLOW_PRIVATE=true, runs a receiver on 127.0.0.1, creates one webhook and raises
// events: `--source=outbox` (default) commits `view_updated` events straight into the outbox at `--rate`
// events/s (what any module's write does, without the cost of the write itself); `--source=api` creates rows
// through POST /doc/.../data (one `data_row_created` per row, as a client would). It reports events lost
// (raised but never received: must be 0), duplicates (the same deliveryId received twice), the p50/p99/max
// delivery lag (receipt time − event time) and the delivery rate.
import { execFileSync, spawn } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
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
const EVENTS = Number(String(args.events ?? '10000').replace(/_/g, ''));
const RATE = Number(args.rate ?? 200);
const SOURCE = args.source ?? 'outbox';
const CONCURRENCY = Number(args.concurrency ?? 8);
const INSTANCES = Number(args.instances ?? 1);
const TIMEOUT_MS = Number(args['timeout-s'] ?? 480) * 1000;
const log = (...parts) => process.stderr.write(`${parts.join(' ')}\n`);

function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const ms = (n) => Math.round(n * 10) / 10;

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

async function call(base, token, method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) {
    throw new Error(`${method} ${path} → ${response.status} ${JSON.stringify(json).slice(0, 500)}`);
  }
  return json.payload;
}

/** The loopback receiver: answers 200 at once and remembers what arrived when. */
function startReceiver() {
  const seen = new Map(); // deliveryId → count
  const lags = [];
  const keys = new Set(); // event keys received (payload n or row id)
  let received = 0;
  const server = createHttpServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const now = Date.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      received += 1;
      seen.set(body.deliveryId, (seen.get(body.deliveryId) ?? 0) + 1);
      lags.push(now - Date.parse(body.timestamp));
      keys.add(String(body.payload.n ?? body.payload.rowId));
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/hook`,
        stats: () => ({ received, distinctDeliveries: seen.size, keys, lags }),
        close: () => new Promise((done) => server.close(done)),
      }),
    ),
  );
}

async function startService(dbUrl) {
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
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '200',
      OUTBOX_POLL_INTERVAL_MS: '100',
      OUTBOX_BATCH_SIZE: '1000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i += 1) {
    try {
      await fetch(`${base}/health`);
      break;
    } catch {
      if (i > 300 || child.exitCode !== null) {
        throw new Error('service did not start');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return { base, child };
}

async function raiseOutboxEvents(db, user) {
  const perTick = RATE > 0 ? Math.max(1, Math.round(RATE / 20)) : 500;
  const started = Date.now();
  for (let n = 1; n <= EVENTS; n += perTick) {
    const last = Math.min(EVENTS, n + perTick - 1);
    await db.query(
      `INSERT INTO outbox (id, event_type, organization_id, workspace_id, doc_type, doc_id, triggered_by, payload)
       SELECT gen_random_uuid(), 'view_updated', $1, $2, 'bench', 'bench-doc', $3, jsonb_build_object('n', g)
         FROM generate_series($4::int, $5::int) AS g ORDER BY g`,
      [user.defaultOrganizationId, user.defaultWorkspaceId, user.id, n, last],
    );
    if (RATE > 0) {
      const due = started + ((last / RATE) * 1000);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
    }
  }
}

async function raiseApiEvents(base, token, user) {
  await call(base, token, 'POST', '/api/v1/doc/bench', {
    id: 'bench-doc',
    organizationId: user.defaultOrganizationId,
    workspaceId: user.defaultWorkspaceId,
    metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] },
  });
  let next = 1;
  const worker = async () => {
    while (next <= EVENTS) {
      const n = next;
      next += 1;
      await call(base, token, 'POST', '/api/v1/doc/bench/bench-doc/data', { id: String(n), values: { name: `Row ${n}` } });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function main() {
  if (args['no-build'] !== 'true') {
    log('building dist/ …');
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  }
  let serverUrl = process.env.DATABASE_URL;
  let embedded;
  if (!serverUrl) {
    const { startEmbeddedPostgres } = await import(join(root, 'dist/src/database/embedded-postgres.js'));
    embedded = await startEmbeddedPostgres(join(root, '.data/bench-pg'), 'postgres');
    serverUrl = embedded.url;
  }
  const database = `quire_bench_${Date.now().toString(36)}`;
  await adminQuery(serverUrl, `CREATE DATABASE "${database}"`);
  const dbUrl = urlFor(serverUrl, database);
  const { DataSource } = await import('typeorm');
  const { dataSourceOptions } = await import(join(root, 'dist/src/database/data-source-options.js'));
  const { loadConfig } = await import(join(root, 'dist/src/config/app.config.js'));
  const migrator = new DataSource(dataSourceOptions(loadConfig({}), dbUrl));
  await migrator.initialize();
  await migrator.runMigrations({ transaction: 'each' });
  await migrator.destroy();

  const receiver = await startReceiver();
  const services = [];
  const db = new pg.Pool({ connectionString: dbUrl, max: 2 });
  try {
    for (let i = 0; i < INSTANCES; i += 1) {
      services.push(await startService(dbUrl));
    }
    const base = services[0].base;
    const auth = await call(base, null, 'POST', '/api/v1/auth/register', { email: `bench-${Date.now()}@example.test`, password: 'correct horse battery staple', displayName: 'Bench' });
    const token = auth.accessToken;
    await call(base, token, 'POST', '/api/v1/webhooks', {
      name: 'bench',
      url: receiver.url,
      events: [SOURCE === 'api' ? 'data_row_created' : 'view_updated'],
      retryInterval: 1,
    });
    log(`raising ${EVENTS.toLocaleString()} events (${SOURCE}, ${RATE > 0 && SOURCE === 'outbox' ? `${RATE}/s` : 'as fast as possible'}), ${INSTANCES} instance(s)`);
    const started = Date.now();
    if (SOURCE === 'api') {
      await raiseApiEvents(base, token, auth.user);
    } else {
      await raiseOutboxEvents(db, auth.user);
    }
    const raisedSeconds = (Date.now() - started) / 1000;
    let last = -1;
    let stillSince = Date.now();
    let lastProgress = Date.now();
    while (receiver.stats().keys.size < EVENTS && Date.now() - started < TIMEOUT_MS) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      if (Date.now() - lastProgress >= 5000) {
        lastProgress = Date.now();
        const {
          rows: [progress],
        } = await db.query(
          `SELECT (SELECT count(*) FROM outbox WHERE dispatched_at IS NULL)::int AS "outboxPending",
                  (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying'))::int AS "deliveriesQueued"`,
        );
        log(`  ${Math.round((Date.now() - started) / 1000)} s: received ${receiver.stats().received}, outbox pending ${progress.outboxPending}, deliveries queued ${progress.deliveriesQueued}`);
      }
      const { received } = receiver.stats();
      if (received !== last) {
        last = received;
        stillSince = Date.now();
      } else if (Date.now() - stillSince > 30_000) {
        log('  nothing arrived for 30 s: stopping');
        break;
      }
    }
    const doneSeconds = (Date.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 1500)); // late duplicates would show up here
    const stats = receiver.stats();
    const result = {
      source: SOURCE,
      instances: INSTANCES,
      events: EVENTS,
      rate: SOURCE === 'outbox' ? RATE : null,
      received: stats.received,
      lost: EVENTS - stats.keys.size,
      duplicates: stats.received - stats.distinctDeliveries,
      lagMs: { p50: ms(percentile(stats.lags, 50)), p99: ms(percentile(stats.lags, 99)), max: ms(Math.max(...stats.lags)) },
      raisedSeconds: ms(raisedSeconds),
      deliveredSeconds: ms(doneSeconds),
      deliveriesPerSecond: Math.round(stats.received / doneSeconds),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    for (const service of services) {
      service.child.kill('SIGTERM');
      await new Promise((resolve) => service.child.once('exit', resolve));
    }
    await receiver.close();
    await db.end();
    if (args.keep === 'true') {
      log(`kept database ${database}`);
    } else {
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
    await embedded?.stop?.();
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exit(1);
});
