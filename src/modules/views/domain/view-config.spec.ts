import { AppException } from '../../../common/errors/app.exception.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { chartAggregation, cleanViewConfig, settledViewConfig, validateViewConfig } from './view-config.js';

const FIELDS: FieldDefinition[] = [
  { id: 'name', name: 'Name', type: 'text' },
  { id: 'price', name: 'Price', type: 'number' },
  { id: 'due', name: 'Due', type: 'date' },
  { id: 'status', name: 'Status', type: 'single_select', selectOptions: [{ id: 'todo' }, { id: 'done' }] },
];

function fieldsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof AppException) {
      return (error.options.details ?? []).map((detail) => String(detail.field));
    }
    throw error;
  }
  return [];
}

describe('validateViewConfig', () => {
  it('accepts every known key in its valid form and keeps unknown keys', () => {
    const config = {
      columns: ['name', 'price'],
      displayFields: ['name'],
      filters: { and: [{ field: 'price', op: 'gte', value: 1 }] },
      sorts: [{ field: 'price', order: 'desc' }],
      groupBy: ['status'],
      groupByField: 'status',
      kanbanConfig: { groupByField: 'status', cardFields: ['name'] },
      calendarConfig: { dateField: 'due', titleField: 'name' },
      chartConfig: { xField: 'status', yField: 'price', chartType: 'pie', aggregation: 'avg' },
      anything: { ui: [1, 2] },
    };
    expect(validateViewConfig(config, FIELDS)).toEqual(config);
    expect(validateViewConfig(undefined, FIELDS)).toEqual({});
  });

  it('collects every problem with its path', () => {
    expect(
      fieldsOf(() =>
        validateViewConfig(
          {
            columns: ['name', 'name', 'x'],
            kanbanConfig: { groupByField: 'name' },
            calendarConfig: { dateField: 'price' },
            chartConfig: { xField: 'nope', chartType: 'radar', aggregation: 'median' },
            filters: { logic: 'and', conditions: [{ field: 'price', operator: 'contains', value: 1 }] },
          },
          FIELDS,
        ),
      ),
    ).toEqual([
      'config.columns[1]',
      'config.columns[2]',
      'config.kanbanConfig.groupByField',
      'config.calendarConfig.dateField',
      'config.chartConfig.chartType',
      'config.chartConfig.xField',
      'config.chartConfig.aggregation',
      expect.stringMatching(/^config\.filters\.conditions\[0\]/),
    ]);
    expect(fieldsOf(() => validateViewConfig([], FIELDS))).toEqual(['config']);
  });

  it("takes groupBy as spec 2.12's GroupBy {fields, aggregations}, checked as a query's, paths under config.groupBy", () => {
    const groupBy = { fields: ['status'], aggregations: [{ kind: 'sum', field: 'price' }, { kind: 'count' }] };
    expect(validateViewConfig({ groupBy }, FIELDS)).toEqual({ groupBy });
    expect(
      fieldsOf(() =>
        validateViewConfig({ groupBy: { fields: ['nope'], aggregations: [{ kind: 'sum', field: 'name' }] } }, FIELDS),
      ),
    ).toEqual(['config.groupBy.fields[0]']);
    expect(fieldsOf(() => validateViewConfig({ groupBy: { fields: ['status'], aggregations: [{ kind: 'sum', field: 'name' }] } }, FIELDS))).toEqual([
      'config.groupBy.aggregations[0].field',
    ]);
    expect(fieldsOf(() => validateViewConfig({ groupBy: { fields: ['status'], orderBy: 'x' } }, FIELDS))).toEqual(['config.groupBy.orderBy']);
  });

  it('defaults the chart aggregation to sum of yField, else count', () => {
    expect(chartAggregation({ yField: 'price' })).toBe('sum');
    expect(chartAggregation({})).toBe('count');
    expect(chartAggregation({ yField: 'price', aggregation: 'max' })).toBe('max');
  });
});

describe('cleanViewConfig', () => {
  it('drops references to removed fields and to fields whose type no longer fits, in both filter shapes', () => {
    const fields = FIELDS.filter((field) => field.id !== 'price').map((field) => (field.id === 'due' ? { ...field, type: 'text' as const } : field));
    const { config, changed } = cleanViewConfig(
      {
        columns: ['price', 'name'],
        filters: { logic: 'or', conditions: [{ field: 'price', operator: 'eq', value: 1 }], groups: [{ conditions: [{ field: 'name', operator: 'eq', value: 'a' }] }] },
        filter: { and: [{ field: 'price', op: 'gt', value: 1 }] },
        sorts: [{ field: 'price', direction: 'asc' }, { field: 'name', direction: 'desc' }],
        calendarConfig: { dateField: 'due', titleField: 'name' },
        chartConfig: { xField: 'status', yField: 'price', chartType: 'bar' },
        groupBy: 'price',
        keep: 1,
      },
      fields,
    );
    expect(changed).toBe(true);
    expect(config).toEqual({
      columns: ['name'],
      filters: { logic: 'or', groups: [{ conditions: [{ field: 'name', operator: 'eq', value: 'a' }] }] },
      sorts: [{ field: 'name', direction: 'desc' }],
      calendarConfig: { titleField: 'name' },
      chartConfig: { xField: 'status', chartType: 'bar' },
      keep: 1,
    });
  });

  it('leaves a valid chart: without its xField chartConfig goes, without its yField an explicit aggregation goes', () => {
    const withoutStatus = FIELDS.filter((field) => field.id !== 'status');
    const lostX = cleanViewConfig({ chartConfig: { xField: 'status', yField: 'price', chartType: 'bar' }, keep: 1 }, withoutStatus);
    expect(lostX.config).toEqual({ keep: 1 });
    expect(validateViewConfig(lostX.config, withoutStatus)).toEqual({ keep: 1 });
    const withoutPrice = FIELDS.filter((field) => field.id !== 'price');
    const lostY = cleanViewConfig({ chartConfig: { xField: 'status', yField: 'price', chartType: 'bar', aggregation: 'avg' } }, withoutPrice);
    expect(lostY.config).toEqual({ chartConfig: { xField: 'status', chartType: 'bar' } });
    expect(validateViewConfig(lostY.config, withoutPrice)).toEqual(lostY.config);
  });

  it('shows a chart an earlier clean-up left invalid as a valid one (settledViewConfig)', () => {
    expect(settledViewConfig({ chartConfig: { chartType: 'bar', yField: 'price' }, keep: 1 })).toEqual({ keep: 1 });
    expect(settledViewConfig({ chartConfig: { chartType: 'pie', xField: 'status', aggregation: 'sum' } })).toEqual({ chartConfig: { chartType: 'pie', xField: 'status' } });
    const fine = { chartConfig: { chartType: 'pie', xField: 'status' } };
    expect(settledViewConfig(fine)).toEqual(fine);
  });

  it('keeps a GroupBy-shaped groupBy to what still fits, and drops it when nothing is left', () => {
    const fields = FIELDS.filter((field) => field.id !== 'price');
    const kept = cleanViewConfig(
      { groupBy: { fields: ['status', 'price'], aggregations: [{ kind: 'sum', field: 'price' }, { kind: 'count' }] } },
      fields,
    );
    expect(kept).toEqual({ config: { groupBy: { fields: ['status'], aggregations: [{ kind: 'count' }] } }, changed: true });
    // A system column the write accepted stays.
    expect(cleanViewConfig({ groupBy: { fields: ['createdAt', 'price'] } }, fields)).toEqual({
      config: { groupBy: { fields: ['createdAt'] } },
      changed: true,
    });
    expect(cleanViewConfig({ groupBy: { fields: ['price'], aggregations: [{ kind: 'avg', field: 'price' }] } }, fields)).toEqual({
      config: {},
      changed: true,
    });
  });

  it('reports no change when every reference still fits', () => {
    const config = { columns: ['name'], sorts: [{ field: 'price', direction: 'asc' }] };
    expect(cleanViewConfig(config, FIELDS)).toEqual({ config, changed: false });
  });
});
