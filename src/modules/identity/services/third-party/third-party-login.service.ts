import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { credentialOf } from '../../../../common/auth/auth.guard.js';
import { CredentialVerifier } from '../../../../common/auth/credential-verifier.js';
import { assertFirstPartySession } from '../../../../common/auth/first-party-session.guard.js';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import { TransactionHost } from '../../../../database/transaction-host.js';
import {
  isPlaceholderEmail,
  PLACEHOLDER_EMAIL_DOMAIN,
  type ThirdPartyLoginResultDto,
} from '../../dtos/auth.dto.js';
import type { ThirdPartyAuthorizeDto, ThirdPartyCallbackDto } from '../../dtos/oidc-provider.dto.js';
import { OAuthConnectionEntity } from '../../entities/oauth-connection.entity.js';
import type { OAuthProvider } from '../../entities/oidc-provider.entity.js';
import { UserEntity } from '../../entities/user.entity.js';
import type { ClientMeta } from '../session.service.js';
import { SignInService } from '../sign-in.service.js';
import { UserLifecycleService } from '../user-lifecycle.service.js';
import { UsersService } from '../users.service.js';
import {
  type AuthorizePageLoginState,
  LOGIN_STATE_TTL_SECONDS,
  type LoginState,
  LoginStateService,
} from './login-state.service.js';
import { OidcProviderAdminService } from './oidc-provider-admin.service.js';
import { type ExternalIdentity, RelyingPartyService } from './relying-party.service.js';

/** Redirect URIs must not carry a query: openid-client sends the callback URL without it. */
export function assertPlainRedirectUri(redirectUri: string, field: string): void {
  const url = new URL(redirectUri);
  if (url.search || url.hash) {
    throw AppException.validation([{ field, reason: 'must not contain a query or fragment' }]);
  }
}

/**
 * Sign-in through a third-party provider. The first sign-in with an identity creates an account (with its
 * personal organization) bound to it; later sign-ins find the account through the binding. An identity
 * whose e-mail belongs to an existing account is not merged automatically (that would let whoever controls
 * the provider account take over the Quire account): the person signs in and binds it from their profile.
 */
@Injectable()
export class ThirdPartyLoginService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly providers: OidcProviderAdminService,
    private readonly relyingParty: RelyingPartyService,
    private readonly states: LoginStateService,
    private readonly users: UsersService,
    private readonly lifecycle: UserLifecycleService,
    private readonly signIn: SignInService,
    private readonly verifier: CredentialVerifier,
  ) {}

  /** The provider URL to send the browser to. With a first-party bearer token the flow is a binding. */
  async authorize(
    provider: OAuthProvider,
    redirectUri: string,
    request: Request,
  ): Promise<ThirdPartyAuthorizeDto> {
    assertPlainRedirectUri(redirectUri, 'redirectUri');
    const config = await this.providers.enabled(provider);
    const credential = credentialOf(request);
    let userId: string | null = null;
    if (credential) {
      const principal = await this.verifier.verify(credential, request);
      if (principal.kind !== 'session') {
        throw AppException.forbidden('binding a provider needs a signed-in session');
      }
      // The bind that finishes this flow (`POST /users/me/oauth/{provider}`) needs a session with every scope; a
      // token narrowed at /token could not finish it, so it does not start it either.
      assertFirstPartySession(principal);
      userId = principal.userId;
    }
    const state = await this.states.create(provider, redirectUri, userId);
    const authorizationUrl = await this.relyingParty.authorizationUrl(config, state);
    return { authorizationUrl, state: state.state, expiresIn: LOGIN_STATE_TTL_SECONDS };
  }

  async callback(
    provider: OAuthProvider,
    dto: ThirdPartyCallbackDto & { iss?: string },
    meta: ClientMeta,
  ): Promise<ThirdPartyLoginResultDto> {
    // `authorizationCode` is the spec 2.1 name of the same code (the bind request's); one of the two is enough.
    // A null stands for a name not sent (the DTO refuses two of them).
    const sent = [dto.code, dto.authorizationCode].filter((value) => value !== undefined && value !== null);
    if (sent.length === 2 && sent[0] !== sent[1]) {
      throw AppException.validation([
        { field: 'authorizationCode', reason: 'differs from code; send one of the two' },
      ]);
    }
    const code = dto.code ?? (dto.authorizationCode as string);
    const state = await this.states.consume(provider, dto.state);
    if (!state) {
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ field: 'state', reason: 'unknown, expired or already used state' }],
      });
    }
    if (dto.redirectUri !== undefined && dto.redirectUri !== state.redirectUri) {
      throw AppException.validation([
        { field: 'redirectUri', reason: 'must be the redirectUri of the authorize step the state names' },
      ]);
    }
    const config = await this.providers.enabled(provider);
    const identity = await this.relyingParty.exchange(config, code, state, dto.iss);
    // The account a first sign-in creates and its first session commit together, as registration's do: a failure
    // leaves no account behind the answer did not report. The provider's exchange runs before the transaction and
    // the tokens are signed after it; an account found through its binding signs in as usual (its second step
    // included: a challenge must outlive the TWO_FACTOR_REQUIRED answer, so it is not opened in a transaction that
    // answer rolls back).
    const found = await this.tx.run(async () => {
      const { user, isNewUser } = await this.findOrCreate(provider, identity);
      return { user, isNewUser, opened: isNewUser ? await this.signIn.openSession(user, meta, `oauth:${provider}`) : null };
    });
    const pair = found.opened
      ? await this.signIn.tokensFor(found.opened)
      : await this.signIn.finish(found.user, meta, `oauth:${provider}`);
    return { ...pair, isNewUser: found.isNewUser };
  }

  /**
   * The provider URL for a sign-in started on the issuer's /authorize page. The state carries the page's
   * request token and comes back only to `redirectUri`, the page's callback.
   */
  async authorizePageUrl(
    provider: OAuthProvider,
    redirectUri: string,
    authorizeRequestToken: string,
  ): Promise<string> {
    const config = await this.providers.enabled(provider);
    const state = await this.states.createForAuthorizePage(provider, redirectUri, authorizeRequestToken);
    return this.relyingParty.authorizationUrl(config, state);
  }

  /** Uses up a state the /authorize page started; null when unknown, expired, used or one of the API flow. */
  consumeAuthorizePageState(provider: OAuthProvider, state: string): Promise<AuthorizePageLoginState | null> {
    return this.states.consumeForAuthorizePage(provider, state);
  }

  /**
   * The account a provider's code signs in to, for the API callback and the /authorize page alike: exchanges
   * the code with the checks of its (consumed) state, then finds the account through the binding or creates
   * one. NOT_FOUND when the provider is not enabled, INVALID_TOKEN when it refuses the code, ALREADY_EXISTS
   * when its e-mail belongs to an unbound account.
   */
  async identify(
    provider: OAuthProvider,
    code: string,
    state: LoginState,
    iss?: string,
  ): Promise<{ user: UserEntity; isNewUser: boolean }> {
    const config = await this.providers.enabled(provider);
    const identity = await this.relyingParty.exchange(config, code, state, iss);
    return this.findOrCreate(provider, identity);
  }

  private async findOrCreate(
    provider: OAuthProvider,
    identity: ExternalIdentity,
  ): Promise<{ user: UserEntity; isNewUser: boolean }> {
    return this.tx.run(async () => {
      const binding = await this.tx.manager.findOne(OAuthConnectionEntity, {
        where: { provider, subject: identity.subject },
      });
      if (binding) {
        await this.tx.manager.update(
          OAuthConnectionEntity,
          { id: binding.id },
          {
            lastLoginAt: new Date(),
            email: identity.email ?? binding.email,
            displayName: identity.name ?? binding.displayName,
          },
        );
        return { user: await this.users.getById(binding.userId), isNewUser: false };
      }
      // A provider's address in the placeholder domain is no address: taking it would occupy another
      // identity's placeholder, as registering it would (which is refused).
      const providerEmail = identity.email && !isPlaceholderEmail(identity.email) ? identity.email : null;
      if (providerEmail && (await this.users.findByEmail(providerEmail))) {
        throw new AppException(ErrorCode.ALREADY_EXISTS, {
          details: [
            {
              field: 'email',
              reason: `an account with this e-mail exists; sign in and bind ${provider} from your profile`,
            },
          ],
        });
      }
      const placeholder = `${provider}-${createHash('sha256').update(identity.subject).digest('hex').slice(0, 16)}@${PLACEHOLDER_EMAIL_DOMAIN}`;
      const email = providerEmail ?? placeholder;
      const created = this.tx.manager.create(UserEntity, {
        email,
        passwordHash: null,
        displayName: (identity.name ?? email.split('@')[0]).slice(0, 100),
      });
      await this.tx.manager.save(created);
      await this.lifecycle.userRegistered(created);
      await this.tx.manager.insert(OAuthConnectionEntity, {
        userId: created.id,
        provider,
        subject: identity.subject,
        email: identity.email,
        displayName: identity.name,
        lastLoginAt: new Date(),
      });
      return { user: await this.users.getById(created.id), isNewUser: true };
    });
  }
}
