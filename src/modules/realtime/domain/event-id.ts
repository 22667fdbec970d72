/** The largest outbox sequence number PostgreSQL can hold (bigint): no event id is above it. */
export const MAX_EVENT_ID = 9223372036854775807n;

/**
 * What is wrong with `value` as a stream event id (`lastEventId`, `Last-Event-ID`): a decimal integer
 * 0 … 2^63-1, given once; null when it is one.
 */
export function eventIdProblem(name: string, value: unknown): string | null {
  if (Array.isArray(value)) {
    return `${name} must be given once`;
  }
  if (typeof value !== 'string' || !/^\d{1,19}$/.test(value) || BigInt(value) > MAX_EVENT_ID) {
    return `${name} must be an event id of this stream (a decimal integer up to ${MAX_EVENT_ID})`;
  }
  return null;
}
