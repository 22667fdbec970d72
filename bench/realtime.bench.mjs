#!/usr/bin/env node
// Realtime benchmark (issue 13, docs/performance.md "Realtime"). Plain Node, run by hand after `npm run build`:
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/realtime.bench.mjs
//   node bench/realtime.bench.mjs --sse=1000 --ws=200 --merges=20
//
// Creates a fresh `quire_bench_rt_*` database on the DATABASE_URL server (dropped at the end), starts
// `node dist/src/main.js` on it, registers a user, creates a document, opens `--sse` event streams (with the
// connect token, as a browser's EventSource would) and `--ws` authenticated sockets on that one document, then
// merges `--merges` rows one after the other through the API. For each merge it records, on every client, the
// time from the merge's HTTP response (the commit happened just before it) to the `request_merged` event
// arriving, and reports p50/p99 over all arrivals, plus the service's RSS before and with the clients connected.
// The last line printed is JSON (also written to bench/results/realtime-<sse>-<ws>.json).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import pg from 'pg';
import { WebSocket } from 'ws';

const args = Object.fromEntries(process.argv.slice(2).map((arg) => { const [k, v] = arg.replace(/^--/, '').split('='); return [k, v ?? 'true']; }));
const SSE = Number(args.sse ?? 1000);
const WS = Number(args.ws ?? 200);
const MERGES = Number(args.merges ?? 20);
const serverUrl = process.env.DATABASE_URL;
const log = (...parts) => process.stderr.write(`${parts.join(' ')}\n`);

if (!serverUrl) {
  log('DATABASE_URL (a PostgreSQL server URL) is required');
  process.exit(1);
}
if (!existsSync('dist/src/main.js')) {
  log('dist/src/main.js is missing: run `npm run build` first');
  process.exit(1);
}

const percentile = (samples, p) => { const s = [...samples].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const round = (n) => Math.round(n * 100) / 100;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rssMb = (pid) => { try { const s = readFileSync(`/proc/${pid}/status`, 'utf8'); return { rss: Number(/VmRSS:\s+(\d+)/.exec(s)[1]) / 1024, hwm: Number(/VmHWM:\s+(\d+)/.exec(s)[1]) / 1024 }; } catch { return { rss: 0, hwm: 0 }; } };
const freePort = () => new Promise((resolve) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); }); });
const dbUrl = (name) => { const u = new URL(serverUrl); u.pathname = `/${name}`; return u.toString(); };
async function admin(sql) { const c = new pg.Client({ connectionString: dbUrl('postgres') }); await c.connect(); try { return await c.query(sql); } finally { await c.end(); } }

const database = `quire_bench_rt_${Date.now()}`;
await admin(`CREATE DATABASE ${database}`);
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const service = spawn(process.execPath, ['dist/src/main.js'], {
  env: { ...process.env, DATABASE_URL: dbUrl(database), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', PUBLIC_BASE_URL: base, RATE_LIMIT_PER_MINUTE: '1000000', REALTIME_MAX_CONNECTIONS_PER_USER: String(SSE + WS + 10), REALTIME_MAX_CONNECTIONS: String(SSE + WS + 100), REALTIME_MAX_MESSAGES_PER_SECOND: '1000', DB_POOL_SIZE: '20' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
service.once('exit', (exitCode, signal) => log(`service exited: ${exitCode ?? signal}`));
const exited = new Promise((resolve) => service.once('exit', resolve));

async function api(method, path, body, token) {
  const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const json = await res.json();
  if (!res.ok) { throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`); }
  return json.payload;
}

/** A raw event-stream reader (what EventSource does, minus reconnects), calling onEvent(type, data). */
function openSse(url, onEvent) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`stream ${res.statusCode}`)); return; }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const type = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (type && data) { onEvent(type, data); }
        }
      });
      resolve(req);
    });
    req.on('error', reject);
  });
}

let code = 0;
try {
  const until = Date.now() + 60_000;
  for (;;) {
    try { if ((await fetch(`${base}/health`)).ok) { break; } } catch { /* not up yet */ }
    if (Date.now() > until) { throw new Error('service did not start'); }
    await sleep(200);
  }
  const user = await api('POST', '/api/v1/auth/register', { email: `bench-${Date.now()}@example.test`, password: 'correct horse battery staple', displayName: 'Bench' });
  const token = user.accessToken;
  const workspaceId = user.user.defaultWorkspaceId;
  await api('POST', '/api/v1/doc/bench', { id: 'live', organizationId: user.user.defaultOrganizationId, workspaceId, title: 'Live', metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }], properties: [] } }, token);
  const connect = await api('GET', `/realtime/doc/bench/live/connect?workspaceId=${workspaceId}`, null, token);
  const rssIdle = rssMb(service.pid);

  const arrivals = new Map(); // merge index -> latencies
  let current = -1;
  let responseAt = 0;
  let received = 0;
  const onMerged = () => { if (current >= 0) { arrivals.get(current).push(performance.now() - responseAt); received += 1; } };

  log(`opening ${SSE} streams and ${WS} sockets…`);
  const streams = [];
  for (let i = 0; i < SSE; i += 1) {
    streams.push(await openSse(connect.sseUrl, (type) => { if (type === 'request_merged') { onMerged(); } }));
  }
  const sockets = [];
  for (let i = 0; i < WS; i += 1) {
    const ws = new WebSocket(connect.wsUrl);
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    const fresh = await api('GET', `/realtime/doc/bench/live/connect?workspaceId=${workspaceId}`, null, token);
    ws.send(JSON.stringify({ kind: 'auth', seq: 1, payload: { token: fresh.token } }));
    await new Promise((resolve) => ws.once('message', resolve));
    ws.on('message', (data) => { const message = JSON.parse(String(data)); if (message.kind === 'event' && message.payload.event === 'request_merged') { onMerged(); } });
    sockets.push(ws);
  }
  await sleep(1000);
  const rssConnected = rssMb(service.pid);
  log(`connected; RSS ${round(rssConnected.rss)} MB (idle ${round(rssIdle.rss)} MB). merging ${MERGES} rows…`);

  let missing = 0;
  for (let m = 0; m < MERGES; m += 1) {
    arrivals.set(m, []);
    received = 0;
    current = -1;
    const pending = fetch(`${base}/api/v1/doc/bench/live/data?workspaceId=${workspaceId}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ values: { name: `row ${m}` } }) });
    const res = await pending;
    responseAt = performance.now();
    current = m;
    if (res.status !== 201) { throw new Error(`merge failed: ${res.status}`); }
    const deadline = Date.now() + 10_000;
    while (received < SSE + WS && Date.now() < deadline) { await sleep(5); }
    missing += SSE + WS - received;
    await sleep(50);
  }
  const peak = rssMb(service.pid);
  const all = [...arrivals.values()].flat();
  const result = {
    sseClients: SSE,
    wsClients: WS,
    merges: MERGES,
    arrivals: all.length,
    missing,
    p50Ms: round(percentile(all, 50)),
    p99Ms: round(percentile(all, 99)),
    maxMs: round(Math.max(...all)),
    rssIdleMb: round(rssIdle.rss),
    rssConnectedMb: round(rssConnected.rss),
    rssPeakMb: round(peak.hwm),
    node: process.version,
  };
  streams.forEach((req) => req.destroy());
  sockets.forEach((ws) => ws.terminate());
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/realtime-${SSE}-${WS}.json`, `${JSON.stringify(result, null, 2)}\n`);
  log(`commit→arrival p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms over ${all.length} arrivals (${missing} missing); RSS ${result.rssConnectedMb} MB connected, peak ${result.rssPeakMb} MB`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  log(String(error?.stack ?? error));
  code = 1;
} finally {
  service.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
}
process.exit(code);
