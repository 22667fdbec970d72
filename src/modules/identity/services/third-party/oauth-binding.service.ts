import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../../common/auth/principal.js';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import { offsetOf, type Page, pageOf, type PageQueryDto } from '../../../../common/http/pagination.js';
import { TransactionHost } from '../../../../database/transaction-host.js';
import type { BindOAuthDto, OAuthBindingDto } from '../../dtos/oidc-provider.dto.js';
import { OAuthConnectionEntity } from '../../entities/oauth-connection.entity.js';
import type { OAuthProvider } from '../../entities/oidc-provider.entity.js';
import { UsersService } from '../users.service.js';
import { LoginStateService } from './login-state.service.js';
import { OidcProviderAdminService } from './oidc-provider-admin.service.js';
import { RelyingPartyService } from './relying-party.service.js';
import { assertPlainRedirectUri } from './third-party-login.service.js';

function toDto(connection: OAuthConnectionEntity): OAuthBindingDto {
  return {
    provider: connection.provider,
    subject: connection.subject,
    email: connection.email,
    displayName: connection.displayName,
    createdAt: new Date(connection.createdAt).toISOString(),
    lastLoginAt: connection.lastLoginAt ? new Date(connection.lastLoginAt).toISOString() : null,
  };
}

/** The current user's bound third-party identities (spec 4.1 /users/me/oauth). */
@Injectable()
export class OAuthBindingService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly providers: OidcProviderAdminService,
    private readonly relyingParty: RelyingPartyService,
    private readonly states: LoginStateService,
    private readonly users: UsersService,
  ) {}

  /** A list operation answers the paged structure (spec 1), like every other list. */
  async list(principal: Principal, query: PageQueryDto): Promise<Page<OAuthBindingDto>> {
    const [rows, total] = await this.tx.manager.findAndCount(OAuthConnectionEntity, {
      where: { userId: principal.userId },
      // One binding per provider and user: the provider orders them completely.
      order: { provider: 'ASC' },
      take: query.pageSize,
      skip: offsetOf(query),
    });
    return pageOf(rows.map(toDto), total, query);
  }

  /**
   * Exchanges the code at the provider and binds the identity. The code must come from an authorize step
   * the user started with their bearer token (found by `state`, or the newest one); without such a step
   * `redirectUri` is required and the exchange runs without PKCE.
   */
  async bind(principal: Principal, provider: OAuthProvider, dto: BindOAuthDto): Promise<OAuthBindingDto> {
    const config = await this.providers.enabled(provider);
    if (dto.redirectUri !== undefined) {
      // Refused before the state is looked at, so a bad request does not use it up.
      assertPlainRedirectUri(dto.redirectUri, 'redirectUri');
    }
    const state = dto.state
      ? await this.states.consumeForUser(provider, dto.state, principal.userId)
      : await this.states.consumeLatestForUser(provider, principal.userId);
    if (dto.state && !state) {
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ field: 'state', reason: 'unknown, expired or used state, or not yours' }],
      });
    }
    const redirectUri = dto.redirectUri ?? state?.redirectUri;
    if (!redirectUri) {
      throw AppException.validation([
        { field: 'redirectUri', reason: 'required when no authorize step was started' },
      ]);
    }
    assertPlainRedirectUri(redirectUri, 'redirectUri');
    const checks = state && state.redirectUri === redirectUri ? state : { redirectUri };
    const identity = await this.relyingParty.exchange(config, dto.authorizationCode, checks);
    return this.tx.run(async () => {
      const taken = await this.tx.manager.findOne(OAuthConnectionEntity, {
        where: { provider, subject: identity.subject },
      });
      if (taken) {
        const reason =
          taken.userId === principal.userId ? 'already bound to your account' : 'bound to another account';
        throw new AppException(ErrorCode.ALREADY_EXISTS, {
          details: [{ field: 'provider', reason: `this ${provider} identity is ${reason}` }],
        });
      }
      if (
        await this.tx.manager.findOne(OAuthConnectionEntity, {
          where: { provider, userId: principal.userId },
        })
      ) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, {
          details: [{ field: 'provider', reason: `another ${provider} identity is bound; unbind it first` }],
        });
      }
      const connection = this.tx.manager.create(OAuthConnectionEntity, {
        userId: principal.userId,
        provider,
        subject: identity.subject,
        email: identity.email,
        displayName: identity.name,
        lastLoginAt: null,
      });
      await this.tx.manager.save(connection);
      return toDto(connection);
    });
  }

  /** Unbinds; refused (INVALID_STATE) when it is the only way left to sign in. */
  async unbind(principal: Principal, provider: OAuthProvider): Promise<void> {
    await this.tx.run(async () => {
      // Locked first: two unbinds racing would each count the other's binding and leave the account no way in.
      const user = await this.users.getByIdForUpdate(principal.userId);
      const connection = await this.tx.manager.findOne(OAuthConnectionEntity, {
        where: { provider, userId: principal.userId },
      });
      if (!connection) {
        throw AppException.notFound(`${provider} binding`);
      }
      const others = await this.tx.manager.count(OAuthConnectionEntity, {
        where: { userId: principal.userId },
      });
      if (!user.passwordHash && !user.phone && others <= 1) {
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [
            {
              field: 'provider',
              reason: 'this is your only way to sign in; bind another provider first',
            },
          ],
        });
      }
      await this.tx.manager.delete(OAuthConnectionEntity, { id: connection.id });
    });
  }
}
