#!/usr/bin/env node
// Speed benchmark (issue 15, docs/performance.md "Speed"): every scenario of the table, each next to the
// comparison figure it is judged against, measured in the same run, and its target. Plain Node:
//
//   node bench/speed.bench.mjs                               # 1,000,000 rows, every scenario (npm run bench:all)
//   node bench/speed.bench.mjs --rows=100000 --quick         # the quick run (npm run bench)
//   node bench/speed.bench.mjs --no-build --only=1,6         # some scenarios, dist/ as it is
//
// Flags: --rows=N (default 1000000), --quick (fewer samples, shorter load phases, 2,000 instead of 20,000 calls in
// scenario 5), --only=1,2,… (scenario numbers), --no-build (skip tsc), --iterations=N (samples per latency figure),
// --keep (keep the database). DATABASE_URL names a PostgreSQL server (a fresh `quire_bench_*` database is created
// and dropped); without it the embedded server of the test setup starts. Progress goes to stderr, the table to
// stdout, the raw figures to bench/results/speed-<date>.json (git-ignored).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  Client,
  FIELDS,
  buildDist,
  databaseServer,
  freshDatabase,
  log,
  parseArgs,
  root,
  round2,
  rssKb,
  seedRows,
  startService,
} from './speed/harness.mjs';
import { readScenarios } from './speed/read-scenarios.mjs';
import { writeScenarios } from './speed/write-scenarios.mjs';

const args = parseArgs(process.argv.slice(2));
const QUICK = args.quick === 'true';
const ROWS = Number((args.rows ?? '1000000').replace(/_/g, ''));
const ITERATIONS = Number(args.iterations ?? (QUICK ? 100 : 200));
const ONLY = args.only ? new Set(args.only.split(',').map(Number)) : null;
const LOAD_SECONDS = QUICK ? 5 : 10;
const THROUGHPUT_SECONDS = QUICK ? 3 : 5;
const FLOOD_CALLS = Number(args['flood-calls'] ?? (QUICK ? 2_000 : 20_000));
const BULK_RUNS = Number(args['bulk-runs'] ?? (QUICK ? 3 : 5));
const wanted = (n) => !ONLY || ONLY.has(n);

/** One line of the table. `pass` null = reported only. */
const lines = [];
function report(id, what, fields) {
  lines.push({ id, what, ...fields });
  log(
    `  [${id}] ${fields.measured} | vs ${fields.comparison ?? '—'} | ratio ${fields.ratio ?? '—'} | target ${fields.target} | ${verdict(fields.pass)}`,
  );
}
const verdict = (pass) => (pass === null || pass === undefined ? 'report' : pass ? 'PASS' : 'FAIL');

async function scenario(n, what, run) {
  if (!wanted(n)) {
    return;
  }
  log(`\n== ${n}. ${what}`);
  try {
    await run();
  } catch (error) {
    log(`  failed: ${error.stack ?? error}`);
    report(String(n), what, {
      measured: `error: ${String(error.message ?? error).slice(0, 120)}`,
      target: '—',
      pass: false,
    });
  }
}

async function main() {
  if (args['no-build'] !== 'true') {
    buildDist();
  }
  const server = await databaseServer();
  const database = await freshDatabase(server.url);
  log(`database ${database.name}, ${ROWS.toLocaleString()} rows${QUICK ? ', quick' : ''}`);
  const db = new pg.Pool({ connectionString: database.url, max: 4 });
  const service = await startService(database.url);
  // The machine's load matters on 2 shared cores: ratios taken in one run stay comparable, absolute figures less so.
  const results = {
    startedAt: new Date().toISOString(),
    node: process.version,
    rows: ROWS,
    quick: QUICK,
    iterations: ITERATIONS,
    loadAverageAtStart: loadavg().map(round2),
  };
  const clients = [];
  const client = (options) => {
    const c = new Client(service.port, options);
    clients.push(c);
    return c;
  };
  try {
    results.idleRssMb = round2(rssKb(service.pid).rss / 1024);
    const anon = client();
    const user = await anon.call('POST', '/api/v1/auth/register', {
      email: `bench-${Date.now()}@example.test`,
      password: 'correct horse battery staple',
      displayName: 'Bench',
    });
    const auth = { token: user.accessToken, workspaceId: user.user.defaultWorkspaceId };
    const api = client(auth);
    const docId = 'speed-main';
    const docPath = `/api/v1/doc/bench/${docId}`;
    const createDocument = async (id) => {
      await api.call('POST', '/api/v1/doc/bench', {
        id,
        organizationId: user.user.defaultOrganizationId,
        workspaceId: auth.workspaceId,
        metadata: { fields: FIELDS },
      });
      const { rows } = await db.query(`SELECT id FROM documents WHERE doc_id = $1`, [id]);
      return rows[0].id;
    };
    const documentUuid = await createDocument(docId);
    const seedStart = Date.now();
    await seedRows(db, documentUuid, ROWS);
    results.seedSeconds = round2((Date.now() - seedStart) / 1000);

    // Run order: the read scenarios (1, 8, 6) before anything adds rows, so the document holds exactly ROWS rows.
    const ctx = {
      databaseUrl: database.url,
      api,
      anon,
      auth,
      client,
      createDocument,
      db,
      docPath,
      documentUuid,
      results,
      report,
      service,
      settings: { ROWS, ITERATIONS, LOAD_SECONDS, THROUGHPUT_SECONDS, FLOOD_CALLS, BULK_RUNS },
    };
    for (const { n, what, run } of [...readScenarios(ctx), ...writeScenarios(ctx)]) {
      await scenario(n, what, run);
    }
  } finally {
    clients.forEach((c) => c.close());
    await service.stop();
    await db.end();
    if (args.keep !== 'true') {
      await database.drop();
    }
    await server.stop();
  }

  results.loadAverageAtEnd = loadavg().map(round2);
  const order = ['1a', '1b', '2', '3', '4', '5', '6a', '6b', '6c', '7', '8'];
  lines.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
  results.table = lines;
  const table = [
    `Quire speed benchmark (issue 15): ${ROWS.toLocaleString()} rows${QUICK ? ', --quick' : ''}, Node ${process.version}, ${ITERATIONS} samples per latency figure, ${results.startedAt}, load average ${results.loadAverageAtStart[0]} → ${results.loadAverageAtEnd[0]}`,
    '',
    '| # | scenario | measured | compared with (same run) | ratio | target | result |',
    '|---|---|---|---|---:|---|---|',
    ...lines.map(
      (l) =>
        `| ${l.id} | ${l.what} | ${l.measured} | ${l.comparison ?? '—'} | ${l.ratio ?? '—'} | ${l.target} | ${verdict(l.pass)} |`,
    ),
  ];
  process.stdout.write(`${table.join('\n')}\n`);
  const outDir = join(root, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `speed-${results.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  log(`\nraw figures: ${file}`);
  if (lines.some((l) => l.measured.startsWith('error:'))) {
    process.exitCode = 1;
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
