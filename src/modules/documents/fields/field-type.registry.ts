/**
 * The field-type registry: every FieldType maps to exactly one handler class.
 *
 * | type          | Value key (response)                           | accepted on write (besides the Value key)       | stored in `values` (JSONB)            |
 * |---------------|-----------------------------------------------|--------------------------------------------------|---------------------------------------|
 * | text          | `text`                                         | plain string                                     | string ('' = empty)                   |
 * | long_text     | `text`                                         | plain string                                     | string                                |
 * | number        | `number`                                       | number, numeric string; `currency`/`percent` key | JSON number (finite)                  |
 * | currency      | `number`                                       | same as number                                   | JSON number                           |
 * | percent       | `number`                                       | same as number                                   | JSON number                           |
 * | date          | `date` ("YYYY-MM-DD")                          | ISO 8601 string; `datetime` key                  | "YYYY-MM-DD"                          |
 * | datetime      | `date` (ISO UTC)                               | ISO 8601 string; `datetime` key                  | "YYYY-MM-DDTHH:mm:ss.sssZ" (UTC)      |
 * | boolean       | `boolean`                                      | boolean, "true"/"false"                          | JSON boolean                          |
 * | duration      | `duration` (ms)                                | integer, numeric string; `number` key            | integer milliseconds                  |
 * | rating        | `rating`                                       | integer 1–5; `number` key                        | integer 1–5                           |
 * | single_select | `selectOption` ({id, name, label, color})      | `{selectOption: {id}|"id"}`, `{select}`, id, {id} | option id                             |
 * | multi_select  | `multiSelect` ([{id, name, label, color}])     | array of ids / {id}, one id                      | array of option ids (deduplicated)    |
 * | attachment    | `attachments` ([{id?, name, url, mimeType?, size?}]) | `attachment` key, array, one object        | array of attachment objects           |
 * | user          | `user` ({id})                                  | user id, {id}                                    | user id                               |
 * | collaborator  | `collaborators` ([{id}])                       | `collaborator` key, id, {id}, array              | array of user ids (deduplicated)      |
 * | relation      | `relation` ([{docType?, docId?, rowId}])       | `relations` key, array, row id, one reference    | array of references (deduplicated)    |
 * | lookup        | by runtime type: `number`/`text`/`boolean`/`list`/`json` | read-only                              | any JSON, materialized by the service |
 * | rollup        | `number`                                       | read-only                                        | number, materialized by the service   |
 * | formula       | by runtime type, as lookup                     | read-only                                        | any JSON, materialized by the service |
 * | auto_number   | `number`                                       | read-only                                        | integer, assigned by the service      |
 * | created_time  | `date` (ISO UTC)                               | read-only                                        | column `created_at`                   |
 * | updated_time  | `date` (ISO UTC)                               | read-only                                        | column `updated_at`                   |
 * | created_by    | `user` ({id})                                  | read-only                                        | column `created_by`                   |
 * | updated_by    | `user` ({id})                                  | read-only                                        | column `updated_by`                   |
 *
 * `null` or `{}` written for any field means "no value"; empty values are not stored and not returned.
 */
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import {
  FIELD_TYPES,
  type FieldDefinition,
  type FieldType,
  type RowSystemValues,
  type StoredRowValues,
  type StoredValue,
  type SystemColumn,
  type Value,
  type ValueEntry,
} from './field.types.js';
import type { ConvertResult, FieldTypeHandler } from './field-type-handler.js';
import { AttachmentFieldHandler } from './attachment.field.js';
import { type ComputedPlan, computedPlan, computeVolatile } from './computed-row.evaluator.js';
import { BooleanFieldHandler } from './boolean.field.js';
import {
  AutoNumberFieldHandler,
  DynamicFieldHandler,
  READ_ONLY_REASON,
  RollupFieldHandler,
  TypedComputedFieldHandler,
  SystemTimeFieldHandler,
  SystemUserFieldHandler,
} from './computed.field.js';
import { assertNever } from '../../../common/assert-never.js';
import { DateFieldHandler, DateTimeFieldHandler } from './date.field.js';
import {
  isEmptyInput,
  isEmptyStored,
  isPlainObject,
  validationDetailsOf,
} from './field-value.utils.js';
import { DurationFieldHandler, NumberFieldHandler, RatingFieldHandler } from './number.field.js';
import { RelationFieldHandler, sameRowsOnce } from './relation.field.js';
import { MultiSelectFieldHandler, SingleSelectFieldHandler } from './select.field.js';
import { TextFieldHandler } from './text.field.js';
import { CollaboratorFieldHandler, UserFieldHandler } from './user.field.js';

const text = new TextFieldHandler();
const number = new NumberFieldHandler();
const dynamic = new DynamicFieldHandler();

export const FIELD_TYPE_HANDLERS = {
  text,
  long_text: text,
  number,
  currency: number,
  percent: number,
  date: new DateFieldHandler(),
  datetime: new DateTimeFieldHandler(),
  boolean: new BooleanFieldHandler(),
  duration: new DurationFieldHandler(),
  rating: new RatingFieldHandler(),
  single_select: new SingleSelectFieldHandler(),
  multi_select: new MultiSelectFieldHandler(),
  attachment: new AttachmentFieldHandler(),
  user: new UserFieldHandler(),
  collaborator: new CollaboratorFieldHandler(),
  relation: new RelationFieldHandler(),
  lookup: dynamic,
  rollup: new RollupFieldHandler(),
  formula: dynamic,
  auto_number: new AutoNumberFieldHandler(),
  created_time: new SystemTimeFieldHandler('r.created_at'),
  updated_time: new SystemTimeFieldHandler('r.updated_at'),
  created_by: new SystemUserFieldHandler('r.created_by'),
  updated_by: new SystemUserFieldHandler('r.updated_by'),
} as const satisfies Record<FieldType, FieldTypeHandler>;

export function isFieldType(value: unknown): value is FieldType {
  return typeof value === 'string' && (FIELD_TYPES as readonly string[]).includes(value);
}

/** The handler of a field type. */
export function handlerFor(type: FieldType): FieldTypeHandler {
  switch (type) {
    case 'text':
    case 'long_text':
    case 'number':
    case 'currency':
    case 'percent':
    case 'date':
    case 'datetime':
    case 'boolean':
    case 'duration':
    case 'rating':
    case 'single_select':
    case 'multi_select':
    case 'attachment':
    case 'user':
    case 'collaborator':
    case 'relation':
    case 'lookup':
    case 'rollup':
    case 'formula':
    case 'auto_number':
    case 'created_time':
    case 'updated_time':
    case 'created_by':
    case 'updated_by':
      return FIELD_TYPE_HANDLERS[type];
    default:
      return assertNever(type);
  }
}

const formulaResults = {
  number: new TypedComputedFieldHandler(number),
  text: new TypedComputedFieldHandler(text),
  boolean: new TypedComputedFieldHandler(FIELD_TYPE_HANDLERS.boolean),
  date: new TypedComputedFieldHandler(FIELD_TYPE_HANDLERS.datetime),
} as const;

/**
 * The handler of a field definition: its type's, except a formula with an inferred `resultType`, which is queried,
 * sorted and rendered as that type (docs/formulas.md).
 */
export function handlerForField(field: FieldDefinition): FieldTypeHandler {
  return field.type === 'formula' && field.resultType ? formulaResults[field.resultType] : handlerFor(field.type);
}

/** True for the types clients never write. */
export function isComputedFieldType(type: FieldType): boolean {
  return handlerFor(type).computed;
}

/** Row values as a write carries them: an array of `{fieldId, value}` or an object keyed by field id. */
export type RowValuesInput = ValueEntry[] | readonly unknown[] | Record<string, unknown>;

export interface ParseRowValuesOptions {
  /** true: PATCH-like, only the given fields change, `null` clears one. false: the given values are the whole row. */
  partial: boolean;
  /** Apply `defaultValue` to fields the input leaves out. Default: `!partial` (create / full replace). */
  applyDefaults?: boolean;
  /**
   * The document the values belong to: a relation reference naming it and one without docType/docId that name the
   * same row are kept once (docs/values.md). Without it only references written the same way are deduplicated.
   */
  document?: { docType: string; docId: string };
}

function entriesOf(input: unknown, errors: ErrorDetail[]): [string, unknown][] {
  if (Array.isArray(input)) {
    const entries: [string, unknown][] = [];
    const seen = new Set<string>();
    input.forEach((entry: unknown, index) => {
      if (!isPlainObject(entry) || typeof entry.fieldId !== 'string' || entry.fieldId === '') {
        errors.push({ field: `values[${index}].fieldId`, reason: 'each value entry needs a fieldId' });
        return;
      }
      if (seen.has(entry.fieldId)) {
        errors.push({ fieldId: entry.fieldId, field: `values[${index}]`, reason: 'duplicate field' });
        return;
      }
      seen.add(entry.fieldId);
      if (!Object.hasOwn(entry, 'value')) {
        // A ValueEntry is {fieldId, value} (spec 2.6): a missing value would read as undefined and clear the field.
        errors.push({ fieldId: entry.fieldId, field: `values[${index}].value`, reason: 'value is required (null clears the field)' });
        return;
      }
      // Refused rather than ignored, like an unknown body key: `{fieldId, value, version}` would write without the check.
      const extra = Object.keys(entry).find((key) => key !== 'fieldId' && key !== 'value');
      if (extra !== undefined) {
        errors.push({ fieldId: entry.fieldId, field: `values[${index}].${extra}`, reason: 'unknown key (a value entry is {fieldId, value})' });
        return;
      }
      entries.push([entry.fieldId, entry.value]);
    });
    return entries;
  }
  if (isPlainObject(input)) {
    return Object.entries(input);
  }
  errors.push({
    field: 'values',
    reason: 'values must be an array of {fieldId, value} or an object keyed by field id',
  });
  return [];
}

/** Parses into `errors` instead of throwing; undefined when the value failed. */
function parseInto(
  handler: FieldTypeHandler,
  raw: unknown,
  field: FieldDefinition,
  errors: ErrorDetail[],
): StoredValue | undefined {
  try {
    const stored = handler.parse(raw, field);
    if (stored !== null) {
      const failures = handler.validateRules(stored, field);
      if (failures.length > 0) {
        errors.push(...failures);
        return undefined;
      }
    }
    return stored;
  } catch (error) {
    const details = validationDetailsOf(error);
    if (!details) {
      throw error;
    }
    errors.push(...details);
    return undefined;
  }
}

/**
 * Parses the values of one row write into stored forms keyed by field id. Collects every field's errors
 * into one VALIDATION_ERROR (`details[]` with `fieldId` and `reason`; rule failures add `message`).
 * Unknown field ids fail with `unknown field`; computed fields are refused unless empty (then ignored).
 * Full writes (`partial: false`) omit empty values, apply defaults and require `required` fields;
 * partial writes keep `null` for a cleared field (remove the key when merging) and refuse clearing a required one.
 */
export function parseRowValues(
  input: RowValuesInput,
  fields: FieldDefinition[],
  opts: ParseRowValuesOptions,
): StoredRowValues {
  const errors: ErrorDetail[] = [];
  const byId = new Map(fields.map((field) => [field.id, field]));
  const result: StoredRowValues = {};
  const given = new Set<string>();

  for (const [fieldId, raw] of entriesOf(input, errors)) {
    const field = byId.get(fieldId);
    given.add(fieldId);
    if (!field) {
      errors.push({ fieldId, reason: 'unknown field' });
      continue;
    }
    const handler = handlerFor(field.type);
    if (handler.computed) {
      if (!isEmptyInput(raw)) {
        errors.push({ fieldId, reason: READ_ONLY_REASON });
      }
      continue;
    }
    const stored = parseInto(handler, raw, field, errors);
    if (stored === undefined) {
      continue;
    }
    if (stored === null) {
      if (field.required === true) {
        errors.push({ fieldId, reason: 'field is required' });
      } else if (opts.partial) {
        result[fieldId] = null;
      }
      continue;
    }
    result[fieldId] = opts.document && field.type === 'relation' ? sameRowsOnce(stored, opts.document) : stored;
  }

  if (!opts.partial) {
    const applyDefaults = opts.applyDefaults ?? true;
    for (const field of fields) {
      const handler = handlerFor(field.type);
      if (handler.computed || given.has(field.id)) {
        continue;
      }
      if (applyDefaults && field.defaultValue !== undefined && field.defaultValue !== null) {
        const stored = parseInto(handler, field.defaultValue, field, errors);
        if (stored !== undefined && stored !== null) {
          result[field.id] = opts.document && field.type === 'relation' ? sameRowsOnce(stored, opts.document) : stored;
          continue;
        }
      }
      if (field.required === true) {
        errors.push({ fieldId: field.id, reason: 'field is required' });
      }
    }
  }

  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  return result;
}

function systemValue(column: SystemColumn, system: RowSystemValues | undefined): StoredValue {
  const value = (() => {
    switch (column) {
      case 'r.created_at':
        return system?.createdAt;
      case 'r.updated_at':
        return system?.updatedAt;
      case 'r.created_by':
        return system?.createdBy;
      case 'r.updated_by':
        return system?.updatedBy;
      case 'r.id':
      case 'r.version':
        return null;
      default:
        return assertNever(column);
    }
  })();
  if (value instanceof Date) {
    return value.toISOString();
  }
  return value ?? null;
}

/** A stored value as its canonical Value; null when empty. */
export function storedToValue(stored: StoredValue | undefined, field: FieldDefinition): Value | null {
  if (stored === undefined || isEmptyStored(stored)) {
    return null;
  }
  return handlerForField(field).toValue(stored, field);
}

/**
 * A row's `values` JSONB as ValueEntry[] in field-definition order. Empty values and values of fields no longer
 * defined are left out. created_time/updated_time/created_by/updated_by read `system` (the row's columns).
 */
export function rowToValueEntries(
  values: StoredRowValues | null | undefined,
  fields: FieldDefinition[],
  system?: RowSystemValues,
): ValueEntry[] {
  const entries: ValueEntry[] = [];
  const volatile = volatileValues(values ?? {}, fields, system);
  for (const field of fields) {
    const column = handlerFor(field.type).systemColumn;
    const stored = column ? systemValue(column, system) : volatile ? (volatile[field.id] ?? values?.[field.id]) : values?.[field.id];
    const value = storedToValue(stored, field);
    if (value !== null) {
      entries.push({ fieldId: field.id, value });
    }
  }
  return entries;
}

/** Read-time values of NOW()/TODAY() formulas (docs/formulas.md); null when the fields have none. */
function volatileValues(values: StoredRowValues, fields: FieldDefinition[], system?: RowSystemValues): StoredRowValues | null {
  const plan = cachedPlan(fields);
  // Without the row's columns these are document properties: ComputedReadService.propertyValues computes them.
  if (plan.volatile.length === 0 || system === undefined) {
    return null;
  }
  const row = {
    createdAt: system?.createdAt ? new Date(system.createdAt) : new Date(0),
    updatedAt: system?.updatedAt ? new Date(system.updatedAt) : new Date(0),
    createdBy: system?.createdBy ?? null,
    updatedBy: system?.updatedBy ?? null,
  };
  return computeVolatile(plan, values, row, new Date());
}

const plans = new Map<string, ComputedPlan>();
const NO_PLAN = computedPlan([]);

/** Plans by field signature (callers often pass a fresh copy of the same list); a small bounded cache. */
function cachedPlan(fields: FieldDefinition[]): ComputedPlan {
  if (!fields.some((field) => field.type === 'formula')) {
    return NO_PLAN;
  }
  const key = fields.map((field) => `${field.id}\u0000${field.type}\u0000${field.resultType ?? ''}\u0000${field.formula ?? ''}`).join('\u0001');
  let plan = plans.get(key);
  if (!plan) {
    plan = computedPlan(fields);
    if (plans.size > 500) {
      plans.clear();
    }
    plans.set(key, plan);
  }
  return plan;
}

/**
 * Carries a stored value across a field definition change (type or select options). `{ok: false}` when not
 * meaningful (text "abc" → number, 2 options → single_select, ...): the caller drops the value or refuses the
 * change. Conversions to computed types answer `{ok: true, value: null}` (values are dropped).
 * Examples: text "12" → number 12; number → text "12"; select → text uses the option label (or name.en);
 * text → single_select matches an option by id, then by label/name (case-insensitive); text → multi_select splits
 * on commas; boolean ↔ text "true"/"false"; date ↔ datetime (midnight UTC / UTC calendar date);
 * user ↔ collaborator; select ↔ select by id, then by label.
 */
export function convertValue(
  stored: StoredValue | undefined,
  fromField: FieldDefinition,
  toField: FieldDefinition,
): ConvertResult {
  if (stored === undefined || isEmptyStored(stored)) {
    return { ok: true, value: null };
  }
  const source = handlerFor(fromField.type).toPortable(stored, fromField);
  return handlerFor(toField.type).convertFrom(source, toField);
}
