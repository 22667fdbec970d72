import { MAIL_RETRY_MAX_DELAY_MS, mailRetryDelayMs } from './mail-retry-schedule.js';

describe('mailRetryDelayMs', () => {
  it('starts at the base and doubles after each failed attempt', () => {
    expect([1, 2, 3, 4, 5].map((attempts) => mailRetryDelayMs(attempts, 2000))).toEqual([
      2000, 4000, 8000, 16_000, 32_000,
    ]);
  });

  it('never waits longer than an hour, however many attempts failed', () => {
    expect(mailRetryDelayMs(12, 2000)).toBe(MAIL_RETRY_MAX_DELAY_MS);
    expect(mailRetryDelayMs(1000, 2000)).toBe(MAIL_RETRY_MAX_DELAY_MS);
  });

  it('treats a first attempt that has not failed yet like the first failure', () => {
    expect(mailRetryDelayMs(0, 500)).toBe(500);
  });
});
