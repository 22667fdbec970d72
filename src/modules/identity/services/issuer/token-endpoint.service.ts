import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SCOPES } from '../../../../common/auth/principal.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import { TransactionHost } from '../../../../database/transaction-host.js';
import type { ClientGrantType, OAuthClientEntity } from '../../entities/oauth-client.entity.js';
import { SessionService } from '../session.service.js';
import { FIRST_PARTY_CLIENT_ID, TokenService } from '../token.service.js';
import { UsersService } from '../users.service.js';
import { AuthorizationCodeService } from './authorization-code.service.js';
import { OAuthClientService } from './oauth-client.service.js';
import { OAuthException } from './oauth.exception.js';

/** The RFC 6749 fields of a successful token response. */
export interface TokenFields {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
  id_token?: string;
}

/** The authenticated caller of the token endpoint; `client` is null for the first-party client `quire`. */
interface CallingClient {
  clientId: string;
  client: OAuthClientEntity | null;
}

type Form = Record<string, unknown>;

function param(form: Form, name: string): string | undefined {
  const value = form[name];
  if (value === undefined || value === '') {
    return undefined;
  }
  if (typeof value !== 'string') {
    throw new OAuthException(
      ErrorCode.VALIDATION_ERROR,
      'invalid_request',
      `${name} must be given once, as a string`,
      name,
    );
  }
  return value;
}

function required(form: Form, name: string): string {
  const value = param(form, name);
  if (value === undefined) {
    throw new OAuthException(ErrorCode.VALIDATION_ERROR, 'invalid_request', `${name} is required`, name);
  }
  return value;
}

/** Requested scopes, which must all lie within `allowed`; absent → all of `allowed`. */
export function grantedScopes(requested: string | undefined, allowed: readonly string[]): string[] {
  if (requested === undefined) {
    return [...allowed];
  }
  const scopes = [...new Set(requested.split(' ').filter(Boolean))];
  const refused = scopes.filter((scope) => !allowed.includes(scope));
  if (refused.length > 0) {
    throw new OAuthException(
      ErrorCode.INVALID_SCOPE,
      'invalid_scope',
      `scope not available to this client: ${refused.join(' ')}`,
      'scope',
    );
  }
  return scopes;
}

/**
 * POST /token (spec 5.5): client_credentials, authorization_code (+ PKCE S256) and refresh_token grants,
 * with the client authenticated by HTTP Basic or by form fields (never both). Every failure is an
 * OAuthException carrying both the service code and the RFC 6749 `error`.
 */
@Injectable()
export class TokenEndpointService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clients: OAuthClientService,
    private readonly codes: AuthorizationCodeService,
    private readonly sessions: SessionService,
    private readonly tokens: TokenService,
    private readonly users: UsersService,
  ) {}

  async exchange(form: Form, authorization: string | undefined): Promise<TokenFields> {
    const grantType = required(form, 'grant_type');
    if (!['client_credentials', 'authorization_code', 'refresh_token'].includes(grantType)) {
      throw new OAuthException(
        ErrorCode.VALIDATION_ERROR,
        'unsupported_grant_type',
        `grant_type ${grantType} is not supported`,
        'grant_type',
      );
    }
    const caller = await this.authenticate(form, authorization);
    const allowedGrants: readonly string[] = caller.client?.grantTypes ?? ['refresh_token'];
    if (!allowedGrants.includes(grantType)) {
      throw new OAuthException(
        ErrorCode.INVALID_CLIENT,
        'unauthorized_client',
        `this client may not use ${grantType}`,
        'grant_type',
      );
    }
    switch (grantType as ClientGrantType) {
      case 'client_credentials':
        return this.clientCredentials(caller.client as OAuthClientEntity, form);
      case 'authorization_code':
        return this.authorizationCode(caller.client as OAuthClientEntity, form);
      case 'refresh_token':
        return this.refreshToken(caller, form);
    }
  }

  private async authenticate(form: Form, authorization: string | undefined): Promise<CallingClient> {
    let clientId = param(form, 'client_id');
    let secret = param(form, 'client_secret');
    const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization ?? '');
    if (basic) {
      if (secret !== undefined) {
        throw new OAuthException(
          ErrorCode.VALIDATION_ERROR,
          'invalid_request',
          'use one client authentication method, not both',
        );
      }
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const decode = (part: string): string => decodeURIComponent(part.replace(/\+/g, ' '));
      let basicId: string;
      try {
        basicId = decode(colon < 0 ? decoded : decoded.slice(0, colon));
        secret = colon < 0 ? '' : decode(decoded.slice(colon + 1));
      } catch {
        throw new OAuthException(
          ErrorCode.INVALID_CLIENT,
          'invalid_client',
          'malformed HTTP Basic credentials',
        );
      }
      if (clientId !== undefined && clientId !== basicId) {
        throw new OAuthException(
          ErrorCode.VALIDATION_ERROR,
          'invalid_request',
          'client_id differs from the HTTP Basic user',
          'client_id',
        );
      }
      clientId = basicId;
    }
    if (!clientId) {
      throw new OAuthException(
        ErrorCode.INVALID_CLIENT,
        'invalid_client',
        'client authentication is required',
      );
    }
    if (clientId === FIRST_PARTY_CLIENT_ID && !secret) {
      return { clientId, client: null };
    }
    if (!secret) {
      throw new OAuthException(ErrorCode.INVALID_CLIENT, 'invalid_client', 'client_secret is required');
    }
    try {
      return { clientId, client: await this.clients.authenticate(clientId, secret) };
    } catch {
      throw new OAuthException(ErrorCode.INVALID_CLIENT, 'invalid_client', 'unknown client or wrong secret');
    }
  }

  /** The client acts for its owner, with at most the client's allowed scopes. No refresh token (RFC 6749 4.4.3). */
  private async clientCredentials(client: OAuthClientEntity, form: Form): Promise<TokenFields> {
    const scopes = grantedScopes(param(form, 'scope'), client.allowedScopes);
    const access = await this.tokens.issueAccessToken({
      userId: client.ownerId,
      clientId: client.clientId,
      scopes,
    });
    return {
      access_token: access.accessToken,
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      scope: scopes.join(' '),
    };
  }

  private async authorizationCode(client: OAuthClientEntity, form: Form): Promise<TokenFields> {
    const code = required(form, 'code');
    const redirectUri = required(form, 'redirect_uri');
    const verifier = param(form, 'code_verifier');
    const issued = await this.tx.run(async () => {
      const grant = await this.codes.redeem(code, client.clientId);
      if (!grant) {
        return null;
      }
      if (grant.redirectUri !== redirectUri) {
        throw new OAuthException(
          ErrorCode.INVALID_TOKEN,
          'invalid_grant',
          'redirect_uri does not match the authorization request',
          'redirect_uri',
        );
      }
      this.checkPkce(grant.codeChallenge, verifier);
      const { session, refreshToken } = await this.sessions.create({
        userId: grant.userId,
        meta: {},
        authMethod: 'authorization_code',
        clientId: client.clientId,
        scopes: grant.scopes,
        withRefreshToken: client.grantTypes.includes('refresh_token'),
      });
      await this.codes.attachSession(grant.codeHash, session.id);
      return { grant, session, refreshToken };
    });
    if (!issued) {
      const replayed = await this.codes.revokeIfReplayed(code, client.clientId);
      const reason = replayed
        ? 'the code was already used; the tokens it produced are revoked'
        : 'the code is invalid or expired';
      throw new OAuthException(ErrorCode.INVALID_TOKEN, 'invalid_grant', reason, 'code');
    }
    const { grant, session, refreshToken } = issued;
    const access = await this.tokens.issueAccessToken({
      userId: grant.userId,
      clientId: client.clientId,
      scopes: grant.scopes,
      sessionId: session.id,
    });
    const fields: TokenFields = {
      access_token: access.accessToken,
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      scope: grant.scopes.join(' '),
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    };
    if (grant.scopes.includes('openid')) {
      fields.id_token = await this.tokens.issueIdToken({
        userId: grant.userId,
        clientId: client.clientId,
        authTime: grant.authTime,
        nonce: grant.nonce,
        claims: await this.idTokenClaims(grant.userId, grant.scopes),
      });
    }
    return fields;
  }

  /** Rotates the refresh token; `scope` may narrow (never widen) what the new access token carries. */
  private async refreshToken(caller: CallingClient, form: Form): Promise<TokenFields> {
    const presented = required(form, 'refresh_token');
    const requestedScope = param(form, 'scope');
    let scopes: string[] = [];
    // The scope is checked inside the rotation: a refused scope leaves the presented refresh token unspent.
    const { session, refreshToken } = await this.sessions.rotateOrThrow(presented, caller.clientId, {
      check: (rotated) => {
        const sessionScopes = rotated.scope === null ? [...SCOPES] : rotated.scope.split(' ').filter(Boolean);
        scopes = grantedScopes(requestedScope, sessionScopes);
      },
    });
    const access = await this.tokens.issueAccessToken({
      userId: session.userId,
      clientId: caller.clientId,
      scopes,
      sessionId: session.id,
    });
    return {
      access_token: access.accessToken,
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      scope: scopes.join(' '),
      refresh_token: refreshToken,
    };
  }

  private checkPkce(challenge: string | null, verifier: string | undefined): void {
    if (challenge === null) {
      if (verifier !== undefined) {
        throw new OAuthException(
          ErrorCode.INVALID_TOKEN,
          'invalid_grant',
          'code_verifier given but the authorization request had no code_challenge',
          'code_verifier',
        );
      }
      return;
    }
    if (verifier === undefined || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) {
      throw new OAuthException(
        ErrorCode.INVALID_TOKEN,
        'invalid_grant',
        'a valid code_verifier is required (PKCE)',
        'code_verifier',
      );
    }
    if (createHash('sha256').update(verifier).digest('base64url') !== challenge) {
      throw new OAuthException(
        ErrorCode.INVALID_TOKEN,
        'invalid_grant',
        'code_verifier does not match the code_challenge',
        'code_verifier',
      );
    }
  }

  private async idTokenClaims(userId: string, scopes: string[]): Promise<Record<string, unknown>> {
    const user = await this.users.getById(userId);
    return {
      ...(scopes.includes('email') ? { email: user.email, email_verified: false } : {}),
      ...(scopes.includes('profile') ? { name: user.displayName } : {}),
    };
  }
}
