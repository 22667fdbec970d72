import { Injectable } from '@nestjs/common';
import { SCOPES } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import type { RefreshDto, TokenPairDto } from '../dtos/auth.dto.js';
import type { SecondStepInput } from '../dtos/two-factor.dto.js';
import { UserResponseDto } from '../dtos/user.dto.js';
import type { UserEntity } from '../entities/user.entity.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { type ClientMeta, SessionService } from './session.service.js';
import { FIRST_PARTY_CLIENT_ID, TokenService } from './token.service.js';
import { LoginChallengeService } from './two-factor/login-challenge.service.js';
import { TwoFactorService } from './two-factor/two-factor.service.js';
import { UsersService } from './users.service.js';

/** A session row written, its tokens not yet signed (SignInService.openSession). */
export interface OpenedSession {
  user: UserEntity;
  sessionId: string;
  refreshToken: string;
}

/**
 * Turns a proven first factor into a signed-in session: directly, or — with two-step verification on — via
 * a challenge (401 TWO_FACTOR_REQUIRED whose payload carries the challenge token). Also refreshes
 * first-party sessions.
 */
@Injectable()
export class SignInService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersService,
    private readonly sessions: SessionService,
    private readonly tokens: TokenService,
    private readonly twoFactor: TwoFactorService,
    private readonly challenges: LoginChallengeService,
  ) {}

  async finish(user: UserEntity, meta: ClientMeta, authMethod: string): Promise<TokenPairDto> {
    const method = await this.twoFactor.methodOf(user.id);
    if (method) {
      const challenge = await this.challenges.open(user, method, authMethod);
      throw new AppException(ErrorCode.TWO_FACTOR_REQUIRED, { payload: challenge });
    }
    return this.startSession(user, meta, authMethod);
  }

  async completeTwoFactor(dto: SecondStepInput, meta: ClientMeta): Promise<TokenPairDto> {
    const { user, authMethod } = await this.challenges.verify(dto, meta);
    return this.startSession(user, meta, authMethod);
  }

  async startSession(user: UserEntity, meta: ClientMeta, authMethod: string): Promise<TokenPairDto> {
    return this.tokensFor(await this.tx.run(() => this.openSession(user, meta, authMethod)));
  }

  /**
   * The session row of a sign-in, in the caller's transaction (registration and a first third-party sign-in commit
   * it with the account they create); `tokensFor` signs its tokens once that transaction has committed.
   */
  async openSession(user: UserEntity, meta: ClientMeta, authMethod: string): Promise<OpenedSession> {
    const { session, refreshToken } = await this.sessions.create({ userId: user.id, meta, authMethod });
    return { user, sessionId: session.id, refreshToken: refreshToken ?? '' };
  }

  /**
   * The token pair of an opened session. Not inside a transaction: signing may re-read the signing key on a
   * connection of its own, which a pool held by such transactions could not give it.
   */
  tokensFor(opened: OpenedSession): Promise<TokenPairDto> {
    return this.pair(opened.user, opened.sessionId, opened.refreshToken);
  }

  /** Rotates a first-party refresh token (client `quire`). */
  async refresh(dto: RefreshDto): Promise<TokenPairDto> {
    const { session, refreshToken } = await this.sessions.rotateOrThrow(
      dto.refreshToken,
      FIRST_PARTY_CLIENT_ID,
      {
        field: 'refreshToken',
      },
    );
    return this.pair(await this.users.getById(session.userId), session.id, refreshToken);
  }

  private async pair(user: UserEntity, sessionId: string, refreshToken: string): Promise<TokenPairDto> {
    const access = await this.tokens.issueAccessToken({
      userId: user.id,
      clientId: FIRST_PARTY_CLIENT_ID,
      scopes: [...SCOPES],
      sessionId,
    });
    return {
      accessToken: access.accessToken,
      refreshToken,
      tokenType: 'Bearer',
      expiresIn: access.expiresIn,
      sessionId,
      user: UserResponseDto.from(user),
    };
  }
}
