import { Injectable } from '@nestjs/common';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import type { OAuthClientEntity } from '../../entities/oauth-client.entity.js';
import { AccountService } from '../account.service.js';
import { hashToken } from '../secret-tokens.js';
import { type ClientMeta, SessionService } from '../session.service.js';
import { TokenService } from '../token.service.js';
import { LoginChallengeService } from '../two-factor/login-challenge.service.js';
import { TwoFactorService } from '../two-factor/two-factor.service.js';
import { UsersService } from '../users.service.js';
import { AuthorizationCodeService } from './authorization-code.service.js';
import { consentPage, errorPage, signInPage, twoFactorPage } from './authorize-page.renderer.js';
import { OAuthClientService } from './oauth-client.service.js';
import type { OAuthErrorCode } from './oauth.exception.js';

export type PageResult =
  { kind: 'html'; status: number; html: string } | { kind: 'redirect'; location: string };

/** A validated authorization request, carried between the pages inside a signed interaction token. */
interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  responseType: 'code' | 'token';
  scopes: string[];
  state?: string;
  nonce?: string;
  codeChallenge?: string;
}

type Query = Record<string, unknown>;

/** The sign-in request token (and the pages) stay valid this long. */
const REQUEST_TTL_SECONDS = 15 * 60;
const CONSENT_TTL_SECONDS = 10 * 60;

function single(query: Query, name: string): string | undefined | null {
  const value = query[name];
  if (value === undefined || value === '') {
    return undefined;
  }
  return typeof value === 'string' ? value : null;
}

/**
 * GET /authorize validates the request (RFC 6749 4.1.1 / 4.2.1, PKCE S256) and shows the sign-in page;
 * POST /authorize runs the steps: password, second factor when the account has one, consent. Approval
 * redirects with `code` + `state` (or, for response_type=token, the token in the fragment); denial and
 * request errors redirect with `error` per RFC 6749 4.1.2.1. A request whose client or redirect URI cannot
 * be trusted gets an error page instead of a redirect.
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
  ) {}

  async start(query: Query): Promise<PageResult> {
    const parsed = await this.parse(query);
    if ('kind' in parsed) {
      return parsed;
    }
    const requestToken = await this.tokens.signInteraction(
      'authorize',
      { ...parsed.request },
      REQUEST_TTL_SECONDS,
    );
    return this.html(200, signInPage({ requestToken, clientName: parsed.client.name }));
  }

  async submit(form: Query, meta: ClientMeta): Promise<PageResult> {
    const requestToken = single(form, 'request');
    const data = requestToken ? await this.tokens.verifyInteraction('authorize', requestToken) : null;
    if (!requestToken || !data) {
      return this.html(
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
      return this.html(
        400,
        errorPage('Application not available', 'The application that sent you here is no longer registered.'),
      );
    }
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
    return this.html(400, errorPage('Invalid request', 'Unknown sign-in step.'));
  }

  private async parse(
    query: Query,
  ): Promise<{ request: AuthorizationRequest; client: OAuthClientEntity } | PageResult> {
    const clientId = single(query, 'client_id');
    const redirectUri = single(query, 'redirect_uri');
    const client = clientId ? await this.clients.findByClientId(clientId) : null;
    if (!client) {
      return this.html(400, errorPage('Unknown application', 'client_id is missing or not registered.'));
    }
    if (!redirectUri || !client.redirectUris.includes(redirectUri)) {
      return this.html(
        400,
        errorPage('Invalid redirect', 'redirect_uri is missing or not registered for this application.'),
      );
    }
    const responseType = single(query, 'response_type');
    const state = single(query, 'state');
    const asFragment = responseType === 'token';
    const fail = (error: OAuthErrorCode, description: string): PageResult =>
      this.errorRedirect(
        redirectUri,
        asFragment,
        error,
        description,
        typeof state === 'string' ? state : undefined,
      );
    for (const name of [
      'response_type',
      'scope',
      'state',
      'nonce',
      'code_challenge',
      'code_challenge_method',
      'prompt',
    ]) {
      if (single(query, name) === null) {
        return fail('invalid_request', `${name} must be given once`);
      }
    }
    if (responseType !== 'code' && responseType !== 'token') {
      return fail('unsupported_response_type', 'response_type must be code or token');
    }
    if (!client.grantTypes.includes('authorization_code')) {
      return fail('unauthorized_client', 'this client may not use the authorization endpoint');
    }
    const requested = single(query, 'scope');
    const scopes = requested ? [...new Set(requested.split(' ').filter(Boolean))] : [...client.allowedScopes];
    const refused = scopes.filter((scope) => !client.allowedScopes.includes(scope));
    if (refused.length > 0) {
      return fail('invalid_scope', `scope not available to this client: ${refused.join(' ')}`);
    }
    const challenge = single(query, 'code_challenge') ?? undefined;
    const method = single(query, 'code_challenge_method') ?? undefined;
    if ((challenge !== undefined || method !== undefined) && method !== 'S256') {
      return fail('invalid_request', 'PKCE needs code_challenge_method=S256 (plain is not supported)');
    }
    if (challenge !== undefined && !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
      return fail('invalid_request', 'code_challenge must be a base64url SHA-256 value');
    }
    if (method !== undefined && challenge === undefined) {
      return fail('invalid_request', 'code_challenge is missing');
    }
    if ((single(query, 'prompt') ?? '').split(' ').includes('none')) {
      return fail('login_required', 'the issuer keeps no browser session; the user must sign in');
    }
    const nonce = single(query, 'nonce') ?? undefined;
    const request: AuthorizationRequest = { clientId: client.clientId, redirectUri, responseType, scopes };
    if (typeof state === 'string') {
      request.state = state;
    }
    if (nonce) {
      request.nonce = nonce;
    }
    if (challenge) {
      request.codeChallenge = challenge;
    }
    return { request, client };
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
      return this.html(
        400,
        signInPage({
          requestToken,
          clientName: client.name,
          email: email ?? '',
          error: 'Enter your e-mail and password.',
        }),
      );
    }
    let user;
    try {
      user = await this.accounts.checkPassword(email, password, meta);
    } catch (error) {
      const throttled = error instanceof AppException && error.code === ErrorCode.RATE_LIMIT_EXCEEDED;
      const message = throttled
        ? 'Too many failed attempts. Try again later.'
        : 'The e-mail or password is not correct.';
      return this.html(
        throttled ? 429 : 401,
        signInPage({ requestToken, clientName: client.name, email, error: message }),
      );
    }
    const method = await this.twoFactor.methodOf(user.id);
    if (method) {
      const challenge = await this.challenges.open(user, method, 'password');
      return this.html(
        200,
        twoFactorPage({
          requestToken,
          challengeToken: challenge.challengeToken,
          methods: challenge.methods,
          destination: challenge.destination,
        }),
      );
    }
    return this.consentFor(user.id, user.email, requestToken, request, client);
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
      return this.consentFor(user.id, user.email, requestToken, request, client);
    } catch (error) {
      if (error instanceof AppException && error.code === ErrorCode.INVALID_CREDENTIALS) {
        return this.html(
          401,
          twoFactorPage({
            requestToken,
            challengeToken,
            methods: ['totp', 'backup_code'],
            error: 'The code is not correct.',
          }),
        );
      }
      return this.html(
        401,
        signInPage({
          requestToken,
          clientName: client.name,
          error: 'The verification step expired. Sign in again.',
        }),
      );
    }
  }

  private async consentFor(
    userId: string,
    email: string,
    requestToken: string,
    request: AuthorizationRequest,
    client: OAuthClientEntity,
  ): Promise<PageResult> {
    const consentToken = await this.tokens.signInteraction(
      'authorize-consent',
      { userId, authTime: Date.now(), request: hashToken(requestToken) },
      CONSENT_TTL_SECONDS,
    );
    return this.html(
      200,
      consentPage({
        requestToken,
        consentToken,
        clientName: client.name,
        userEmail: email,
        scopes: request.scopes,
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
      return this.html(
        400,
        signInPage({ requestToken, clientName: client.name, error: 'Your sign-in expired. Sign in again.' }),
      );
    }
    const asFragment = request.responseType === 'token';
    if (single(form, 'decision') !== 'approve') {
      return this.errorRedirect(
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
    return { kind: 'redirect', location: this.withParams(request.redirectUri, params, asFragment) };
  }

  private errorRedirect(
    redirectUri: string,
    asFragment: boolean,
    error: OAuthErrorCode,
    description: string,
    state?: string,
  ): PageResult {
    const params = new URLSearchParams({ error, error_description: description });
    if (state !== undefined) {
      params.set('state', state);
    }
    return { kind: 'redirect', location: this.withParams(redirectUri, params, asFragment) };
  }

  private withParams(redirectUri: string, params: URLSearchParams, asFragment: boolean): string {
    const url = new URL(redirectUri);
    if (asFragment) {
      url.hash = params.toString();
    } else {
      for (const [name, value] of params) {
        url.searchParams.set(name, value);
      }
    }
    return url.toString();
  }

  private html(status: number, html: string): PageResult {
    return { kind: 'html', status, html };
  }
}
