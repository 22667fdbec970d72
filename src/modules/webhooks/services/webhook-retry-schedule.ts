/** The longest wait between two attempts, whatever retryInterval and the attempt number. */
export const MAX_RETRY_DELAY_SECONDS = 6 * 3600;
/** Jitter adds up to this fraction on top of the nominal delay (never less, so spacing >= retryInterval). */
export const RETRY_JITTER = 0.25;

/**
 * Seconds to wait before retry number `retry` (1 for the first retry) of a delivery:
 * `retryInterval × 2^(retry−1)`, capped at six hours, times a random factor in [1, 1.25). With the defaults
 * (60 s, 3 retries) the retries come about 1, 2 and 4 minutes after the attempt before them.
 * `random` is injectable for tests.
 */
export function retryDelaySeconds(
  retryIntervalSeconds: number,
  retry: number,
  random: () => number = Math.random,
): number {
  const nominal = Math.min(MAX_RETRY_DELAY_SECONDS, retryIntervalSeconds * 2 ** Math.max(0, retry - 1));
  return nominal * (1 + RETRY_JITTER * random());
}
