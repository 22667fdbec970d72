// Baseline benchmark: GET /health (public, not rate limited, no database) on the built service.
//
//   npm run build && npm run bench:health
//
// Creates a fresh `quire_bench_*` database (on the DATABASE_URL server when set, else on the embedded PostgreSQL of
// the test setup), starts `node dist/src/main.js` on it (bench/lib/harness.mjs), waits for /health, runs autocannon
// for BENCH_DURATION seconds (10) with BENCH_CONNECTIONS connections (50) against BENCH_PATH (/health), prints
// requests/s and latency percentiles, then stops the service with SIGTERM. The last line is JSON, for comparing
// runs.
import autocannon from 'autocannon';
import { withDatabaseServer, withFreshService } from './lib/harness.mjs';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const path = process.env.BENCH_PATH ?? '/health';

async function run({ database, service }) {
  const url = `http://127.0.0.1:${service.port}${path}`;
  const check = await fetch(url);
  if (!check.ok) {
    throw new Error(`${url} answered ${check.status}, not 200`);
  }
  const server = process.env.DATABASE_URL ? 'DATABASE_URL server' : 'embedded PostgreSQL';
  console.log(
    `benchmarking GET ${path} for ${duration} s with ${connections} connections (node ${process.version}, ${database.name} on the ${server})`,
  );
  // Warm-up, not measured.
  await autocannon({ url, connections, duration: 2 });
  const result = await autocannon({ url, connections, duration });
  const summary = {
    endpoint: `GET ${path}`,
    connections,
    durationSeconds: duration,
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
  console.log(`requests/s (average): ${summary.requestsPerSecond}`);
  console.log(
    `latency p50 ${summary.latencyMs.p50} ms, p90 ${summary.latencyMs.p90} ms, p99 ${summary.latencyMs.p99} ms, max ${summary.latencyMs.max} ms`,
  );
  console.log(
    `requests ${summary.requests}, non-2xx ${summary.non2xx}, errors ${summary.errors}, timeouts ${summary.timeouts}`,
  );
  console.log(JSON.stringify(summary));
  const code = await service.stop();
  if (code !== 0) {
    console.error(`the service exited with ${code}`);
    process.exitCode = 1;
  }
  if (summary.non2xx > 0 || summary.errors > 0) {
    process.exitCode = 1;
  }
}

try {
  await withDatabaseServer({ build: false }, (serverUrl) => withFreshService(serverUrl, {}, run));
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
