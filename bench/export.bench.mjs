#!/usr/bin/env node
// Point-in-time export benchmark (issue 11, docs/documents.md "Point-in-time export", docs/performance.md).
// Plain Node, run by hand:
//
//   node bench/export.bench.mjs                          # 1,000,000 rows, csv
//   node bench/export.bench.mjs --rows=100000 --format=xlsx --no-build --keep
//
// On a fresh database with the service running on it (DATABASE_URL and the plumbing: bench/lib/harness.mjs) it
// seeds the rows with SQL (they count as present at revision 1, the document's creation), then changes the document
// through the API so that the old revision differs from the current one — a 1000-row bulk update, 100 rows deleted,
// 100 created, and a field deleted (its values snapshot covers every row) — and finally exports the document as of
// revision 1, reading the stream to its end. It reports the time to the first byte and to the end, the bytes and
// rows received, and the service's peak RSS during the export (sampled every 20 ms from /proc).
import {
  FIELDS as ALL_FIELDS,
  createDocument,
  forEachRowCount,
  log,
  parseArgs,
  round2 as ms,
  rssKb,
  rowCounts,
  rssSampler,
  seedRows,
  signUp,
  withFreshService,
  writeResults,
} from './lib/harness.mjs';

const args = parseArgs(process.argv.slice(2));
const ROW_COUNTS = rowCounts(args, '1000000');
const FORMAT = args.format ?? 'csv';
/** The five plain fields of the documents benchmark (no select field). */
const FIELDS = ALL_FIELDS.filter((field) => field.id !== 'status');

async function runOne(serverUrl, rows) {
  const options = {
    label: `${rows.toLocaleString()} rows`,
    keep: args.keep === 'true',
    // The set-up converts a field of every row (one statement over the whole document): no statement time limit.
    service: { env: { DB_STATEMENT_TIMEOUT_MS: '0' } },
  };
  return withFreshService(serverUrl, options, async ({ db, service }) => {
    const result = { rows, format: FORMAT };
    const { user, api } = await signUp(service.port);
    const { path: docPath, uuid: documentUuid } = await createDocument(api, user.user, {
      id: `export-${rows}`,
      fields: FIELDS,
      db,
    });
    const {
      rows: [{ id: firstRevision }],
    } = await db.query(`SELECT id FROM revisions WHERE document_id = $1 AND version = 1`, [documentUuid]);
    await seedRows(
      db,
      documentUuid,
      rows,
      FIELDS.map((field) => field.id),
    );

    // Later revisions: what the export has to undo.
    const changeStart = Date.now();
    await api.call(
      'POST',
      `${docPath}/data/bulk`,
      Array.from({ length: 1000 }, (_, i) => ({
        target: { row: `r${i + 1}`, field: 'qty' },
        value: { number: 1000 },
      })),
    );
    for (let i = 0; i < 100; i += 1) {
      await api.call('DELETE', `${docPath}/data/r${rows - i}`);
      await api.call('POST', `${docPath}/data`, { id: `n${i}`, values: { name: `New ${i}` } });
    }
    await api.call('PUT', `${docPath}/metadata`, { fields: FIELDS.filter((field) => field.id !== 'sku') });
    result.changesSeconds = ms((Date.now() - changeStart) / 1000);
    const {
      rows: [{ count: laterOps }],
    } = await db.query(`SELECT count(*)::int AS count FROM revision_operations WHERE document_id = $1`, [
      documentUuid,
    ]);
    result.laterOperations = laterOps;
    log(`  later revisions written (${laterOps} operations, ${result.changesSeconds} s)`);

    const before = rssKb(service.pid);
    const sampler = rssSampler(service.pid, 20);
    const start = performance.now();
    const response = await fetch(
      `http://127.0.0.1:${service.port}${docPath}/revisions/${firstRevision}/export?format=${FORMAT}`,
      { headers: { authorization: `Bearer ${api.token}` } },
    );
    if (!response.ok) {
      throw new Error(`export → ${response.status} ${await response.text()}`);
    }
    let firstByte = null;
    let bytes = 0;
    let newlines = 0;
    for await (const chunk of response.body) {
      firstByte ??= performance.now() - start;
      bytes += chunk.length;
      for (let i = 0; i < chunk.length; i += 1) {
        if (chunk[i] === 10) {
          newlines += 1;
        }
      }
    }
    const seconds = (performance.now() - start) / 1000;
    const peakRssMb = sampler.stop();
    result.export = {
      firstByteMs: ms(firstByte ?? 0),
      seconds: ms(seconds),
      megabytes: ms(bytes / 1024 / 1024),
      lines: newlines,
      rowsPerSecond: Math.round(rows / seconds),
      rssBeforeMb: ms(before.rss / 1024),
      peakRssMb,
      contentDisposition: response.headers.get('content-disposition'),
    };
    if (FORMAT === 'csv' && newlines !== rows + 1) {
      throw new Error(
        `csv export has ${newlines} lines, expected ${rows + 1} (header + every row as of revision 1)`,
      );
    }
    log(`  export: ${JSON.stringify(result.export)}`);
    api.close();
    return result;
  });
}

async function main() {
  const results = await forEachRowCount(args, ROW_COUNTS, runOne);
  const lines = [
    `Node ${process.version}; export of revision 1 after a 1000-row bulk update, 100 deletes, 100 creates and a field deletion`,
    '',
    '| rows | format | later operations | first byte | total | MB | rows/s | peak RSS (before) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.rows.toLocaleString()} | ${r.format} | ${r.laterOperations.toLocaleString()} | ${r.export.firstByteMs} ms | ${r.export.seconds} s | ${r.export.megabytes} | ${r.export.rowsPerSecond.toLocaleString()} | ${r.export.peakRssMb} MB (${r.export.rssBeforeMb} MB) |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  writeResults(`export-${FORMAT}-${ROW_COUNTS.join('-')}.json`, results);
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
