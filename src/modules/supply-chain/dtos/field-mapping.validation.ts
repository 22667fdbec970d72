import { assertNever } from '../../../common/assert-never.js';
import { FormulaError, parseFormula } from '../../../common/formula/index.js';
import { isPlainObject } from '../../documents/fields/field-value.utils.js';
import {
  CONVERSION_TYPES,
  EXCHANGE_RATE_SOURCES,
  type FieldMapping,
  type FieldMappingRule,
  PROPAGATION_MODES,
  TRANSFORM_TYPES,
  type UnitConversion,
  UNMAPPED_FIELDS,
  UNMAPPED_OPTION_STRATEGIES,
} from '../domain/supply-chain.types.js';
import type { ConfigChecker } from './sync-config.validation.js';

/**
 * Parsing of the field mappings that bindings and connectors carry: the rules, each with its transform (direct,
 * merge, split, unit conversion, format template, option mapping, formula, type conversion) and its own settings.
 * Kept apart from the configuration objects in sync-config.validation.ts because each transform type has a shape of
 * its own; problems go to the caller's `ConfigChecker`, as its own parsers do.
 */

const MAX_RULES = 500;
/** Every key a rule may carry (those of other transform types are accepted and left unused, as before). */
const RULE_KEYS = [
  'sourceFieldId',
  'sourceFieldIds',
  'targetFieldId',
  'targetFieldIds',
  'separator',
  'enabled',
  'description',
  'transformType',
  'propagationMode',
  'unitConversion',
  'formatConfig',
  'optionMapping',
  'formula',
  'targetType',
] as const;

export function parseFieldMapping(
  checker: ConfigChecker,
  raw: unknown,
  path: string,
): FieldMapping | undefined {
  if (raw === undefined || raw === null) {
    return { rules: [], unmappedFields: 'ignore' };
  }
  if (!isPlainObject(raw)) {
    checker.fail(path, `${path} must be an object {rules[], unmappedFields}`);
    return undefined;
  }
  checker.knownKeys(raw, ['rules', 'unmappedFields'], path);
  const unmappedFields =
    checker.enumValue(raw.unmappedFields, UNMAPPED_FIELDS, `${path}.unmappedFields`, 'ignore') ?? 'ignore';
  if (raw.rules !== undefined && (!Array.isArray(raw.rules) || raw.rules.length > MAX_RULES)) {
    checker.fail(`${path}.rules`, `${path}.rules must be an array of at most ${MAX_RULES} rules`);
    return undefined;
  }
  const rules: FieldMappingRule[] = [];
  ((raw.rules as unknown[] | undefined) ?? []).forEach((rule, index) => {
    const parsed = parseRule(checker, rule, `${path}.rules[${index}]`);
    if (parsed) {
      rules.push(parsed);
    }
  });
  return { rules, unmappedFields };
}

function parseRule(checker: ConfigChecker, raw: unknown, path: string): FieldMappingRule | undefined {
  if (!isPlainObject(raw)) {
    checker.fail(path, `${path} must be a mapping rule`);
    return undefined;
  }
  const before = checker.errors.length;
  checker.knownKeys(raw, RULE_KEYS, path);
  const transformType =
    checker.enumValue(raw.transformType, TRANSFORM_TYPES, `${path}.transformType`, 'direct') ?? 'direct';
  const propagationMode =
    checker.enumValue(raw.propagationMode, PROPAGATION_MODES, `${path}.propagationMode`, 'oneway') ??
    'oneway';
  const rule: Partial<FieldMappingRule> = {
    enabled: checker.bool(raw.enabled, `${path}.enabled`, true),
    transformType,
    propagationMode,
  };
  const description = checker.text(raw.description, `${path}.description`);
  if (description !== undefined) {
    rule.description = description;
  }
  const idList = (key: 'sourceFieldIds' | 'targetFieldIds'): string[] | undefined => {
    const list = raw[key];
    if (!Array.isArray(list) || list.length < 2 || list.length > 50) {
      checker.fail(`${path}.${key}`, `${transformType} needs ${key}: an array of 2 to 50 field ids`);
      return undefined;
    }
    return list.map((id, index) => checker.id(id, `${path}.${key}[${index}]`) ?? '');
  };
  if (transformType === 'merge') {
    rule.sourceFieldIds = idList('sourceFieldIds');
    rule.sourceFieldId = rule.sourceFieldIds?.[0];
  } else {
    rule.sourceFieldId = checker.id(raw.sourceFieldId, `${path}.sourceFieldId`);
  }
  if (transformType === 'split') {
    rule.targetFieldIds = idList('targetFieldIds');
    rule.targetFieldId = rule.targetFieldIds?.[0];
  } else {
    rule.targetFieldId = checker.id(raw.targetFieldId, `${path}.targetFieldId`);
  }
  if (transformType === 'merge' || transformType === 'split') {
    rule.separator = checker.text(raw.separator, `${path}.separator`, 16) ?? ' ';
  }
  switch (transformType) {
    case 'unit_convert':
      rule.unitConversion = parseUnitConversion(checker, raw.unitConversion, `${path}.unitConversion`);
      break;
    case 'format': {
      const config = raw.formatConfig;
      if (isPlainObject(config)) {
        checker.knownKeys(config, ['template'], `${path}.formatConfig`);
      }
      const template = isPlainObject(config) ? config.template : undefined;
      if (typeof template !== 'string' || !template.includes('${value}') || template.length > 1000) {
        checker.fail(
          `${path}.formatConfig.template`,
          'format needs formatConfig.template, a string containing ${value}',
        );
      } else {
        rule.formatConfig = { template };
      }
      break;
    }
    case 'option_mapping':
      rule.optionMapping = parseOptionMapping(checker, raw.optionMapping, `${path}.optionMapping`);
      break;
    case 'formula':
      if (typeof raw.formula !== 'string' || raw.formula.trim() === '' || raw.formula.length > 2000) {
        checker.fail(`${path}.formula`, 'formula needs a non-empty formula string (at most 2000 characters)');
      } else {
        const syntaxError = formulaSyntaxError(raw.formula);
        if (syntaxError) {
          checker.fail(`${path}.formula`, syntaxError);
        } else {
          rule.formula = raw.formula;
        }
      }
      break;
    case 'type_convert':
      if (raw.targetType !== undefined) {
        rule.targetType = checker.text(raw.targetType, `${path}.targetType`, 64);
      }
      break;
    case 'direct':
    case 'merge':
    case 'split':
      break;
    default:
      return assertNever(transformType);
  }
  return checker.errors.length === before ? (rule as FieldMappingRule) : undefined;
}

function parseUnitConversion(checker: ConfigChecker, raw: unknown, path: string): UnitConversion | undefined {
  if (!isPlainObject(raw)) {
    checker.fail(
      path,
      'unit_convert needs unitConversion {sourceUnit, targetUnit, conversionType, …} or {fromUnit, toUnit, rate}',
    );
    return undefined;
  }
  checker.knownKeys(
    raw,
    [
      'sourceUnit',
      'targetUnit',
      'fromUnit',
      'toUnit',
      'conversionType',
      'exchangeRateSource',
      'fixedRate',
      'customRate',
      'rate',
    ],
    path,
  );
  const sourceUnit = raw.sourceUnit ?? raw.fromUnit;
  const targetUnit = raw.targetUnit ?? raw.toUnit;
  const unitKey = raw.sourceUnit !== undefined ? 'sourceUnit' : 'fromUnit';
  const targetKey = raw.targetUnit !== undefined ? 'targetUnit' : 'toUnit';
  if (typeof sourceUnit !== 'string' || sourceUnit.trim() === '' || sourceUnit.length > 32) {
    checker.fail(`${path}.${unitKey}`, 'sourceUnit (or fromUnit) must be a unit code such as USD or kg');
  }
  if (typeof targetUnit !== 'string' || targetUnit.trim() === '' || targetUnit.length > 32) {
    checker.fail(`${path}.${targetKey}`, 'targetUnit (or toUnit) must be a unit code such as EUR or lb');
  }
  const result: UnitConversion = { sourceUnit: String(sourceUnit), targetUnit: String(targetUnit) };
  if (raw.conversionType !== undefined) {
    result.conversionType = checker.enumValue(raw.conversionType, CONVERSION_TYPES, `${path}.conversionType`);
  }
  if (raw.exchangeRateSource !== undefined) {
    result.exchangeRateSource = checker.enumValue(
      raw.exchangeRateSource,
      EXCHANGE_RATE_SOURCES,
      `${path}.exchangeRateSource`,
    );
  }
  for (const key of ['fixedRate', 'customRate', 'rate'] as const) {
    const value = checker.positive(raw[key], `${path}.${key}`);
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

function parseOptionMapping(
  checker: ConfigChecker,
  raw: unknown,
  path: string,
): { mappings: Record<string, string>; unmappedStrategy: 'keep_original' | 'clear' } | undefined {
  if (!isPlainObject(raw) || !isPlainObject(raw.mappings)) {
    checker.fail(
      path,
      'option_mapping needs optionMapping {mappings: {sourceOption: targetOption}, unmappedStrategy}',
    );
    return undefined;
  }
  checker.knownKeys(raw, ['mappings', 'unmappedStrategy'], path);
  const mappings: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw.mappings)) {
    if (typeof value !== 'string') {
      checker.fail(`${path}.mappings.${key}`, 'each mapping must name a target option (string)');
    } else {
      mappings[key] = value;
    }
  }
  const unmappedStrategy =
    checker.enumValue(
      raw.unmappedStrategy,
      UNMAPPED_OPTION_STRATEGIES,
      `${path}.unmappedStrategy`,
      'keep_original',
    ) ?? 'keep_original';
  return { mappings, unmappedStrategy };
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
