// Baseline benchmark: GET /health (public, not rate limited, no database) on the built service.
//
//   npm run build && npm run bench
//
// Starts `node dist/src/main.js` (DATABASE_URL when set, else the embedded PostgreSQL under .data/bench),
// waits for /health, runs autocannon for BENCH_DURATION seconds (10) with BENCH_CONNECTIONS connections (50),
// prints requests/s and latency percentiles, then stops the service with SIGTERM.
// The last line is JSON, for comparing runs.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import autocannon from 'autocannon';

const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const path = process.env.BENCH_PATH ?? '/health';

if (!existsSync('dist/src/main.js')) {
  console.error('dist/src/main.js is missing: run `npm run build` first');
  process.exit(1);
}

const service = spawn(process.execPath, ['dist/src/main.js'], {
  env: {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    DATA_DIR: process.env.DATA_DIR ?? '.data/bench',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let output = '';
service.stdout.on('data', (chunk) => {
  output += chunk.toString();
});
const exited = new Promise((resolve) => service.once('exit', (code) => resolve(code)));

function stop() {
  if (service.exitCode === null) {
    service.kill('SIGTERM');
  }
  return exited;
}

async function waitForPort() {
  const until = Date.now() + 60_000;
  for (;;) {
    const match = /Quire listening on port (\d+)/.exec(output);
    if (match) {
      return Number(match[1]);
    }
    if (service.exitCode !== null || Date.now() > until) {
      throw new Error(`the service did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function waitForHealth(url) {
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(url)).ok) {
        return;
      }
    } catch {
      // not yet
    }
    if (Date.now() > until) {
      throw new Error(`${url} never answered 200`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

try {
  const port = await waitForPort();
  const url = `http://127.0.0.1:${port}${path}`;
  await waitForHealth(url);
  const database = /Database: +(.*)/.exec(output)?.[1] ?? 'unknown';
  console.log(`benchmarking GET ${path} for ${duration} s with ${connections} connections (node ${process.version}, ${database})`);
  // Warm-up, not measured.
  await autocannon({ url, connections, duration: 2 });
  const result = await autocannon({ url, connections, duration });
  const summary = {
    endpoint: `GET ${path}`,
    connections,
    durationSeconds: duration,
    requestsPerSecond: Math.round(result.requests.average),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
  console.log(`requests/s (average): ${summary.requestsPerSecond}`);
  console.log(`latency p50 ${summary.latencyMs.p50} ms, p90 ${summary.latencyMs.p90} ms, p99 ${summary.latencyMs.p99} ms, max ${summary.latencyMs.max} ms`);
  console.log(`requests ${summary.requests}, non-2xx ${summary.non2xx}, errors ${summary.errors}, timeouts ${summary.timeouts}`);
  console.log(JSON.stringify(summary));
  const code = await stop();
  if (code !== 0) {
    console.error(`the service exited with ${code}`);
    process.exitCode = 1;
  }
  if (summary.non2xx > 0 || summary.errors > 0) {
    process.exitCode = 1;
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await stop();
  process.exitCode = 1;
}
