#!/usr/bin/env node
// Realtime benchmark (issue 13, docs/performance.md "Realtime"). Plain Node, run by hand after `npm run build`:
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/realtime.bench.mjs
//   node bench/realtime.bench.mjs --sse=1000 --ws=200 --merges=20
//
// Creates a fresh `quire_bench_*` database on the DATABASE_URL server (dropped at the end; without DATABASE_URL the
// embedded server of the test setup starts), starts `node dist/src/main.js` on it, registers a user, creates a
// document, opens `--sse` event streams (with the connect token, as a browser's EventSource would) and `--ws`
// authenticated sockets on that one document, then merges `--merges` rows one after the other through the API. For
// each merge it records, on every client, the time from the merge's HTTP response (the commit happened just before
// it) to the `request_merged` event arriving, and reports p50/p99 over all arrivals, plus the service's RSS before
// and with the clients connected. The last line printed is JSON (also written to
// bench/results/realtime-<sse>-<ws>.json). The plumbing is bench/lib/harness.mjs.
import http from 'node:http';
import { WebSocket } from 'ws';
import {
  createDocument,
  log,
  parseArgs,
  percentile,
  round2 as round,
  rssKb,
  signUp,
  sleep,
  withDatabaseServer,
  withFreshService,
  writeResults,
} from './lib/harness.mjs';

const args = parseArgs(process.argv.slice(2));
const SSE = Number(args.sse ?? 1000);
const WS = Number(args.ws ?? 200);
const MERGES = Number(args.merges ?? 20);
const rssMb = (pid) => {
  const { rss, hwm } = rssKb(pid);
  return { rss: rss / 1024, hwm: hwm / 1024 };
};
/** Connection and message limits above the benchmark's clients; the service's own base URL for the connect URLs. */
const serviceEnv = (port) => ({
  PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
  REALTIME_MAX_CONNECTIONS_PER_USER: String(SSE + WS + 10),
  REALTIME_MAX_CONNECTIONS: String(SSE + WS + 100),
  REALTIME_MAX_MESSAGES_PER_SECOND: '1000',
  DB_POOL_SIZE: '20',
});

/** A raw event-stream reader (what EventSource does, minus reconnects), calling onEvent(type, data). */
function openSse(url, onEvent) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`stream ${res.statusCode}`));
        return;
      }
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
          if (type && data) {
            onEvent(type, data);
          }
        }
      });
      resolve(req);
    });
    req.on('error', reject);
  });
}

async function run({ service }) {
  const base = `http://127.0.0.1:${service.port}`;
  const { user, api } = await signUp(service.port);
  const token = user.accessToken;
  const workspaceId = user.user.defaultWorkspaceId;
  const { path } = await createDocument(api, user.user, {
    id: 'live',
    fields: [{ id: 'name', name: 'Name', type: 'text' }],
    title: 'Live',
  });
  const connectPath = `/realtime/doc/bench/live/connect?workspaceId=${workspaceId}`;
  const connect = await api.call('GET', connectPath);
  const rssIdle = rssMb(service.pid);

  const arrivals = new Map(); // merge index -> latencies
  let current = -1;
  let responseAt = 0;
  let received = 0;
  const onMerged = () => {
    if (current >= 0) {
      arrivals.get(current).push(performance.now() - responseAt);
      received += 1;
    }
  };

  log(`opening ${SSE} streams and ${WS} sockets…`);
  const streams = [];
  const sockets = [];
  try {
    for (let i = 0; i < SSE; i += 1) {
      streams.push(
        await openSse(connect.sseUrl, (type) => {
          if (type === 'request_merged') {
            onMerged();
          }
        }),
      );
    }
    for (let i = 0; i < WS; i += 1) {
      const ws = new WebSocket(connect.wsUrl);
      sockets.push(ws);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      const fresh = await api.call('GET', connectPath);
      ws.send(JSON.stringify({ kind: 'auth', seq: 1, payload: { token: fresh.token } }));
      await new Promise((resolve) => ws.once('message', resolve));
      ws.on('message', (data) => {
        const message = JSON.parse(String(data));
        if (message.kind === 'event' && message.payload.event === 'request_merged') {
          onMerged();
        }
      });
    }
    await sleep(1000);
    const rssConnected = rssMb(service.pid);
    log(
      `connected; RSS ${round(rssConnected.rss)} MB (idle ${round(rssIdle.rss)} MB). merging ${MERGES} rows…`,
    );

    let missing = 0;
    for (let m = 0; m < MERGES; m += 1) {
      arrivals.set(m, []);
      received = 0;
      current = -1;
      // fetch resolves at the response's headers: the commit happened just before them.
      const res = await fetch(`${base}${path}/data?workspaceId=${workspaceId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ values: { name: `row ${m}` } }),
      });
      responseAt = performance.now();
      current = m;
      if (res.status !== 201) {
        throw new Error(`merge failed: ${res.status}`);
      }
      const deadline = Date.now() + 10_000;
      while (received < SSE + WS && Date.now() < deadline) {
        await sleep(5);
      }
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
    writeResults(`realtime-${SSE}-${WS}.json`, result);
    log(
      `commit→arrival p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms over ${all.length} arrivals (${missing} missing); RSS ${result.rssConnectedMb} MB connected, peak ${result.rssPeakMb} MB`,
    );
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    streams.forEach((req) => req.destroy());
    sockets.forEach((ws) => ws.terminate());
    api.close();
  }
}

withDatabaseServer({ build: false }, (serverUrl) =>
  withFreshService(serverUrl, { service: { env: serviceEnv } }, run),
).then(
  () => process.exit(0),
  (error) => {
    log(String(error?.stack ?? error));
    process.exit(1);
  },
);
