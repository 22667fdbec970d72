/**
 * Every problem of an error answer, in order (spec 7: `details` is "an object such as `{field, reason}`"):
 * `details.errors` when there are several, else `details` itself. Typed loosely, as a response body is.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function problemsOf(body: { details?: { errors?: unknown[] } }): any[] {
  const details = body.details;
  if (!details) {
    return [];
  }
  return details.errors ?? [details];
}
