import request from 'supertest';
import type { TestUser } from '../../factories/users.factory.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { bearer, createDocument, createRow, type DocHandle, newUser, valueOf } from './documents.fixtures.js';

interface RowDto {
  id: string;
  values: { fieldId: string; value: Record<string, unknown> }[];
}
interface GroupDto {
  keys: { fieldId: string; value: Record<string, unknown> }[];
  aggregations: { kind: string; field?: string; value: unknown }[];
}
type Condition = Record<string, unknown>;

/** `YYYY-MM-DD` of today (UTC) shifted by `days`. */
function day(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

function plain(row: RowDto, fieldId: string): unknown {
  const value = valueOf(row, fieldId);
  return value === undefined ? undefined : Object.values(value)[0];
}

describe('documents: queries over computed fields (volatile formulas, lookups)', () => {
  let t: TestApp;
  let owner: TestUser;

  const query = async (
    doc: DocHandle,
    body: Record<string, unknown>,
  ): Promise<{ items: RowDto[]; groups?: GroupDto[] }> =>
    (await request(t.http).post(`${doc.path}/data/query`).set(bearer(owner)).send(body).expect(200)).body
      .payload;
  const matching = async (doc: DocHandle, ...conditions: Condition[]): Promise<string[]> =>
    (await query(doc, { filters: { logic: 'and', conditions } })).items.map((item) => item.id);
  const groups = async (
    doc: DocHandle,
    groupBy: Record<string, unknown>,
  ): Promise<[unknown[], unknown[]][]> =>
    ((await query(doc, { groupBy })).groups ?? []).map((group) => [
      group.keys.map((key) => Object.values(key.value)[0]),
      group.aggregations.map((aggregation) => aggregation.value),
    ]);
  const readAll = async (doc: DocHandle): Promise<RowDto[]> =>
    (await request(t.http).get(`${doc.path}/data`).set(bearer(owner)).expect(200)).body.payload.items;

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'error' });
    owner = await newUser(t.http);
  });
  afterAll(async () => {
    await t.close();
  });

  // `age` reads TODAY(); `old` reads `age` and `lbl` reads `old`: never stored, computed in SQL by every query.
  describe('formulas reading NOW()/TODAY(), directly or through other formulas', () => {
    let doc: DocHandle;
    let createdAll: string;
    let before: RowDto[];
    const OLD_DAY = '2000-01-01';
    const ageOfOld = Math.round(
      (Date.parse(`${day(0)}T00:00:00Z`) - Date.parse(`${OLD_DAY}T00:00:00Z`)) / 86_400_000,
    );

    beforeAll(async () => {
      doc = await createDocument(t.http, owner, {
        docType: 'cq-volatile',
        fields: [
          { id: 'd', name: 'D', type: 'date' },
          { id: 'age', name: 'Age', type: 'formula', formula: 'DATEDIFF({d}, TODAY())' },
          { id: 'old', name: 'Old', type: 'formula', formula: '{age} > 365' },
          { id: 'lbl', name: 'Lbl', type: 'formula', formula: 'IF({old}, "old", "new")' },
        ],
      });
      await createRow(t.http, owner, doc, { id: 'a', values: { d: OLD_DAY } });
      await createRow(t.http, owner, doc, { id: 'b', values: { d: day(-10) } });
      await createRow(t.http, owner, doc, { id: 'c', values: { d: day(100) } });
      const last = await request(t.http)
        .post(`${doc.path}/data`)
        .set(bearer(owner))
        .send({ id: 'e', values: {} })
        .expect(201);
      createdAll = last.body.payload.request.revisionId;
      before = await readAll(doc);
    });

    it('reads them as the query compiler computes them (the values the filters below rely on)', () => {
      expect(before.map((row) => [row.id, plain(row, 'age'), plain(row, 'lbl')])).toEqual([
        ['a', ageOfOld, 'old'],
        ['b', 10, 'new'],
        ['c', -100, 'new'],
        ['e', undefined, 'new'],
      ]);
      expect(plain(before[0], 'old')).toBe(true);
      expect(plain(before[1], 'old')).toBe(false);
    });

    it('filters a formula reading a volatile one by its computed value', async () => {
      expect(await matching(doc, { field: 'age', operator: 'gt', value: 365 })).toEqual(['a']);
      expect(await matching(doc, { field: 'old', operator: 'eq', value: true })).toEqual(['a']);
      expect(await matching(doc, { field: 'old', operator: 'eq', value: false })).toEqual(['b', 'c', 'e']);
      expect(await matching(doc, { field: 'lbl', operator: 'eq', value: 'old' })).toEqual(['a']);
      expect(await matching(doc, { field: 'lbl', operator: 'eq', value: 'new' })).toEqual(['b', 'c', 'e']);
      expect(await matching(doc, { field: 'lbl', operator: 'contains', value: 'o' })).toEqual(['a']);
      expect(await matching(doc, { field: 'lbl', operator: 'is_empty' })).toEqual([]);
      expect(await matching(doc, { field: 'old', operator: 'is_not_empty' })).toEqual(['a', 'b', 'c', 'e']);
    });

    it('sorts a formula reading a volatile one by its computed value', async () => {
      const sorted = async (sorts: Record<string, unknown>[]): Promise<string[]> =>
        (await query(doc, { sorts })).items.map((item) => item.id);
      expect(await sorted([{ field: 'lbl', direction: 'asc' }])).toEqual(['b', 'c', 'e', 'a']);
      expect(await sorted([{ field: 'old', direction: 'desc' }])).toEqual(['a', 'b', 'c', 'e']);
      expect(await sorted([{ field: 'age', direction: 'asc' }])).toEqual(['c', 'b', 'a', 'e']);
    });

    it('tests emptiness (is_empty, is_not_empty, eq null) on the computed value, not the (absent) stored one', async () => {
      expect(await matching(doc, { field: 'age', operator: 'is_empty' })).toEqual(['e']);
      expect(await matching(doc, { field: 'age', operator: 'is_not_empty' })).toEqual(['a', 'b', 'c']);
      expect(await matching(doc, { field: 'age', operator: 'eq', value: null })).toEqual(['e']);
      expect(await matching(doc, { field: 'age', operator: 'ne', value: null })).toEqual(['a', 'b', 'c']);
    });

    it('groups by the computed value and counts its non-empty values', async () => {
      expect(await groups(doc, { fields: ['lbl'], aggregations: [{ kind: 'count', field: 'age' }] })).toEqual(
        [
          [['new'], [2]],
          [['old'], [1]],
        ],
      );
      expect(await groups(doc, { fields: ['old'], aggregations: [{ kind: 'avg', field: 'age' }] })).toEqual([
        [[false], [-45]],
        [[true], [ageOfOld]],
      ]);
      expect(await groups(doc, { fields: ['age'] })).toEqual([
        [[-100], [1]],
        [[10], [1]],
        [[ageOfOld], [1]],
        [[], [1]],
      ]);
      expect(
        await groups(doc, {
          fields: ['d'],
          aggregations: [
            { kind: 'count', field: 'age' },
            { kind: 'max', field: 'age' },
          ],
        }),
      ).toEqual([
        [[OLD_DAY], [1, ageOfOld]],
        [[day(-10)], [1, 10]],
        [[day(100)], [1, -100]],
        [[], [0, null]],
      ]);
    });

    // Decision (docs/formulas.md, docs/documents.md "Point-in-time export"): NOW()/TODAY() are the time of the
    // export, as a read at that moment shows them; their inputs are the values of the revision.
    it('fills them in a point-in-time export from the values of that time, at the time of the export', async () => {
      await request(t.http)
        .put(`${doc.path}/data/a`)
        .set(bearer(owner))
        .send({ values: { d: day(0) } })
        .expect(200);
      expect(plain((await readAll(doc))[0], 'lbl')).toBe('new');

      const json = JSON.parse(
        (
          await request(t.http)
            .get(`${doc.path}/revisions/${createdAll}/export`)
            .set(bearer(owner))
            .expect(200)
        ).text,
      );
      const exported = (json.rows as RowDto[]).map((row) => [row.id, row.values]);
      expect(exported).toEqual(before.map((row) => [row.id, row.values]));

      const csv = await request(t.http)
        .get(`${doc.path}/revisions/${createdAll}/export?format=csv`)
        .set(bearer(owner))
        .expect(200);
      expect(csv.text.trim().split('\n').slice(0, 3)).toEqual([
        'id,d,age,old,lbl',
        `a,${OLD_DAY},${ageOfOld},true,old`,
        `b,${day(-10)},10,false,new`,
      ]);
    });
  });

  // A volatile formula is shown as the Node evaluator computes it and filtered and sorted as its SQL computes it;
  // both must agree, or a row is not found by the very value it shows (`YEAR(NOW()) * 0` only makes each volatile).
  describe('the SQL of a volatile formula agrees with the value a read shows', () => {
    let doc: DocHandle;
    const VOLATILE = [
      'blankEq',
      'blankNe',
      'small',
      'large',
      'fmt',
      'months',
      'years',
      'over',
      'far',
      'round',
      'roundFrac',
      'roundHuge',
    ];

    beforeAll(async () => {
      const formula = (id: string, text: string): Record<string, string> => ({
        id,
        name: id,
        type: 'formula',
        formula: text,
      });
      doc = await createDocument(t.http, owner, {
        docType: 'cq-agree',
        fields: [
          { id: 't', name: 'T', type: 'text' },
          { id: 'n', name: 'N', type: 'number' },
          { id: 'd', name: 'D', type: 'date' },
          { id: 'd2', name: 'D2', type: 'date' },
          { id: 'dt', name: 'DT', type: 'datetime' },
          formula('blankEq', '({t} = "") = (YEAR(NOW()) > 0)'),
          formula('blankNe', '({t} != "") = (YEAR(NOW()) > 0)'),
          formula('small', 'TEXT({n} / 100) & TEXT(YEAR(NOW()) * 0)'),
          formula('large', 'TEXT({n} * 1e10) & TEXT(YEAR(NOW()) * 0)'),
          formula('fmt', 'DATETIME_FORMAT(DATEADD({dt}, YEAR(NOW()) * 0, "days"), "D/M/YY H:mm:ss.SSS Due")'),
          formula('months', 'DATEDIFF({d}, DATEADD({d2}, YEAR(NOW()) * 0, "days"), "months")'),
          formula('years', 'DATEDIFF({d}, DATEADD({d2}, YEAR(NOW()) * 0, "days"), "years")'),
          formula('over', 'IF(YEAR(NOW()) > 0, {n} * 1e300 * 1e300, 0)'),
          formula('far', 'DATEADD(TODAY(), {n} * 1000, "years")'),
          formula('round', 'ROUND({n} * 1e15, 2) + YEAR(NOW()) * 0'),
          // Digits are truncated (1.6 → 1) and any number of them is taken (past ±400 the answer is fixed).
          formula('roundFrac', 'ROUND({n} * 1260 + YEAR(NOW()) * 0, 1.6)'),
          formula('roundHuge', 'ROUND({n} + YEAR(NOW()) * 0, 1e10)'),
        ],
      });
      await createRow(t.http, owner, doc, {
        id: 'r1',
        values: { t: 'x', n: 0.001, d: '2024-01-31', d2: '2024-02-29', dt: '2024-05-01T08:03:05.123Z' },
      });
      await createRow(t.http, owner, doc, {
        id: 'r2',
        values: { n: 1e6, d: '2020-02-29', d2: '2021-02-28' },
      });
    });

    it('shows the values of the formula language (docs/formulas.md)', async () => {
      const rows = await readAll(doc);
      const nextYear = new Date(`${day(0)}T00:00:00.000Z`);
      nextYear.setUTCFullYear(nextYear.getUTCFullYear() + 1);
      expect(rows.map((row) => VOLATILE.map((id) => plain(row, id)))).toEqual([
        [
          false,
          true,
          '0.000010',
          '100000000',
          '1/5/24 8:03:05.123 1ue',
          1,
          0,
          undefined,
          nextYear.toISOString(),
          1e12,
          1.3,
          0.001,
        ],
        [true, false, '100000', '100000000000000000', undefined, 12, 1, undefined, undefined, 1e21, 1260000000, 1e6],
      ]);
    });

    it('finds every row by the value it shows, and sorts without failing', async () => {
      for (const row of await readAll(doc)) {
        for (const id of VOLATILE) {
          const shown = plain(row, id);
          const condition =
            shown === undefined
              ? { field: id, operator: 'is_empty' }
              : { field: id, operator: 'eq', value: shown };
          expect([id, await matching(doc, condition)]).toEqual([id, expect.arrayContaining([row.id])]);
        }
      }
      for (const id of VOLATILE) {
        expect([id, (await query(doc, { sorts: [{ field: id, direction: 'asc' }] })).items.length]).toEqual([
          id,
          2,
        ]);
      }
    });
  });

  // A lookup is a list: a range operator matches when one element satisfies it, as eq and in already did.
  describe('range operators on lookups', () => {
    let dst: DocHandle;

    beforeAll(async () => {
      const src = await createDocument(t.http, owner, {
        docType: 'cq-src',
        fields: [
          { id: 'name', name: 'Name', type: 'text' },
          { id: 'v', name: 'V', type: 'number' },
        ],
      });
      dst = await createDocument(t.http, owner, {
        docType: 'cq-dst',
        fields: [
          { id: 'r', name: 'R', type: 'relation' },
          { id: 'lk', name: 'Lk', type: 'lookup', lookup: { relationFieldId: 'r', targetFieldId: 'v' } },
          {
            id: 'names',
            name: 'Names',
            type: 'lookup',
            lookup: { relationFieldId: 'r', targetFieldId: 'name' },
          },
        ],
      });
      const ref = (rowId: string): Record<string, string> => ({
        docType: src.docType,
        docId: src.docId,
        rowId,
      });
      await createRow(t.http, owner, src, { id: 's1', values: { name: 'apple', v: 11 } });
      await createRow(t.http, owner, src, { id: 's2', values: { name: 'pear', v: 44 } });
      await createRow(t.http, owner, src, { id: 's3', values: { name: 'fig', v: 4 } });
      await createRow(t.http, owner, dst, { id: 'd1', values: { r: [ref('s1'), ref('s2')] } });
      await createRow(t.http, owner, dst, { id: 'd3', values: { r: [ref('s2')] } });
      await createRow(t.http, owner, dst, { id: 'd4', values: { r: [ref('s3')] } });
      await createRow(t.http, owner, dst, { id: 'd5', values: {} });
    });

    it('reads the lookups as lists', async () => {
      expect((await readAll(dst)).map((row) => [row.id, plain(row, 'lk')])).toEqual([
        ['d1', [11, 44]],
        ['d3', [44]],
        ['d4', [4]],
        ['d5', undefined],
      ]);
    });

    it('matches gt / gte / lt / lte when one element satisfies the comparison', async () => {
      expect(await matching(dst, { field: 'lk', operator: 'gt', value: 10 })).toEqual(['d1', 'd3']);
      expect(await matching(dst, { field: 'lk', operator: 'gte', value: 44 })).toEqual(['d1', 'd3']);
      expect(await matching(dst, { field: 'lk', operator: 'lt', value: 11 })).toEqual(['d4']);
      expect(await matching(dst, { field: 'lk', operator: 'lte', value: 11 })).toEqual(['d1', 'd4']);
      expect(await matching(dst, { field: 'names', operator: 'gt', value: 'o' })).toEqual(['d1', 'd3']);
      // Unchanged: eq / ne by element.
      expect(await matching(dst, { field: 'lk', operator: 'eq', value: 11 })).toEqual(['d1']);
      expect(await matching(dst, { field: 'lk', operator: 'ne', value: 44 })).toEqual(['d4', 'd5']);
    });

    it('matches a range when one element lies within both bounds', async () => {
      expect(await matching(dst, { field: 'lk', operator: 'range', value: [10, 20] })).toEqual(['d1']);
      expect(await matching(dst, { field: 'lk', operator: 'range', rangeStart: 40 })).toEqual(['d1', 'd3']);
      // d1 has an element below 20 and one above 30, but none between.
      expect(await matching(dst, { field: 'lk', operator: 'range', rangeStart: 20, rangeEnd: 30 })).toEqual(
        [],
      );
    });

    // docs/values.md: lookup and formula operands may be wrapped in {number} or {text}; eq already read them so.
    it('reads operands wrapped in {number} or {text} for the ordered operators too', async () => {
      expect(await matching(dst, { field: 'lk', operator: 'gt', value: { number: 10 } })).toEqual(['d1', 'd3']);
      expect(await matching(dst, { field: 'lk', operator: 'lte', value: { number: 11 } })).toEqual(['d1', 'd4']);
      expect(
        await matching(dst, { field: 'lk', operator: 'range', rangeStart: { number: 10 }, rangeEnd: 20 }),
      ).toEqual(['d1']);
      expect(await matching(dst, { field: 'lk', operator: 'range', value: [{ number: 40 }, null] })).toEqual([
        'd1',
        'd3',
      ]);
      expect(await matching(dst, { field: 'names', operator: 'gt', value: { text: 'o' } })).toEqual(['d1', 'd3']);
      expect(await matching(dst, { field: 'lk', operator: 'eq', value: { number: 11 } })).toEqual(['d1']);
    });

    // Text operators read each element's text, never the list's JSON text.
    it('matches contains / startsWith / endsWith when one element does', async () => {
      expect(await matching(dst, { field: 'names', operator: 'contains', value: 'EA' })).toEqual([
        'd1',
        'd3',
      ]);
      expect(await matching(dst, { field: 'names', operator: 'startsWith', value: 'p' })).toEqual([
        'd1',
        'd3',
      ]);
      expect(await matching(dst, { field: 'names', operator: 'endsWith', value: 'le' })).toEqual(['d1']);
      expect(await matching(dst, { field: 'lk', operator: 'startsWith', value: '4' })).toEqual([
        'd1',
        'd3',
        'd4',
      ]);
      // The list ["apple","pear"] as JSON text would match all of these.
      expect(await matching(dst, { field: 'names', operator: 'contains', value: '", "' })).toEqual([]);
      expect(await matching(dst, { field: 'names', operator: 'contains', value: 'le", "pe' })).toEqual([]);
      expect(await matching(dst, { field: 'names', operator: 'startsWith', value: '[' })).toEqual([]);
      expect(await matching(dst, { field: 'names', operator: 'endsWith', value: 'r"]' })).toEqual([]);
    });
  });
});
