import { getMetadataStorage } from 'class-validator';
import type { ErrorDetail } from '../errors/app.exception.js';

export const NUL_TEXT_REASON = 'text must not contain the NUL character (U+0000)';

/** The properties a DTO class declares as text (`@IsString()`, also with `each`), per class. */
const textPropertiesOf = new WeakMap<object, ReadonlySet<string>>();

function textProperties(target: object): ReadonlySet<string> {
  let names = textPropertiesOf.get(target);
  if (names === undefined) {
    const metadata = getMetadataStorage().getTargetValidationMetadatas(target as () => void, '', true, false);
    names = new Set(metadata.filter((rule) => rule.name === 'isString').map((rule) => rule.propertyName));
    textPropertiesOf.set(target, names);
  }
  return names;
}

/** An instance the validation pipe built from a DTO class (not a plain object, array or primitive). */
function isDtoInstance(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return false;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype !== Object.prototype && prototype !== null;
}

const hasNul = (value: unknown): boolean => typeof value === 'string' && value.includes('\u0000');

/**
 * Every text property of a validated DTO (nested DTOs and arrays of them included) holding U+0000. PostgreSQL text
 * and jsonb cannot hold that character, so such a value used to travel to the write and come back as the database
 * error's VALIDATION_ERROR without a `field` (and, in a multi-step write, after earlier steps had run). Only what
 * the DTO declares `@IsString()` is looked at: document values, properties and filter operands (typed `unknown`)
 * are refused by their own parsers, which name the document field (`fieldId`, docs/values.md).
 */
export function nulTextProblems(value: unknown, path = ''): ErrorDetail[] {
  if (!isDtoInstance(value)) {
    return [];
  }
  const text = textProperties(value.constructor);
  const problems: ErrorDetail[] = [];
  for (const [key, inner] of Object.entries(value)) {
    const field = path ? `${path}.${key}` : key;
    if (Array.isArray(inner)) {
      inner.forEach((item, index) => {
        if (text.has(key) && hasNul(item)) {
          problems.push({ field: `${field}[${index}]`, reason: NUL_TEXT_REASON });
        } else {
          problems.push(...nulTextProblems(item, `${field}[${index}]`));
        }
      });
    } else if (text.has(key) && hasNul(inner)) {
      problems.push({ field, reason: NUL_TEXT_REASON });
    } else {
      problems.push(...nulTextProblems(inner, field));
    }
  }
  return problems;
}
