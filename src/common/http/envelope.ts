import type { ErrorCode } from '../errors/error-code.js';
import type { ErrorDetail } from '../errors/app.exception.js';

/**
 * An error's `details` as answered (spec 7: "an object such as `{field, reason}`"): the first problem's keys, and
 * `errors`, every problem in order, when there is more than one (a validation error names each bad field).
 */
export type ErrorDetails = ErrorDetail & { errors?: ErrorDetail[] };

export function errorDetailsOf(given: readonly ErrorDetail[] | undefined): ErrorDetails | undefined {
  // A value's problem names its document field as `fieldId`; spec 7's details are `{field, reason}`, so `field`
  // says the same where the problem has no request path of its own.
  const problems = given?.map((problem) =>
    problem.field === undefined && typeof problem.fieldId === 'string' ? { ...problem, field: problem.fieldId } : problem,
  );
  const [first] = problems ?? [];
  if (!first || !problems) {
    return undefined;
  }
  return problems.length > 1 ? { ...first, errors: [...problems] } : { ...first };
}

/** The response envelope of spec section 1: every answer under /api/v1 has this shape. */
export interface Envelope<T> {
  success: boolean;
  code?: ErrorCode;
  message: Record<string, string>;
  payload: T | null;
  details?: ErrorDetails;
}
