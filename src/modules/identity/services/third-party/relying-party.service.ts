import { Injectable, Logger } from '@nestjs/common';
import * as oidc from 'openid-client';
import { AppException } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';
import type { OidcProviderEntity } from '../../entities/oidc-provider.entity.js';
import { SecretBoxService } from '../secret-box.service.js';

/** What Quire keeps of a third-party identity. */
export interface ExternalIdentity {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

export interface AuthorizationChecks {
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function text(value: unknown): string | null {
  if (typeof value === 'string' && value.trim() !== '') {
    return value.trim();
  }
  return typeof value === 'number' ? String(value) : null;
}

/**
 * Quire as an OpenID Connect / OAuth 2.0 relying party, with openid-client: discovery (or configured
 * endpoints for OAuth-only providers), the authorization URL with PKCE S256 + state + nonce, the code
 * exchange, and the user's claims (ID token plus userinfo). Plain-http issuers are accepted only on loopback
 * hosts (development and tests). Never called inside a database transaction.
 */
@Injectable()
export class RelyingPartyService {
  private readonly logger = new Logger(RelyingPartyService.name);
  private readonly configs = new Map<string, { version: number; config: Promise<oidc.Configuration> }>();

  constructor(private readonly box: SecretBoxService) {}

  async authorizationUrl(
    provider: OidcProviderEntity,
    checks: Omit<AuthorizationChecks, 'codeVerifier'> & { codeVerifier: string },
  ): Promise<string> {
    const config = await this.configFor(provider);
    const parameters: Record<string, string> = {
      redirect_uri: checks.redirectUri,
      scope: provider.scopes.join(' '),
      state: checks.state,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    };
    if (provider.scopes.includes('openid')) {
      parameters.nonce = checks.nonce;
    }
    return oidc.buildAuthorizationUrl(config, parameters).href;
  }

  /** Exchanges the code and reads who signed in. INVALID_TOKEN when the provider refuses. */
  async exchange(
    provider: OidcProviderEntity,
    code: string,
    checks: Partial<AuthorizationChecks> & { redirectUri: string },
    iss?: string,
  ): Promise<ExternalIdentity> {
    const config = await this.configFor(provider);
    const openid = provider.scopes.includes('openid');
    const callback = new URL(checks.redirectUri);
    callback.searchParams.set('code', code);
    if (checks.state) {
      callback.searchParams.set('state', checks.state);
    }
    const metadata = config.serverMetadata();
    if (metadata.authorization_response_iss_parameter_supported) {
      callback.searchParams.set('iss', iss ?? metadata.issuer);
    }
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state ?? oidc.skipStateCheck,
        ...(openid && checks.nonce ? { expectedNonce: checks.nonce } : {}),
        idTokenExpected: openid,
      });
    } catch (error) {
      this.logger.warn({ err: error, provider: provider.provider }, 'third-party code exchange failed');
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ field: 'code', reason: 'the provider did not accept the authorization code' }],
      });
    }
    const idClaims = tokens.claims();
    const info = await this.userinfo(config, tokens.access_token);
    const subject =
      text(idClaims?.sub) ??
      text(info.sub) ??
      text(info.id) ??
      text(info.openid) ??
      text(info.union_id) ??
      text(info.unionid);
    if (!subject || (idClaims?.sub !== undefined && info.sub !== undefined && idClaims.sub !== info.sub)) {
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ reason: 'the provider did not identify the user consistently' }],
      });
    }
    const email = text(info.email) ?? text(idClaims?.email);
    const verified = info.email_verified ?? idClaims?.email_verified;
    return {
      subject,
      email: email ? email.toLowerCase() : null,
      emailVerified: verified === true || verified === 'true',
      name:
        text(info.name) ??
        text(idClaims?.name) ??
        text(info.preferred_username) ??
        text(info.login) ??
        text(info.nick),
    };
  }

  /** The provider's userinfo as plain JSON (OAuth-only providers answer without `sub`). */
  private async userinfo(config: oidc.Configuration, accessToken: string): Promise<Record<string, unknown>> {
    const endpoint = config.serverMetadata().userinfo_endpoint;
    if (!endpoint) {
      return {};
    }
    try {
      const response = await oidc.fetchProtectedResource(config, accessToken, new URL(endpoint), 'GET');
      const body: unknown = await response.json();
      return typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    } catch (error) {
      this.logger.warn({ err: error }, 'third-party userinfo failed');
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ reason: 'the provider did not return the user profile' }],
      });
    }
  }

  private configFor(provider: OidcProviderEntity): Promise<oidc.Configuration> {
    const version = new Date(provider.updatedAt).getTime();
    const cached = this.configs.get(provider.id);
    if (cached && cached.version === version) {
      return cached.config;
    }
    const config = this.load(provider).catch((error: unknown) => {
      this.configs.delete(provider.id);
      this.logger.warn({ err: error, provider: provider.provider }, 'third-party provider discovery failed');
      throw new AppException(ErrorCode.SERVICE_UNAVAILABLE, {
        details: [{ reason: `${provider.provider} is not reachable` }],
      });
    });
    this.configs.set(provider.id, { version, config });
    return config;
  }

  private async load(provider: OidcProviderEntity): Promise<oidc.Configuration> {
    const secret = provider.clientSecretEncrypted
      ? await this.box.open(provider.clientSecretEncrypted)
      : undefined;
    const issuer = new URL(provider.issuer);
    const insecure = issuer.protocol === 'http:';
    if (insecure && !LOOPBACK.has(issuer.hostname)) {
      throw new Error('plain-http issuers are accepted only on loopback hosts');
    }
    const auth = secret ? oidc.ClientSecretPost(secret) : oidc.None();
    let config: oidc.Configuration;
    if (provider.authorizationEndpoint && provider.tokenEndpoint) {
      config = new oidc.Configuration(
        {
          issuer: provider.issuer,
          authorization_endpoint: provider.authorizationEndpoint,
          token_endpoint: provider.tokenEndpoint,
          ...(provider.userinfoEndpoint ? { userinfo_endpoint: provider.userinfoEndpoint } : {}),
        },
        provider.clientId,
        secret,
        auth,
      );
      if (insecure) {
        oidc.allowInsecureRequests(config);
      }
    } else {
      config = await oidc.discovery(
        issuer,
        provider.clientId,
        secret,
        auth,
        insecure ? { execute: [oidc.allowInsecureRequests] } : undefined,
      );
    }
    config.timeout = 10;
    return config;
  }
}
