import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { TransactionHost } from '../../../database/transaction-host.js';

/** Failures counted over this window. */
export const THROTTLE_WINDOW_SECONDS = 15 * 60;
/** Failed sign-ins allowed for one account (e-mail, phone or second step) per window. */
export const ACCOUNT_FAILURE_LIMIT = 5;
/** Failed sign-ins allowed from one address per window, whatever the account. */
export const ADDRESS_FAILURE_LIMIT = 20;

export interface ThrottleKeys {
  /**
   * `email:<lower-case address>`, `phone:<E.164>` or `user:<id>`; several when one account is known under more
   * than one (checking all of them, so failures of one kind also stop the others).
   */
  account?: string | readonly string[];
  ip?: string;
}

/**
 * The key that counts an account's wrong second factors (2FA codes at sign-in or when disabling). It is not
 * the first step's key on purpose: a right password clears `email:`, and must not reset the count of
 * second-factor guesses too, or each fresh password sign-in would buy five more.
 */
export function userThrottleKey(userId: string): string {
  return `user:${userId}`;
}

function accountKeys(keys: ThrottleKeys): readonly string[] {
  if (keys.account === undefined) {
    return [];
  }
  return typeof keys.account === 'string' ? [keys.account] : keys.account;
}

/** An attempt counted as a failure before it was checked (reserve); release() takes it back when it succeeds. */
export interface ThrottleReservation {
  readonly ids: readonly string[];
}

/**
 * Slows down password and code guessing. Failures are kept in PostgreSQL (so every instance counts the
 * same) per account and per client address. While either is over its limit, sign-in answers 429
 * RATE_LIMIT_EXCEEDED with Retry-After, before any password is checked, so the right password does not get
 * through either. A success clears the account's count. An attempt is counted as failed before it is checked
 * (reserve) and taken back when it succeeds (release). Writes happen outside request transactions so a
 * failure is counted even though the request then fails.
 */
@Injectable()
export class LoginThrottleService {
  constructor(private readonly tx: TransactionHost) {}

  async assertAllowed(keys: ThrottleKeys): Promise<void> {
    const checks: Array<[string, number]> = accountKeys(keys).map((key) => [key, ACCOUNT_FAILURE_LIMIT]);
    if (keys.ip) {
      checks.push([`ip:${keys.ip}`, ADDRESS_FAILURE_LIMIT]);
    }
    for (const [key, limit] of checks) {
      const [row] = await this.tx.manager.query<Array<{ failures: number; retry_after: number | null }>>(
        `SELECT count(*)::int AS failures,
                ceil(extract(epoch FROM min(failed_at) + make_interval(secs => $2) - now()))::int AS retry_after
           FROM login_failures
          WHERE throttle_key = $1 AND failed_at > now() - make_interval(secs => $2)`,
        [key, THROTTLE_WINDOW_SECONDS],
      );
      if (row.failures >= limit) {
        const retryAfter = String(Math.max(1, row.retry_after ?? THROTTLE_WINDOW_SECONDS));
        throw new AppException(ErrorCode.RATE_LIMIT_EXCEEDED, {
          headers: { 'Retry-After': retryAfter },
          details: [
            {
              reason: `too many failed sign-in attempts for this ${key.startsWith('ip:') ? 'address' : 'account'}; try again later`,
            },
          ],
        });
      }
    }
  }

  /**
   * assertAllowed and recordFailure of an attempt made one step, before the attempt is checked: under a
   * transaction-scoped advisory lock per counted key (taken in key order, so attempts never deadlock), refuses with
   * 429 while any key of `keys` or of `checked` is at its limit, else records one failure for each key of `keys`
   * at once. The failure stays when the attempt fails; release() takes it back when it succeeds. Checked first and
   * counted after the password, attempts sent together all passed the check before any was counted: twelve wrong
   * passwords sent at once were all tried where the limit allows five. `checked` keys are only checked (an
   * account's second-step count, which a password attempt must not add to).
   */
  async reserve(keys: ThrottleKeys, checked: ThrottleKeys = {}): Promise<ThrottleReservation> {
    const counted = [...accountKeys(keys), ...(keys.ip ? [`ip:${keys.ip}`] : [])];
    return this.tx.run(async () => {
      for (const key of [...counted].sort()) {
        await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`login-throttle:${key}`]);
      }
      // Counted after the locks, so the failures of attempts that held them before are seen.
      await this.assertAllowed({ account: [...accountKeys(keys), ...accountKeys(checked)], ip: keys.ip ?? checked.ip });
      const rows = await this.tx.manager.query<Array<{ id: string }>>(
        `WITH counted AS (INSERT INTO login_failures (throttle_key) SELECT unnest($1::text[]) RETURNING id) SELECT id::text FROM counted`,
        [counted],
      );
      // Keep the table small now and then: failures older than a day never count again.
      if (Math.random() < 0.05) {
        await this.tx.manager.query(`DELETE FROM login_failures WHERE failed_at < now() - interval '1 day'`);
      }
      return { ids: rows.map((row) => row.id) };
    });
  }

  /** The reserved attempt succeeded: it is no failure of any of its keys. */
  async release(reservation: ThrottleReservation): Promise<void> {
    if (reservation.ids.length > 0) {
      await this.tx.manager.query(`DELETE FROM login_failures WHERE id = ANY($1::bigint[])`, [reservation.ids]);
    }
  }

  async clearAccount(account: string): Promise<void> {
    await this.tx.manager.query(`DELETE FROM login_failures WHERE throttle_key = $1`, [account]);
  }
}
