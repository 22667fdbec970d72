import { evaluateFormula, formulaFieldRefs, formulaRowAggregates, parseFormula, type FormulaNode, type RowAggregate } from '../../../common/formula/index.js';
import { computedInputs, formulaTypeOfField, volatileFormulaIds } from './computed-definitions.js';
import type { FieldDefinition, RollupAggregation, RowSystemValues, StoredRowValues, StoredValue } from './field.types.js';
import type { RowRecord } from '../domain/document.records.js';

/** The computed fields of one document's data rows, in the order they must be evaluated. */
export interface ComputedPlan {
  /** Lookups, rollups and non-volatile formulas, each after the computed fields it reads. */
  materialised: FieldDefinition[];
  /** Formulas reading NOW()/TODAY(): never stored, evaluated at read time. */
  volatile: FieldDefinition[];
  formulas: Map<string, FormulaNode>;
  relationFieldIds: string[];
  targetFieldIds: string[];
  byId: Map<string, FieldDefinition>;
}

/** Orders the computed fields of a field list (cycles were refused when the metadata was written). */
export function computedPlan(fields: readonly FieldDefinition[]): ComputedPlan {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const ids = new Set(byId.keys());
  const plan: ComputedPlan = {
    materialised: [],
    volatile: [],
    formulas: new Map(),
    relationFieldIds: [],
    targetFieldIds: [],
    byId,
  };
  const done = new Set<string>();
  const volatile = volatileFormulaIds(fields);
  const visit = (field: FieldDefinition, depth: number): void => {
    if (done.has(field.id) || depth > fields.length) {
      return;
    }
    done.add(field.id);
    for (const input of computedInputs(field, ids)) {
      const dependency = byId.get(input);
      if (dependency && input !== field.id && isComputed(dependency)) {
        visit(dependency, depth + 1);
      }
    }
    if (field.type === 'formula') {
      try {
        plan.formulas.set(field.id, parseFormula(field.formula ?? ''));
      } catch {
        return;
      }
      // A formula reading a volatile one is volatile too (the set the query compiler uses as well).
      if (volatile.has(field.id)) {
        plan.volatile.push(field);
      } else {
        plan.materialised.push(field);
      }
      return;
    }
    const ref = field.type === 'lookup' ? field.lookup : field.rollup;
    if (ref) {
      plan.materialised.push(field);
      if (!plan.relationFieldIds.includes(ref.relationFieldId)) {
        plan.relationFieldIds.push(ref.relationFieldId);
      }
      if (!plan.targetFieldIds.includes(ref.targetFieldId)) {
        plan.targetFieldIds.push(ref.targetFieldId);
      }
    }
  };
  fields.filter(isComputed).forEach((field) => visit(field, 0));
  return plan;
}

function isComputed(field: FieldDefinition): boolean {
  return field.type === 'formula' || field.type === 'lookup' || field.type === 'rollup';
}

/** A stored value as a formula reads it (dates as Date, system fields from the row's columns). */
export function formulaInput(
  field: FieldDefinition | undefined,
  values: StoredRowValues,
  row?: RowSystemValues,
): unknown {
  if (!field) {
    return null;
  }
  if (field.type === 'created_time' || field.type === 'updated_time') {
    const at = field.type === 'created_time' ? row?.createdAt : row?.updatedAt;
    return at ? new Date(at) : null;
  }
  if (field.type === 'created_by' || field.type === 'updated_by') {
    return (field.type === 'created_by' ? row?.createdBy : row?.updatedBy) ?? null;
  }
  const value = values[field.id];
  if (formulaTypeOfField(field) === 'date' && typeof value === 'string') {
    const date = new Date(value.length === 10 ? `${value}T00:00:00.000Z` : value);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  return value ?? null;
}

function flattenValues(values: readonly StoredValue[]): StoredValue[] {
  return values.flatMap((value) =>
    Array.isArray(value) ? flattenValues(value) : value === null || value === '' ? [] : [value],
  );
}

/** A lookup's list (null when nothing is linked or no linked row has a value). */
export function lookupValue(targets: readonly StoredValue[]): StoredValue {
  const flat = flattenValues(targets);
  return flat.length === 0 ? null : flat;
}

/** A rollup over the linked values: sum and count of nothing are 0; avg, min and max of nothing are empty. */
export function rollupValue(targets: readonly StoredValue[], agg: RollupAggregation): StoredValue {
  const flat = flattenValues(targets);
  if (agg === 'count') {
    return flat.length;
  }
  const numbers = flat.filter(
    (value): value is number => typeof value === 'number' && Number.isFinite(value),
  );
  switch (agg) {
    case 'sum':
      return numbers.reduce((sum, value) => sum + value, 0);
    case 'avg':
      return numbers.length === 0 ? null : numbers.reduce((sum, value) => sum + value, 0) / numbers.length;
    case 'min':
      return numbers.length === 0 ? null : Math.min(...numbers);
    case 'max':
      return numbers.length === 0 ? null : Math.max(...numbers);
  }
}

/**
 * The computed values of one row: `links` gives, per relation field id, the linked rows' values. Returns the values
 * of every materialised computed field (null = empty) in plan order, later ones reading earlier ones.
 */
export function computeRow(
  plan: ComputedPlan,
  row: RowRecord,
  links: ReadonlyMap<string, readonly StoredRowValues[]>,
  now: Date,
): StoredRowValues {
  const values: StoredRowValues = { ...row.values };
  const result: StoredRowValues = {};
  for (const field of plan.materialised) {
    let value: StoredValue = null;
    if (field.type === 'formula') {
      const node = plan.formulas.get(field.id) as FormulaNode;
      value = normalise(evaluateFormula(node, (id) => formulaInput(plan.byId.get(id), values, row), { now }));
    } else {
      const ref = (field.type === 'lookup' ? field.lookup : field.rollup) as NonNullable<
        FieldDefinition['lookup']
      >;
      const targets = (links.get(ref.relationFieldId) ?? []).map(
        (target) => target[ref.targetFieldId] ?? null,
      );
      value =
        field.type === 'lookup' ? lookupValue(targets) : rollupValue(targets, field.rollup?.agg ?? 'sum');
    }
    result[field.id] = value;
    if (value === null) {
      delete values[field.id];
    } else {
      values[field.id] = value;
    }
  }
  return result;
}

const ROW_COLUMN_TYPES = new Set(['created_time', 'updated_time', 'created_by', 'updated_by']);

/**
 * `values` with every formula worked out again from the values beside them (a point-in-time export: the inputs as
 * they stood then; the stored formula values are the current ones, since materialisation records no history).
 * Volatile formulas (NOW()/TODAY() and those reading them), never stored, are filled in too, at `now` — as a read
 * at that instant shows them (docs/formulas.md). Lookups and rollups keep their stored values (they read other rows'
 * current state). A formula reading a row column (created_time …) is worked out from `row`'s columns of that time;
 * without `row` it keeps its value.
 */
export function recomputeFormulas(plan: ComputedPlan, values: StoredRowValues, now: Date, row?: Parameters<typeof formulaInput>[2]): StoredRowValues {
  const scope: StoredRowValues = { ...values };
  const ids = new Set(plan.byId.keys());
  // Materialised formulas first: a volatile formula may read them, never the other way round.
  for (const field of [...plan.materialised, ...plan.volatile]) {
    const node = plan.formulas.get(field.id);
    if (field.type !== 'formula' || !node || (row === undefined && computedInputs(field, ids).some((id) => ROW_COLUMN_TYPES.has(plan.byId.get(id)?.type ?? '')))) {
      continue;
    }
    const value = normalise(evaluateFormula(node, (id) => formulaInput(plan.byId.get(id), scope, row), { now }));
    if (value === null) {
      delete scope[field.id];
    } else {
      scope[field.id] = value;
    }
  }
  return scope;
}

function normalise(value: unknown): StoredValue {
  if (value === undefined || value === null) {
    return null;
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? value : null;
  }
  return value as StoredValue;
}

/** Read-time values of the volatile formulas of a row (NOW()/TODAY()). */
export function computeVolatile(
  plan: ComputedPlan,
  values: StoredRowValues,
  row: Parameters<typeof formulaInput>[2],
  now: Date,
): StoredRowValues {
  const result: StoredRowValues = {};
  const scope: StoredRowValues = { ...values };
  for (const field of plan.volatile) {
    const value = normalise(
      evaluateFormula(
        plan.formulas.get(field.id) as FormulaNode,
        (id) => formulaInput(plan.byId.get(id), scope, row),
        { now },
      ),
    );
    if (value !== null) {
      result[field.id] = value;
      scope[field.id] = value;
    }
  }
  return result;
}

/** The property formulas of a metadata, what they aggregate over the data rows, and how to tell a row field. */
export interface PropertyFormulaPlan {
  plan: ComputedPlan;
  formulas: FieldDefinition[];
  isRowField: (id: string) => boolean;
  aggregates: RowAggregate[];
}

/**
 * Plans the read-time property formulas of `metadata` (docs/formulas.md, "Property formulas"): the formulas, in
 * dependency order, and the row aggregates (SUM({amount}), COUNT(*)) they need; null when there is none.
 */
export function planPropertyFormulas(metadata: { fields: readonly FieldDefinition[]; properties: readonly FieldDefinition[] }): PropertyFormulaPlan | null {
  const plan = computedPlan(metadata.properties);
  const formulas = [...plan.materialised, ...plan.volatile].filter((field) => field.type === 'formula');
  if (formulas.length === 0) {
    return null;
  }
  const rowFields = new Set(metadata.fields.map((field) => field.id));
  const propertyIds = new Set(metadata.properties.map((field) => field.id));
  const isRowField = (id: string): boolean => rowFields.has(id) && !propertyIds.has(id);
  const aggregates: RowAggregate[] = [];
  for (const field of formulas) {
    for (const aggregate of formulaRowAggregates(plan.formulas.get(field.id) as FormulaNode, isRowField)) {
      if (!aggregates.some((known) => known.fn === aggregate.fn && known.fieldId === aggregate.fieldId)) {
        aggregates.push(aggregate);
      }
    }
  }
  return { plan, formulas, isRowField, aggregates };
}

/**
 * The property formulas whose values a reader may not see: those aggregating a row field hidden from them (a lookup
 * or rollup over a document they cannot read: ValueMask) and those reading such a property. `SUM({total})` would
 * otherwise tell the sum of values the rows do not show.
 */
export function hiddenPropertyFormulas(planned: PropertyFormulaPlan, hidesRowField: (fieldId: string) => boolean): Set<string> {
  const hidden = new Set<string>();
  // planned.formulas is in dependency order: a formula comes after the properties it reads.
  for (const field of planned.formulas) {
    const node = planned.plan.formulas.get(field.id) as FormulaNode;
    const aggregatesHidden = formulaRowAggregates(node, planned.isRowField).some((aggregate) => aggregate.fieldId !== '*' && hidesRowField(aggregate.fieldId));
    if (aggregatesHidden || formulaFieldRefs(node).some((id) => hidden.has(id))) {
      hidden.add(field.id);
    }
  }
  return hidden;
}

/**
 * The property values with every property formula worked out from the other properties and the row aggregates
 * (`aggregates`, keyed `FN:fieldId`); a formula with no value, or one in `hidden` (hiddenPropertyFormulas), leaves
 * its property out.
 */
export function evaluatePropertyFormulas(
  planned: PropertyFormulaPlan,
  values: StoredRowValues,
  aggregates: ReadonlyMap<string, StoredValue>,
  now: Date,
  hidden: ReadonlySet<string> = new Set(),
): StoredRowValues {
  const result: StoredRowValues = { ...values };
  for (const field of planned.formulas) {
    if (hidden.has(field.id)) {
      delete result[field.id];
      continue;
    }
    const value = evaluateFormula(planned.plan.formulas.get(field.id) as FormulaNode, (id) => formulaInput(planned.plan.byId.get(id), result), {
      now,
      isRowField: planned.isRowField,
      aggregate: (fn, fieldId) => aggregates.get(`${fn}:${fieldId}`) ?? null,
    });
    if (value === null || value === undefined) {
      delete result[field.id];
    } else {
      result[field.id] = value as StoredValue;
    }
  }
  return result;
}
