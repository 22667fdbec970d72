import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';
import { SCOPES } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { LoginDto, RegisterDto, TokenPairDto } from '../dtos/auth.dto.js';
import { UserResponseDto } from '../dtos/user.dto.js';
import { UserEntity } from '../entities/user.entity.js';
import { SessionService } from './session.service.js';
import { FIRST_PARTY_CLIENT_ID, TokenService } from './token.service.js';
import { UserLifecycleService } from './user-lifecycle.service.js';
import { UsersService } from './users.service.js';

export interface ClientMeta {
  userAgent?: string;
  ip?: string;
}

// Verifying against this hash when the account does not exist keeps the answer time the same either way.
const DUMMY_HASH = argon2.hash('quire-dummy-password', { type: argon2.argon2id });

/** Registration and password sign-in. */
@Injectable()
export class AccountService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersService,
    private readonly sessions: SessionService,
    private readonly tokens: TokenService,
    private readonly lifecycle: UserLifecycleService,
  ) {}

  async register(dto: RegisterDto, meta: ClientMeta): Promise<TokenPairDto> {
    const passwordHash = await argon2.hash(dto.password, { type: argon2.argon2id });
    const user = await this.tx.run(async () => {
      if (await this.users.findByEmail(dto.email)) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, { details: [{ field: 'email', reason: 'already registered' }] });
      }
      const created = this.tx.manager.create(UserEntity, {
        email: dto.email.trim(),
        passwordHash,
        displayName: dto.displayName.trim(),
      });
      await this.tx.manager.save(created);
      await this.lifecycle.userRegistered(created);
      return this.users.getById(created.id);
    });
    return this.startSession(user, meta);
  }

  async login(dto: LoginDto, meta: ClientMeta): Promise<TokenPairDto> {
    if (!dto.email || !dto.password) {
      throw AppException.validation([{ field: 'email', reason: 'email and password are required' }]);
    }
    const user = await this.users.findByEmail(dto.email);
    const ok = await argon2.verify(user?.passwordHash ?? (await DUMMY_HASH), dto.password);
    if (!user || !user.passwordHash || !ok) {
      throw new AppException(ErrorCode.INVALID_CREDENTIALS);
    }
    return this.startSession(user, meta);
  }

  async startSession(user: UserEntity, meta: ClientMeta): Promise<TokenPairDto> {
    const { session, refreshToken } = await this.tx.run(() => this.sessions.create(user.id, meta));
    const access = await this.tokens.issueAccessToken({
      userId: user.id,
      clientId: FIRST_PARTY_CLIENT_ID,
      scopes: [...SCOPES],
      sessionId: session.id,
    });
    return {
      accessToken: access.accessToken,
      refreshToken,
      tokenType: 'Bearer',
      expiresIn: access.expiresIn,
      sessionId: session.id,
      user: UserResponseDto.from(user),
    };
  }
}
