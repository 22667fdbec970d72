import { Injectable } from '@nestjs/common';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import type { OAuthClientEntity } from '../../entities/oauth-client.entity.js';
import { OAUTH_PROVIDERS, type OAuthProvider } from '../../entities/oidc-provider.entity.js';
import type { UserEntity } from '../../entities/user.entity.js';
import { isPlaceholderEmail } from '../../dtos/auth.dto.js';
import { AccountService } from '../account.service.js';
import { hashToken } from '../secret-tokens.js';
import { type ClientMeta, SessionService } from '../session.service.js';
import { OidcProviderAdminService } from '../third-party/oidc-provider-admin.service.js';
import { ThirdPartyLoginService } from '../third-party/third-party-login.service.js';
import { TokenService } from '../token.service.js';
import { LoginChallengeService } from '../two-factor/login-challenge.service.js';
import { TwoFactorService } from '../two-factor/two-factor.service.js';
import { UsersService } from '../users.service.js';
import { AuthorizationCodeService } from './authorization-code.service.js';
import { consentPage, errorPage, signInPage, twoFactorPage } from './authorize-page.renderer.js';
import { OAuthClientService } from './oauth-client.service.js';
import {
  type AuthorizationRequest,
  clientRedirect,
  errorRedirect,
  htmlPage,
  inFragment,
  type PageResult,
  parseAuthorizationRequest,
  type Query,
  single,
} from './authorize-request.js';

export type { PageResult } from './authorize-request.js';

type SignInPageInput = Omit<Parameters<typeof signInPage>[0], 'providers'>;

/** The sign-in request token (and the pages) stay valid this long. */
const REQUEST_TTL_SECONDS = 15 * 60;
const CONSENT_TTL_SECONDS = 10 * 60;

/**
 * How the page tells a refused provider sign-in (the errors of ThirdPartyLoginService), with the status a
 * wrong password would get for the same kind of failure.
 */
const THIRD_PARTY_FAILURES = new Map<ErrorCode, { status: number; message: string }>([
  [ErrorCode.NOT_FOUND, { status: 400, message: 'That sign-in method is not available.' }],
  [ErrorCode.INVALID_TOKEN, { status: 401, message: 'The provider did not confirm the sign-in. Try again.' }],
  [
    ErrorCode.ALREADY_EXISTS,
    {
      status: 409,
      message:
        'An account with this e-mail address already exists. Sign in with its password; you can connect the provider from your profile.',
    },
  ],
  [
    ErrorCode.SERVICE_UNAVAILABLE,
    { status: 503, message: 'The provider cannot be reached right now. Try again later.' },
  ],
]);

/**
 * Where a provider sends the browser back after a sign-in started on the authorization page. It is the
 * issuer mount under `/api/v1/auth/` because host-root routes are only those listed in HOST_ROOT_ROUTES
 * (src/app.setup.ts). Operators register this URL at each provider (docs/auth.md, "Third-party login").
 */
export function authorizePageCallbackUrl(issuer: string, provider: OAuthProvider): string {
  return `${issuer}/api/v1/auth/authorize/oauth/${provider}/callback`;
}

function isProvider(value: unknown): value is OAuthProvider {
  return typeof value === 'string' && (OAUTH_PROVIDERS as readonly string[]).includes(value);
}

/**
 * How the consent page names the signed-in account: its e-mail, or its display name when the account has only the
 * placeholder address of a provider that shared no e-mail (an address the user never saw).
 */
function signedInAs(user: UserEntity): string {
  return isPlaceholderEmail(user.email) ? user.displayName : user.email;
}

/**
 * GET /authorize validates the request (RFC 6749 4.1.1 / 4.2.1, PKCE S256) and shows the sign-in page;
 * POST /authorize runs the steps: password (or a third-party provider, whose callback resumes the page),
 * second factor when the account has one, consent. Approval redirects with `code` + `state` (or, for
 * response_type=token, the token in the fragment); denial and request errors redirect with `error` per
 * RFC 6749 4.1.2.1. A request whose client or redirect URI cannot be trusted gets an error page instead of a
 * redirect; a failed sign-in (wrong password, a provider that refused) shows the sign-in page again.
 */
@Injectable()
export class AuthorizePageService {
  constructor(
    private readonly clients: OAuthClientService,
    private readonly codes: AuthorizationCodeService,
    private readonly tokens: TokenService,
    private readonly accounts: AccountService,
    private readonly users: UsersService,
    private readonly twoFactor: TwoFactorService,
    private readonly challenges: LoginChallengeService,
    private readonly sessions: SessionService,
    private readonly providers: OidcProviderAdminService,
    private readonly thirdParty: ThirdPartyLoginService,
  ) {}

  async start(query: Query): Promise<PageResult> {
    const clientId = single(query, 'client_id');
    const client = clientId ? await this.clients.findByClientId(clientId) : null;
    if (!client) {
      return htmlPage(400, errorPage('Unknown application', 'client_id is missing or not registered.'));
    }
    const request = parseAuthorizationRequest(query, client);
    if ('kind' in request) {
      return request;
    }
    const requestToken = await this.tokens.signInteraction('authorize', { ...request }, REQUEST_TTL_SECONDS);
    return this.showSignIn(200, { requestToken, clientName: client.name });
  }

  async submit(form: Query, meta: ClientMeta): Promise<PageResult> {
    const resumed = await this.resume(single(form, 'request'));
    if ('kind' in resumed) {
      return resumed;
    }
    const { requestToken, request, client } = resumed;
    const step = single(form, 'step');
    if (step === 'login') {
      return this.login(form, request, requestToken, client, meta);
    }
    if (step === 'two_factor') {
      return this.secondStep(form, request, requestToken, client, meta);
    }
    if (step === 'consent') {
      return this.consent(form, request, requestToken, client, meta);
    }
    if (step === 'third_party') {
      return this.thirdPartyStart(form, requestToken, client);
    }
    return htmlPage(400, errorPage('Invalid request', 'Unknown sign-in step.'));
  }

  /**
   * GET {issuer}/api/v1/auth/authorize/oauth/{provider}/callback: the provider's return. Consumes the page's
   * state (never one of the API flow), exchanges the code and finds or creates the account exactly as
   * POST /auth/oauth/{provider}/callback does, then goes on as after a correct password: second step when the
   * account has one, else consent. Without a usable state the interaction is unknown: an error page. Once the
   * interaction is known, a refused sign-in (the provider's `error`, a refused code, an e-mail that belongs to
   * another account, a provider disabled meanwhile) shows the sign-in page again with the reason, as a wrong
   * password does; the user may choose another way to sign in.
   */
  async thirdPartyCallback(providerName: string, query: Query): Promise<PageResult> {
    const stateValue = single(query, 'state');
    const loginState =
      isProvider(providerName) && stateValue
        ? await this.thirdParty.consumeAuthorizePageState(providerName, stateValue)
        : null;
    if (!isProvider(providerName) || !loginState) {
      return htmlPage(
        400,
        errorPage(
          'Sign-in expired',
          'This sign-in has expired or was already used. Go back to the application and start again.',
        ),
      );
    }
    const provider = providerName;
    const resumed = await this.resume(loginState.authorizeRequestToken);
    if ('kind' in resumed) {
      return resumed;
    }
    const { requestToken, request, client } = resumed;
    // This page's URL is the callback's: its forms post to the authorization endpoint.
    const action = `${this.tokens.issuer}/authorize`;
    const again = (status: number, error: string): Promise<PageResult> =>
      this.showSignIn(status, { requestToken, clientName: client.name, action, error });
    if (single(query, 'error') !== undefined) {
      return again(
        401,
        'The sign-in at the provider was cancelled or refused. Try again or choose another way.',
      );
    }
    const code = single(query, 'code');
    const iss = single(query, 'iss');
    if (!code || iss === null) {
      return again(400, 'The provider did not complete the sign-in. Try again.');
    }
    let user: UserEntity;
    try {
      ({ user } = await this.thirdParty.identify(provider, code, loginState, iss));
    } catch (error) {
      return this.thirdPartyFailure(error, again);
    }
    return this.afterFirstFactor(user, `oauth:${provider}`, requestToken, request, client, action);
  }

  /** The request and client of a page's request token, or the error page when either is gone. */
  private async resume(
    requestToken: string | null | undefined,
  ): Promise<
    { requestToken: string; request: AuthorizationRequest; client: OAuthClientEntity } | PageResult
  > {
    const data = requestToken ? await this.tokens.verifyInteraction('authorize', requestToken) : null;
    if (!requestToken || !data) {
      return htmlPage(
        400,
        errorPage(
          'Sign-in expired',
          'This sign-in page has expired. Go back to the application and start again.',
        ),
      );
    }
    const request = data as unknown as AuthorizationRequest;
    const client = await this.clients.findByClientId(request.clientId);
    if (!client || !client.redirectUris.includes(request.redirectUri)) {
      return htmlPage(
        400,
        errorPage('Application not available', 'The application that sent you here is no longer registered.'),
      );
    }
    return { requestToken, request, client };
  }

  /** Step `third_party`: sends the browser to the chosen provider with a state bound to this interaction. */
  private async thirdPartyStart(
    form: Query,
    requestToken: string,
    client: OAuthClientEntity,
  ): Promise<PageResult> {
    const provider = single(form, 'provider');
    const again = (status: number, error: string): Promise<PageResult> =>
      this.showSignIn(status, { requestToken, clientName: client.name, error });
    if (!isProvider(provider)) {
      return again(400, 'That sign-in method is not available.');
    }
    try {
      const location = await this.thirdParty.authorizePageUrl(
        provider,
        authorizePageCallbackUrl(this.tokens.issuer, provider),
        requestToken,
      );
      return { kind: 'redirect', location };
    } catch (error) {
      return this.thirdPartyFailure(error, again);
    }
  }

  /** The sign-in page again, saying why a provider sign-in did not succeed; other errors propagate. */
  private thirdPartyFailure(
    error: unknown,
    again: (status: number, message: string) => Promise<PageResult>,
  ): Promise<PageResult> {
    const failure = error instanceof AppException ? THIRD_PARTY_FAILURES.get(error.code) : undefined;
    if (!failure) {
      throw error;
    }
    return again(failure.status, failure.message);
  }

  private async login(
    form: Query,
    request: AuthorizationRequest,
    requestToken: string,
    client: OAuthClientEntity,
    meta: ClientMeta,
  ): Promise<PageResult> {
    const email = single(form, 'email') ?? '';
    const password = single(form, 'password') ?? '';
    if (!email || !password) {
      return this.showSignIn(400, {
        requestToken,
        clientName: client.name,
        email: email ?? '',
        error: 'Enter your e-mail and password.',
      });
    }
    let user;
    try {
      user = await this.accounts.checkPassword(email, password, meta);
    } catch (error) {
      const throttled = error instanceof AppException && error.code === ErrorCode.RATE_LIMIT_EXCEEDED;
      const message = throttled
        ? 'Too many failed attempts. Try again later.'
        : 'The e-mail or password is not correct.';
      return this.showSignIn(throttled ? 429 : 401, {
        requestToken,
        clientName: client.name,
        email,
        error: message,
      });
    }
    return this.afterFirstFactor(user, 'password', requestToken, request, client);
  }

  /** A proven first factor (password or provider): the second step when the account has one, else consent. */
  private async afterFirstFactor(
    user: UserEntity,
    authMethod: string,
    requestToken: string,
    request: AuthorizationRequest,
    client: OAuthClientEntity,
    action?: string,
  ): Promise<PageResult> {
    const method = await this.twoFactor.methodOf(user.id);
    if (method) {
      let challenge;
      try {
        challenge = await this.challenges.open(user, method, authMethod);
      } catch (error) {
        if (error instanceof AppException && error.code === ErrorCode.RATE_LIMIT_EXCEEDED) {
          return this.showSignIn(429, {
            requestToken,
            clientName: client.name,
            action,
            error: 'Too many failed attempts. Try again later.',
          });
        }
        throw error;
      }
      return htmlPage(
        200,
        twoFactorPage({
          requestToken,
          challengeToken: challenge.challengeToken,
          methods: challenge.methods,
          destination: challenge.destination,
          action,
        }),
      );
    }
    return this.consentFor(user.id, signedInAs(user), requestToken, request, client, action);
  }

  private async secondStep(
    form: Query,
    request: AuthorizationRequest,
    requestToken: string,
    client: OAuthClientEntity,
    meta: ClientMeta,
  ): Promise<PageResult> {
    const challengeToken = single(form, 'challenge') ?? '';
    const code = single(form, 'code') ?? '';
    try {
      const { user } = await this.challenges.verify({ challengeToken, code }, meta);
      return this.consentFor(user.id, signedInAs(user), requestToken, request, client);
    } catch (error) {
      if (error instanceof AppException && error.code === ErrorCode.RATE_LIMIT_EXCEEDED) {
        return this.showSignIn(429, {
          requestToken,
          clientName: client.name,
          error: 'Too many failed attempts. Try again later.',
        });
      }
      if (error instanceof AppException && error.code === ErrorCode.INVALID_CREDENTIALS) {
        // Ask again the way the first page asked: an sms or e-mail account has no authenticator app.
        const asked = await this.challenges.describe(challengeToken);
        return htmlPage(
          401,
          twoFactorPage({
            requestToken,
            challengeToken,
            methods: asked?.methods ?? ['totp', 'backup_code'],
            destination: asked?.destination,
            error: 'The code is not correct.',
          }),
        );
      }
      return this.showSignIn(401, {
        requestToken,
        clientName: client.name,
        error: 'The verification step expired. Sign in again.',
      });
    }
  }

  private async consentFor(
    userId: string,
    who: string,
    requestToken: string,
    request: AuthorizationRequest,
    client: OAuthClientEntity,
    action?: string,
  ): Promise<PageResult> {
    const consentToken = await this.tokens.signInteraction(
      'authorize-consent',
      { userId, authTime: Date.now(), request: hashToken(requestToken) },
      CONSENT_TTL_SECONDS,
    );
    return htmlPage(
      200,
      consentPage({
        requestToken,
        consentToken,
        clientName: client.name,
        userEmail: who,
        scopes: request.scopes,
        action,
      }),
    );
  }

  private async consent(
    form: Query,
    request: AuthorizationRequest,
    requestToken: string,
    client: OAuthClientEntity,
    meta: ClientMeta,
  ): Promise<PageResult> {
    const consentToken = single(form, 'consent');
    const consent = consentToken
      ? await this.tokens.verifyInteraction('authorize-consent', consentToken)
      : null;
    const user = typeof consent?.userId === 'string' ? await this.users.findById(consent.userId) : null;
    if (!consent || consent.request !== hashToken(requestToken) || !user) {
      return this.showSignIn(400, {
        requestToken,
        clientName: client.name,
        error: 'Your sign-in expired. Sign in again.',
      });
    }
    const asFragment = inFragment(request);
    if (single(form, 'decision') !== 'approve') {
      return errorRedirect(
        request.redirectUri,
        asFragment,
        'access_denied',
        'the user denied the request',
        request.state,
      );
    }
    const params = new URLSearchParams();
    if (request.responseType === 'code') {
      const code = await this.codes.issue({
        clientId: client.clientId,
        userId: user.id,
        redirectUri: request.redirectUri,
        scopes: request.scopes,
        codeChallenge: request.codeChallenge ?? null,
        nonce: request.nonce ?? null,
        authTime: new Date(typeof consent.authTime === 'number' ? consent.authTime : Date.now()),
      });
      params.set('code', code);
    } else {
      // A session without a refresh token that ends with the token: the user sees this authorization among their
      // sessions and can end it (DELETE /auth/sessions/{id}, logout-all), as an authorization-code grant.
      const { session } = await this.sessions.create({
        userId: user.id,
        meta,
        authMethod: 'implicit',
        clientId: client.clientId,
        scopes: request.scopes,
        withRefreshToken: false,
        ttlSeconds: this.tokens.accessTokenTtlSeconds,
      });
      const access = await this.tokens.issueAccessToken({
        userId: user.id,
        clientId: client.clientId,
        scopes: request.scopes,
        sessionId: session.id,
      });
      params.set('access_token', access.accessToken);
      params.set('token_type', 'Bearer');
      params.set('expires_in', String(access.expiresIn));
      params.set('scope', request.scopes.join(' '));
    }
    if (request.state !== undefined) {
      params.set('state', request.state);
    }
    return clientRedirect(request.redirectUri, params, asFragment);
  }

  /** The sign-in page, with a button for each enabled third-party provider. */
  private async showSignIn(status: number, input: SignInPageInput): Promise<PageResult> {
    const providers = (await this.providers.listEnabled()).map(({ provider, displayName }) => ({
      provider,
      displayName,
    }));
    return htmlPage(status, signInPage({ ...input, providers }));
  }
}
