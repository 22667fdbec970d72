import type { ErrorDetail } from '../../../common/errors/app.exception.js';
import { normalizeDate, normalizeDateTime } from './date-time.utils.js';
import {
  VALIDATION_RULE_TYPES,
  type FieldDefinition,
  type StoredValue,
  type ValidationRule,
  type ValidationRuleType,
} from './field.types.js';
import { assertNever } from '../../../common/assert-never.js';
import { isPlainObject, toFiniteNumber } from './field-value.utils.js';
import { compileRulePattern, MAX_PATTERN_LENGTH, PATTERN_FLAGS } from './rule-pattern.js';

/** How a type's stored values meet `validations`; decides how min/max bounds are read. */
export type RuleKind = 'text' | 'number' | 'date' | 'datetime' | 'list' | 'scalar' | 'none';

function configOf(rule: ValidationRule): Record<string, unknown> {
  return isPlainObject(rule.config) ? rule.config : {};
}

function firstDefined(config: Record<string, unknown>, keys: string[]): unknown {
  for (const key of keys) {
    if (config[key] !== undefined && config[key] !== null) {
      return config[key];
    }
  }
  return undefined;
}

/** A min/max bound in the comparable form of `kind`: a number, or a normalized ISO string. */
function boundOf(raw: unknown, kind: RuleKind): number | string | null {
  if (kind === 'date') {
    return typeof raw === 'string' ? normalizeDate(raw) : null;
  }
  if (kind === 'datetime') {
    return typeof raw === 'string' ? normalizeDateTime(raw) : null;
  }
  return toFiniteNumber(raw);
}

function lengthOf(raw: unknown): number | null {
  const n = toFiniteNumber(raw);
  return n !== null && Number.isInteger(n) && n >= 0 ? n : null;
}

function ruleKeys(ruleType: 'min' | 'max' | 'minLength' | 'maxLength'): string[] {
  return ['value', ruleType === 'min' || ruleType === 'minLength' ? 'min' : 'max', 'length', ruleType];
}

/** Where an enum rule's allowed values may be: `values`, or, like every other rule, the key named after it (`enum`). */
const ENUM_KEYS = ['values', 'value', 'options', 'enum'];

function ruleFailure(field: FieldDefinition, rule: ValidationRule, reason: string): ErrorDetail {
  const detail: ErrorDetail = { fieldId: field.id, reason };
  if (rule.message && isPlainObject(rule.message)) {
    detail.message = rule.message;
  }
  return detail;
}

function checkRule(stored: StoredValue, rule: ValidationRule, kind: RuleKind): string | null {
  const config = configOf(rule);
  const ruleType = rule.ruleType;
  switch (ruleType) {
    case 'pattern': {
      if (typeof stored !== 'string' || typeof config.pattern !== 'string') {
        return null;
      }
      const flags = typeof config.flags === 'string' ? config.flags : '';
      const compiled = compileRulePattern(config.pattern, flags);
      if (!compiled.ok) {
        // Only a rule stored before patterns were checked for RE2 gets here: refusing the value keeps the
        // rule's intent without evaluating it in a backtracking engine; the field's rule has to be rewritten.
        return `value cannot be checked against pattern ${config.pattern}: ${compiled.reason}`;
      }
      if (stored.length > compiled.pattern.maxTextLength) {
        return `value is too long to be checked against pattern ${config.pattern} (at most ${compiled.pattern.maxTextLength} characters)`;
      }
      return compiled.pattern.test(stored) ? null : `value does not match pattern ${config.pattern}`;
    }
    case 'min':
    case 'max': {
      if (kind !== 'number' && kind !== 'date' && kind !== 'datetime') {
        return null;
      }
      const bound = boundOf(firstDefined(config, ruleKeys(ruleType)), kind);
      if (bound === null || typeof stored !== typeof bound) {
        return null;
      }
      const value = stored as number | string;
      if (ruleType === 'min') {
        return value < bound ? `value must be at least ${bound}` : null;
      }
      return value > bound ? `value must be at most ${bound}` : null;
    }
    case 'minLength':
    case 'maxLength': {
      const length =
        typeof stored === 'string' ? [...stored].length : Array.isArray(stored) ? stored.length : null;
      const limit = lengthOf(firstDefined(config, ruleKeys(ruleType)));
      if (length === null || limit === null) {
        return null;
      }
      const unit = typeof stored === 'string' ? 'characters' : 'items';
      if (ruleType === 'minLength') {
        return length < limit ? `value must have at least ${limit} ${unit}` : null;
      }
      return length > limit ? `value must have at most ${limit} ${unit}` : null;
    }
    case 'enum': {
      const allowed = firstDefined(config, ENUM_KEYS);
      if (!Array.isArray(allowed)) {
        return null;
      }
      const items = Array.isArray(stored) ? stored : [stored];
      const ok = items.every((item) => allowed.some((candidate) => candidate === item));
      return ok ? null : 'value is not one of the allowed values';
    }
    case 'custom':
      // Custom rules are accepted and kept with the field definition but are NOT evaluated server-side:
      // their logic lives in clients. They never produce a failure here.
      return null;
    default:
      return assertNever(ruleType);
  }
}

/** Applies the field's `validations` to a non-empty stored value; one detail per failed rule. */
export function applyValidationRules(
  stored: StoredValue,
  field: FieldDefinition,
  kind: RuleKind,
): ErrorDetail[] {
  if (kind === 'none' || !Array.isArray(field.validations)) {
    return [];
  }
  const failures: ErrorDetail[] = [];
  for (const rule of field.validations) {
    if (!isPlainObject(rule) || !(VALIDATION_RULE_TYPES as readonly unknown[]).includes(rule.ruleType)) {
      continue;
    }
    const reason = checkRule(stored, rule, kind);
    if (reason !== null) {
      failures.push(ruleFailure(field, rule, reason));
    }
  }
  return failures;
}

/**
 * The kinds of stored value each rule type can judge (see checkRule). A rule on any other kind would be stored,
 * shown and never applied, so a definition naming one is refused: `pattern` reads strings (text, and dates, which
 * are stored as ISO strings), `min`/`max` numbers and dates, the length rules strings and lists; `enum` compares any
 * stored value; `custom` is kept for clients on every type.
 */
const RULE_KINDS: Record<ValidationRuleType, readonly RuleKind[]> = {
  pattern: ['text', 'date', 'datetime'],
  min: ['number', 'date', 'datetime'],
  max: ['number', 'date', 'datetime'],
  minLength: ['text', 'list'],
  maxLength: ['text', 'list'],
  enum: ['text', 'number', 'date', 'datetime', 'scalar', 'list'],
  custom: ['text', 'number', 'date', 'datetime', 'scalar', 'list', 'none'],
};

/**
 * Checks one validation rule of a field definition; `path` is like `fields[2].validations[0]`, `fieldType` names
 * the field's type in the reason. A rule must apply to the type (RULE_KINDS) and carry its bound.
 */
export function checkRuleDefinition(rule: unknown, kind: RuleKind, path: string, fieldType: string = kind): ErrorDetail[] {
  if (!isPlainObject(rule)) {
    return [{ field: path, reason: 'validation rule must be an object' }];
  }
  const ruleType = rule.ruleType;
  if (typeof ruleType !== 'string' || !(VALIDATION_RULE_TYPES as readonly string[]).includes(ruleType)) {
    return [
      { field: `${path}.ruleType`, reason: `ruleType must be one of ${VALIDATION_RULE_TYPES.join(', ')}` },
    ];
  }
  if (!RULE_KINDS[ruleType as ValidationRuleType].includes(kind)) {
    return [{ field: `${path}.ruleType`, reason: `a ${ruleType} rule does not apply to a ${fieldType} field` }];
  }
  const errors: ErrorDetail[] = [];
  if (rule.config !== undefined && rule.config !== null && !isPlainObject(rule.config)) {
    errors.push({ field: `${path}.config`, reason: 'config must be an object' });
  }
  if (rule.message !== undefined && rule.message !== null) {
    const message = rule.message;
    if (!isPlainObject(message) || Object.values(message).some((text) => typeof text !== 'string')) {
      errors.push({ field: `${path}.message`, reason: 'message must map language codes to strings' });
    }
  }
  const config = isPlainObject(rule.config) ? rule.config : {};
  switch (ruleType) {
    case 'pattern': {
      const pattern = config.pattern;
      const flags = config.flags ?? '';
      if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH) {
        errors.push({
          field: `${path}.config.pattern`,
          reason: `pattern must be a non-empty string of at most ${MAX_PATTERN_LENGTH} characters`,
        });
      } else if (typeof flags !== 'string' || !PATTERN_FLAGS.test(flags)) {
        errors.push({ field: `${path}.config.flags`, reason: 'flags may only contain i, m, s, u' });
      } else {
        const compiled = compileRulePattern(pattern, flags);
        if (!compiled.ok) {
          errors.push({ field: `${path}.config.pattern`, reason: compiled.reason });
        }
      }
      break;
    }
    case 'min':
    case 'max': {
      const raw = firstDefined(config, ruleKeys(ruleType));
      if (raw === undefined) {
        errors.push({ field: `${path}.config.value`, reason: `${ruleType} needs its bound in config.value` });
      } else if (boundOf(raw, kind) === null) {
        errors.push({
          field: `${path}.config`,
          reason: `${ruleType} needs a ${kind === 'number' ? 'number' : 'ISO 8601'} value`,
        });
      }
      break;
    }
    case 'minLength':
    case 'maxLength': {
      const raw = firstDefined(config, ruleKeys(ruleType));
      if (raw === undefined) {
        errors.push({ field: `${path}.config.value`, reason: `${ruleType} needs its length in config.value` });
      } else if (lengthOf(raw) === null) {
        errors.push({ field: `${path}.config`, reason: `${ruleType} needs a non-negative integer` });
      }
      break;
    }
    case 'enum': {
      const allowed = firstDefined(config, ENUM_KEYS);
      if (!Array.isArray(allowed)) {
        // Named where the client put it (values, value, options or enum), `values` when it gave none.
        const given = ENUM_KEYS.find((key) => config[key] !== undefined) ?? 'values';
        errors.push({ field: `${path}.config.${given}`, reason: 'enum needs an array of values' });
      }
      break;
    }
    default:
      break;
  }
  return errors;
}
