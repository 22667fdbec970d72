import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition, FieldType } from '../../documents/fields/field.types.js';
import { isPlainObject } from '../../documents/fields/field-value.utils.js';
import { compileAst, compileQuery } from '../../documents/query/query.compiler.js';
import { normalizeQuery } from '../../documents/query/query-normalizer.js';
import { AGGREGATION_KINDS, type AggregationKind } from '../../documents/query/query.types.js';
import { prefixDetails, viewQueryAst } from '../../documents/services/view-resolver.js';

/** View types of spec 2.7. */
export const VIEW_TYPES = ['table', 'gallery', 'kanban', 'calendar', 'chart', 'form', 'map', 'timeline'] as const;
export type ViewType = (typeof VIEW_TYPES)[number];
export const CHART_TYPES = ['bar', 'line', 'pie'] as const;

export type ViewConfig = Record<string, unknown>;

const SELECT_TYPES: readonly FieldType[] = ['single_select', 'multi_select'];
const DATE_TYPES: readonly FieldType[] = ['date', 'datetime'];
const MAX_GROUP_FIELDS = 5;
/** The keys of each type section (spec 2.7; `aggregation` is Quire's addition). */
const KANBAN_KEYS = ['groupByField', 'cardFields'] as const;
const CALENDAR_KEYS = ['dateField', 'titleField'] as const;
const CHART_KEYS = ['chartType', 'xField', 'yField', 'aggregation'] as const;

/** The aggregation of a chart: `chartConfig.aggregation`, else sum of yField, else count. */
export function chartAggregation(chart: Record<string, unknown>): AggregationKind {
  if (typeof chart.aggregation === 'string' && (AGGREGATION_KINDS as readonly string[]).includes(chart.aggregation)) {
    return chart.aggregation as AggregationKind;
  }
  return typeof chart.yField === 'string' ? 'sum' : 'count';
}

/**
 * The field types a key needs, or a rule over the field: a chart's `yField` must be one the query engine sums (a
 * number type, or a formula, lookup or rollup whose result is a number), as `POST /data/query` decides it.
 */
type FieldRule = readonly FieldType[] | ((field: FieldDefinition) => boolean);

function fitsRule(field: FieldDefinition, rule: FieldRule): boolean {
  return typeof rule === 'function' ? rule(field) : rule.includes(field.type);
}

/** A rule admitting the fields sum/avg aggregate in `fields` (the chart's yField unless it counts). */
function numericIn(fields: readonly FieldDefinition[]): FieldRule {
  return (field) => compiles({ groupBy: { aggregations: [{ kind: 'sum', field: field.id }] } }, fields);
}

class ConfigChecker {
  readonly details: ErrorDetail[] = [];
  private readonly byId: Map<string, FieldDefinition>;

  constructor(fields: readonly FieldDefinition[]) {
    this.byId = new Map(fields.map((field) => [field.id, field]));
  }

  field(value: unknown, path: string, rule?: FieldRule, what?: string): void {
    if (typeof value !== 'string' || value === '') {
      this.details.push({ field: path, reason: 'must be a field id' });
      return;
    }
    const field = this.byId.get(value);
    if (!field) {
      this.details.push({ field: path, fieldId: value, reason: `unknown field ${JSON.stringify(value)}` });
    } else if (rule && !fitsRule(field, rule)) {
      this.details.push({ field: path, fieldId: value, reason: `must be ${what ?? (typeof rule === 'function' ? 'another field' : rule.join(' or '))} (field ${value} is ${field.type})` });
    }
  }

  fieldList(value: unknown, path: string, max = 500): void {
    if (!Array.isArray(value) || value.length > max) {
      this.details.push({ field: path, reason: `must be an array of at most ${max} field ids` });
      return;
    }
    const seen = new Set<unknown>();
    value.forEach((item: unknown, index) => {
      if (seen.has(item)) {
        this.details.push({ field: `${path}[${index}]`, reason: 'listed twice' });
      }
      seen.add(item);
      this.field(item, `${path}[${index}]`);
    });
  }

  /**
   * `groupBy` as spec 2.12's GroupBy `{fields, aggregations}`: checked as `POST /data/query` checks its own (fields
   * exist, aggregation kinds and the types they need, limits, no unknown keys), paths under `config.`.
   */
  groupBy(value: Record<string, unknown>, fields: readonly FieldDefinition[]): void {
    try {
      compileAst(normalizeQuery({ groupBy: value }, { strict: true }), fields);
    } catch (error) {
      const relabelled = prefixDetails(error);
      if (!(relabelled instanceof AppException) || !relabelled.options.details) {
        throw relabelled;
      }
      this.details.push(...relabelled.options.details);
    }
  }

  /** A type section (`kanbanConfig`, …): an object of its known keys only — a misspelt key would silently do nothing. */
  section(config: ViewConfig, key: string, known: readonly string[]): Record<string, unknown> | null {
    const value = config[key];
    if (value === undefined || value === null) {
      return null;
    }
    if (!isPlainObject(value)) {
      this.details.push({ field: `config.${key}`, reason: 'must be an object' });
      return null;
    }
    for (const name of Object.keys(value)) {
      if (!known.includes(name)) {
        this.details.push({ field: `config.${key}.${name}`, reason: `unknown key (allowed: ${known.join(', ')})` });
      }
    }
    return value;
  }
}

/**
 * Validates a view config against the document's fields (spec 2.7, docs/views.md). Known keys are checked — every
 * field reference must exist (and have the right type where the key needs one), `filters`/`sorts` compile like a
 * `POST /data/query` (strictly: no unknown keys inside them), the type sections hold only their own keys — and
 * unknown top-level keys are kept as they are (clients keep UI state there). VALIDATION_ERROR lists every problem
 * with its path under `config.`.
 */
export function validateViewConfig(input: unknown, fields: readonly FieldDefinition[]): ViewConfig {
  if (input === undefined || input === null) {
    return {};
  }
  if (!isPlainObject(input)) {
    throw AppException.validation([{ field: 'config', reason: 'config must be an object' }]);
  }
  const config = input;
  const check = new ConfigChecker(fields);
  for (const key of ['columns', 'displayFields'] as const) {
    if (config[key] !== undefined && config[key] !== null) {
      check.fieldList(config[key], `config.${key}`);
    }
  }
  if (config.groupBy !== undefined && config.groupBy !== null) {
    if (typeof config.groupBy === 'string') {
      check.field(config.groupBy, 'config.groupBy');
    } else if (isPlainObject(config.groupBy)) {
      check.groupBy(config.groupBy, fields);
    } else {
      check.fieldList(config.groupBy, 'config.groupBy', MAX_GROUP_FIELDS);
    }
  }
  if (config.groupByField !== undefined && config.groupByField !== null) {
    check.field(config.groupByField, 'config.groupByField');
  }
  const kanban = check.section(config, 'kanbanConfig', KANBAN_KEYS);
  if (kanban) {
    if (kanban.groupByField !== undefined) {
      check.field(kanban.groupByField, 'config.kanbanConfig.groupByField', SELECT_TYPES, 'a select field');
    }
    if (kanban.cardFields !== undefined) {
      check.fieldList(kanban.cardFields, 'config.kanbanConfig.cardFields');
    }
  }
  const calendar = check.section(config, 'calendarConfig', CALENDAR_KEYS);
  if (calendar) {
    if (calendar.dateField !== undefined) {
      check.field(calendar.dateField, 'config.calendarConfig.dateField', DATE_TYPES, 'a date field');
    }
    if (calendar.titleField !== undefined) {
      check.field(calendar.titleField, 'config.calendarConfig.titleField');
    }
  }
  const chart = check.section(config, 'chartConfig', CHART_KEYS);
  if (chart) {
    if (!(CHART_TYPES as readonly unknown[]).includes(chart.chartType)) {
      check.details.push({ field: 'config.chartConfig.chartType', reason: `must be one of ${CHART_TYPES.join(', ')}` });
    }
    check.field(chart.xField, 'config.chartConfig.xField');
    if (chart.aggregation !== undefined && !(AGGREGATION_KINDS as readonly unknown[]).includes(chart.aggregation)) {
      check.details.push({ field: 'config.chartConfig.aggregation', reason: `must be one of ${AGGREGATION_KINDS.join(', ')}` });
    }
    const aggregation = chartAggregation(chart);
    if (chart.yField !== undefined && chart.yField !== null) {
      check.field(chart.yField, 'config.chartConfig.yField', aggregation === 'count' ? undefined : numericIn(fields), 'a numeric field');
    } else if (aggregation !== 'count') {
      check.details.push({ field: 'config.chartConfig.yField', reason: `${aggregation} needs a yField` });
    }
  }
  try {
    // Strict: a misspelt key in a condition, group or sort is refused as POST /data/query refuses it.
    compileAst(viewQueryAst(config, { strict: true }), fields);
  } catch (error) {
    const relabelled = prefixDetails(error);
    if (relabelled instanceof AppException && relabelled.options.details) {
      check.details.push(...relabelled.options.details);
    } else {
      throw relabelled;
    }
  }
  if (check.details.length > 0) {
    throw AppException.validation(check.details);
  }
  return JSON.parse(JSON.stringify(config)) as ViewConfig;
}

function compiles(query: unknown, fields: readonly FieldDefinition[]): boolean {
  try {
    compileQuery(query, fields);
    return true;
  } catch {
    return false;
  }
}

/** Drops the conditions of a filter (either shape) that no longer compile; null when nothing is left. */
function pruneFilter(node: unknown, fields: readonly FieldDefinition[]): unknown {
  if (Array.isArray(node)) {
    const kept = node.map((item: unknown) => pruneFilter(item, fields)).filter((item) => item !== null);
    return kept.length > 0 ? kept : null;
  }
  if (!isPlainObject(node)) {
    return node;
  }
  if (node.field !== undefined) {
    return compiles({ filters: [node] }, fields) ? node : null;
  }
  const out: Record<string, unknown> = { ...node };
  let left = 0;
  for (const key of ['conditions', 'groups', 'and', 'or']) {
    if (Array.isArray(node[key])) {
      const kept = (node[key] as unknown[]).map((item) => pruneFilter(item, fields)).filter((item) => item !== null);
      left += kept.length;
      if (kept.length > 0) {
        out[key] = kept;
      } else {
        delete out[key];
      }
    }
  }
  return left > 0 ? out : null;
}

/**
 * What is left of a `chartConfig` once the clean-up removed a field must still be valid (docs/views.md): without
 * its `xField` the chart has nothing to group by and `chartConfig` goes (a chart view without one is valid, to be
 * configured again); without its `yField` an explicit sum/avg/min/max goes and the chart counts rows.
 * Changes `config` in place.
 */
function settleChart(config: ViewConfig): void {
  const chart = config.chartConfig;
  if (!isPlainObject(chart)) {
    return;
  }
  if (typeof chart.xField !== 'string' || chart.xField === '') {
    delete config.chartConfig;
    return;
  }
  if ((chart.yField === undefined || chart.yField === null) && chart.aggregation !== undefined && chart.aggregation !== 'count') {
    delete chart.aggregation;
  }
}

/**
 * A GroupBy-shaped `groupBy` after a field change: fields that are gone leave `fields`, aggregations that no longer
 * compile (their field gone, or no longer numeric for sum/avg) leave `aggregations`, and a groupBy left with neither
 * goes. Changes `config` in place.
 */
function settleGroupBy(config: ViewConfig, fields: readonly FieldDefinition[]): void {
  const groupBy = config.groupBy as Record<string, unknown>;
  // Each group field as the query compiler reads it (system columns such as createdAt included), not only the
  // document's fields: what the write accepted stays unless its field went.
  if (Array.isArray(groupBy.fields)) {
    groupBy.fields = groupBy.fields.filter((field: unknown) => compiles({ groupBy: { fields: [field] } }, fields));
  }
  if (Array.isArray(groupBy.aggregations)) {
    groupBy.aggregations = groupBy.aggregations.filter((aggregation: unknown) => compiles({ groupBy: { aggregations: [aggregation] } }, fields));
  }
  const left = (key: string): number => (Array.isArray(groupBy[key]) ? (groupBy[key] as unknown[]).length : 0);
  if (left('fields') === 0 && left('aggregations') === 0) {
    delete config.groupBy;
  }
}

/**
 * A stored config as reads show it: views a clean-up of an earlier version left with a `chartConfig` that lost its
 * `xField` or `yField` come out valid, so that writing back what was read is accepted. The stored row is left alone
 * until the view is next written.
 */
export function settledViewConfig(config: ViewConfig): ViewConfig {
  if (!isPlainObject(config.chartConfig)) {
    return config;
  }
  const out: ViewConfig = { ...config, chartConfig: { ...config.chartConfig } };
  settleChart(out);
  return out;
}

/**
 * Keeps a stored view valid after its document's fields changed (docs/views.md): references to fields that no
 * longer exist, or no longer have a type the key needs, are removed; filter conditions and sorts that no longer
 * compile are dropped. Unknown keys stay. Returns the new config and whether it changed.
 */
export function cleanViewConfig(config: ViewConfig, fields: readonly FieldDefinition[]): { config: ViewConfig; changed: boolean } {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const fits = (id: unknown, rule?: FieldRule): boolean => {
    const field = typeof id === 'string' ? byId.get(id) : undefined;
    return field !== undefined && (!rule || fitsRule(field, rule));
  };
  const out: ViewConfig = JSON.parse(JSON.stringify(config)) as ViewConfig;
  const list = (owner: Record<string, unknown>, key: string): void => {
    if (Array.isArray(owner[key])) {
      owner[key] = (owner[key] as unknown[]).filter((id) => fits(id));
    }
  };
  const single = (owner: Record<string, unknown>, key: string, rule?: FieldRule): void => {
    if (owner[key] !== undefined && owner[key] !== null && !fits(owner[key], rule)) {
      delete owner[key];
    }
  };
  list(out, 'columns');
  list(out, 'displayFields');
  if (Array.isArray(out.groupBy)) {
    list(out, 'groupBy');
  } else if (isPlainObject(out.groupBy)) {
    settleGroupBy(out, fields);
  } else {
    single(out, 'groupBy');
  }
  single(out, 'groupByField');
  if (isPlainObject(out.kanbanConfig)) {
    single(out.kanbanConfig, 'groupByField', SELECT_TYPES);
    list(out.kanbanConfig, 'cardFields');
  }
  if (isPlainObject(out.calendarConfig)) {
    single(out.calendarConfig, 'dateField', DATE_TYPES);
    single(out.calendarConfig, 'titleField');
  }
  if (isPlainObject(out.chartConfig)) {
    single(out.chartConfig, 'xField');
    single(out.chartConfig, 'yField', chartAggregation(out.chartConfig) === 'count' ? undefined : numericIn(fields));
    settleChart(out);
  }
  for (const key of ['filters', 'filter']) {
    if (out[key] !== undefined && out[key] !== null) {
      const pruned = pruneFilter(out[key], fields);
      if (pruned === null) {
        delete out[key];
      } else {
        out[key] = pruned;
      }
    }
  }
  for (const key of ['sorts', 'sort']) {
    if (Array.isArray(out[key])) {
      out[key] = (out[key] as unknown[]).filter((sort) => compiles({ [key]: [sort] }, fields));
    } else if (out[key] !== undefined && out[key] !== null && !compiles({ [key]: out[key] }, fields)) {
      delete out[key];
    }
  }
  return { config: out, changed: JSON.stringify(out) !== JSON.stringify(config) };
}
