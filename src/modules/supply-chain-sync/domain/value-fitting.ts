import type { PlanInput } from './binding-plan.types.js';
import { describeError } from './describe-error.js';
import { convertForTarget, type MappingResult } from './field-mapping.js';

/**
 * Value conversion for the planner (binding-plan.ts), kept apart from its decisions: which form of a mapped value its
 * target field takes. Which row changes, and whether, is decided there.
 */

/**
 * The stored form of the mapped values (the order book's field types). A value that does not fit its field is tried
 * again converted: a select copied from a catalog select by its option id (the generated field keeps the catalog's
 * option ids, so a renamed label still matches), else converted from its catalog field's type as a type change
 * converts (convertForTarget). A value that fits in no form is left out of `values` and reported in `errors`; the
 * other fields still go. `rowError` (nothing fits) makes the row an error.
 */
export function fitToOrderBook(
  input: PlanInput,
  values: Record<string, unknown>,
  sources: ReadonlyMap<string, string>,
  read: ReturnType<PlanInput['reader']>,
): { stored: Record<string, unknown>; errors: MappingResult['errors']; rowError: string | null } {
  // A rule whose target field was deleted since it was written is left out and said so (the stored form would drop
  // the unknown field without a word).
  const missing: MappingResult['errors'] = [];
  for (const fieldId of Object.keys(values)) {
    if (input.mapping.targetType(fieldId) === undefined) {
      delete values[fieldId];
      missing.push({ targetFieldId: fieldId, reason: `the target has no field "${fieldId}"` });
    }
  }
  if (missing.length > 0 && Object.keys(values).length === 0) {
    return { stored: {}, errors: missing, rowError: missing.map((error) => error.reason).join('; ') };
  }
  let whole: unknown;
  try {
    return { stored: input.toStored(values), errors: missing, rowError: null };
  } catch (error) {
    whole = error;
  }
  const stored: Record<string, unknown> = {};
  const errors: MappingResult['errors'] = [...missing];
  const storedOf = (fieldId: string, value: unknown): Record<string, unknown> | Error => {
    try {
      return input.toStored({ [fieldId]: value });
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  };
  for (const [fieldId, value] of Object.entries(values)) {
    let result = storedOf(fieldId, value);
    const failure = result instanceof Error ? result : null;
    const alternatives = failure ? alternativesOf(input, fieldId, value, sources.get(fieldId), read) : [];
    for (const candidate of alternatives) {
      const attempt = storedOf(fieldId, candidate);
      if (!(attempt instanceof Error)) {
        values[fieldId] = candidate;
        result = attempt;
        break;
      }
    }
    if (result instanceof Error) {
      delete values[fieldId];
      const reason = describeError(failure ?? result);
      errors.push({
        targetFieldId: fieldId,
        reason: reason.startsWith(`${fieldId}: `) ? reason.slice(fieldId.length + 2) : reason,
      });
      continue;
    }
    Object.assign(stored, result);
  }
  if (Object.keys(values).length === 0) {
    return { stored, errors, rowError: describeError(whole) };
  }
  return { stored, errors, rowError: null };
}

/** Other forms of a value that did not fit its target field, most faithful first. */
function alternativesOf(
  input: PlanInput,
  fieldId: string,
  value: unknown,
  sourceId: string | undefined,
  read: ReturnType<PlanInput['reader']>,
): unknown[] {
  const candidates: unknown[] = [];
  const targetType = input.mapping.targetType(fieldId);
  const sourceField = sourceId !== undefined ? read.field?.(sourceId) : undefined;
  const sourceStored = sourceId !== undefined ? read.stored?.(sourceId) : undefined;
  if (
    sourceField &&
    (sourceField.type === 'single_select' || sourceField.type === 'multi_select') &&
    (targetType === 'single_select' || targetType === 'multi_select') &&
    sourceStored !== null &&
    sourceStored !== undefined
  ) {
    candidates.push(sourceStored);
  }
  const converted = convertForTarget(
    value,
    targetType,
    sourceField ? { field: sourceField, stored: sourceStored } : undefined,
  );
  if (converted) {
    candidates.push(converted.value);
  }
  return candidates;
}
