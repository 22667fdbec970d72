import type { FieldDefinition, StoredValue } from '../../documents/fields/field.types.js';
import { convertValue, isFieldType } from '../../documents/fields/field-type.registry.js';
import type { PROPAGATION_MODES, TRANSFORM_TYPES } from '../../supply-chain/domain/supply-chain.types.js';
import { type CurrencyRate, lookupRate, physicalFactor } from './units.js';

/** Spec 2.14 field mapping: the enums supply-chain's DTOs validate. */
export type TransformType = (typeof TRANSFORM_TYPES)[number];
export type PropagationMode = (typeof PROPAGATION_MODES)[number];

export interface UnitConversion {
  sourceUnit?: string;
  targetUnit?: string;
  conversionType?: 'currency' | 'weight' | 'length';
  exchangeRateSource?: 'daily' | 'realtime';
  fixedRate?: number;
  customRate?: number;
  fromUnit?: string;
  toUnit?: string;
  rate?: number;
}

export interface MappingRule {
  sourceFieldId?: string;
  targetFieldId: string;
  enabled?: boolean;
  description?: string;
  transformType?: TransformType;
  propagationMode?: PropagationMode;
  unitConversion?: UnitConversion;
  formatConfig?: { template?: string };
  optionMapping?: { mappings?: Record<string, string>; unmappedStrategy?: 'keep_original' | 'clear' };
  formula?: string;
  /** `merge`: the source fields joined with `separator` (default a space). */
  sourceFieldIds?: string[];
  /** `split`: the source value split on `separator` (default a space), one part per target field in order. */
  targetFieldIds?: string[];
  separator?: string;
  mergeConfig?: { sourceFieldIds?: string[]; separator?: string };
  /** `split` into one target: the part `index` (default 0). */
  splitConfig?: { separator?: string; index?: number };
  /** `type_convert`: the target type (default: the target field's type). */
  targetType?: string;
}

export interface FieldMapping {
  rules?: MappingRule[];
  unmappedFields?: 'create' | 'ignore';
}

/** What the mapping needs from its surroundings. */
export interface MappingContext {
  /** Reads a source field (by id) in its plain form: select → label, multi-select → labels, number → number. */
  read: (fieldId: string) => unknown;
  /** Reads a source field as stored (a select's option id, a multi-select's ids), where the reader knows it. */
  readStored?: (fieldId: string) => unknown;
  /** The type of a target field (for `type_convert`). */
  targetType: (fieldId: string) => string | undefined;
  /** The organization's rate table (for currency conversions). */
  rates: readonly CurrencyRate[];
  /** Today (UTC, `YYYY-MM-DD`) for `daily` rates. */
  today: string;
  /** Evaluates a formula over the source row; throws on a syntax error, returns null on a runtime error. */
  formula: (source: string, read: (fieldId: string) => unknown) => unknown;
}

export interface MappedValue {
  value: unknown;
  mode: PropagationMode;
}

export interface MappingResult {
  /** Target field id → mapped value. */
  values: Map<string, MappedValue>;
  /** Rules that failed, with why (the value is left out). */
  errors: { targetFieldId: string; reason: string }[];
  /** Source fields no enabled rule reads (what `unmappedFields: create` copies). */
  unmapped: string[];
  /**
   * Target field id → the catalog field a `direct` rule copied into it unchanged: a value that does not fit its target
   * is converted from that field (convertForTarget).
   */
  sources: Map<string, string>;
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) {
    return value;
  }
  if (typeof value === 'string' && value.trim() !== '') {
    const parsed = Number(value.trim().replace(/,/g, ''));
    return Number.isFinite(parsed) ? parsed : null;
  }
  return null;
}

/**
 * Rounds away binary noise (0.1 * 3, 31 * 1.2) without losing meaningful precision: 15 significant digits, what a
 * double always holds exactly (Number.MAX_SAFE_INTEGER has 16), so a 14-digit price + 1 keeps every digit.
 */
function tidy(value: number): number {
  return Number.parseFloat(value.toPrecision(15));
}

function textOf(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  if (Array.isArray(value)) {
    return value.map(textOf).join(', ');
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export class MappingError extends Error {}

/** `type_convert` to a field type of docs/values.md. */
export function convertType(value: unknown, type: string | undefined): unknown {
  if (value === null || value === undefined) {
    return null;
  }
  switch (type ?? 'text') {
    case 'number':
    case 'currency':
    case 'percent':
    case 'rating':
    case 'duration': {
      const number = toNumber(value);
      if (number === null) {
        throw new MappingError(`cannot convert ${JSON.stringify(value)} to a number`);
      }
      return number;
    }
    case 'boolean':
    case 'checkbox': {
      if (typeof value === 'boolean') {
        return value;
      }
      const text = textOf(value).trim().toLowerCase();
      if (['true', 'yes', '1', 'y'].includes(text)) {
        return true;
      }
      if (['false', 'no', '0', 'n', ''].includes(text)) {
        return false;
      }
      throw new MappingError(`cannot convert ${JSON.stringify(value)} to a boolean`);
    }
    case 'date': {
      const date = new Date(textOf(value));
      if (Number.isNaN(date.getTime())) {
        throw new MappingError(`cannot convert ${JSON.stringify(value)} to a date`);
      }
      return date.toISOString().slice(0, 10);
    }
    case 'datetime': {
      const date = new Date(textOf(value));
      if (Number.isNaN(date.getTime())) {
        throw new MappingError(`cannot convert ${JSON.stringify(value)} to a date-time`);
      }
      return date.toISOString();
    }
    case 'multi_select':
      return Array.isArray(value)
        ? value
        : textOf(value)
            .split(',')
            .map((part) => part.trim())
            .filter((part) => part !== '');
    default:
      // text, long_text, single_select, url, email… and unknown types: the text form.
      return textOf(value);
  }
}

/** `unit_convert` in both spec forms. */
export function convertUnit(
  value: unknown,
  conversion: UnitConversion,
  rates: readonly CurrencyRate[],
  today: string,
): number | null {
  if (value === null || value === undefined || value === '') {
    return null;
  }
  const number = toNumber(value);
  if (number === null) {
    throw new MappingError(`cannot convert ${JSON.stringify(value)}: not a number`);
  }
  const explicit = conversion.fixedRate ?? conversion.customRate ?? conversion.rate;
  if (explicit !== undefined) {
    if (typeof explicit !== 'number' || !Number.isFinite(explicit)) {
      throw new MappingError('the conversion rate must be a finite number');
    }
    return tidy(number * explicit);
  }
  const from = conversion.sourceUnit ?? conversion.fromUnit;
  const to = conversion.targetUnit ?? conversion.toUnit;
  if (!from || !to) {
    throw new MappingError(
      'unitConversion needs sourceUnit and targetUnit (or fromUnit and toUnit) or a rate',
    );
  }
  if (conversion.conversionType === 'currency') {
    const rate = lookupRate(rates, from, to, conversion.exchangeRateSource ?? 'daily', today);
    if (rate === null) {
      throw new MappingError(
        `no exchange rate ${from.toUpperCase()}→${to.toUpperCase()} in the organization's rate table`,
      );
    }
    return tidy(number * rate);
  }
  const factor = physicalFactor(from, to);
  if (factor !== null) {
    return tidy(number * factor);
  }
  // Without a conversion type, two currency codes are looked up in the rate table.
  const rate =
    conversion.conversionType === undefined
      ? lookupRate(rates, from, to, conversion.exchangeRateSource ?? 'daily', today)
      : null;
  if (rate !== null) {
    return tidy(number * rate);
  }
  throw new MappingError(`cannot convert ${from} to ${to}`);
}

/**
 * `option_mapping`: each source option is looked up in `mappings` by its label, then by its option id (`stored`:
 * the value as stored, ids in the same order as the labels of `value`), so a rule may name source options either way.
 */
export function applyOptionMapping(
  value: unknown,
  config: MappingRule['optionMapping'],
  stored?: unknown,
): unknown {
  const mappings = config?.mappings ?? {};
  const mapped = (key: unknown): boolean =>
    key !== null && key !== undefined && Object.prototype.hasOwnProperty.call(mappings, textOf(key));
  const one = (item: unknown, id: unknown): unknown => {
    if (mapped(item)) {
      return mappings[textOf(item)];
    }
    if (mapped(id)) {
      return mappings[textOf(id)];
    }
    return config?.unmappedStrategy === 'clear' ? null : item;
  };
  if (Array.isArray(value)) {
    return value
      .map((item, index) => one(item, Array.isArray(stored) ? stored[index] : undefined))
      .filter((item) => item !== null);
  }
  return value === null || value === undefined ? null : one(value, stored);
}

export function applyTemplate(value: unknown, template: string | undefined): string | null {
  if (value === null || value === undefined || value === '') {
    return null;
  }
  return (template ?? '${value}').split('${value}').join(textOf(value));
}

function splitParts(source: unknown, rule: MappingRule): string[] {
  if (source === null || source === undefined) {
    return [];
  }
  const separator = rule.splitConfig?.separator ?? rule.separator ?? ' ';
  return textOf(source)
    .split(separator)
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** The value one rule gives its target field. */
export function applyRule(rule: MappingRule, ctx: MappingContext): unknown {
  const source = rule.sourceFieldId !== undefined ? ctx.read(rule.sourceFieldId) : undefined;
  const transform = rule.transformType ?? 'direct';
  switch (transform) {
    case 'direct':
      return source ?? null;
    case 'type_convert':
      return convertType(source, rule.targetType ?? ctx.targetType(rule.targetFieldId));
    case 'unit_convert':
      return convertUnit(source, rule.unitConversion ?? {}, ctx.rates, ctx.today);
    case 'option_mapping':
      return applyOptionMapping(
        source,
        rule.optionMapping,
        rule.sourceFieldId !== undefined ? ctx.readStored?.(rule.sourceFieldId) : undefined,
      );
    case 'formula': {
      if (!rule.formula) {
        throw new MappingError('formula is required for a formula rule');
      }
      const result = ctx.formula(rule.formula, ctx.read) ?? null;
      // Number results are tidied like unit_convert's (15 significant digits): `price * 1.2` gives 37.2, not 37.199999999999996.
      return typeof result === 'number' && Number.isFinite(result) ? tidy(result) : result;
    }
    case 'format':
      return applyTemplate(source, rule.formatConfig?.template);
    case 'merge': {
      const ids =
        rule.mergeConfig?.sourceFieldIds ??
        rule.sourceFieldIds ??
        (rule.sourceFieldId ? [rule.sourceFieldId] : []);
      const parts = ids.map((id) => textOf(ctx.read(id))).filter((part) => part !== '');
      return parts.length === 0 ? null : parts.join(rule.mergeConfig?.separator ?? rule.separator ?? ' ');
    }
    case 'split': {
      if (source === null || source === undefined) {
        return null;
      }
      return splitParts(source, rule)[rule.splitConfig?.index ?? 0] ?? null;
    }
    default: {
      const unknown: never = transform;
      throw new MappingError(`unknown transformType ${String(unknown)}`);
    }
  }
}

/** The source fields a rule reads. */
export function ruleSourceFields(rule: MappingRule): string[] {
  const ids = [...(rule.mergeConfig?.sourceFieldIds ?? []), ...(rule.sourceFieldIds ?? [])];
  if (rule.sourceFieldId) {
    ids.push(rule.sourceFieldId);
  }
  return ids;
}

/**
 * Applies every enabled rule to one source row. A failing rule leaves its target out and is reported; the others
 * still apply. `sourceFieldIds` lists the shared source fields (for `unmapped`).
 */
export function applyFieldMapping(
  mapping: FieldMapping | null | undefined,
  sourceFieldIds: readonly string[],
  ctx: MappingContext,
): MappingResult {
  const values = new Map<string, MappedValue>();
  const errors: MappingResult['errors'] = [];
  const sources = new Map<string, string>();
  const read = new Set<string>();
  for (const rule of mapping?.rules ?? []) {
    if (rule.enabled === false) {
      continue;
    }
    ruleSourceFields(rule).forEach((id) => read.add(id));
    const mode = rule.propagationMode ?? 'oneway';
    try {
      if (rule.transformType === 'split' && (rule.targetFieldIds?.length ?? 0) > 1) {
        const parts = splitParts(
          rule.sourceFieldId !== undefined ? ctx.read(rule.sourceFieldId) : null,
          rule,
        );
        rule.targetFieldIds?.forEach((id, index) => values.set(id, { value: parts[index] ?? null, mode }));
        continue;
      }
      values.set(rule.targetFieldId, { value: applyRule(rule, ctx), mode });
      if ((rule.transformType ?? 'direct') === 'direct' && rule.sourceFieldId !== undefined) {
        sources.set(rule.targetFieldId, rule.sourceFieldId);
      } else {
        sources.delete(rule.targetFieldId);
      }
    } catch (error) {
      errors.push({
        targetFieldId: rule.targetFieldId,
        reason: error instanceof Error ? error.message : String(error),
      });
    }
  }
  const unmapped = sourceFieldIds.filter((id) => !read.has(id));
  return { values, errors, unmapped, sources };
}

/** What a generated field computed from a rule's result is converted as: a value of any JSON type (formula). */
const ANY_VALUE: FieldDefinition = { id: 'value', name: 'value', type: 'formula' };

/**
 * A mapped value that does not fit its order-book field, converted to the field's type by the rules the documents
 * module applies when a field's type changes (docs/values.md, "Converting on a type change") — the same change an
 * order-book field generated from a catalog field made (docs/supply-chain.md: relation, user-like → text, …):
 * collaborators and relations become their ids joined with ", " (a user its id), numbers and times their text,
 * numeric text a number, ISO text a date. `source` is the catalog field the value was copied from, with its stored value; without one the
 * value converts by its own JSON type. Null when no meaningful conversion exists (text "5 kg" → number).
 */
export function convertForTarget(
  value: unknown,
  targetType: string | undefined,
  source?: { field: FieldDefinition; stored: unknown },
): { value: unknown } | null {
  if (!isFieldType(targetType)) {
    return null;
  }
  const from = source?.field ?? ANY_VALUE;
  const raw = source ? source.stored : value;
  if (raw === null || raw === undefined) {
    return null;
  }
  const converted = convertValue(raw as StoredValue, from, {
    id: 'target',
    name: 'target',
    type: targetType,
  });
  return converted.ok && converted.value !== null ? { value: converted.value } : null;
}
