import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { LoginCodeSentDto, LoginDto, RegisterDto, TokenPairDto } from '../dtos/auth.dto.js';
import { UserEntity } from '../entities/user.entity.js';
import { LoginThrottleService, userThrottleKey } from './login-throttle.service.js';
import { hashPassword, verifyPassword } from './password-hashing.js';
import type { ClientMeta } from './session.service.js';
import { SignInService } from './sign-in.service.js';
import { CODE_TTL_SECONDS, OneTimeCodeService } from './two-factor/one-time-code.service.js';
import { UserLifecycleService } from './user-lifecycle.service.js';
import { UsersService } from './users.service.js';

// Verifying against this hash when the account does not exist keeps the answer time the same either way.
const DUMMY_HASH = hashPassword('quire-dummy-password');

/** Registration and first-factor sign-in: e-mail + password, or phone + a code sent by SMS. */
@Injectable()
export class AccountService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersService,
    private readonly lifecycle: UserLifecycleService,
    private readonly throttle: LoginThrottleService,
    private readonly codes: OneTimeCodeService,
    private readonly signIn: SignInService,
  ) {}

  async register(dto: RegisterDto, meta: ClientMeta): Promise<TokenPairDto> {
    const passwordHash = await hashPassword(dto.password);
    // One unit of work: the account, its personal organization and the first session commit together, so a
    // failure anywhere leaves no account behind that the caller was told was not created (a retry would then be
    // refused as already registered). Its tokens are signed after the commit (SignInService.tokensFor).
    const opened = await this.tx.run(async () => {
      if (await this.users.findByEmail(dto.email)) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, {
          details: [{ field: 'email', reason: 'already registered' }],
        });
      }
      const created = this.tx.manager.create(UserEntity, {
        email: dto.email.trim(),
        passwordHash,
        displayName: dto.displayName?.trim() || defaultDisplayName(dto.email),
      });
      await this.tx.manager.save(created);
      await this.lifecycle.userRegistered(created);
      return this.signIn.openSession(await this.users.getById(created.id), meta, 'password');
    });
    return this.signIn.tokensFor(opened);
  }

  /**
   * `email` + `password` → tokens (or TWO_FACTOR_REQUIRED). `phone` alone → a code is sent when an account
   * has that number (the answer is the same either way). `phone` + `code` → tokens (or TWO_FACTOR_REQUIRED).
   */
  async login(dto: LoginDto, meta: ClientMeta): Promise<TokenPairDto | LoginCodeSentDto> {
    if (dto.phone !== undefined) {
      if (dto.email !== undefined || dto.password !== undefined) {
        throw AppException.validation([
          { field: 'phone', reason: 'use either email and password, or phone and code' },
        ]);
      }
      return dto.code === undefined
        ? this.sendPhoneCode(dto.phone, meta)
        : this.phoneLogin(dto.phone, dto.code, meta);
    }
    if (!dto.email || !dto.password) {
      throw AppException.validation([
        { field: dto.email ? 'password' : 'email', reason: 'email and password, or phone, are required' },
      ]);
    }
    const user = await this.checkPassword(dto.email, dto.password, meta);
    return this.signIn.finish(user, meta, 'password');
  }

  /** Verifies e-mail + password under the sign-in throttle; INVALID_CREDENTIALS never tells which was wrong. */
  async checkPassword(email: string, password: string, meta: ClientMeta): Promise<UserEntity> {
    const account = `email:${email.trim().toLowerCase()}`;
    const user = await this.users.findByEmail(email.trim());
    // Recorded as pending before the password is checked (taken back on success, counted on failure), so guesses
    // sent at once cannot all pass the limit. Wrong second factors count against the account too, so guessing them
    // cannot go on through fresh password sign-ins; checked before the password, so a 429 never tells that it was
    // right. No transaction or connection is held while the password is hashed.
    const attempt = await this.throttle.reserve({ account, ip: meta.ip }, user ? { account: userThrottleKey(user.id) } : {});
    const ok = await verifyPassword(user?.passwordHash ?? (await DUMMY_HASH), password);
    if (!user || !user.passwordHash || !ok) {
      await this.throttle.fail(attempt);
      throw new AppException(ErrorCode.INVALID_CREDENTIALS);
    }
    await this.throttle.release(attempt);
    await this.throttle.clearAccount(account);
    return user;
  }

  private async sendPhoneCode(phone: string, meta: ClientMeta): Promise<LoginCodeSentDto> {
    // Sending is throttled like failures, so the endpoint cannot be used to flood a number with SMS.
    const account = `sms:${phone}`;
    // Every send counts (never released); checked and recorded in one step so sends at once cannot pass the limit
    // together.
    await this.throttle.count({ account }, { ip: meta.ip });
    const user = await this.tx.manager.findOne(UserEntity, { where: { phone } });
    if (user) {
      await this.codes.issue({ purpose: 'phone_login', channel: 'sms', recipient: phone, userId: user.id });
    }
    return { codeSent: true, expiresIn: CODE_TTL_SECONDS };
  }

  private async phoneLogin(phone: string, code: string, meta: ClientMeta): Promise<TokenPairDto> {
    const account = `phone:${phone}`;
    const owner = await this.tx.manager.findOne(UserEntity, { where: { phone } });
    // As for passwords: recorded as pending before the code is used (taken back on success, counted on failure),
    // and the account's wrong second factors stop this first step too.
    const attempt = await this.throttle.reserve({ account, ip: meta.ip }, owner ? { account: userThrottleKey(owner.id) } : {});
    const userId = await this.codes.consume('phone_login', phone, code);
    const user = userId ? await this.users.findById(userId) : null;
    if (!user || user.phone !== phone) {
      await this.throttle.fail(attempt);
      throw new AppException(ErrorCode.INVALID_CREDENTIALS);
    }
    await this.throttle.release(attempt);
    await this.throttle.clearAccount(account);
    return this.signIn.finish(user, meta, 'phone_code');
  }
}

/** A registering user who gives no name is called by the local part of the address (`ada` for ada@example.com). */
function defaultDisplayName(email: string): string {
  return email.trim().split('@')[0]?.slice(0, 100) || email.trim();
}
