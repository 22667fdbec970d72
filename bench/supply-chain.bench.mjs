#!/usr/bin/env node
// Supply-chain propagation benchmark (issue 14, docs/supply-chain.md "Propagation"). Plain Node, run by hand:
//
//   node bench/supply-chain.bench.mjs                         # 10,000-row catalog change → 10 auto-accepting order books
//   node bench/supply-chain.bench.mjs --rows=2000 --books=3   # smaller
//   node bench/supply-chain.bench.mjs --no-build --keep       # reuse dist/, keep the quire_bench_* database
//
// DATABASE_URL names a PostgreSQL server (a fresh `quire_bench_*` database is created and dropped); without it the
// embedded server of the test setup is started. The script builds dist/, starts the service as a child process
// (bench/lib/harness.mjs), creates a supplier catalog with a public connection and `--books` order books of one
// buyer, each bound with `acceptMode: auto` and a mapping of five rules (direct, format, unit_convert weight and
// currency from the buyer's rate table, option_mapping). The change is one catalog request holding `--rows` new rows
// (written in batches of 1000 with `requestId`, as a client must) and merged once; the clock starts at the merge call.
// Then a second change updates the price of every row (the common case). For each it reports the merge call's
// latency, the time until every order book holds the change (polled in SQL every 50 ms) and rows/s over all books.
import pg from 'pg';
import {
  buildDist,
  Client,
  databaseServer,
  freshDatabase,
  log,
  parseArgs,
  sleep,
  startService,
  writeResults,
} from './lib/harness.mjs';

const args = parseArgs(process.argv.slice(2));
const ROWS = Number(String(args.rows ?? '10000').replace(/_/g, ''));
const BOOKS = Number(args.books ?? 10);
const TIMEOUT_MS = Number(args['timeout-s'] ?? 900) * 1000;
const API = '/api/v1';

async function register(client, name) {
  const payload = await client.call('POST', `${API}/auth/register`, {
    email: `${name}-${Date.now()}@bench.test`,
    password: 'correct horse battery staple',
    displayName: name,
  });
  return { token: payload.accessToken, org: payload.user.defaultOrganizationId };
}

async function waitUntil(db, sql, params, done, what) {
  const started = Date.now();
  for (;;) {
    const { rows } = await db.query(sql, params);
    if (done(rows[0])) {
      return;
    }
    if (Date.now() - started > TIMEOUT_MS) {
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(rows[0])}`);
    }
    await sleep(50);
  }
}

async function main() {
  if (args['no-build'] !== 'true') {
    buildDist();
  }
  const server = await databaseServer();
  const database = await freshDatabase(server.url);
  const service = await startService(database.url);
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  try {
    const anon = new Client(service.port);
    const supplier = await register(anon, 'supplier');
    const buyer = await register(anon, 'buyer');
    const sup = new Client(service.port, { token: supplier.token });
    const buy = new Client(service.port, { token: buyer.token });
    const S = supplier.org;
    const B = buyer.org;

    const catalog = await sup.call('POST', `${API}/organizations/${S}/catalogs`, {
      name: 'Bench catalog',
      catalogType: 'product',
      fields: [
        { id: 'sku', name: 'SKU', type: 'text' },
        { id: 'name', name: 'Name', type: 'text' },
        { id: 'price', name: 'Price', type: 'number' },
        { id: 'weight', name: 'Weight', type: 'number' },
        {
          id: 'category',
          name: 'Category',
          type: 'single_select',
          selectOptions: [
            { id: 'hw', label: 'Hardware' },
            { id: 'fd', label: 'Food' },
          ],
        },
      ],
    });
    const connection = await sup.call(
      'POST',
      `${API}/organizations/${S}/catalogs/${catalog.id}/connections`,
      { name: 'feed', accessControl: 'public' },
    );
    await buy.call('PUT', `${API}/organizations/${B}/currency-rates`, {
      rates: [{ base: 'USD', quote: 'EUR', rate: 0.9, effectiveDate: '2020-01-01' }],
    });
    const books = [];
    for (let i = 0; i < BOOKS; i += 1) {
      const book = await buy.call('POST', `${API}/organizations/${B}/orderbooks`, {
        name: `Book ${i}`,
        sourceConnectionIds: [],
        fields: [
          { id: 'tsku', name: 'SKU', type: 'text' },
          { id: 'tname', name: 'Name', type: 'text' },
          { id: 'tprice', name: 'Price EUR', type: 'number' },
          { id: 'tweight', name: 'Weight g', type: 'number' },
          { id: 'tcat', name: 'Category', type: 'text' },
        ],
      });
      await buy.call('POST', `${API}/organizations/${B}/orderbooks/${book.id}/bindings`, {
        connectionId: connection.id,
        targetOrderBookId: book.id,
        fieldMapping: {
          unmappedFields: 'ignore',
          rules: [
            { sourceFieldId: 'sku', targetFieldId: 'tsku', transformType: 'direct' },
            {
              sourceFieldId: 'name',
              targetFieldId: 'tname',
              transformType: 'format',
              formatConfig: { template: 'Item ${value}' },
            },
            {
              sourceFieldId: 'price',
              targetFieldId: 'tprice',
              transformType: 'unit_convert',
              unitConversion: { sourceUnit: 'USD', targetUnit: 'EUR', conversionType: 'currency' },
            },
            {
              sourceFieldId: 'weight',
              targetFieldId: 'tweight',
              transformType: 'unit_convert',
              unitConversion: { sourceUnit: 'kg', targetUnit: 'g', conversionType: 'weight' },
            },
            {
              sourceFieldId: 'category',
              targetFieldId: 'tcat',
              transformType: 'option_mapping',
              optionMapping: { mappings: { Hardware: 'Tools' }, unmappedStrategy: 'keep_original' },
            },
          ],
        },
        receiverFilter: { acceptMode: 'auto' },
        conflictResolution: { defaultStrategy: 'keep_upstream' },
      });
      books.push(book.id);
    }
    log(`catalog ${catalog.id}, ${BOOKS} order books bound; writing ${ROWS} rows into one request …`);

    const bookDocs = (
      await db.query(`SELECT id FROM documents WHERE doc_type = 'orderbook' AND doc_id = ANY($1::text[])`, [
        books,
      ])
    ).rows.map((row) => row.id);
    const results = [];
    for (const phase of ['create', 'update']) {
      const request = await sup.call(
        'POST',
        `${API}/doc/catalog/${catalog.id}/requests?organizationId=${S}`,
        { title: `bench ${phase}` },
      );
      const requestId = request.id;
      for (let start = 0; start < ROWS; start += 1000) {
        const rows = [];
        for (let i = start; i < Math.min(ROWS, start + 1000); i += 1) {
          rows.push(
            phase === 'create'
              ? {
                  operation: 'create',
                  id: `p${i}`,
                  values: {
                    sku: `SKU-${i}`,
                    name: `Product ${i}`,
                    price: (i % 500) + 0.5,
                    weight: (i % 40) / 4,
                    category: i % 2 === 0 ? 'hw' : 'fd',
                  },
                }
              : { target: { row: `p${i}` }, values: { price: (i % 500) + 1.5 } },
          );
        }
        // Creates go through the catalog route (the only one that creates rows in a batch); updates through the
        // document bulk route (one data_bulk_operation event per call instead of one event per row).
        const path =
          phase === 'create'
            ? `${API}/organizations/${S}/catalogs/${catalog.id}/rows/batch-update?requestId=${requestId}`
            : `${API}/doc/catalog/${catalog.id}/data/bulk?requestId=${requestId}&organizationId=${S}`;
        await sup.call('POST', path, { rows });
      }
      const jobsBefore = (await db.query(`SELECT count(*)::int AS n FROM sync_propagation_jobs`)).rows[0].n;
      const check =
        phase === 'create'
          ? `SELECT count(*)::int AS n FROM document_rows WHERE document_id = ANY($1::uuid[])`
          : `SELECT count(*)::int AS n FROM document_rows WHERE document_id = ANY($1::uuid[]) AND ("values"->>'tprice')::float8 = round((((substring("values"->>'tsku' from 5)::int % 500) + 1.5) * 0.9)::numeric, 10)::float8`;
      const t0 = performance.now();
      const merge = await sup.timed(
        'POST',
        `${API}/doc/catalog/${catalog.id}/requests/${requestId}/merge?organizationId=${S}`,
        {},
      );
      await waitUntil(
        db,
        `SELECT count(*)::int AS n FROM sync_propagation_jobs`,
        [],
        (row) => row.n >= jobsBefore + BOOKS,
        `${phase}: jobs enqueued`,
      );
      const enqueuedMs = performance.now() - t0;
      await waitUntil(
        db,
        check,
        [bookDocs],
        (row) => row.n >= ROWS * BOOKS,
        `${phase}: ${ROWS * BOOKS} order-book rows`,
      );
      const ms = performance.now() - t0;
      const result = {
        phase,
        rows: ROWS,
        books: BOOKS,
        mergeMs: Math.round(merge.ms),
        enqueuedMs: Math.round(enqueuedMs),
        appliedMs: Math.round(ms),
        rowsPerSecond: Math.round((ROWS * BOOKS) / (ms / 1000)),
      };
      results.push(result);
      log(
        `${phase}: merge ${result.mergeMs} ms; jobs enqueued after ${result.enqueuedMs} ms; all ${BOOKS} books applied after ${result.appliedMs} ms; ${result.rowsPerSecond} rows/s`,
      );
    }
    const jobs = (
      await db.query(`SELECT status, count(*)::int AS n FROM sync_propagation_jobs GROUP BY status`)
    ).rows;
    const revisions = (
      await db.query(`SELECT count(*)::int AS n FROM revisions WHERE document_id = ANY($1::uuid[])`, [
        bookDocs,
      ])
    ).rows[0].n;
    const summary = { results, jobs, orderBookRevisions: revisions };
    log(`raw figures: ${writeResults(`supply-chain-${ROWS}x${BOOKS}.json`, summary)}`);
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    await db.end();
    await service.stop();
    if (args.keep !== 'true') {
      await database.drop();
    }
    await server.stop();
  }
}

main().catch((error) => {
  log(error.stack ?? String(error));
  process.exit(1);
});
