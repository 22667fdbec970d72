#!/usr/bin/env node
// Computed fields benchmark (issue 10, docs/formulas.md "Measurements"). Plain Node, run by hand:
//
//   node bench/computed.bench.mjs                          # 100,000 rows
//   node bench/computed.bench.mjs --rows=1000000           # 1,000,000 rows (or --million; --rows=100000,1000000)
//   node bench/computed.bench.mjs --no-build --iterations=200
//
// Per document size, on a fresh database with the service as a child process (bench/lib/harness.mjs):
// (1) the p50 of a page of 20 sorted by a formula field ({price} * {qty}, materialised) next to the same page sorted
//     by the stored number field `price`, both with their on-demand expression indexes, interleaved in one run;
// (2) the time of the PUT /metadata that adds the formula (every row computed once);
// (3) the time for a merge that changes one target row linked from 10,000 rows (a rollup and a formula over it)
//     until all 10,000 show the new value — the merge recomputes them before it returns, so that is the latency of
//     the PUT, checked in SQL after each one — next to the same write on a target row nothing links to, and to a
//     write of a field of the linked row that no lookup reads (no dependent is touched).
// Raw figures: bench/results/computed-<date>.json (git-ignored).
import {
  FIELDS,
  createDocument,
  forEachRowCount,
  interleaved,
  log,
  p50,
  parseArgs,
  round2,
  rowCounts,
  seedRows,
  signUp,
  waitForIndexes,
  withFreshService,
  writeResults,
} from './lib/harness.mjs';

const args = parseArgs(process.argv.slice(2));
const ROW_COUNTS = args.million === 'true' ? [1_000_000] : rowCounts(args, '100000');
const ITERATIONS = Number(args.iterations ?? 100);
const LINKED = 10_000;
const MERGES = 5;

async function runOne(serverUrl, rows) {
  const options = {
    label: `${rows.toLocaleString()} rows`,
    keep: args.keep === 'true',
    poolSize: 4,
    service: { stdout: args.verbose === 'true' ? 'inherit' : 'ignore' },
  };
  return withFreshService(serverUrl, options, async ({ db, service }) => {
    const result = { rows };
    const { user, api } = await signUp(service.port, { name: 'bench-computed' });
    try {
      // 1 and 2: a formula next to a stored number.
      const main = await createDocument(api, user.user, { id: `computed-${rows}`, fields: FIELDS, db });
      await seedRows(db, main.uuid, rows);
      const formula = { id: 'total', name: 'Total', type: 'formula', formula: '{price} * {qty}' };
      const metadataStart = performance.now();
      await api.call('PUT', `${main.path}/metadata`, { fields: [...FIELDS, formula] });
      result.addFormulaSeconds = round2((performance.now() - metadataStart) / 1000);
      await db.query(`VACUUM ANALYZE document_rows`);
      const sorted = (field) => ({
        sorts: [{ field, direction: 'desc' }],
        page: 1,
        pageSize: 20,
        count: 'none',
      });
      const page = (field) => api.call('POST', `${main.path}/data/query`, sorted(field));
      result.indexes = await waitForIndexes(db, main.uuid, rows, async () => {
        await page('total');
        await page('price');
      });
      const top = (await page('total')).items[0].values.find((entry) => entry.fieldId === 'total')?.value
        .number;
      const { rows: max } = await db.query(
        `SELECT max((("values"->>'price')::float8) * (("values"->>'qty')::float8)) AS m FROM document_rows WHERE document_id = $1`,
        [main.uuid],
      );
      if (Math.abs(top - max[0].m) > 1e-6) {
        throw new Error(`the formula sort returned ${top} first, expected ${max[0].m}`);
      }
      const [byFormula, byNumber] = await interleaved(ITERATIONS, [
        async () => (await api.timed('POST', `${main.path}/data/query`, sorted('total'))).ms,
        async () => (await api.timed('POST', `${main.path}/data/query`, sorted('price'))).ms,
      ]);
      result.sortByFormulaP50 = p50(byFormula);
      result.sortByNumberP50 = p50(byNumber);

      // 3: one target row linked from 10,000 rows.
      const target = await createDocument(api, user.user, {
        docType: 'bench-target',
        id: `target-${rows}`,
        fields: [
          { id: 'name', name: 'Name', type: 'text' },
          { id: 'price', name: 'Price', type: 'number' },
        ],
        db,
      });
      await api.call('POST', `${target.path}/data`, { id: 't1', values: { name: 'linked', price: 1 } });
      await api.call('POST', `${target.path}/data`, { id: 't2', values: { name: 'alone', price: 1 } });
      const linkFields = [
        { id: 'title', name: 'Title', type: 'text' },
        { id: 'link', name: 'Link', type: 'relation' },
      ];
      const source = await createDocument(api, user.user, {
        docType: 'bench-source',
        id: `source-${rows}`,
        fields: linkFields,
        db,
      });
      const ref = [{ docType: 'bench-target', docId: `target-${rows}`, rowId: 't1' }];
      await db.query(
        `INSERT INTO document_rows (document_id, id, "values", created_by, updated_by)
         SELECT $1, 'l' || g, jsonb_build_object('title', 'Linked ' || g, 'link', $3::jsonb), 'bench', 'bench'
           FROM generate_series(1, $2::int) AS g`,
        [source.uuid, LINKED, JSON.stringify(ref)],
      );
      // The edges the merge keeps equal to these relation values (docs/decisions/relations-model.md).
      await db.query(
        `INSERT INTO document_relations (organization_id, source_document_id, source_row_id, field_id, type, direction,
                                         target_document_id, target_row_id, created_by)
         SELECT d.organization_id, $1, 'l' || g, 'link', 'link', 'outgoing', $2, 't1', 'bench'
           FROM documents d, generate_series(1, $3::int) AS g WHERE d.id = $1`,
        [source.uuid, target.uuid, LINKED],
      );
      await db.query(`UPDATE documents SET row_count = $2, row_seq = $2 WHERE id = $1`, [
        source.uuid,
        LINKED,
      ]);
      await api.call('PUT', `${source.path}/metadata`, {
        fields: [
          ...linkFields,
          {
            id: 'spend',
            name: 'Spend',
            type: 'rollup',
            rollup: { relationFieldId: 'link', targetFieldId: 'price', agg: 'sum' },
          },
          { id: 'double', name: 'Double', type: 'formula', formula: '{spend} * 2' },
        ],
      });
      await db.query(`VACUUM ANALYZE document_rows`);
      const linkedMs = [];
      const aloneMs = [];
      const unreadMs = [];
      for (let i = 0; i < MERGES; i += 1) {
        const price = 100 + i;
        linkedMs.push((await api.timed('PUT', `${target.path}/data/t1`, { values: { price } })).ms);
        const { rows: shown } = await db.query(
          `SELECT count(*)::int AS n FROM document_rows WHERE document_id = $1 AND "values" @> $2::jsonb`,
          [source.uuid, JSON.stringify({ spend: price, double: price * 2 })],
        );
        if (shown[0].n !== LINKED) {
          throw new Error(`after the merge ${shown[0].n} of ${LINKED} rows show the new value`);
        }
        aloneMs.push((await api.timed('PUT', `${target.path}/data/t2`, { values: { price } })).ms);
        unreadMs.push(
          (await api.timed('PUT', `${target.path}/data/t1`, { values: { name: `linked ${i}` } })).ms,
        );
      }
      result.linkedMergeP50 = p50(linkedMs);
      result.unlinkedMergeP50 = p50(aloneMs);
      result.unreadFieldMergeP50 = p50(unreadMs);
      log(`  ${JSON.stringify(result)}`);
      return result;
    } finally {
      api.close();
    }
  });
}

const started = new Date().toISOString();
const results = await forEachRowCount(args, ROW_COUNTS, runOne);
const lines = [
  `Quire computed-fields benchmark (issue 10), Node ${process.version}, ${ITERATIONS} samples per sort figure, ${started}`,
  '',
  '| rows | page of 20 sorted by formula (p50) | same sort by stored number (p50) | ratio | PUT /metadata adding the formula | merge of 1 target row linked from 10,000 rows, all updated (p50) | same write, unlinked row | write of a field no lookup reads |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.rows.toLocaleString()} | ${r.sortByFormulaP50} ms | ${r.sortByNumberP50} ms | ${round2(r.sortByFormulaP50 / r.sortByNumberP50)} | ${r.addFormulaSeconds} s | ${r.linkedMergeP50} ms | ${r.unlinkedMergeP50} ms | ${r.unreadFieldMergeP50} ms |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
log(`raw figures: ${writeResults(`computed-${started.replace(/[:.]/g, '-')}.json`, { started, results })}`);
