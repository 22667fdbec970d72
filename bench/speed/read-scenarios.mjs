// The read scenarios of bench/speed.bench.mjs (issue 15): 1 (a page of 20 with its total, estimated and exact),
// 8 (RSS while cursor-paging every row) and 6 (authenticated reads against GET /health). They run before the write
// scenarios, while the document holds exactly `rows` rows.
import autocannon from 'autocannon';
import { join } from 'node:path';
import {
  FIELDS,
  QUERY,
  interleaved,
  log,
  p50,
  root,
  round2,
  rssKb,
  rssSampler,
  sleep,
  timedSql,
} from './harness.mjs';

async function autocannonRps(seconds, port, connections, path, headers, pathFor) {
  const options = { url: `http://127.0.0.1:${port}${path}`, connections, headers };
  if (pathFor) {
    let i = 0;
    options.requests = [{ method: 'GET', setupRequest: (req) => ({ ...req, path: pathFor((i += 1)) }) }];
  }
  await autocannon({ ...options, duration: 1 });
  const result = await autocannon({ ...options, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(
      `${path} at ${connections} connections: ${result.non2xx} non-2xx, ${result.errors} errors`,
    );
  }
  return { rps: Math.round(result.requests.average), p50: result.latency.p50 };
}

/** Scenarios 1, 8 and 6, as {n, what, run}; `ctx` is what speed.bench.mjs set up (see there). */
export function readScenarios(ctx) {
  const { api, anon, auth, db, docPath, documentUuid, results, report, service, settings } = ctx;
  const { ROWS, ITERATIONS, THROUGHPUT_SECONDS } = settings;
  return [
    {
      n: 1,
      what: 'filtered + sorted page of 20 with its total',
      run: async () => {
        // The service builds expression indexes for fields queried often (docs/documents.md): wait until they are
        // ready, as bench/documents.bench.mjs does, so the API and the direct SQL use the same plan.
        const INDEX_MIN_ROWS = 10_000; // document-index.service.ts: smaller documents get no on-demand index
        const indexStart = Date.now();
        for (let i = 0; ; i += 1) {
          await api.call('POST', `${docPath}/data/query`, { ...QUERY, count: 'none' });
          if (ROWS < INDEX_MIN_ROWS && i >= 5) {
            break; // too small a document for on-demand indexes
          }
          const { rows } = await db.query(
            `SELECT field_id, status FROM document_field_indexes WHERE document_id = $1`,
            [documentUuid],
          );
          results.indexes = rows.map((row) => `${row.field_id}:${row.status}`);
          if (rows.length >= 2 && rows.every((row) => row.status === 'ready')) {
            break;
          }
          const waited = Date.now() - indexStart;
          if (waited > 600_000 || (rows.length === 0 && waited > 60_000)) {
            log(
              `  expression indexes not ready after ${Math.round(waited / 1000)} s: ${results.indexes.join(', ') || 'none'}; measuring anyway`,
            );
            break;
          }
          await sleep(250);
        }
        results.indexBuildSeconds = round2((Date.now() - indexStart) / 1000);
        await db.query(`ANALYZE document_rows`);

        const { compileQuery } = await import(
          join(root, 'dist/src/modules/documents/query/query.compiler.js')
        );
        const compiled = compileQuery(QUERY, FIELDS, { paramOffset: 1 });
        const n = compiled.params.length;
        const pageSql = `SELECT r.id, r.seq, r."values", r.version, r.created_at, r.created_by, r.updated_at, r.updated_by
                           FROM document_rows r WHERE r.document_id = $1 AND ${compiled.where}
                          ORDER BY ${compiled.orderBy} LIMIT $${n + 2} OFFSET $${n + 3}`;
        const countSql = `SELECT count(*) AS total FROM document_rows r WHERE r.document_id = $1 AND ${compiled.where}`;
        const pageParams = [documentUuid, ...compiled.params, 20, 0];
        const countParams = [documentUuid, ...compiled.countParams];
        results.pagePlan = (await db.query(`EXPLAIN ${pageSql}`, pageParams)).rows
          .map((row) => row['QUERY PLAN'])
          .join('\n');
        const pages = {};
        const queryCall = (mode) => async () => {
          const { ms, payload } = await api.timed('POST', `${docPath}/data/query`, { ...QUERY, count: mode });
          pages[mode] ??= {
            total: payload.total,
            totalExact: payload.totalExact,
            countMode: payload.countMode,
            items: payload.items?.length,
          };
          return ms;
        };
        const [estimated, exact, pageOnly, pageAndCount, health] = await interleaved(ITERATIONS, [
          queryCall('estimated'),
          queryCall('exact'),
          () => timedSql(db, pageSql, pageParams),
          async () => {
            const start = performance.now();
            await Promise.all([db.query(pageSql, pageParams), db.query(countSql, countParams)]);
            return performance.now() - start;
          },
          async () => (await anon.timed('GET', '/health')).ms,
        ]);
        const trueTotal = Number((await db.query(countSql, countParams)).rows[0].total);
        results.query = {
          pages,
          trueTotal,
          estimatedP50: p50(estimated),
          exactP50: p50(exact),
          pageSqlP50: p50(pageOnly),
          pageAndCountSqlP50: p50(pageAndCount),
          healthP50: p50(health),
        };
        const floor = p50(pageOnly) + p50(health);
        const estRatio = round2(p50(estimated) / floor);
        const est = pages.estimated ?? {};
        report('1a', `page of 20 + total, count=estimated, ${ROWS.toLocaleString()} rows`, {
          measured: `API p50 ${p50(estimated)} ms (total ${est.total} of ${trueTotal}, totalExact ${est.totalExact}, countMode ${est.countMode})`,
          comparison: `page SQL p50 ${p50(pageOnly)} + /health p50 ${p50(health)} = ${round2(floor)} ms`,
          ratio: `${estRatio}×`,
          target: '≤ 3×',
          pass: estRatio <= 3,
        });
        const exactRatio = round2(p50(exact) / p50(pageAndCount));
        const ex = pages.exact ?? {};
        report('1b', `page of 20 + total, count=exact, ${ROWS.toLocaleString()} rows`, {
          measured: `API p50 ${p50(exact)} ms (total ${ex.total}, totalExact ${ex.totalExact})`,
          comparison: `page + count(*) SQL p50 ${p50(pageAndCount)} ms`,
          ratio: `${exactRatio}×`,
          target: '≤ 1.2× (no slower than today)',
          pass: exactRatio <= 1.2 && ex.total === trueTotal,
        });
      },
    },

    {
      n: 8,
      what: 'peak RSS while cursor-paging every row',
      run: async () => {
        const before = round2(rssKb(service.pid).rss / 1024);
        const sampler = rssSampler(service.pid, 50);
        const start = performance.now();
        let cursor = null;
        let seen = 0;
        let pageCount = 0;
        do {
          const page = await api.call(
            'GET',
            `${docPath}/data?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          );
          seen += page.items.length;
          pageCount += 1;
          cursor = page.nextCursor;
        } while (cursor);
        const peak = sampler.stop();
        const seconds = (performance.now() - start) / 1000;
        if (seen !== ROWS) {
          throw new Error(`cursor paging saw ${seen} rows, expected ${ROWS}`);
        }
        results.paging = {
          pages: pageCount,
          rows: seen,
          seconds: round2(seconds),
          rowsPerSecond: Math.round(seen / seconds),
          rssBeforeMb: before,
          peakRssMb: peak,
          idleRssMb: results.idleRssMb,
        };
        report('8', `peak RSS, cursor paging ${ROWS.toLocaleString()} rows (limit 1000)`, {
          measured: `peak ${peak} MB (${round2(seconds)} s, ${Math.round(seen / seconds).toLocaleString()} rows/s)`,
          comparison: `idle ${results.idleRssMb} MB, before paging ${before} MB`,
          ratio: null,
          target: '< 300 MB',
          pass: peak < 300,
        });
      },
    },

    {
      n: 6,
      what: 'authenticated reads vs GET /health',
      run: async () => {
        const rowPath = (i) => `${docPath}/data/r${1 + ((i * 7919) % ROWS)}`;
        const [me, row, health] = await interleaved(ITERATIONS * 2, [
          async () => (await api.timed('GET', '/api/v1/users/me')).ms,
          async (i) => (await api.timed('GET', rowPath(i))).ms,
          async () => (await anon.timed('GET', '/health')).ms,
        ]);
        const latencyRatio = round2(p50(row) / p50(health));
        results.reads = { usersMeP50: p50(me), rowP50: p50(row), healthP50: p50(health) };
        report('6a', 'GET /data/{rowId} p50, one client', {
          measured: `${p50(row)} ms (GET /users/me ${p50(me)} ms)`,
          comparison: `GET /health ${p50(health)} ms`,
          ratio: `${latencyRatio}×`,
          target: '≤ 2×',
          pass: latencyRatio <= 2,
        });
        const headers = { authorization: `Bearer ${auth.token}`, 'x-workspace-id': auth.workspaceId };
        results.throughput = {};
        for (const connections of [4, 50]) {
          const healthRun = await autocannonRps(THROUGHPUT_SECONDS, service.port, connections, '/health', {});
          const rowRun = await autocannonRps(
            THROUGHPUT_SECONDS,
            service.port,
            connections,
            rowPath(1),
            headers,
            rowPath,
          );
          const share = round2(rowRun.rps / healthRun.rps);
          results.throughput[connections] = { health: healthRun, row: rowRun };
          report(
            `6${connections === 4 ? 'b' : 'c'}`,
            `GET /data/{rowId} throughput, ${connections} connections`,
            {
              measured: `${rowRun.rps.toLocaleString()} req/s (p50 ${rowRun.p50} ms)`,
              comparison: `GET /health ${healthRun.rps.toLocaleString()} req/s (p50 ${healthRun.p50} ms)`,
              ratio: `${Math.round(share * 100)} %`,
              target: '≥ 50 %',
              pass: share >= 0.5,
            },
          );
        }
      },
    },
  ];
}
