import { Injectable } from '@nestjs/common';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import { TransactionHost } from '../../../../database/transaction-host.js';
import type { TwoFactorChallengeDto } from '../../dtos/auth.dto.js';
import type { SecondStepInput, TwoFactorMethod } from '../../dtos/two-factor.dto.js';
import type { UserEntity } from '../../entities/user.entity.js';
import { LoginThrottleService, userThrottleKey } from '../login-throttle.service.js';
import { hashToken, maskDestination, newOpaqueToken } from '../secret-tokens.js';
import type { ClientMeta } from '../session.service.js';
import { returnedRows } from '../../../../database/sql-result.js';
import { UsersService } from '../users.service.js';
import { TwoFactorService } from './two-factor.service.js';

export const CHALLENGE_TTL_SECONDS = 5 * 60;
export const CHALLENGE_MAX_ATTEMPTS = 5;

interface ChallengeRow {
  id: string;
  user_id: string;
  auth_method: string;
  attempts: number;
}

/**
 * The second sign-in step. A first step that proves the password (or phone code, or third-party login) of
 * an account with two-step verification opens a challenge: a random token, valid 5 minutes, for at most 5
 * wrong codes, usable once. SMS and e-mail codes are sent when the challenge opens.
 */
@Injectable()
export class LoginChallengeService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersService,
    private readonly twoFactor: TwoFactorService,
    private readonly throttle: LoginThrottleService,
  ) {}

  async open(user: UserEntity, method: TwoFactorMethod, authMethod: string): Promise<TwoFactorChallengeDto> {
    // An account over its limit of wrong second factors gets no new challenge, whatever proved the first
    // step (third-party sign-ins are not throttled themselves).
    await this.throttle.assertAllowed({ account: userThrottleKey(user.id) });
    const challengeToken = newOpaqueToken('qch_');
    const destination = await this.tx.run(async () => {
      await this.tx.manager.query(
        `INSERT INTO login_challenges (user_id, token_hash, method, auth_method, expires_at)
         VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
        [user.id, hashToken(challengeToken), method, authMethod, CHALLENGE_TTL_SECONDS],
      );
      return this.twoFactor.sendLoginCode(user, method);
    });
    return {
      challengeToken,
      methods: [method, 'backup_code'],
      expiresIn: CHALLENGE_TTL_SECONDS,
      ...(destination ? { destination } : {}),
    };
  }

  /**
   * How an open challenge is answered — its method (or a backup code) and, for sms and e-mail, the masked address
   * its code went to — so a page can ask again after a wrong code. Null when the challenge is not open.
   */
  async describe(
    challengeToken: string,
  ): Promise<Pick<TwoFactorChallengeDto, 'methods' | 'destination'> | null> {
    const [challenge] = await this.tx.manager.query<{ user_id: string; method: TwoFactorMethod }[]>(
      `SELECT user_id, method FROM login_challenges
        WHERE token_hash = $1 AND consumed_at IS NULL AND expires_at > now()`,
      [hashToken(challengeToken)],
    );
    if (!challenge) {
      return null;
    }
    const user = await this.users.getById(challenge.user_id);
    const address =
      challenge.method === 'sms' ? user.phone : challenge.method === 'email' ? user.email : null;
    return {
      methods: [challenge.method, 'backup_code'],
      ...(address ? { destination: maskDestination(address) } : {}),
    };
  }

  /** Checks the code of a challenge; returns the account and how its first step was proven. */
  async verify(dto: SecondStepInput, meta: ClientMeta): Promise<{ user: UserEntity; authMethod: string }> {
    await this.throttle.assertAllowed({ ip: meta.ip });
    // One transaction holding the challenge row: second steps sent at once with one challenge (a double-clicked
    // button) run one after the other, and the later ones find it used (INVALID_TOKEN) instead of having their code
    // checked again — a TOTP step or backup code the first one just spent read as a wrong code, answered
    // INVALID_CREDENTIALS and counted as a failed sign-in.
    const unknown = (): AppException =>
      new AppException(ErrorCode.INVALID_TOKEN, {
        details: [
          {
            field: 'challengeToken',
            reason: 'the challenge is unknown, expired, used or out of attempts; sign in again',
          },
        ],
      });
    const tokenHash = hashToken(dto.challengeToken);
    const [known] = await this.tx.manager.query<Array<{ user_id: string }>>(
      `SELECT user_id FROM login_challenges
        WHERE token_hash = $1 AND consumed_at IS NULL AND expires_at > now() AND attempts < $2`,
      [tokenHash, CHALLENGE_MAX_ATTEMPTS],
    );
    if (!known) {
      throw unknown();
    }
    // Wrong codes count per account as well as per address (docs/auth.md, Throttling): the challenge's own
    // five attempts alone would let every new password sign-in buy five more guesses. Recorded as pending before
    // the code is checked, outside the transaction below (LoginThrottleService.reserve may wait for attempts in
    // flight, which must not hold a connection): codes sent at once through several challenges cannot all pass the
    // limit, and right ones never refuse one another. Settled after the transaction: a wrong code counted, a right
    // one (or a challenge found used meanwhile) taken back.
    const account = userThrottleKey(known.user_id);
    const attempt = await this.throttle.reserve({ account, ip: meta.ip });
    let outcome: { ok: false } | { ok: true; user: UserEntity; authMethod: string };
    try {
      outcome = await this.tx.run(async () => {
        const [challenge] = await this.tx.manager.query<ChallengeRow[]>(
          `SELECT id, user_id, auth_method, attempts FROM login_challenges
            WHERE token_hash = $1 AND consumed_at IS NULL AND expires_at > now()
            FOR UPDATE`,
          [tokenHash],
        );
        if (!challenge || challenge.attempts >= CHALLENGE_MAX_ATTEMPTS || challenge.user_id !== known.user_id) {
          throw unknown();
        }
        const user = await this.users.getById(challenge.user_id);
        const ok = await this.twoFactor.checkSecondFactor(user, dto.method, dto.code);
        if (!ok) {
          await this.tx.manager.query(`UPDATE login_challenges SET attempts = attempts + 1 WHERE id = $1`, [
            challenge.id,
          ]);
          return { ok: false as const };
        }
        const consumed = returnedRows<{ id: string }>(
          await this.tx.manager.query(
            `UPDATE login_challenges SET consumed_at = now() WHERE id = $1 AND consumed_at IS NULL RETURNING id`,
            [challenge.id],
          ),
        );
        if (consumed.length === 0) {
          throw new AppException(ErrorCode.INVALID_TOKEN, {
            details: [{ field: 'challengeToken', reason: 'the challenge was already used' }],
          });
        }
        return { ok: true as const, user, authMethod: challenge.auth_method };
      });
    } catch (error) {
      // No code was found wrong (a used challenge, a failure of the database): nothing to count.
      await this.throttle.release(attempt);
      throw error;
    }
    if (outcome.ok) {
      await this.throttle.release(attempt);
      await this.throttle.clearAccount(account);
    } else {
      await this.throttle.fail(attempt);
    }
    if (!outcome.ok) {
      throw new AppException(ErrorCode.INVALID_CREDENTIALS, {
        details: [{ field: 'code', reason: 'the code is wrong or expired' }],
      });
    }
    return { user: outcome.user, authMethod: outcome.authMethod };
  }
}
