/** Longest wait between two attempts, so a long SMTP outage is still retried every hour. */
export const MAIL_RETRY_MAX_DELAY_MS = 3_600_000;

/**
 * How long to wait after the `attempts`-th failed attempt: `baseMs`, then doubling (2 s, 4 s, 8 s … with
 * the default MAIL_RETRY_BASE_MS), at most one hour.
 */
export function mailRetryDelayMs(attempts: number, baseMs: number): number {
  const exponent = Math.max(0, attempts - 1);
  // 2^exponent overflows to Infinity long after the cap, so Math.min still returns the cap.
  return Math.min(MAIL_RETRY_MAX_DELAY_MS, baseMs * 2 ** exponent);
}
