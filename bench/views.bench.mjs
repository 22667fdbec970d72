#!/usr/bin/env node
// Views benchmark (issue 9, docs/performance.md "Views"). Plain Node, run by hand:
//
//   node bench/views.bench.mjs                          # 100,000 rows
//   node bench/views.bench.mjs --rows=100000 --iterations=300 --no-build
//
// Seeds a document like the documents benchmark does (a fresh database, the service as a child process,
// DATABASE_URL: see bench/lib/harness.mjs), adds a table view holding the filter and sort of that benchmark, then
// times a page of 20 (p50/p99):
//   - through the view: GET /data?viewId=<view>&pageSize=20
//   - the same query without the view: POST /data/query with the filter and sort in the body
// Both run the same compiled SQL (the view is resolved by one primary-key lookup of `views`), alternating, after
// the expression indexes the service builds on demand are ready.
import {
  FIELDS,
  QUERY,
  createDocument,
  forEachRowCount,
  log,
  parseArgs,
  percentile,
  round2 as ms,
  rowCounts,
  seedRows,
  signUp,
  waitForIndexes,
  withFreshService,
  writeResults,
} from './lib/harness.mjs';

const args = parseArgs(process.argv.slice(2));
const ROW_COUNTS = rowCounts(args, '100000');
const ITERATIONS = Number(args.iterations ?? 200);

async function runOne(serverUrl, rows) {
  const options = {
    label: `${rows.toLocaleString()} rows`,
    keep: args.keep === 'true',
    service: { stdout: args.verbose === 'true' ? 'inherit' : 'ignore' },
  };
  return withFreshService(serverUrl, options, async ({ db, service }) => {
    const result = { rows };
    const { user, api } = await signUp(service.port);
    const { path: docPath, uuid: documentUuid } = await createDocument(api, user.user, {
      id: `views-${rows}`,
      fields: FIELDS,
      db,
    });
    await seedRows(db, documentUuid, rows);
    await api.call('POST', `${docPath}/views`, {
      id: 'open-by-price',
      name: 'Open, 100–5000, by price',
      type: 'table',
      config: { filters: QUERY.filters, sorts: QUERY.sorts },
    });
    const viewPage = () => api.call('GET', `${docPath}/data?viewId=open-by-price&pageSize=20`);

    // Warm up until the expression indexes on status and price are ready (docs/documents.md).
    await waitForIndexes(db, documentUuid, rows, viewPage);

    const viewSamples = [];
    const querySamples = [];
    let same = true;
    for (let i = 0; i < ITERATIONS + 10; i += 1) {
      let start = performance.now();
      const view = await viewPage();
      const viewTime = performance.now() - start;
      start = performance.now();
      const query = await api.call('POST', `${docPath}/data/query`, QUERY);
      const queryTime = performance.now() - start;
      if (i >= 10) {
        viewSamples.push(viewTime);
        querySamples.push(queryTime);
      }
      if (i === 0) {
        const ids = (page) => JSON.stringify(page.items.map((row) => row.id));
        same = ids(view) === ids(query);
        result.total = view.total;
      }
    }
    if (!same) {
      throw new Error('the view and the query returned different rows');
    }
    result.view = { p50: ms(percentile(viewSamples, 50)), p99: ms(percentile(viewSamples, 99)) };
    result.query = { p50: ms(percentile(querySamples, 50)), p99: ms(percentile(querySamples, 99)) };
    log(`  view: ${JSON.stringify(result.view)} query: ${JSON.stringify(result.query)}`);
    api.close();
    return result;
  });
}

async function main() {
  const results = await forEachRowCount(args, ROW_COUNTS, runOne);
  const lines = [
    `Node ${process.version}, ${ITERATIONS} iterations per figure, filter status = open AND 100 ≤ price ≤ 5000, sort price desc, page of 20 (+ total)`,
    '',
    '| rows | through the view p50 | p99 | same query, no view p50 | p99 | matching rows |',
    '|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.rows.toLocaleString()} | ${r.view.p50} ms | ${r.view.p99} ms | ${r.query.p50} ms | ${r.query.p99} ms | ${r.total ?? 'n/a'} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  writeResults(`views-${ROW_COUNTS.join('-')}.json`, results);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
