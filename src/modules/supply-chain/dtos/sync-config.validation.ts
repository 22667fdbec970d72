import { CronExpressionParser } from 'cron-parser';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { FormulaError, formulaFieldRefs, parseFormula } from '../../../common/formula/index.js';
import {
  ACCEPT_MODES,
  ACCESS_MODES,
  type AccessControl,
  type AcceptMode,
  CONFLICT_STRATEGIES,
  CONNECTOR_CONFLICT_RESOLUTIONS,
  type ConflictResolution,
  type ConflictStrategy,
  type ConnectorConfig,
  CONVERSION_TYPES,
  DEDUPLICATION_STRATEGIES,
  DEFAULT_ACTIONS,
  type DefaultReceiverConfig,
  EXCHANGE_RATE_SOURCES,
  FILTER_OPERATORS,
  type FieldMapping,
  type FieldMappingRule,
  type FilterCondition,
  type FilterGroup,
  type FilterLogic,
  type ManualAcceptRules,
  PROPAGATION_EVENT_TYPES,
  PROPAGATION_MODES,
  type PropagationEvents,
  type ReceiverFilter,
  type ShareScope,
  SYNC_MODES,
  TRANSFORM_TYPES,
  type UnitConversion,
  UNMAPPED_FIELDS,
  UNMAPPED_OPTION_STRATEGIES,
} from '../domain/supply-chain.types.js';
import { assertNever } from '../../../common/assert-never.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { selectOptionResolver } from '../domain/select-operands.js';

/**
 * Validators of the supply-chain configuration objects (spec 2.14): filter groups, field mapping, receiver filter,
 * conflict resolution, share scope, access control, propagation events, default receiver config, connector config.
 * Each `parse*` takes the raw body value and the path it came from, and returns the normalized object (defaults
 * filled in) or throws VALIDATION_ERROR listing every problem as `{field, reason}`. Pure: no database. Field ids
 * are checked against documents by the services (`checkFieldIds`). Shared with the propagation/connector module.
 */

const MAX_FILTER_DEPTH = 5;
const MAX_CONDITIONS = 100;
const MAX_RULES = 500;
const MAX_BATCH_WINDOW_SECONDS = 86_400;
export const DEFAULT_BATCH_WINDOW_SECONDS = 300;
const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const UNREADABLE = Symbol('unreadable operand');

/** The typed keys of a Value (spec 2.6, docs/values.md) whose content is one plain value. */
const SCALAR_VALUE_KEYS: ReadonlySet<string> = new Set([
  'text',
  'number',
  'currency',
  'percent',
  'boolean',
  'date',
  'datetime',
  'duration',
  'rating',
]);
/** The typed keys whose content names one thing by id: an option id string, or an object with `id`. */
const REFERENCE_VALUE_KEYS: ReadonlySet<string> = new Set(['selectOption', 'select', 'singleSelect', 'user']);

/**
 * A condition operand as a plain value: scalars as they are, a Value with one typed key by its content
 * (`{number: 3}` → 3, `{selectOption: {id: "red"}}` or `{selectOption: "red"}` → "red"). Any other object — another
 * key (`{min: 5}`), several keys, a list — is UNREADABLE: taken by its content it would compare with something the
 * client did not write.
 */
function plainOperand(operand: unknown): unknown {
  if (!isObject(operand)) {
    return operand;
  }
  const entries = Object.entries(operand);
  if (entries.length !== 1) {
    return UNREADABLE;
  }
  const [key, inner] = entries[0] as [string, unknown];
  if (REFERENCE_VALUE_KEYS.has(key)) {
    if (typeof inner === 'string') {
      return inner;
    }
    // The rendered form ({id, label, color…}) names the option by its id too.
    return isObject(inner) && typeof inner.id === 'string' ? inner.id : UNREADABLE;
  }
  if (!SCALAR_VALUE_KEYS.has(key)) {
    return UNREADABLE;
  }
  return inner === null || ['string', 'number', 'boolean'].includes(typeof inner) ? inner : UNREADABLE;
}

function oneOf(values: readonly string[]): string {
  return `must be one of ${values.join(', ')}`;
}

/** Collects problems with their paths; `done()` throws them all at once. */
export class ConfigChecker {
  readonly errors: ErrorDetail[] = [];

  fail(field: string, reason: string): void {
    this.errors.push({ field, reason });
  }

  done(): void {
    if (this.errors.length > 0) {
      throw AppException.validation(this.errors);
    }
  }

  enumValue<T extends string>(
    raw: unknown,
    allowed: readonly T[],
    path: string,
    fallback?: T,
  ): T | undefined {
    if (raw === undefined || raw === null) {
      if (fallback === undefined) {
        this.fail(path, `${path} is required; ${oneOf(allowed)}`);
      }
      return fallback;
    }
    if (typeof raw !== 'string' || !(allowed as readonly string[]).includes(raw)) {
      this.fail(path, `${path} ${oneOf(allowed)}`);
      return fallback;
    }
    return raw as T;
  }

  bool(raw: unknown, path: string, fallback: boolean): boolean {
    if (raw === undefined || raw === null) {
      return fallback;
    }
    if (typeof raw !== 'boolean') {
      this.fail(path, `${path} must be a boolean`);
      return fallback;
    }
    return raw;
  }

  id(raw: unknown, path: string): string | undefined {
    if (typeof raw !== 'string' || !ID.test(raw)) {
      this.fail(path, `${path} must be a field id (letters, digits, _ . : -, at most 128)`);
      return undefined;
    }
    return raw;
  }

  text(raw: unknown, path: string, max = 2000): string | undefined {
    if (raw === undefined || raw === null) {
      return undefined;
    }
    if (typeof raw !== 'string' || raw.length > max) {
      this.fail(path, `${path} must be a string of at most ${max} characters`);
      return undefined;
    }
    return raw;
  }

  positive(raw: unknown, path: string): number | undefined {
    if (raw === undefined || raw === null) {
      return undefined;
    }
    if (typeof raw !== 'number' || !Number.isFinite(raw) || raw <= 0) {
      this.fail(path, `${path} must be a positive number`);
      return undefined;
    }
    return raw;
  }

  /** `{operator: AND|OR, conditions[], groups[]}`; `logic` is accepted for `operator`, any case. */
  filterGroup(raw: unknown, path: string, depth = 1): FilterGroup | undefined {
    if (!isObject(raw)) {
      this.fail(path, `${path} must be a filter group {operator: AND|OR, conditions[], groups[]}`);
      return undefined;
    }
    if (depth > MAX_FILTER_DEPTH) {
      this.fail(path, `filter groups nest at most ${MAX_FILTER_DEPTH} deep`);
      return undefined;
    }
    const logicRaw = raw.operator ?? raw.logic ?? 'AND';
    let operator: FilterLogic = 'AND';
    if (typeof logicRaw !== 'string' || !['AND', 'OR'].includes(logicRaw.toUpperCase())) {
      this.fail(`${path}.operator`, `${path}.operator must be AND or OR`);
    } else {
      operator = logicRaw.toUpperCase() as FilterLogic;
    }
    const conditions: FilterCondition[] = [];
    const groups: FilterGroup[] = [];
    for (const [key, max] of [
      ['conditions', MAX_CONDITIONS],
      ['groups', MAX_CONDITIONS],
    ] as const) {
      const list = raw[key];
      if (list !== undefined && list !== null && (!Array.isArray(list) || list.length > max)) {
        this.fail(`${path}.${key}`, `${path}.${key} must be an array of at most ${max} entries`);
      }
    }
    const rawConditions = Array.isArray(raw.conditions) ? (raw.conditions as unknown[]) : [];
    rawConditions.forEach((condition, index) => {
      const parsed = this.condition(condition, `${path}.conditions[${index}]`);
      if (parsed) {
        conditions.push(parsed);
      }
    });
    const rawGroups = Array.isArray(raw.groups) ? (raw.groups as unknown[]) : [];
    rawGroups.forEach((group, index) => {
      const parsed = this.filterGroup(group, `${path}.groups[${index}]`, depth + 1);
      if (parsed) {
        groups.push(parsed);
      }
    });
    return { operator, conditions, groups };
  }

  private condition(raw: unknown, path: string): FilterCondition | undefined {
    if (!isObject(raw)) {
      this.fail(path, `${path} must be a condition {fieldId, operator, value}`);
      return undefined;
    }
    const fieldId = this.id(raw.fieldId ?? raw.field, `${path}.fieldId`);
    const operator = this.enumValue(raw.operator, FILTER_OPERATORS, `${path}.operator`);
    const given = raw.values !== undefined ? raw.values : raw.value;
    // Operands are plain values; a Value with one typed key ({text: "S1"}, {number: 3}, spec 2.6) is read as its
    // plain value, as a row filter reads it. Anything else would never match a stored value: refused.
    const value = Array.isArray(given) ? given.map(plainOperand) : plainOperand(given);
    if ((Array.isArray(value) ? value : [value]).some((item) => item === UNREADABLE)) {
      this.fail(
        `${path}.value`,
        'an operand is a string, number, boolean or null, or a Value with one typed key ({text: …}, {number: …}, {selectOption: {id}})',
      );
      return undefined;
    }
    // `values` (spec 2.14: "value (or values)") holding one operand, for an operator that takes one.
    const single = raw.value === undefined && Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
    if (!fieldId || !operator) {
      return undefined;
    }
    switch (operator) {
      case 'in':
      case 'notIn':
        if (!Array.isArray(value)) {
          this.fail(`${path}.value`, `${operator} needs an array (value or values)`);
          return undefined;
        }
        break;
      case 'range': {
        if (raw.rangeStart !== undefined || raw.rangeEnd !== undefined) {
          // Spec 2.12's form: the bounds by name; a missing or null one leaves that side open.
          const bounds = [raw.rangeStart ?? null, raw.rangeEnd ?? null];
          if (
            bounds.some((bound) => bound !== null && typeof bound !== 'number' && typeof bound !== 'string')
          ) {
            this.fail(`${path}.rangeStart`, 'rangeStart and rangeEnd are numbers or date strings');
            return undefined;
          }
          return { fieldId, operator, value: bounds };
        }
        if (!Array.isArray(value) || value.length !== 2) {
          this.fail(
            `${path}.value`,
            'range needs rangeStart and rangeEnd, or a two-element array [min, max]',
          );
          return undefined;
        }
        break;
      }
      case 'is_empty':
      case 'is_not_empty':
        return { fieldId, operator };
      case 'exists':
        // Alone (or `value: true`) the field has a value; `value: false`, it has none.
        if (single !== undefined && typeof single !== 'boolean') {
          this.fail(`${path}.value`, 'exists takes no value, or true/false');
          return undefined;
        }
        return single === undefined ? { fieldId, operator } : { fieldId, operator, value: single };
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        if (typeof single !== 'number' && typeof single !== 'string') {
          this.fail(`${path}.value`, `${operator} needs a number or a date string (value, or values with one element)`);
          return undefined;
        }
        return { fieldId, operator, value: single };
      case 'contains':
      case 'startsWith':
      case 'endsWith':
        if (typeof single !== 'string') {
          this.fail(`${path}.value`, `${operator} needs a string (value, or values with one element)`);
          return undefined;
        }
        return { fieldId, operator, value: single };
      case 'eq':
      case 'ne':
        if (value === undefined) {
          this.fail(`${path}.value`, `${operator} needs a value`);
          return undefined;
        }
        // A one-element `values` is the operand itself (as for gte, contains…), not an array to compare with.
        return { fieldId, operator, value: single };
      default:
        return assertNever(operator);
    }
    return { fieldId, operator, value };
  }

  fieldMapping(raw: unknown, path: string): FieldMapping | undefined {
    if (raw === undefined || raw === null) {
      return { rules: [], unmappedFields: 'ignore' };
    }
    if (!isObject(raw)) {
      this.fail(path, `${path} must be an object {rules[], unmappedFields}`);
      return undefined;
    }
    const unmappedFields =
      this.enumValue(raw.unmappedFields, UNMAPPED_FIELDS, `${path}.unmappedFields`, 'ignore') ?? 'ignore';
    if (raw.rules !== undefined && (!Array.isArray(raw.rules) || raw.rules.length > MAX_RULES)) {
      this.fail(`${path}.rules`, `${path}.rules must be an array of at most ${MAX_RULES} rules`);
      return undefined;
    }
    const rules: FieldMappingRule[] = [];
    ((raw.rules as unknown[] | undefined) ?? []).forEach((rule, index) => {
      const parsed = this.rule(rule, `${path}.rules[${index}]`);
      if (parsed) {
        rules.push(parsed);
      }
    });
    return { rules, unmappedFields };
  }

  private rule(raw: unknown, path: string): FieldMappingRule | undefined {
    if (!isObject(raw)) {
      this.fail(path, `${path} must be a mapping rule`);
      return undefined;
    }
    const before = this.errors.length;
    const transformType =
      this.enumValue(raw.transformType, TRANSFORM_TYPES, `${path}.transformType`, 'direct') ?? 'direct';
    const propagationMode =
      this.enumValue(raw.propagationMode, PROPAGATION_MODES, `${path}.propagationMode`, 'oneway') ?? 'oneway';
    const rule: Partial<FieldMappingRule> = {
      enabled: this.bool(raw.enabled, `${path}.enabled`, true),
      transformType,
      propagationMode,
    };
    const description = this.text(raw.description, `${path}.description`);
    if (description !== undefined) {
      rule.description = description;
    }
    const idList = (key: 'sourceFieldIds' | 'targetFieldIds'): string[] | undefined => {
      const list = raw[key];
      if (!Array.isArray(list) || list.length < 2 || list.length > 50) {
        this.fail(`${path}.${key}`, `${transformType} needs ${key}: an array of 2 to 50 field ids`);
        return undefined;
      }
      return list.map((id, index) => this.id(id, `${path}.${key}[${index}]`) ?? '');
    };
    if (transformType === 'merge') {
      rule.sourceFieldIds = idList('sourceFieldIds');
      rule.sourceFieldId = rule.sourceFieldIds?.[0];
    } else {
      rule.sourceFieldId = this.id(raw.sourceFieldId, `${path}.sourceFieldId`);
    }
    if (transformType === 'split') {
      rule.targetFieldIds = idList('targetFieldIds');
      rule.targetFieldId = rule.targetFieldIds?.[0];
    } else {
      rule.targetFieldId = this.id(raw.targetFieldId, `${path}.targetFieldId`);
    }
    if (transformType === 'merge' || transformType === 'split') {
      rule.separator = this.text(raw.separator, `${path}.separator`, 16) ?? ' ';
    }
    switch (transformType) {
      case 'unit_convert':
        rule.unitConversion = this.unitConversion(raw.unitConversion, `${path}.unitConversion`);
        break;
      case 'format': {
        const config = raw.formatConfig;
        const template = isObject(config) ? config.template : undefined;
        if (typeof template !== 'string' || !template.includes('${value}') || template.length > 1000) {
          this.fail(
            `${path}.formatConfig.template`,
            'format needs formatConfig.template, a string containing ${value}',
          );
        } else {
          rule.formatConfig = { template };
        }
        break;
      }
      case 'option_mapping':
        rule.optionMapping = this.optionMapping(raw.optionMapping, `${path}.optionMapping`);
        break;
      case 'formula':
        if (typeof raw.formula !== 'string' || raw.formula.trim() === '' || raw.formula.length > 2000) {
          this.fail(`${path}.formula`, 'formula needs a non-empty formula string (at most 2000 characters)');
        } else {
          const syntaxError = formulaSyntaxError(raw.formula);
          if (syntaxError) {
            this.fail(`${path}.formula`, syntaxError);
          } else {
            rule.formula = raw.formula;
          }
        }
        break;
      case 'type_convert':
        if (raw.targetType !== undefined) {
          rule.targetType = this.text(raw.targetType, `${path}.targetType`, 64);
        }
        break;
      case 'direct':
      case 'merge':
      case 'split':
        break;
      default:
        return assertNever(transformType);
    }
    return this.errors.length === before ? (rule as FieldMappingRule) : undefined;
  }

  private unitConversion(raw: unknown, path: string): UnitConversion | undefined {
    if (!isObject(raw)) {
      this.fail(
        path,
        'unit_convert needs unitConversion {sourceUnit, targetUnit, conversionType, …} or {fromUnit, toUnit, rate}',
      );
      return undefined;
    }
    const sourceUnit = raw.sourceUnit ?? raw.fromUnit;
    const targetUnit = raw.targetUnit ?? raw.toUnit;
    const unitKey = raw.sourceUnit !== undefined ? 'sourceUnit' : 'fromUnit';
    const targetKey = raw.targetUnit !== undefined ? 'targetUnit' : 'toUnit';
    if (typeof sourceUnit !== 'string' || sourceUnit.trim() === '' || sourceUnit.length > 32) {
      this.fail(`${path}.${unitKey}`, 'sourceUnit (or fromUnit) must be a unit code such as USD or kg');
    }
    if (typeof targetUnit !== 'string' || targetUnit.trim() === '' || targetUnit.length > 32) {
      this.fail(`${path}.${targetKey}`, 'targetUnit (or toUnit) must be a unit code such as EUR or lb');
    }
    const result: UnitConversion = { sourceUnit: String(sourceUnit), targetUnit: String(targetUnit) };
    if (raw.conversionType !== undefined) {
      result.conversionType = this.enumValue(raw.conversionType, CONVERSION_TYPES, `${path}.conversionType`);
    }
    if (raw.exchangeRateSource !== undefined) {
      result.exchangeRateSource = this.enumValue(
        raw.exchangeRateSource,
        EXCHANGE_RATE_SOURCES,
        `${path}.exchangeRateSource`,
      );
    }
    for (const key of ['fixedRate', 'customRate', 'rate'] as const) {
      const value = this.positive(raw[key], `${path}.${key}`);
      if (value !== undefined) {
        result[key] = value;
      }
    }
    result.rate = result.rate ?? result.fixedRate ?? result.customRate;
    if (result.rate === undefined) {
      delete result.rate;
    }
    return result;
  }

  private optionMapping(
    raw: unknown,
    path: string,
  ): { mappings: Record<string, string>; unmappedStrategy: 'keep_original' | 'clear' } | undefined {
    if (!isObject(raw) || !isObject(raw.mappings)) {
      this.fail(
        path,
        'option_mapping needs optionMapping {mappings: {sourceOption: targetOption}, unmappedStrategy}',
      );
      return undefined;
    }
    const mappings: Record<string, string> = {};
    for (const [key, value] of Object.entries(raw.mappings)) {
      if (typeof value !== 'string') {
        this.fail(`${path}.mappings.${key}`, 'each mapping must name a target option (string)');
      } else {
        mappings[key] = value;
      }
    }
    const unmappedStrategy =
      this.enumValue(
        raw.unmappedStrategy,
        UNMAPPED_OPTION_STRATEGIES,
        `${path}.unmappedStrategy`,
        'keep_original',
      ) ?? 'keep_original';
    return { mappings, unmappedStrategy };
  }

  receiverFilter(raw: unknown, path: string): ReceiverFilter | undefined {
    if (raw === undefined || raw === null) {
      return { acceptMode: 'auto' };
    }
    if (!isObject(raw)) {
      this.fail(path, `${path} must be an object`);
      return undefined;
    }
    const acceptMode = this.enumValue(raw.acceptMode, ACCEPT_MODES, `${path}.acceptMode`, 'auto') ?? 'auto';
    const result: ReceiverFilter = { acceptMode };
    if (raw.filterGroup !== undefined && raw.filterGroup !== null) {
      result.filterGroup = this.filterGroup(raw.filterGroup, `${path}.filterGroup`);
    }
    if (raw.manualAcceptRules !== undefined && raw.manualAcceptRules !== null) {
      const rules = raw.manualAcceptRules;
      if (!isObject(rules)) {
        this.fail(`${path}.manualAcceptRules`, 'manualAcceptRules must be an object');
      } else {
        const parsed: ManualAcceptRules = {
          defaultAction:
            this.enumValue(
              rules.defaultAction,
              DEFAULT_ACTIONS,
              `${path}.manualAcceptRules.defaultAction`,
              'manual',
            ) ?? 'manual',
        };
        for (const key of ['autoAcceptIf', 'requireApprovalIf', 'autoRejectIf'] as const) {
          if (rules[key] !== undefined && rules[key] !== null) {
            parsed[key] = this.filterGroup(rules[key], `${path}.manualAcceptRules.${key}`);
          }
        }
        result.manualAcceptRules = parsed;
      }
    }
    if (raw.deduplicationStrategy !== undefined && raw.deduplicationStrategy !== null) {
      const strategy = this.enumValue(
        raw.deduplicationStrategy,
        DEDUPLICATION_STRATEGIES,
        `${path}.deduplicationStrategy`,
      );
      const ids = raw.deduplicationFieldIds;
      if (strategy) {
        result.deduplicationStrategy = strategy;
        if (
          !Array.isArray(ids) ||
          ids.length === 0 ||
          ids.length > 20 ||
          (strategy === 'by_field' && ids.length !== 1)
        ) {
          this.fail(
            `${path}.deduplicationFieldIds`,
            strategy === 'by_field'
              ? 'by_field needs exactly one field id'
              : 'by_fields needs 1 to 20 field ids',
          );
        } else {
          result.deduplicationFieldIds = ids.map(
            (id, index) => this.id(id, `${path}.deduplicationFieldIds[${index}]`) ?? '',
          );
        }
      }
    } else if (raw.deduplicationFieldIds !== undefined) {
      this.fail(
        `${path}.deduplicationStrategy`,
        'deduplicationFieldIds needs deduplicationStrategy (by_field or by_fields)',
      );
    }
    return result;
  }

  conflictResolution(raw: unknown, path: string): ConflictResolution | undefined {
    if (raw === undefined || raw === null) {
      return { defaultStrategy: 'keep_upstream', fieldStrategies: {} };
    }
    if (!isObject(raw)) {
      this.fail(path, `${path} must be an object {defaultStrategy, fieldStrategies}`);
      return undefined;
    }
    const defaultStrategy =
      this.enumValue(raw.defaultStrategy, CONFLICT_STRATEGIES, `${path}.defaultStrategy`, 'keep_upstream') ??
      'keep_upstream';
    const fieldStrategies: Record<string, { strategy: ConflictStrategy }> = {};
    if (raw.fieldStrategies !== undefined && raw.fieldStrategies !== null) {
      if (!isObject(raw.fieldStrategies)) {
        this.fail(`${path}.fieldStrategies`, 'fieldStrategies must map field ids to {strategy}');
      } else {
        for (const [fieldId, entry] of Object.entries(raw.fieldStrategies)) {
          const at = `${path}.fieldStrategies.${fieldId}`;
          this.id(fieldId, at);
          const strategy = this.enumValue(
            isObject(entry) ? entry.strategy : entry,
            CONFLICT_STRATEGIES,
            `${at}.strategy`,
          );
          if (strategy) {
            fieldStrategies[fieldId] = { strategy };
          }
        }
      }
    }
    return { defaultStrategy, fieldStrategies };
  }

  shareScope(raw: unknown, path: string): ShareScope | undefined {
    if (raw === undefined || raw === null) {
      return { type: 'all' };
    }
    if (!isObject(raw)) {
      this.fail(path, `${path} must be {type: all} or {mode: filter, filterGroup}`);
      return undefined;
    }
    const kind = raw.type ?? raw.mode;
    if (kind === 'all') {
      return { type: 'all' };
    }
    if (kind === 'filter') {
      const filterGroup = this.filterGroup(raw.filterGroup, `${path}.filterGroup`);
      return filterGroup ? { type: 'filter', filterGroup } : undefined;
    }
    this.fail(`${path}.type`, `${path} must be {type: all} or {mode: filter, filterGroup}`);
    return undefined;
  }

  accessControl(raw: unknown, path: string): AccessControl | undefined {
    if (raw === undefined || raw === null) {
      return { mode: 'approval', allowedOrganizations: [] };
    }
    if (typeof raw === 'string') {
      const mode = this.enumValue(raw, ACCESS_MODES, path);
      if (mode === 'whitelist') {
        this.fail(path, 'whitelist needs the object form {mode: whitelist, allowedOrganizations}');
        return undefined;
      }
      return mode ? { mode, allowedOrganizations: [] } : undefined;
    }
    if (!isObject(raw)) {
      this.fail(path, `${path} must be public, approval, or {mode, allowedOrganizations}`);
      return undefined;
    }
    const mode = this.enumValue(raw.mode, ACCESS_MODES, `${path}.mode`);
    const list = raw.allowedOrganizations ?? [];
    if (
      !Array.isArray(list) ||
      list.length > 1000 ||
      !list.every((id) => typeof id === 'string' && UUID.test(id))
    ) {
      this.fail(
        `${path}.allowedOrganizations`,
        'allowedOrganizations must be an array of organization ids (UUIDs)',
      );
      return undefined;
    }
    if (mode === 'whitelist' && list.length === 0) {
      this.fail(`${path}.allowedOrganizations`, 'whitelist needs at least one organization');
    }
    return mode
      ? { mode, allowedOrganizations: [...new Set((list as string[]).map((id) => id.toLowerCase()))] }
      : undefined;
  }

  propagationEvents(raw: unknown, path: string): PropagationEvents | undefined {
    if (raw === undefined || raw === null) {
      return {
        eventTypes: [...PROPAGATION_EVENT_TYPES],
        batchMerge: false,
        batchWindowSeconds: DEFAULT_BATCH_WINDOW_SECONDS,
      };
    }
    if (!isObject(raw)) {
      this.fail(path, `${path} must be an object {eventTypes, batchMerge, batchWindowSeconds}`);
      return undefined;
    }
    let eventTypes = [...PROPAGATION_EVENT_TYPES];
    if (raw.eventTypes !== undefined) {
      if (!Array.isArray(raw.eventTypes) || raw.eventTypes.length === 0) {
        this.fail(
          `${path}.eventTypes`,
          `eventTypes must be a non-empty array; each ${oneOf(PROPAGATION_EVENT_TYPES)}`,
        );
      } else {
        const list = raw.eventTypes as unknown[];
        eventTypes = [
          ...new Set(
            list.map(
              (type, index) =>
                this.enumValue(type, PROPAGATION_EVENT_TYPES, `${path}.eventTypes[${index}]`) ??
                'row_created',
            ),
          ),
        ];
      }
    }
    const batchMerge = this.bool(raw.batchMerge, `${path}.batchMerge`, false);
    let batchWindowSeconds = DEFAULT_BATCH_WINDOW_SECONDS;
    if (raw.batchWindowSeconds !== undefined && raw.batchWindowSeconds !== null) {
      const value = raw.batchWindowSeconds;
      if (
        typeof value !== 'number' ||
        !Number.isInteger(value) ||
        value < 1 ||
        value > MAX_BATCH_WINDOW_SECONDS
      ) {
        this.fail(
          `${path}.batchWindowSeconds`,
          `batchWindowSeconds must be an integer from 1 to ${MAX_BATCH_WINDOW_SECONDS}`,
        );
      } else {
        batchWindowSeconds = value;
      }
    }
    return { eventTypes, batchMerge, batchWindowSeconds };
  }

  defaultReceiverConfig(raw: unknown, path: string): DefaultReceiverConfig | null {
    if (raw === undefined || raw === null) {
      return null;
    }
    if (!isObject(raw)) {
      this.fail(path, `${path} must be an object {suggestedFieldMapping, suggestedAcceptMode}`);
      return null;
    }
    const result: DefaultReceiverConfig = {};
    if (raw.suggestedFieldMapping !== undefined && raw.suggestedFieldMapping !== null) {
      result.suggestedFieldMapping = this.fieldMapping(
        raw.suggestedFieldMapping,
        `${path}.suggestedFieldMapping`,
      );
    }
    if (raw.suggestedAcceptMode !== undefined && raw.suggestedAcceptMode !== null) {
      result.suggestedAcceptMode = this.enumValue<AcceptMode>(
        raw.suggestedAcceptMode,
        ACCEPT_MODES,
        `${path}.suggestedAcceptMode`,
      );
    }
    return result;
  }

  connectorConfig(raw: unknown, path: string): ConnectorConfig | undefined {
    if (!isObject(raw)) {
      this.fail(
        path,
        `${path} is required: an object {fieldMapping, sourceFilter, syncMode, scheduleConfig, conflictResolution, bidirectional}`,
      );
      return undefined;
    }
    const fieldMapping = this.fieldMapping(raw.fieldMapping, `${path}.fieldMapping`);
    const syncMode = this.enumValue(raw.syncMode, SYNC_MODES, `${path}.syncMode`, 'realtime') ?? 'realtime';
    const conflictResolution =
      this.enumValue(
        isObject(raw.conflictResolution) ? raw.conflictResolution.defaultStrategy : raw.conflictResolution,
        CONNECTOR_CONFLICT_RESOLUTIONS,
        `${path}.conflictResolution`,
        'source_wins',
      ) ?? 'source_wins';
    const config: ConnectorConfig = {
      fieldMapping: fieldMapping ?? { rules: [], unmappedFields: 'ignore' },
      syncMode,
      conflictResolution,
      bidirectional: this.bool(raw.bidirectional, `${path}.bidirectional`, false),
    };
    if (raw.sourceFilter !== undefined && raw.sourceFilter !== null) {
      config.sourceFilter = this.filterGroup(raw.sourceFilter, `${path}.sourceFilter`);
    }
    if (syncMode === 'scheduled' || (raw.scheduleConfig !== undefined && raw.scheduleConfig !== null)) {
      config.scheduleConfig = this.schedule(raw.scheduleConfig, `${path}.scheduleConfig`);
    }
    return config;
  }

  private schedule(raw: unknown, path: string): { cron: string; timezone: string } | undefined {
    if (!isObject(raw) || typeof raw.cron !== 'string') {
      this.fail(path, 'scheduled needs scheduleConfig {cron, timezone}');
      return undefined;
    }
    const timezone = raw.timezone === undefined || raw.timezone === null ? 'UTC' : raw.timezone;
    if (typeof timezone !== 'string' || !isTimeZone(timezone)) {
      this.fail(`${path}.timezone`, 'timezone must be an IANA time zone such as Europe/Paris');
      return undefined;
    }
    if (!isCron(raw.cron, timezone)) {
      this.fail(`${path}.cron`, 'cron must be a valid cron expression (5 or 6 fields)');
      return undefined;
    }
    return { cron: raw.cron, timezone };
  }
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export function isCron(expression: string, timezone: string): boolean {
  const fields = expression.trim().split(/\s+/);
  if (expression.length > 200 || fields.length < 5 || fields.length > 6) {
    return false;
  }
  try {
    CronExpressionParser.parse(expression, { tz: timezone, strict: false });
    return true;
  } catch {
    return false;
  }
}

/** Parses one configuration value and throws its problems (convenience for single objects). */
export function parseConfig<T>(parse: (checker: ConfigChecker) => T): T {
  const checker = new ConfigChecker();
  const value = parse(checker);
  checker.done();
  return value;
}

/** Every field id a filter group names, nested groups included. */
export function filterFieldIds(group: FilterGroup | undefined): string[] {
  if (!group) {
    return [];
  }
  return [
    ...group.conditions.map((condition) => condition.fieldId),
    ...group.groups.flatMap((inner) => filterFieldIds(inner)),
  ];
}

/**
 * VALIDATION_ERROR entries for field ids that the document does not have: `refs` are `[path, fieldId]` pairs,
 * `known` the document's field ids.
 */
export function unknownFieldDetails(
  refs: Array<[string, string]>,
  known: Set<string>,
  what: string,
): ErrorDetail[] {
  return refs
    .filter(([, id]) => !known.has(id))
    .map(([field, id]) => ({ field, reason: `${what} has no field "${id}"` }));
}

const NUMBER_FIELD_TYPES: ReadonlySet<string> = new Set([
  'number',
  'currency',
  'percent',
  'rating',
  'duration',
  'auto_number',
  'rollup',
]);
const DATE_FIELD_TYPES: ReadonlySet<string> = new Set(['date', 'datetime', 'created_time', 'updated_time']);
const TEXT_OPERATORS: ReadonlySet<string> = new Set(['contains', 'startsWith', 'endsWith']);
const DATE_OPERAND = /^\d{4}-\d{2}-\d{2}/;

function shown(operand: unknown): string {
  return JSON.stringify(operand) ?? String(operand);
}

function isNumeric(operand: unknown): boolean {
  return (
    (typeof operand === 'number' && Number.isFinite(operand)) ||
    (typeof operand === 'string' && operand.trim() !== '' && Number.isFinite(Number(operand)))
  );
}

/**
 * Why a condition's operands cannot fit the field it tests (null when they can): an operand naming no option of a
 * select field (by id or label, `selectOptionResolver`), a non-number on a number field, a non-date on a date field,
 * a non-boolean on a boolean field, a text operator on a number or boolean field. Such a condition could never match
 * (or, negated, always would). `null` operands (no value) and fields of other types are left alone.
 */
function operandProblem(condition: FilterCondition, field: FieldDefinition): string | null {
  const { operator } = condition;
  if (operator === 'exists' || operator === 'is_empty' || operator === 'is_not_empty') {
    return null;
  }
  const operands = (Array.isArray(condition.value) ? condition.value : [condition.value]).filter(
    (operand) => operand !== null && operand !== undefined,
  );
  const what = `"${field.id}" is a ${field.type} field`;
  if (field.type === 'single_select' || field.type === 'multi_select') {
    // On a single select the text operators test the label's text; everything else names options.
    if (TEXT_OPERATORS.has(operator) && !(operator === 'contains' && field.type === 'multi_select')) {
      return null;
    }
    if (['gt', 'gte', 'lt', 'lte', 'range'].includes(operator)) {
      return null;
    }
    const resolve = selectOptionResolver(field.selectOptions ?? []);
    const unknown = operands.find((operand) => resolve(operand) === undefined);
    return unknown === undefined
      ? null
      : `${shown(unknown)} names no option of the ${field.type} field "${field.id}" (give an option id or label)`;
  }
  if (NUMBER_FIELD_TYPES.has(field.type) || field.type === 'boolean') {
    if (TEXT_OPERATORS.has(operator)) {
      return `${operator} tests text; ${what}`;
    }
    const fits = field.type === 'boolean' ? (operand: unknown) => typeof operand === 'boolean' : isNumeric;
    const misfit = operands.find((operand) => !fits(operand));
    return misfit === undefined
      ? null
      : `${shown(misfit)} is not a ${field.type === 'boolean' ? 'boolean' : 'number'}; ${what}`;
  }
  if (DATE_FIELD_TYPES.has(field.type) && !TEXT_OPERATORS.has(operator)) {
    const misfit = operands.find(
      (operand) =>
        typeof operand !== 'string' || !DATE_OPERAND.test(operand) || Number.isNaN(Date.parse(operand)),
    );
    return misfit === undefined ? null : `${shown(misfit)} is not a date (YYYY-MM-DD or ISO 8601); ${what}`;
  }
  return null;
}

/**
 * VALIDATION_ERROR entries for condition operands of a (parsed) filter group that cannot fit the fields they test,
 * `fields` being the fields the filter runs on (the catalog's, for a share scope, a receiver filter and accept
 * rules). Conditions on fields not in `fields` are left to `unknownFieldDetails`. Paths follow the group as sent:
 * `…conditions[i].value` (a `range` written with rangeStart/rangeEnd: the condition).
 */
export function filterOperandDetails(
  group: FilterGroup | undefined,
  path: string,
  fields: readonly FieldDefinition[],
): ErrorDetail[] {
  if (!group) {
    return [];
  }
  const byId = new Map(fields.map((field) => [field.id, field]));
  const details: ErrorDetail[] = [];
  const walk = (current: FilterGroup, at: string): void => {
    current.conditions.forEach((condition, index) => {
      const field = byId.get(condition.fieldId);
      const reason = field ? operandProblem(condition, field) : null;
      if (reason) {
        const conditionPath = `${at}.conditions[${index}]`;
        details.push({
          field: condition.operator === 'range' ? conditionPath : `${conditionPath}.value`,
          reason,
        });
      }
    });
    current.groups.forEach((inner, index) => walk(inner, `${at}.groups[${index}]`));
  };
  walk(group, path);
  return details;
}

/**
 * Why a mapping formula cannot be parsed (null when it can): refused when the rule is written rather than on every
 * change it would have mapped. Its fields are the source's, which may change later, so unknown ids are not refused
 * here; a change that meets one records the mapping error in its sync log.
 */
function formulaSyntaxError(source: string): string | null {
  try {
    parseFormula(source);
    return null;
  } catch (error) {
    if (error instanceof FormulaError) {
      return `formula: ${error.message} at position ${error.position}`;
    }
    throw error;
  }
}

/** The source fields a `formula` rule reads (its syntax was checked when the rule was written). */
export function formulaSourceFieldIds(rule: { transformType?: string; formula?: string }): string[] {
  return rule.transformType === 'formula' && rule.formula ? formulaFieldRefs(parseFormula(rule.formula)) : [];
}
