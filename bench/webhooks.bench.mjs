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
// delivery lag (receipt time − event time) and the delivery rate. The plumbing is bench/lib/harness.mjs.
import { createServer as createHttpServer } from 'node:http';
import {
  createDocument,
  log,
  parseArgs,
  percentile,
  signUp,
  sleep,
  withDatabaseServer,
  withFreshService,
} from './lib/harness.mjs';

const args = parseArgs(process.argv.slice(2));
const EVENTS = Number(String(args.events ?? '10000').replace(/_/g, ''));
const RATE = Number(args.rate ?? 200);
const SOURCE = args.source ?? 'outbox';
const CONCURRENCY = Number(args.concurrency ?? 8);
const INSTANCES = Number(args.instances ?? 1);
const TIMEOUT_MS = Number(args['timeout-s'] ?? 480) * 1000;
const ms = (n) => Math.round(n * 10) / 10;
/** Private receivers allowed, fast polls, large outbox batches. */
const SERVICE_ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '200',
  OUTBOX_POLL_INTERVAL_MS: '100',
  OUTBOX_BATCH_SIZE: '1000',
};

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
        // The services may still hold keep-alive connections to it: cut them.
        close: () =>
          new Promise((done) => {
            server.close(done);
            server.closeAllConnections();
          }),
      }),
    ),
  );
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
      const due = started + (last / RATE) * 1000;
      await sleep(Math.max(0, due - Date.now()));
    }
  }
}

async function raiseApiEvents(api, user) {
  const { path } = await createDocument(api, user, {
    id: 'bench-doc',
    fields: [{ id: 'name', name: 'Name', type: 'text' }],
  });
  let next = 1;
  const worker = async () => {
    while (next <= EVENTS) {
      const n = next;
      next += 1;
      await api.call('POST', `${path}/data`, { id: String(n), values: { name: `Row ${n}` } });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function run({ db, service }) {
  const receiver = await startReceiver();
  // One socket per writer: --source=api keeps CONCURRENCY requests in flight.
  const { user: auth, api } = await signUp(service.port, { sockets: CONCURRENCY });
  try {
    await api.call('POST', '/api/v1/webhooks', {
      name: 'bench',
      url: receiver.url,
      events: [SOURCE === 'api' ? 'data_row_created' : 'view_updated'],
      retryInterval: 1,
    });
    log(
      `raising ${EVENTS.toLocaleString()} events (${SOURCE}, ${RATE > 0 && SOURCE === 'outbox' ? `${RATE}/s` : 'as fast as possible'}), ${INSTANCES} instance(s)`,
    );
    const started = Date.now();
    if (SOURCE === 'api') {
      await raiseApiEvents(api, auth.user);
    } else {
      await raiseOutboxEvents(db, auth.user);
    }
    const raisedSeconds = (Date.now() - started) / 1000;
    let last = -1;
    let stillSince = Date.now();
    let lastProgress = Date.now();
    while (receiver.stats().keys.size < EVENTS && Date.now() - started < TIMEOUT_MS) {
      await sleep(500);
      if (Date.now() - lastProgress >= 5000) {
        lastProgress = Date.now();
        const {
          rows: [progress],
        } = await db.query(
          `SELECT (SELECT count(*) FROM outbox WHERE dispatched_at IS NULL)::int AS "outboxPending",
                  (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying'))::int AS "deliveriesQueued"`,
        );
        log(
          `  ${Math.round((Date.now() - started) / 1000)} s: received ${receiver.stats().received}, outbox pending ${progress.outboxPending}, deliveries queued ${progress.deliveriesQueued}`,
        );
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
    await sleep(1500); // late duplicates would show up here
    const stats = receiver.stats();
    const result = {
      source: SOURCE,
      instances: INSTANCES,
      events: EVENTS,
      rate: SOURCE === 'outbox' ? RATE : null,
      received: stats.received,
      lost: EVENTS - stats.keys.size,
      duplicates: stats.received - stats.distinctDeliveries,
      lagMs: {
        p50: ms(percentile(stats.lags, 50)),
        p99: ms(percentile(stats.lags, 99)),
        max: ms(Math.max(...stats.lags)),
      },
      raisedSeconds: ms(raisedSeconds),
      deliveredSeconds: ms(doneSeconds),
      deliveriesPerSecond: Math.round(stats.received / doneSeconds),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    api.close();
    await receiver.close();
  }
}

async function main() {
  await withDatabaseServer({ build: args['no-build'] !== 'true' }, (serverUrl) =>
    withFreshService(
      serverUrl,
      { keep: args.keep === 'true', instances: INSTANCES, service: { env: SERVICE_ENV } },
      run,
    ),
  );
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exit(1);
});
