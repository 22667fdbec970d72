import {
  CONDITION_BUDGET,
  conditionHolds,
  filtersMatch,
  filtersProblems,
  isSupportedJsonPath,
  type WebhookCondition,
} from './webhook-filter.js';
import { retryDelaySeconds } from './webhook-retry-schedule.js';

const delivery = {
  event: 'data_row_updated',
  docType: 'products',
  docId: 'p-1',
  triggeredBy: 'u-1',
  payload: {
    status: 'done',
    qty: 5,
    tags: ['red', 'blue'],
    note: 'urgent order',
    at: '2026-01-02T00:00:00.000Z',
    rows: [{ qty: 1 }, { qty: 9 }],
  },
};

function holds(path: string, operator: WebhookCondition['operator'], value?: unknown): boolean {
  return conditionHolds({ path, operator, value }, delivery);
}

describe('webhook filters', () => {
  it('accepts the supported JSONPath subset and refuses the rest', () => {
    for (const good of [
      '$',
      '$.payload.status',
      '$..qty',
      "$['payload']['status']",
      '$.payload.rows[1].qty',
      '$.payload.rows[*].qty',
      '$.payload.*',
      "$..rows['a..b'].qty",
    ]) {
      expect(isSupportedJsonPath(good)).toBe(true);
    }
    for (const bad of [
      '',
      'payload.status',
      '$[',
      '$.payload.rows[0',
      '$.payload.rows[?(@.qty>1)]',
      '$.a..',
      '$..[(1)]',
      '$..rows..qty',
      '$..*..*',
      // Quotes the library splits differently: four recursive descents it would run, one name for a naive reading.
      `$["payload']..*..*..*..*['"]`,
      `$['a"]..*..*["b']`,
    ]) {
      expect(isSupportedJsonPath(bad)).toBe(false);
    }
  });

  it('evaluates every operator against the values the path selects', () => {
    expect(holds('$.payload.status', 'eq', 'done')).toBe(true);
    expect(holds('$.payload.status', 'eq', 'todo')).toBe(false);
    expect(holds('$.payload.status', 'ne', 'todo')).toBe(true);
    expect(holds('$.payload.status', 'ne', 'done')).toBe(false);
    expect(holds('$.payload.status', 'in', ['todo', 'done'])).toBe(true);
    expect(holds('$.payload.status', 'notIn', ['todo', 'done'])).toBe(false);
    expect(holds('$.payload.status', 'notIn', ['todo'])).toBe(true);
    expect(holds('$.payload.qty', 'gt', 4)).toBe(true);
    expect(holds('$.payload.qty', 'gt', 5)).toBe(false);
    expect(holds('$.payload.qty', 'gte', 5)).toBe(true);
    expect(holds('$.payload.qty', 'lt', 5)).toBe(false);
    expect(holds('$.payload.qty', 'lte', 5)).toBe(true);
    expect(holds('$.payload.qty', 'gt', '4')).toBe(false);
    expect(holds('$.payload.at', 'gte', '2026-01-01')).toBe(true);
    expect(holds('$.payload.note', 'contains', 'urgent')).toBe(true);
    expect(holds('$.payload.tags', 'contains', 'blue')).toBe(true);
    expect(holds('$.payload.tags', 'contains', 'green')).toBe(false);
    expect(holds('$.payload.status', 'exists')).toBe(true);
    expect(holds('$.payload.missing', 'exists')).toBe(false);
    expect(holds('$.payload.missing', 'exists', false)).toBe(true);
    expect(holds('$.payload.qty', 'range', [5, 10])).toBe(true);
    expect(holds('$.payload.qty', 'range', [6, 10])).toBe(false);
    expect(holds('$.payload.rows[*].qty', 'gt', 8)).toBe(true);
    expect(holds('$..qty', 'range', [2, 4])).toBe(false);
  });

  it('takes the query language operators the spec names: startsWith, endsWith, is_empty, is_not_empty', () => {
    expect(holds('$.payload.note', 'startsWith', 'urgent')).toBe(true);
    expect(holds('$.payload.note', 'startsWith', 'order')).toBe(false);
    expect(holds('$.payload.note', 'endsWith', 'order')).toBe(true);
    expect(holds('$.payload.qty', 'endsWith', '5')).toBe(false);
    expect(holds('$.payload.missing', 'is_empty')).toBe(true);
    expect(holds('$.payload.tags', 'is_empty')).toBe(false);
    expect(holds('$.payload.tags', 'is_not_empty')).toBe(true);
    expect(conditionHolds({ path: '$.payload.note', operator: 'is_empty' }, { ...delivery, payload: { note: '' } })).toBe(true);
    expect(filtersProblems({ conditions: [{ path: '$.payload.note', operator: 'startsWith', value: 1 }] })).toEqual([
      { field: 'filters.conditions[0].value', reason: 'startsWith needs a string value' },
    ]);
    expect(filtersProblems({ conditions: [{ path: '$.payload.note', operator: 'is_not_empty' }] })).toEqual([]);
  });

  it('combines kinds with AND and list entries with OR', () => {
    expect(filtersMatch({}, delivery)).toBe(true);
    expect(filtersMatch({ docTypes: ['orders', 'products'], userIds: ['u-1'] }, delivery)).toBe(true);
    expect(filtersMatch({ docTypes: ['products'], docIds: ['p-2'] }, delivery)).toBe(false);
    expect(
      filtersMatch(
        {
          conditions: [
            { path: '$.payload.qty', operator: 'gt', value: 1 },
            { path: '$.event', operator: 'eq', value: 'x' },
          ],
        },
        delivery,
      ),
    ).toBe(false);
  });

  it('reports each malformed filter with its field', () => {
    expect(filtersProblems({ docTypes: 'products' })).toEqual([
      expect.objectContaining({ field: 'filters.docTypes' }),
    ]);
    expect(filtersProblems({ colour: [] })).toEqual([expect.objectContaining({ field: 'filters.colour' })]);
    const problems = filtersProblems({
      conditions: [
        { path: '$.payload.status', operator: 'like', value: 'x' },
        { path: 'status', operator: 'eq', value: 'x' },
        { path: '$.payload.qty', operator: 'range', value: [1] },
        { path: '$.payload.qty', operator: 'in', value: 3 },
        { path: '$.payload.qty', operator: 'gt', value: { n: 1 } },
        { path: '$.payload.qty', operator: 'exists', value: 'yes' },
        { path: '$.payload.qty', operator: 'eq' },
        { path: '$.payload.qty', operator: 'eq', value: 1 },
      ],
    });
    expect(problems.map((problem) => problem.field)).toEqual([
      'filters.conditions[0].operator',
      'filters.conditions[1].path',
      'filters.conditions[2].value',
      'filters.conditions[3].value',
      'filters.conditions[4].value',
      'filters.conditions[5].value',
      'filters.conditions[6].value',
    ]);
  });
});

describe('webhook filter work budget', () => {
  // Four values a row (the row and its three keys) and a dozen more: the envelope's values, as the budget counts them.
  function bulk(size: number): typeof delivery {
    const rows = Array.from({ length: size }, (_, i) => ({ rowId: `r${i}`, qty: i, note: 'n' }));
    return { ...delivery, payload: { ...delivery.payload, rows } };
  }

  it('charges a path with .. or a wildcard the envelope it may walk, and refuses what the budget left cannot cover', () => {
    const small = bulk(10);
    const everything = { path: '$..*', operator: 'exists' as const };
    expect(filtersMatch({ conditions: Array(20).fill(everything) }, small)).toBe(true);
    // 1,500 rows are over half the budget (about 6,000 values), so not even one `$..*` is evaluated.
    const large = bulk(1500);
    expect(filtersMatch({ conditions: [everything] }, large)).toBe(false);
    expect(filtersMatch({ conditions: [{ path: '$.payload.rows[*].qty', operator: 'exists' }] }, large)).toBe(false);
    // Over the budget a condition does not hold whatever its operator.
    expect(filtersMatch({ conditions: [{ path: '$..nope', operator: 'exists', value: false }] }, large)).toBe(false);
    expect(filtersMatch({ conditions: [{ path: '$.payload.rows[*].qty', operator: 'is_empty' }] }, large)).toBe(false);
    // Names and indices select at most one value each: no charge up front.
    const narrow = { path: '$.payload.rows[999].qty', operator: 'eq' as const, value: 999 };
    expect(filtersMatch({ conditions: Array(20).fill(narrow) }, large)).toBe(true);
  });

  it('shares the budget among the conditions of one webhook, and gives each evaluation of the filters a new one', () => {
    const medium = bulk(600); // about 2,400 values, and 600 selected by $..qty: room for two such conditions, not three
    const descent = { path: '$..qty', operator: 'exists' as const };
    expect(CONDITION_BUDGET).toBe(10_000);
    expect(filtersMatch({ conditions: [descent, descent] }, medium)).toBe(true);
    expect(filtersMatch({ conditions: [descent, descent, descent] }, medium)).toBe(false);
    expect(filtersMatch({ conditions: [descent, descent] }, medium)).toBe(true);
    // Without a budget (a single condition checked on its own) nothing is refused.
    expect(conditionHolds(descent, bulk(5000))).toBe(true);
  });
});

describe('webhook retry schedule', () => {
  it('doubles from retryInterval, adds at most 25% jitter and caps at six hours', () => {
    expect(retryDelaySeconds(60, 1, () => 0)).toBe(60);
    expect(retryDelaySeconds(60, 2, () => 0)).toBe(120);
    expect(retryDelaySeconds(60, 3, () => 0.999)).toBeCloseTo(240 * 1.24975);
    expect(retryDelaySeconds(3600, 10, () => 0)).toBe(6 * 3600);
  });

  it('never waits less than retryInterval, even above the six-hour cap', () => {
    expect(retryDelaySeconds(86_400, 1, () => 0)).toBe(86_400);
    expect(retryDelaySeconds(30_000, 3, () => 0)).toBe(30_000);
  });
});
