import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import {
  FIELD_TYPES,
  ROLLUP_AGGREGATIONS,
  type FieldDefinition,
  type RollupAggregation,
  type SelectOption,
  type ValidationRule,
} from './field.types.js';
import { handlerFor, isFieldType } from './field-type.registry.js';
import { isPlainObject, NUL_REASON, nulPath, validationDetailsOf } from './field-value.utils.js';
import { checkRuleDefinition } from './validation-rules.js';
import { RESERVED_KEYS } from '../../../common/http/reserved-keys.js';

export const FIELD_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_FIELDS = 500;
const MAX_NAME_LENGTH = 255;
const MAX_OPTIONS = 1000;
/**
 * The attributes of a field (spec 2.5), and `resultType`, which reads answer for formulas (set by the server; sent
 * back, it is ignored). Anything else is refused rather than dropped: a misspelt `requird` used to leave the field
 * optional without a word.
 */
const FIELD_KEYS: ReadonlySet<string> = new Set([
  'id',
  'name',
  'type',
  'required',
  'unique',
  'defaultValue',
  'selectOptions',
  'validations',
  'formula',
  'lookup',
  'rollup',
  'resultType',
]);

function isStringMap(value: unknown): value is Record<string, string> {
  return isPlainObject(value) && Object.values(value).every((text) => typeof text === 'string');
}

function checkOptions(raw: unknown, path: string, errors: ErrorDetail[]): SelectOption[] | undefined {
  if (raw === undefined || raw === null) {
    return undefined;
  }
  if (!Array.isArray(raw) || raw.length > MAX_OPTIONS) {
    errors.push({ field: path, reason: `selectOptions must be an array of at most ${MAX_OPTIONS} options` });
    return undefined;
  }
  const ids = new Set<string>();
  const options: SelectOption[] = [];
  raw.forEach((option: unknown, index) => {
    const at = `${path}[${index}]`;
    if (
      !isPlainObject(option) ||
      typeof option.id !== 'string' ||
      option.id.trim() === '' ||
      option.id.length > 255
    ) {
      errors.push({ field: `${at}.id`, reason: 'option id must be a non-empty string of at most 255 characters' });
      return;
    }
    if (ids.has(option.id)) {
      errors.push({ field: `${at}.id`, reason: `duplicate option id "${option.id}"` });
      return;
    }
    ids.add(option.id);
    const normalized: SelectOption = { id: option.id };
    if (option.name !== undefined && option.name !== null) {
      if (!isStringMap(option.name)) {
        errors.push({ field: `${at}.name`, reason: 'name must map language codes to strings' });
      } else {
        normalized.name = option.name;
      }
    }
    for (const key of ['label', 'color'] as const) {
      const value = option[key];
      if (value !== undefined && value !== null) {
        if (typeof value !== 'string') {
          errors.push({ field: `${at}.${key}`, reason: `${key} must be a string` });
        } else {
          normalized[key] = value;
        }
      }
    }
    options.push(normalized);
  });
  return options;
}

function checkReference(
  raw: unknown,
  path: string,
  relationIds: Set<string>,
  errors: ErrorDetail[],
  withAgg: boolean,
): { relationFieldId: string; targetFieldId: string; agg?: RollupAggregation } | undefined {
  if (!isPlainObject(raw)) {
    errors.push({ field: path, reason: `${withAgg ? 'rollup' : 'lookup'} must be an object` });
    return undefined;
  }
  const { relationFieldId, targetFieldId, agg } = raw;
  let ok = true;
  if (typeof relationFieldId !== 'string' || !relationIds.has(relationFieldId)) {
    errors.push({
      field: `${path}.relationFieldId`,
      reason: 'relationFieldId must be the id of a relation field',
    });
    ok = false;
  }
  if (typeof targetFieldId !== 'string' || targetFieldId === '') {
    errors.push({ field: `${path}.targetFieldId`, reason: 'targetFieldId is required' });
    ok = false;
  }
  if (withAgg && !(typeof agg === 'string' && (ROLLUP_AGGREGATIONS as readonly string[]).includes(agg))) {
    errors.push({ field: `${path}.agg`, reason: `agg must be one of ${ROLLUP_AGGREGATIONS.join(', ')}` });
    ok = false;
  }
  if (!ok) {
    return undefined;
  }
  return withAgg
    ? {
        relationFieldId: String(relationFieldId),
        targetFieldId: String(targetFieldId),
        agg: agg as RollupAggregation,
      }
    : { relationFieldId: String(relationFieldId), targetFieldId: String(targetFieldId) };
}

/**
 * Validates field definitions (metadata `fields` or `properties`) and returns them normalized (an attribute spec 2.5
 * does not name is refused, FIELD_KEYS; `resultType`, set by the server, is ignored). Errors are collected into one VALIDATION_ERROR with `details[].field` such as `fields[2].type`.
 * Checks: ids match FIELD_ID_PATTERN and are unique, names present, types known, select option ids unique,
 * validation rules well-formed (patterns compile), lookup/rollup point at relation fields of the same list,
 * rollup agg valid, defaultValue parses for the type (computed types take none), no text holds U+0000.
 */
export function validateFieldDefinitions(input: unknown, path = 'fields'): FieldDefinition[] {
  if (!Array.isArray(input) || input.length > MAX_FIELDS) {
    throw AppException.validation([
      { field: path, reason: `${path} must be an array of at most ${MAX_FIELDS} fields` },
    ]);
  }
  const errors: ErrorDetail[] = [];
  const relationIds = new Set(
    input
      .filter((raw) => isPlainObject(raw) && raw.type === 'relation' && typeof raw.id === 'string')
      .map((raw) => String(raw.id)),
  );
  const seenIds = new Set<string>();
  const fields: FieldDefinition[] = [];

  input.forEach((raw: unknown, index) => {
    const at = `${path}[${index}]`;
    if (!isPlainObject(raw)) {
      errors.push({ field: at, reason: 'field must be an object' });
      return;
    }
    const before = errors.length;
    const { id, name, type } = raw;
    for (const key of Object.keys(raw).filter((key) => !FIELD_KEYS.has(key))) {
      errors.push({
        ...(typeof id === 'string' ? { fieldId: id } : {}),
        field: `${at}.${key}`,
        reason: `unknown field attribute; expected ${[...FIELD_KEYS].join(', ')}`,
      });
    }
    if (typeof id !== 'string' || !FIELD_ID_PATTERN.test(id)) {
      errors.push({ field: `${at}.id`, reason: 'id must match ^[A-Za-z0-9_-]{1,64}$' });
    } else if (RESERVED_KEYS.has(id)) {
      errors.push({ field: `${at}.id`, reason: `"${id}" is reserved (a JavaScript object member name)` });
    } else if (seenIds.has(id)) {
      errors.push({ field: `${at}.id`, reason: `duplicate field id "${id}"` });
    } else {
      seenIds.add(id);
    }
    if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH) {
      errors.push({ field: `${at}.name`, reason: 'name is required (at most 255 characters)' });
    }
    if (!isFieldType(type)) {
      errors.push({ field: `${at}.type`, reason: `type must be one of ${FIELD_TYPES.join(', ')}` });
      return;
    }
    for (const flag of ['required', 'unique'] as const) {
      if (raw[flag] !== undefined && raw[flag] !== null && typeof raw[flag] !== 'boolean') {
        errors.push({ field: `${at}.${flag}`, reason: `${flag} must be a boolean` });
      }
    }
    const handler = handlerFor(type);
    const field: FieldDefinition = { id: String(id), name: String(name), type };
    if (raw.required === true) {
      field.required = true;
    }
    if (raw.unique === true) {
      field.unique = true;
    }
    const options = checkOptions(raw.selectOptions, `${at}.selectOptions`, errors);
    if (options) {
      field.selectOptions = options;
    }
    if (raw.validations !== undefined && raw.validations !== null) {
      if (!Array.isArray(raw.validations)) {
        errors.push({ field: `${at}.validations`, reason: 'validations must be an array' });
      } else {
        raw.validations.forEach((rule: unknown, ruleIndex) => {
          // The field id names the field in a way that survives reordering; the path alone does not.
          const failures = checkRuleDefinition(rule, handler.ruleKind, `${at}.validations[${ruleIndex}]`, type);
          errors.push(
            ...failures.map((failure) => (typeof id === 'string' ? { fieldId: id, ...failure } : failure)),
          );
        });
        field.validations = raw.validations as ValidationRule[];
      }
    }
    if (raw.formula !== undefined && raw.formula !== null) {
      if (typeof raw.formula !== 'string') {
        errors.push({ field: `${at}.formula`, reason: 'formula must be a string' });
      } else {
        field.formula = raw.formula;
      }
    }
    // On a field of another type the reference is not used (a type changed back keeps its old one), but it must
    // still have its shape: `lookup: 5` used to be accepted without a word.
    for (const key of ['lookup', 'rollup'] as const) {
      if (type !== key && raw[key] !== undefined && raw[key] !== null && !isPlainObject(raw[key])) {
        errors.push({ field: `${at}.${key}`, reason: `${key} must be an object` });
      }
    }
    if (type === 'lookup') {
      const lookup = checkReference(raw.lookup, `${at}.lookup`, relationIds, errors, false);
      if (lookup) {
        field.lookup = lookup;
      }
    }
    if (type === 'rollup') {
      const rollup = checkReference(raw.rollup, `${at}.rollup`, relationIds, errors, true);
      if (rollup?.agg) {
        field.rollup = {
          relationFieldId: rollup.relationFieldId,
          targetFieldId: rollup.targetFieldId,
          agg: rollup.agg,
        };
      }
    }
    if (raw.defaultValue !== undefined && raw.defaultValue !== null && errors.length === before) {
      if (handler.computed) {
        errors.push({ field: `${at}.defaultValue`, reason: 'computed fields take no defaultValue' });
      } else {
        try {
          const stored = handler.parse(raw.defaultValue, field);
          const failures = stored === null ? [] : handler.validateRules(stored, field);
          errors.push(
            ...failures.map((failure) => ({ field: `${at}.defaultValue`, reason: failure.reason })),
          );
          field.defaultValue = raw.defaultValue;
        } catch (error) {
          const details = validationDetailsOf(error);
          if (!details) {
            throw error;
          }
          errors.push(...details.map((detail) => ({ field: `${at}.defaultValue`, reason: detail.reason })));
        }
      }
    }
    const nul = nulPath(field, at);
    if (nul !== null) {
      errors.push({ field: nul, reason: NUL_REASON });
    }
    fields.push(field);
  });

  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  return fields;
}
