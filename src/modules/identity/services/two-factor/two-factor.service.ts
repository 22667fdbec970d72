import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { credentialOf } from '../../../../common/auth/auth.guard.js';
import { CredentialVerifier } from '../../../../common/auth/credential-verifier.js';
import { assertFirstPartySession } from '../../../../common/auth/first-party-session.guard.js';
import type { Principal } from '../../../../common/auth/principal.js';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import { TransactionHost } from '../../../../database/transaction-host.js';
import { isPlaceholderEmail } from '../../dtos/auth.dto.js';
import {
  type DisableTwoFactorDto,
  type EnableTwoFactorDto,
  type SecondFactorMethod,
  type TwoFactorEnrollmentDto,
  type TwoFactorMethod,
  type TwoFactorStatusDto,
} from '../../dtos/two-factor.dto.js';
import { UserEntity } from '../../entities/user.entity.js';
import { LoginThrottleService, type ThrottleReservation, userThrottleKey } from '../login-throttle.service.js';
import { verifyPassword } from '../password-hashing.js';
import { maskDestination } from '../secret-tokens.js';
import { SecretBoxService } from '../secret-box.service.js';
import type { ClientMeta } from '../session.service.js';
import { returnedRows } from '../../../../database/sql-result.js';
import { UsersService } from '../users.service.js';
import { BackupCodeService } from './backup-code.service.js';
import { OneTimeCodeService } from './one-time-code.service.js';
import { TotpService } from './totp.service.js';

interface TwoFactorRow {
  method: TwoFactorMethod | null;
  totp_secret: string | null;
  last_totp_step: string | null;
  pending_method: TwoFactorMethod | null;
  pending_secret: string | null;
  pending_phone: string | null;
}

/** Enrollments left unconfirmed longer than this must be started again. */
const PENDING_TTL_SECONDS = 15 * 60;

/**
 * Two-step verification: enrolling (TOTP with an otpauth URI and QR code, or codes by SMS or e-mail),
 * confirming with a first code (which also hands out backup codes), turning it off, and checking a second
 * factor at sign-in.
 */
@Injectable()
export class TwoFactorService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersService,
    private readonly totp: TotpService,
    private readonly backupCodes: BackupCodeService,
    private readonly codes: OneTimeCodeService,
    private readonly box: SecretBoxService,
    private readonly throttle: LoginThrottleService,
    private readonly verifier: CredentialVerifier,
  ) {}

  /** The enabled method, or null when two-step verification is off. */
  async methodOf(userId: string): Promise<TwoFactorMethod | null> {
    const row = await this.row(userId);
    return row?.method ?? null;
  }

  /**
   * `POST /auth/2fa/verify` without `challengeToken`, sent with a first-party bearer token: confirms the caller's
   * pending enrolment as `enable {method, code}` does, so the enable → verify → disable reading of spec 4.7 works too
   * (`method` defaults to the enrolment pending). Without a bearer token the route is the sign-in second step, which
   * needs its challenge token.
   */
  async confirmWithBearer(request: Request, code: string, method: SecondFactorMethod | undefined): Promise<TwoFactorEnrollmentDto> {
    const credential = credentialOf(request);
    if (!credential) {
      throw AppException.validation([
        { field: 'challengeToken', reason: 'challengeToken is required (signed in, a bearer token confirms a pending enrolment instead)' },
      ]);
    }
    const principal = await this.verifier.verify(credential, request);
    assertFirstPartySession(principal);
    const user = await this.users.getById(principal.userId);
    if (await this.methodOf(user.id)) {
      throw new AppException(ErrorCode.INVALID_STATE, {
        details: [{ reason: 'two-step verification is already on; the sign-in second step needs challengeToken' }],
      });
    }
    if (method === 'backup_code') {
      throw AppException.validation([{ field: 'method', reason: 'backup codes are given when an enrolment is confirmed, not used for it' }]);
    }
    return this.confirm(user, method ?? (await this.pendingMethod(user.id)), code);
  }

  /** The method of the caller's pending enrolment, for a confirmation that names none. */
  private async pendingMethod(userId: string): Promise<TwoFactorMethod> {
    const pending = (await this.row(userId))?.pending_method;
    if (!pending) {
      throw new AppException(ErrorCode.INVALID_STATE, {
        details: [{ field: 'method', reason: 'no pending enrollment; start it with POST /auth/2fa/enable {method}' }],
      });
    }
    return pending;
  }

  async enable(principal: Principal, dto: EnableTwoFactorDto): Promise<TwoFactorEnrollmentDto> {
    const user = await this.users.getById(principal.userId);
    if (await this.methodOf(user.id)) {
      throw new AppException(ErrorCode.INVALID_STATE, {
        details: [{ reason: 'two-step verification is already on; disable it first' }],
      });
    }
    if (dto.code) {
      return this.confirm(user, dto.method ?? (await this.pendingMethod(user.id)), dto.code);
    }
    return this.start(user, dto.method ?? 'totp', dto.phone);
  }

  /**
   * Needs the password or a second factor. Both are guessable, so wrong values count like failed sign-ins
   * (a password under the account's `email:` key, a code under its `user:` key, both per address too), and
   * over either limit the answer is 429 before the value is checked: a stolen session token must not buy
   * unlimited password or TOTP guesses.
   */
  async disable(
    principal: Principal,
    dto: DisableTwoFactorDto,
    meta: ClientMeta,
  ): Promise<TwoFactorStatusDto> {
    const user = await this.users.getById(principal.userId);
    const method = await this.methodOf(user.id);
    if (!method) {
      throw new AppException(ErrorCode.INVALID_STATE, {
        details: [{ reason: 'two-step verification is not on' }],
      });
    }
    const passwordKey = `email:${user.email.toLowerCase()}`;
    const codeKey = userThrottleKey(user.id);
    const tried = [...(dto.password !== undefined ? [passwordKey] : []), ...(dto.code !== undefined ? [codeKey] : [])];
    // What is tried is recorded as pending before it is checked (taken back on success, counted on failure):
    // disables sent at once cannot all pass the limit (LoginThrottleService.reserve). Nothing tried counts nothing.
    let attempt: ThrottleReservation | undefined;
    if (tried.length > 0) {
      attempt = await this.throttle.reserve({ account: tried, ip: meta.ip }, { account: [passwordKey, codeKey] });
    } else {
      await this.throttle.assertAllowed({ account: [passwordKey, codeKey], ip: meta.ip });
    }
    const passwordOk =
      dto.password !== undefined &&
      user.passwordHash !== null &&
      (await verifyPassword(user.passwordHash, dto.password));
    const codeOk =
      !passwordOk &&
      dto.code !== undefined &&
      (await this.checkSecondFactor(user, method === 'totp' ? undefined : 'backup_code', dto.code));
    if (!passwordOk && !codeOk) {
      if (attempt) {
        await this.throttle.fail(attempt);
      }
      throw AppException.validation([
        {
          field: dto.code !== undefined ? 'code' : 'password',
          reason: 'a valid password, TOTP code or backup code is required',
        },
      ]);
    }
    if (attempt) {
      await this.throttle.release(attempt);
    }
    await this.throttle.clearAccount(passwordOk ? passwordKey : codeKey);
    await this.tx.run(async () => {
      await this.tx.manager.query(`DELETE FROM user_two_factor WHERE user_id = $1`, [user.id]);
      await this.backupCodes.removeAll(user.id);
      await this.tx.manager.update(UserEntity, { id: user.id }, { twoFactorEnabled: false });
    });
    return { enabled: false, method: null };
  }

  /** Sends the sign-in code for the sms and e-mail methods; returns the masked destination. */
  async sendLoginCode(user: UserEntity, method: TwoFactorMethod): Promise<string | undefined> {
    if (method === 'totp') {
      return undefined;
    }
    const destination = method === 'sms' ? user.phone : user.email;
    if (!destination) {
      return undefined;
    }
    await this.codes.issue({
      purpose: 'two_factor_login',
      channel: method === 'sms' ? 'sms' : 'email',
      recipient: destination,
      userId: user.id,
    });
    return maskDestination(destination);
  }

  /**
   * Checks a second factor. Without `method`: six digits are a code of the account's method, anything else
   * a backup code.
   */
  async checkSecondFactor(
    user: UserEntity,
    method: SecondFactorMethod | undefined,
    code: string,
  ): Promise<boolean> {
    const row = await this.row(user.id);
    if (!row?.method) {
      return false;
    }
    const effective: SecondFactorMethod =
      method ?? (/^\d{6}$/.test(code.trim()) ? row.method : 'backup_code');
    switch (effective) {
      case 'backup_code':
        return this.backupCodes.consume(user.id, code);
      case 'totp': {
        if (row.method !== 'totp' || !row.totp_secret) {
          return false;
        }
        return this.useTotp(user.id, await this.box.open(row.totp_secret), code.trim(), row.last_totp_step);
      }
      case 'sms':
      case 'email': {
        const destination = effective === 'sms' ? user.phone : user.email;
        if (row.method !== effective || !destination) {
          return false;
        }
        return (await this.codes.consume('two_factor_login', destination, code.trim())) === user.id;
      }
    }
  }

  private async start(user: UserEntity, method: TwoFactorMethod, phoneGiven: string | undefined): Promise<TwoFactorEnrollmentDto> {
    switch (method) {
      case 'totp': {
        const secret = this.totp.newSecret();
        await this.savePending(user.id, 'totp', await this.box.seal(secret), null);
        return {
          method: 'totp',
          status: 'pending',
          secret,
          ...(await this.totp.provisioning(secret, user.email)),
        };
      }
      case 'sms': {
        const phone = phoneGiven ?? user.phone;
        if (!phone) {
          throw AppException.validation([
            { field: 'phone', reason: 'a phone number is needed for SMS codes' },
          ]);
        }
        const owner = await this.tx.manager.findOne(UserEntity, { where: { phone } });
        if (owner && owner.id !== user.id) {
          throw new AppException(ErrorCode.ALREADY_EXISTS, {
            details: [{ field: 'phone', reason: 'this number belongs to another account' }],
          });
        }
        await this.tx.run(async () => {
          await this.savePending(user.id, 'sms', null, phone);
          await this.codes.issue({
            purpose: 'two_factor_enroll',
            channel: 'sms',
            recipient: phone,
            userId: user.id,
          });
        });
        return { method: 'sms', status: 'pending', destination: maskDestination(phone) };
      }
      case 'email':
        // An account made by a provider that shared no e-mail has a reserved placeholder address that no one
        // receives: codes sent there could never confirm the enrolment (nor, later, a sign-in).
        if (isPlaceholderEmail(user.email)) {
          throw AppException.validation([
            { field: 'method', reason: 'this account has no e-mail address that can receive codes; use totp or sms' },
          ]);
        }
        await this.tx.run(async () => {
          await this.savePending(user.id, 'email', null, null);
          await this.codes.issue({
            purpose: 'two_factor_enroll',
            channel: 'email',
            recipient: user.email,
            userId: user.id,
          });
        });
        return { method: 'email', status: 'pending', destination: maskDestination(user.email) };
    }
  }

  private async confirm(
    user: UserEntity,
    method: TwoFactorMethod,
    code: string,
  ): Promise<TwoFactorEnrollmentDto> {
    const [pending] = await this.tx.manager.query<TwoFactorRow[]>(
      `SELECT * FROM user_two_factor
        WHERE user_id = $1 AND pending_method = $2 AND pending_created_at > now() - make_interval(secs => $3)`,
      [user.id, method, PENDING_TTL_SECONDS],
    );
    if (!pending) {
      throw new AppException(ErrorCode.INVALID_STATE, {
        details: [
          { field: 'method', reason: `no pending ${method} enrollment; start it without a code first` },
        ],
      });
    }
    let timeStep: number | null = null;
    let ok: boolean;
    if (method === 'totp') {
      timeStep = pending.pending_secret
        ? await this.totp.check(await this.box.open(pending.pending_secret), code, null)
        : null;
      ok = timeStep !== null;
    } else {
      const recipient = method === 'sms' ? pending.pending_phone : user.email;
      ok = recipient !== null && (await this.codes.consume('two_factor_enroll', recipient, code)) === user.id;
    }
    if (!ok) {
      throw AppException.validation([{ field: 'code', reason: 'the code is wrong or expired' }]);
    }
    const backupCodes = await this.tx.run(async () => {
      // Only the enrolment that was checked may be turned on, and only once: requests racing with the same TOTP
      // code all pass the check, and an unconditional update by the later ones copied the already cleared pending
      // columns, leaving the method empty (sign-in one-step) while every answer said "enabled".
      const enabled = returnedRows<{ user_id: string }>(
        await this.tx.manager.query(
          `UPDATE user_two_factor
              SET method = pending_method, totp_secret = pending_secret, last_totp_step = $2, enabled_at = now(),
                  pending_method = NULL, pending_secret = NULL, pending_phone = NULL, pending_created_at = NULL, updated_at = now()
            WHERE user_id = $1 AND method IS NULL AND pending_method = $3
              AND pending_secret IS NOT DISTINCT FROM $4 AND pending_phone IS NOT DISTINCT FROM $5
            RETURNING user_id`,
          [user.id, timeStep, method, pending.pending_secret, pending.pending_phone],
        ),
      );
      if (enabled.length === 0) {
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [{ field: 'method', reason: `the ${method} enrollment was confirmed or replaced meanwhile` }],
        });
      }
      const changes: Partial<UserEntity> = { twoFactorEnabled: true };
      if (method === 'sms' && pending.pending_phone) {
        changes.phone = pending.pending_phone;
      }
      await this.tx.manager.update(UserEntity, { id: user.id }, changes);
      return this.backupCodes.regenerate(user.id);
    });
    return { method, status: 'enabled', backupCodes };
  }

  private async savePending(
    userId: string,
    method: TwoFactorMethod,
    secret: string | null,
    phone: string | null,
  ): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO user_two_factor (user_id, pending_method, pending_secret, pending_phone, pending_created_at)
       VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (user_id) DO UPDATE
         SET pending_method = $2, pending_secret = $3, pending_phone = $4, pending_created_at = now(), updated_at = now()`,
      [userId, method, secret, phone],
    );
  }

  private async useTotp(
    userId: string,
    secret: string,
    code: string,
    lastStep: string | null,
  ): Promise<boolean> {
    const step = await this.totp.check(secret, code, lastStep === null ? null : Number(lastStep));
    if (step === null) {
      return false;
    }
    // Only a newer step may be recorded: two requests racing with the same code cannot both succeed.
    const updated = returnedRows<{ user_id: string }>(
      await this.tx.manager.query(
        `UPDATE user_two_factor SET last_totp_step = $2
          WHERE user_id = $1 AND (last_totp_step IS NULL OR last_totp_step < $2) RETURNING user_id`,
        [userId, step],
      ),
    );
    return updated.length > 0;
  }

  private async row(userId: string): Promise<TwoFactorRow | undefined> {
    const [row] = await this.tx.manager.query<TwoFactorRow[]>(
      `SELECT * FROM user_two_factor WHERE user_id = $1`,
      [userId],
    );
    return row;
  }
}
