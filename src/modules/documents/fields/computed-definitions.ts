import {
  FormulaError,
  formulaFieldRefs,
  inferFormulaType,
  isVolatileFormula,
  parseFormula,
  type FormulaNode,
  type FormulaValueType,
} from '../../../common/formula/index.js';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { FIELD_TYPES, type FieldDefinition, type FieldType } from './field.types.js';
import { assertNever } from '../../../common/assert-never.js';

/**
 * Static rules of computed fields (docs/formulas.md): formulas parse and type-check against the fields they name,
 * no cycle runs through formulas, lookups and rollups, and a field others depend on is not deleted or retyped
 * while they still name it. Pure: no database.
 */

/** How a stored field reads inside a formula. */
export function formulaTypeOfField(field: FieldDefinition): FormulaValueType {
  switch (field.type) {
    case 'number':
    case 'currency':
    case 'percent':
    case 'duration':
    case 'rating':
    case 'auto_number':
    case 'rollup':
      return 'number';
    case 'date':
    case 'datetime':
    case 'created_time':
    case 'updated_time':
      return 'date';
    case 'boolean':
      return 'boolean';
    case 'text':
    case 'long_text':
    case 'single_select':
    case 'user':
    case 'created_by':
    case 'updated_by':
      return 'text';
    case 'multi_select':
    case 'collaborator':
    case 'attachment':
    case 'relation':
    case 'lookup':
      return 'list';
    case 'formula':
      return field.resultType ?? 'text';
    default:
      return assertNever(field.type);
  }
}

const COMPUTED_TYPES: ReadonlySet<FieldType> = new Set(['formula', 'lookup', 'rollup']);

/** The ids a computed field reads in its own document (formula references; a lookup's relation and target). */
export function computedInputs(field: FieldDefinition, sameDocumentIds?: ReadonlySet<string>): string[] {
  if (field.type === 'formula' && typeof field.formula === 'string') {
    try {
      return formulaFieldRefs(parseFormula(field.formula));
    } catch {
      return [];
    }
  }
  const ref = field.type === 'lookup' ? field.lookup : field.type === 'rollup' ? field.rollup : undefined;
  if (!ref) {
    return [];
  }
  // A relation without docType/docId points into its own document, so the target may be a field of this list.
  const target = sameDocumentIds?.has(ref.targetFieldId) ? [ref.targetFieldId] : [];
  return [ref.relationFieldId, ...target];
}

/** Parsed formula of a field (null when it has none or it does not parse). */
export function parsedFormula(field: FieldDefinition): FormulaNode | null {
  if (field.type !== 'formula' || typeof field.formula !== 'string') {
    return null;
  }
  try {
    return parseFormula(field.formula);
  } catch {
    return null;
  }
}

/** A formula calling NOW() or TODAY() itself (see `volatileFormulaIds` for the formulas reading one). */
export function isVolatileField(field: FieldDefinition): boolean {
  const node = parsedFormula(field);
  return node !== null && isVolatileFormula(node);
}

/**
 * The ids of the volatile formulas of `fields` (docs/formulas.md): those calling NOW() or TODAY() and those reading
 * such a formula, directly or through other formulas. None is ever stored, so every reader — the row evaluator
 * (`computedPlan`), the query compiler (`queryHandlerFor`) — must agree on this one set. A lookup or rollup ends the
 * chain: it reads stored values, and is stored itself.
 */
export function volatileFormulaIds(fields: readonly FieldDefinition[]): ReadonlySet<string> {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const known = new Map<string, boolean>();
  const isVolatile = (field: FieldDefinition): boolean => {
    const seen = known.get(field.id);
    if (seen !== undefined) {
      return seen;
    }
    // Provisional answer: a cycle (refused when the metadata is written) ends here instead of recursing forever.
    known.set(field.id, false);
    const node = parsedFormula(field);
    const volatile =
      node !== null &&
      (isVolatileFormula(node) ||
        formulaFieldRefs(node).some((id) => {
          const input = byId.get(id);
          return input !== undefined && input.type === 'formula' && isVolatile(input);
        }));
    known.set(field.id, volatile);
    return volatile;
  };
  return new Set(fields.filter((field) => field.type === 'formula' && isVolatile(field)).map((field) => field.id));
}

function formulaDetail(path: string, field: FieldDefinition, error: FormulaError): ErrorDetail {
  return {
    field: `${path}.formula`,
    fieldId: field.id,
    position: error.position,
    reason: `${error.message} (at position ${error.position})`,
  };
}

/**
 * Type-checks the formulas of `fields` (data fields, or properties when `rowFields` is given: a property formula may
 * aggregate row fields and name other properties). Returns the fields with `resultType` set; collects errors.
 */
function checkList(
  fields: readonly FieldDefinition[],
  path: string,
  errors: ErrorDetail[],
  rowFields?: readonly FieldDefinition[],
): FieldDefinition[] {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const ids = new Set(byId.keys());
  const rowById = new Map((rowFields ?? []).map((field) => [field.id, field]));
  const types = new Map<string, FormulaValueType>();
  const state = new Map<string, 'visiting' | 'done' | 'failed'>();
  const indexOf = new Map(fields.map((field, index) => [field.id, index]));

  const cycleError = (chain: string[]): void => {
    const first = byId.get(chain[0]) as FieldDefinition;
    errors.push({
      field: `${path}[${indexOf.get(first.id)}]${first.type === 'formula' ? '.formula' : `.${first.type}`}`,
      fieldId: first.id,
      position: 0,
      reason: `circular reference: ${chain.join(' → ')}`,
    });
  };

  const visit = (id: string, chain: string[]): FormulaValueType | undefined => {
    const field = byId.get(id);
    if (!field) {
      return undefined;
    }
    if (!COMPUTED_TYPES.has(field.type)) {
      return formulaTypeOfField(field);
    }
    const seen = state.get(id);
    if (seen === 'done') {
      return types.get(id);
    }
    if (seen === 'failed') {
      return field.type === 'formula' ? 'blank' : formulaTypeOfField(field);
    }
    if (seen === 'visiting') {
      const start = chain.indexOf(id);
      cycleError([...chain.slice(start), id]);
      throw new CycleAbort();
    }
    state.set(id, 'visiting');
    const next = [...chain, id];
    try {
      for (const input of computedInputs(field, ids)) {
        if (input !== id || field.type !== 'formula') {
          if (input === id) {
            cycleError([id, id]);
            throw new CycleAbort();
          }
          visit(input, next);
        }
      }
      let type: FormulaValueType = formulaTypeOfField(field);
      if (field.type === 'formula') {
        const node = parseFormula(field.formula ?? '');
        type = inferFormulaType(
          node,
          (ref) => {
            if (ref === id) {
              throw new FormulaError(`circular reference: {${id}} refers to itself`, 0);
            }
            return visit(ref, next);
          },
          rowFields
            ? {
                rowFieldTypeOf: (ref) =>
                  rowById.has(ref) ? formulaTypeOfField(rowById.get(ref) as FieldDefinition) : undefined,
              }
            : {},
        );
      }
      types.set(id, type);
      state.set(id, 'done');
      return type;
    } catch (error) {
      state.set(id, 'failed');
      if (error instanceof FormulaError) {
        errors.push(formulaDetail(`${path}[${indexOf.get(id)}]`, field, error));
        throw new CycleAbort();
      }
      throw error;
    }
  };

  for (const field of fields) {
    if (COMPUTED_TYPES.has(field.type) && state.get(field.id) === undefined) {
      try {
        visit(field.id, []);
      } catch (error) {
        if (!(error instanceof CycleAbort)) {
          throw error;
        }
      }
    }
  }
  return fields.map((field) => {
    if (field.type !== 'formula') {
      const { resultType: _dropped, ...rest } = field;
      return rest;
    }
    const type = types.get(field.id);
    return type === undefined
      ? field
      : { ...field, resultType: type === 'blank' || type === 'list' ? 'text' : type };
  });
}

class CycleAbort extends Error {}

/**
 * Types whose value is taken from the row itself (created/updated at and by, the row's number): a property would
 * never get a value, so one is refused like a lookup or rollup property.
 */
const ROW_ONLY_TYPES: ReadonlySet<FieldType> = new Set(['created_time', 'updated_time', 'created_by', 'updated_by', 'auto_number']);

/**
 * The whole metadata check run when it is written: formulas (syntax, fields, functions, arity, types), cycles,
 * property types and property formulas. Throws VALIDATION_ERROR whose details name the field (`fields[3].formula`,
 * `fieldId`) and the 0-based `position` in the formula. Returns fields and properties with `resultType` set.
 */
export function checkComputedDefinitions(
  fields: readonly FieldDefinition[],
  properties: readonly FieldDefinition[],
  paths: { fields: string; properties: string } = { fields: 'fields', properties: 'properties' },
): { fields: FieldDefinition[]; properties: FieldDefinition[] } {
  const errors: ErrorDetail[] = [];
  const checkedFields = checkList(fields, paths.fields, errors);
  const checkedProperties = checkList(properties, paths.properties, errors, checkedFields);
  const requireFormulas = (list: readonly FieldDefinition[], path: string): void =>
    list.forEach((field, index) => {
      if (field.type === 'formula' && (typeof field.formula !== 'string' || field.formula.trim() === '')) {
        if (!errors.some((error) => error.fieldId === field.id)) {
          errors.push({ field: `${path}[${index}].formula`, fieldId: field.id, position: 0, reason: 'formula is required' });
        }
      }
    });
  requireFormulas(fields, paths.fields);
  requireFormulas(properties, paths.properties);
  properties.forEach((property, index) => {
    // A lookup or rollup follows one row's relation edges; the document's properties have none to follow.
    if (property.type === 'lookup' || property.type === 'rollup') {
      errors.push({
        field: `${paths.properties}[${index}].type`,
        fieldId: property.id,
        reason: `a property cannot be a ${property.type}: it follows a row's relations; aggregate row fields in a property formula instead (SUM({amount}), COUNT(*))`,
      });
    } else if (ROW_ONLY_TYPES.has(property.type)) {
      errors.push({
        field: `${paths.properties}[${index}].type`,
        fieldId: property.id,
        reason: `a property cannot be a ${property.type}: its value comes from a row (its creation, last change or number), and the properties are no row`,
      });
    }
  });
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  return { fields: checkedFields, properties: checkedProperties };
}

/**
 * Refuses deleting or retyping a field that a formula, lookup or rollup of the new metadata still names
 * (docs/formulas.md: refuse, naming the dependents; delete or change them in the same write instead).
 */
export function checkDependents(
  before: readonly FieldDefinition[],
  after: readonly FieldDefinition[],
  path = 'fields',
): void {
  const next = new Map(after.map((field) => [field.id, field]));
  const ids = new Set(after.map((field) => field.id));
  const errors: ErrorDetail[] = [];
  for (const old of before) {
    const now = next.get(old.id);
    // The written definitions are not validated yet (this check names dependents first): a type the service does
    // not know counts as a retype here and is refused by the validation that follows.
    const retyped =
      now !== undefined &&
      now.type !== old.type &&
      (!(FIELD_TYPES as readonly string[]).includes(now.type) || formulaTypeOfField(now) !== formulaTypeOfField(old));
    if (now !== undefined && !retyped) {
      continue;
    }
    const dependents = after.filter(
      (field) =>
        field.id !== old.id && COMPUTED_TYPES.has(field.type) && computedInputs(field, ids).includes(old.id),
    );
    if (dependents.length > 0) {
      errors.push({
        field: path,
        fieldId: old.id,
        dependents: dependents.map((field) => field.id),
        reason: `field ${old.id} is ${now ? 'retyped' : 'deleted'} but ${dependents.map((field) => `${field.type} ${field.id}`).join(', ')} depend${dependents.length === 1 ? 's' : ''} on it; change or remove ${dependents.length === 1 ? 'it' : 'them'} in the same write`,
      });
    }
  }
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
}
