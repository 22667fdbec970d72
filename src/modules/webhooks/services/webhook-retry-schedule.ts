/**
 * Where the doubling stops: later retries wait this long, or retryInterval when that is longer (the spec spaces
 * retries by at least retryInterval, which may be up to a day).
 */
export const MAX_RETRY_DELAY_SECONDS = 6 * 3600;
/** Jitter adds up to this fraction on top of the nominal delay (never less, so spacing >= retryInterval). */
export const RETRY_JITTER = 0.25;

/**
 * Seconds to wait before retry number `retry` (1 for the first retry) of a delivery:
 * `retryInterval × 2^(retry−1)`, capped at six hours but never below `retryInterval`, times a random factor in
 * [1, 1.25). With the defaults (60 s, 3 retries) the retries come about 1, 2 and 4 minutes after the attempt before
 * them. `random` is injectable for tests.
 */
export function retryDelaySeconds(
  retryIntervalSeconds: number,
  retry: number,
  random: () => number = Math.random,
): number {
  const doubled = Math.min(MAX_RETRY_DELAY_SECONDS, retryIntervalSeconds * 2 ** Math.max(0, retry - 1));
  const nominal = Math.max(retryIntervalSeconds, doubled);
  return nominal * (1 + RETRY_JITTER * random());
}
