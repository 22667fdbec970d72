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

/** An attempt recorded before it was checked (reserve); release() or fail() settles it once it is checked. */
export interface ThrottleReservation {
  readonly ids: readonly string[];
}

/**
 * How long a reserved attempt may stay unchecked. Checking takes well under a second: a reservation older than this
 * was left by a request that died (a crash, a lost connection) and counts as a failure.
 */
const PENDING_SECONDS = 30;
/** How long an attempt waits, at most, for attempts in flight to settle before it is refused as over the limit. */
const BUSY_WAIT_MS = 5_000;

interface KeyCount {
  /** Settled failures (and reservations left unchecked for longer than PENDING_SECONDS). */
  failures: number;
  /** Attempts reserved and still being checked. */
  pending: number;
  retry_after: number | null;
  /** Seconds until the oldest row of either kind leaves the window. */
  retry_after_all: number | null;
}

/** What one try of record() found: the attempt recorded, or a key whose attempts in flight could reach its limit. */
type Recorded = { ids: string[] } | { busy: string; retryAfter: number | null };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function limitOf(key: string): number {
  return key.startsWith('ip:') ? ADDRESS_FAILURE_LIMIT : ACCOUNT_FAILURE_LIMIT;
}

function rateLimited(key: string, retryAfter: number | null): AppException {
  return new AppException(ErrorCode.RATE_LIMIT_EXCEEDED, {
    headers: { 'Retry-After': String(Math.max(1, retryAfter ?? THROTTLE_WINDOW_SECONDS)) },
    details: [
      {
        reason: `too many failed sign-in attempts for this ${key.startsWith('ip:') ? 'address' : 'account'}; try again later`,
      },
    ],
  });
}

/**
 * Slows down password and code guessing. Failures are kept in PostgreSQL (so every instance counts the
 * same) per account and per client address. While either is over its limit, sign-in answers 429
 * RATE_LIMIT_EXCEEDED with Retry-After, before any password is checked, so the right password does not get
 * through either. A success clears the account's count. An attempt is recorded before it is checked (reserve), as
 * pending, and settled after: taken back when it succeeds (release), counted as a failure when it fails (fail).
 * Writes happen outside request transactions so a failure is counted even though the request then fails.
 */
@Injectable()
export class LoginThrottleService {
  constructor(private readonly tx: TransactionHost) {}

  /** Refuses (429) while a key is at its limit of settled failures; attempts in flight are not failures. */
  async assertAllowed(keys: ThrottleKeys): Promise<void> {
    const checks = [...accountKeys(keys), ...(keys.ip ? [`ip:${keys.ip}`] : [])];
    for (const key of checks) {
      const count = await this.countKey(key);
      if (count.failures >= limitOf(key)) {
        throw rateLimited(key, count.retry_after);
      }
    }
  }

  /**
   * Records an attempt of `keys` as pending before it is checked, so attempts sent at once cannot pass the limit
   * together, without counting attempts in flight as failures (right passwords sent at once refused one another).
   * Under a transaction-scoped advisory lock per counted key (taken in key order, so attempts never deadlock):
   * refuses with 429 while any key of `keys` or of `checked` is at its limit of settled failures; when the settled
   * failures and the attempts in flight of a key of `keys` together reach it, waits (holding no connection) for
   * some to settle — one more could be the failure over the limit — and is refused only if none does within
   * BUSY_WAIT_MS; else records one pending row for each key of `keys`. Settle it with release() or fail().
   * `checked` keys are only checked (an account's second-step count, which a password attempt must not add to).
   */
  async reserve(keys: ThrottleKeys, checked: ThrottleKeys = {}): Promise<ThrottleReservation> {
    return this.record(keys, checked, true);
  }

  /** Like reserve(), for an attempt that always counts (an SMS sent): recorded settled, nothing to release. */
  async count(keys: ThrottleKeys, checked: ThrottleKeys = {}): Promise<void> {
    await this.record(keys, checked, false);
  }

  /** The reserved attempt succeeded: it is no failure of any of its keys. */
  async release(reservation: ThrottleReservation): Promise<void> {
    if (reservation.ids.length > 0) {
      await this.tx.manager.query(`DELETE FROM login_failures WHERE id = ANY($1::bigint[])`, [reservation.ids]);
    }
  }

  /** The reserved attempt failed: it counts as a failure of each of its keys. */
  async fail(reservation: ThrottleReservation): Promise<void> {
    if (reservation.ids.length > 0) {
      await this.tx.manager.query(`UPDATE login_failures SET pending = false WHERE id = ANY($1::bigint[])`, [
        reservation.ids,
      ]);
    }
  }

  /** Clears the account's failures; attempts still in flight are left to settle themselves. */
  async clearAccount(account: string): Promise<void> {
    await this.tx.manager.query(
      `DELETE FROM login_failures
        WHERE throttle_key = $1 AND NOT (pending AND failed_at > now() - make_interval(secs => $2))`,
      [account, PENDING_SECONDS],
    );
  }

  private async record(keys: ThrottleKeys, checked: ThrottleKeys, pending: boolean): Promise<ThrottleReservation> {
    const counted = [...accountKeys(keys), ...(keys.ip ? [`ip:${keys.ip}`] : [])];
    const onlyChecked = [...accountKeys(checked), ...(!keys.ip && checked.ip ? [`ip:${checked.ip}`] : [])];
    const deadline = Date.now() + BUSY_WAIT_MS;
    for (;;) {
      const outcome = await this.tx.run(async (): Promise<Recorded> => {
        for (const key of [...counted].sort()) {
          await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
            `login-throttle:${key}`,
          ]);
        }
        // Counted after the locks, so the attempts of requests that held them before are seen.
        const counts = new Map<string, KeyCount>();
        for (const key of [...counted, ...onlyChecked]) {
          const count = await this.countKey(key);
          if (count.failures >= limitOf(key)) {
            throw rateLimited(key, count.retry_after);
          }
          counts.set(key, count);
        }
        for (const key of counted) {
          const count = counts.get(key);
          if (count && count.failures + count.pending >= limitOf(key)) {
            return { busy: key, retryAfter: count.retry_after_all };
          }
        }
        const rows = await this.tx.manager.query<Array<{ id: string }>>(
          `WITH counted AS (
             INSERT INTO login_failures (throttle_key, pending) SELECT unnest($1::text[]), $2 RETURNING id
           ) SELECT id::text FROM counted`,
          [counted, pending],
        );
        // Keep the table small now and then: failures older than a day never count again.
        if (Math.random() < 0.05) {
          await this.tx.manager.query(`DELETE FROM login_failures WHERE failed_at < now() - interval '1 day'`);
        }
        return { ids: rows.map((row) => row.id) };
      });
      if ('ids' in outcome) {
        return { ids: outcome.ids };
      }
      // Inside a caller's transaction the lock stays held, so nothing in flight could settle while this waits.
      if (this.tx.inTransaction || Date.now() >= deadline) {
        throw rateLimited(outcome.busy, outcome.retryAfter);
      }
      await sleep(20 + Math.random() * 30);
    }
  }

  private async countKey(key: string): Promise<KeyCount> {
    const [row] = await this.tx.manager.query<KeyCount[]>(
      `SELECT count(*) FILTER (WHERE NOT stale_free)::int AS failures,
              count(*) FILTER (WHERE stale_free)::int AS pending,
              ceil(extract(epoch FROM min(failed_at) FILTER (WHERE NOT stale_free)
                + make_interval(secs => $2) - now()))::int AS retry_after,
              ceil(extract(epoch FROM min(failed_at) + make_interval(secs => $2) - now()))::int AS retry_after_all
         FROM (SELECT failed_at, pending AND failed_at > now() - make_interval(secs => $3) AS stale_free
                 FROM login_failures
                WHERE throttle_key = $1 AND failed_at > now() - make_interval(secs => $2)) AS attempts`,
      [key, THROTTLE_WINDOW_SECONDS, PENDING_SECONDS],
    );
    return row;
  }
}
