import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition, SelectOption, StoredValue } from './field.types.js';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Throws the VALIDATION_ERROR for one field. */
export function invalid(field: FieldDefinition, reason: string): never {
  throw AppException.validation([{ fieldId: field.id, reason }]);
}

/** The details of a VALIDATION_ERROR, or null for any other error. */
export function validationDetailsOf(error: unknown): ErrorDetail[] | null {
  if (error instanceof AppException && error.code === 'VALIDATION_ERROR') {
    return error.options.details ?? [];
  }
  return null;
}

/** PostgreSQL stores no U+0000 in text or jsonb (22021, 22P05), so values holding it are refused up front. */
export const NUL_REASON = 'must not contain the NUL character (U+0000)';

/**
 * The path (`path.name`, `path.selectOptions[0].label`) of the first string or object key in `value` that holds
 * U+0000, or null. Walks with its own stack: request bodies can nest deeper than the call stack.
 */
export function nulPath(value: unknown, path: string): string | null {
  const pending: [unknown, string][] = [[value, path]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, at] = next;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) {
        return at;
      }
    } else if (Array.isArray(item)) {
      for (let index = item.length - 1; index >= 0; index -= 1) {
        pending.push([item[index], `${at}[${index}]`]);
      }
    } else if (isPlainObject(item)) {
      for (const [key, inner] of Object.entries(item).reverse()) {
        if (key.includes('\u0000')) {
          return at;
        }
        pending.push([inner, at === '' ? key : `${at}.${key}`]);
      }
    }
  }
  return null;
}

/** `null`, `undefined` and `{}` all mean "no value". */
export function isEmptyInput(input: unknown): boolean {
  return input === null || input === undefined || (isPlainObject(input) && Object.keys(input).length === 0);
}

/** Every typed key a written Value may carry: the canonical ones and the aliases docs/values.md accepts. */
const VALUE_KEYS: ReadonlySet<string> = new Set([
  'text',
  'number',
  'currency',
  'percent',
  'boolean',
  'date',
  'datetime',
  'duration',
  'rating',
  'selectOption',
  'select',
  'singleSelect',
  'multiSelect',
  'selectOptions',
  'user',
  'users',
  'collaborator',
  'collaborators',
  'attachment',
  'attachments',
  'relation',
  'relations',
  'list',
  'json',
]);

/**
 * The keys of `input` when it is a Value (an object naming a typed key) with more than one key, else null. Spec 2.6:
 * a Value carries one typed key; with several, one would silently win. Objects naming no typed key are a type's
 * lenient forms (`{id}`, one attachment, one relation reference) and are left to the handler.
 */
export function extraValueKeys(input: unknown): string[] | null {
  if (!isPlainObject(input)) {
    return null;
  }
  const keys = Object.keys(input);
  return keys.length > 1 && keys.some((key) => VALUE_KEYS.has(key)) ? keys : null;
}

/**
 * Takes the typed key out of a canonical Value (`{number: 3}` → 3). When the input carries none of the
 * accepted keys it is returned unchanged, so a handler can accept its lenient raw forms too.
 */
export function unwrapValue(input: unknown, keys: readonly string[]): unknown {
  if (!isPlainObject(input)) {
    return input;
  }
  for (const key of keys) {
    if (Object.prototype.hasOwnProperty.call(input, key)) {
      return input[key];
    }
  }
  return input;
}

/** A short description of what was received, for reasons such as `expected text, got number`. */
export function describeInput(input: unknown): string {
  if (Array.isArray(input)) {
    return 'array';
  }
  if (isPlainObject(input)) {
    const keys = Object.keys(input);
    return keys.length === 1 ? `object with key "${keys[0]}"` : 'object';
  }
  return typeof input;
}

/** The id in `"o1"` or `{id: "o1"}`, or null. */
export function idOf(input: unknown): string | null {
  if (typeof input === 'string') {
    return input;
  }
  if (isPlainObject(input) && typeof input.id === 'string') {
    return input.id;
  }
  return null;
}

export function isEmptyStored(stored: StoredValue | undefined): boolean {
  return (
    stored === null ||
    stored === undefined ||
    stored === '' ||
    (Array.isArray(stored) && stored.length === 0) ||
    (isPlainObject(stored) && Object.keys(stored).length === 0)
  );
}

/** Display text of a select option: `label`, else `name.en`, else the first name, else the id. */
export function optionLabel(option: SelectOption): string {
  if (typeof option.label === 'string' && option.label !== '') {
    return option.label;
  }
  const names = option.name ?? {};
  return names.en ?? Object.values(names)[0] ?? option.id;
}

/** Option by id, else by label or any of its names (case-insensitive, trimmed). */
export function findOption(
  field: FieldDefinition,
  idOrLabel: string,
  byLabel: boolean,
): SelectOption | undefined {
  const options = field.selectOptions ?? [];
  const byId = options.find((option) => option.id === idOrLabel);
  if (byId || !byLabel) {
    return byId;
  }
  const wanted = idOrLabel.trim().toLowerCase();
  return options.find((option) =>
    [option.label, ...Object.values(option.name ?? {})].some(
      (text) => typeof text === 'string' && text.trim().toLowerCase() === wanted,
    ),
  );
}

export function dedupe<T>(items: T[], keyOf: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = keyOf(item);
    if (seen.has(key)) {
      return false;
    }
    seen.add(key);
    return true;
  });
}

/** A finite number from a number or a numeric string; null when not one. */
export function toFiniteNumber(input: unknown): number | null {
  if (typeof input === 'number') {
    return Number.isFinite(input) ? input : null;
  }
  if (
    typeof input === 'string' &&
    input.trim() !== '' &&
    /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(input.trim())
  ) {
    const parsed = Number(input.trim());
    return Number.isFinite(parsed) ? parsed : null;
  }
  return null;
}
