import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';

/**
 * How a paged row list reports its total (docs/performance.md, "Count modes"), after PostgREST:
 * - `exact`: `count(*)` of the filter (the document's kept row count when nothing filters);
 * - `estimated` (default): exact while that costs little — nothing filters, the document has at most
 *   QUERY_EXACT_COUNT_MAX_ROWS rows, the page is the last one or an empty one past the end — otherwise the planner's estimate, marked
 *   `totalExact: false`;
 * - `none`: no total (`total` and `totalPages` null).
 */
export const COUNT_MODES = ['exact', 'estimated', 'none'] as const;
export type CountMode = (typeof COUNT_MODES)[number];
export const DEFAULT_COUNT_MODE: CountMode = 'estimated';

function isCountMode(value: unknown): value is CountMode {
  return typeof value === 'string' && (COUNT_MODES as readonly string[]).includes(value);
}

/** `count=…` of an RFC 7240 `Prefer` header (`Prefer: count=exact`, possibly among other preferences). */
export function countFromPrefer(prefer: string | undefined): string | undefined {
  if (!prefer) {
    return undefined;
  }
  for (const part of prefer.split(',')) {
    const [key, value] = part.split('=').map((item) => item.trim().replace(/^"|"$/g, ''));
    if (key?.toLowerCase() === 'count') {
      return value ?? '';
    }
  }
  return undefined;
}

/**
 * The count mode of a call: the `count` parameter (query or body) or the `Prefer: count=` header; the two naming
 * different modes, or an unknown mode, is VALIDATION_ERROR.
 */
export function resolveCountMode(param: unknown, preferHeader: string | undefined): CountMode {
  const fromHeader = countFromPrefer(preferHeader);
  const errors: ErrorDetail[] = [];
  if (param !== undefined && param !== null && !isCountMode(param)) {
    errors.push({ field: 'count', reason: `count must be one of ${COUNT_MODES.join(', ')}` });
  }
  if (fromHeader !== undefined && !isCountMode(fromHeader)) {
    errors.push({ field: 'prefer', reason: `Prefer count must be one of ${COUNT_MODES.join(', ')}` });
  }
  if (errors.length === 0 && isCountMode(param) && isCountMode(fromHeader) && param !== fromHeader) {
    errors.push({ field: 'count', reason: 'the count parameter and the Prefer header name different count modes' });
  }
  if (errors.length > 0) {
    throw AppException.validation(errors);
  }
  return isCountMode(param) ? param : isCountMode(fromHeader) ? fromHeader : DEFAULT_COUNT_MODE;
}
