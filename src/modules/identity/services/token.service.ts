import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { createLocalJWKSet, errors as joseErrors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { SIGNING_ALGORITHM, SigningKeyService } from './signing-key.service.js';

/** The client id of Quire's own sign-in (register/login); tokens it issues carry every scope. */
export const FIRST_PARTY_CLIENT_ID = 'quire';

/** JOSE `typ` of access tokens (RFC 9068); tokens of any other type are not access tokens. */
const ACCESS_TOKEN_TYPE = 'at+jwt';
/** JOSE `typ` of the short-lived tokens the /authorize pages pass between their steps. */
const INTERACTION_TOKEN_TYPE = 'quire-interaction+jwt';

export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  client_id: string;
  scope: string;
  sid?: string;
  jti: string;
}

export interface IssuedAccessToken {
  accessToken: string;
  expiresIn: number;
  jti: string;
}

/**
 * Signs and verifies the issuer's JWTs with the current RS256 key (header `kid`):
 * access tokens (spec 5.2: iss, sub, aud = client id, client_id, scope, iat, exp, jti), OpenID Connect ID
 * tokens, and interaction tokens of the sign-in and consent pages.
 */
@Injectable()
export class TokenService {
  constructor(
    private readonly keys: SigningKeyService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get issuer(): string {
    return this.config.authIssuerUrl;
  }

  get accessTokenTtlSeconds(): number {
    return this.config.auth.accessTokenTtlSeconds;
  }

  async issueAccessToken(input: {
    userId: string;
    clientId: string;
    scopes: string[];
    sessionId?: string;
    extra?: Record<string, unknown>;
  }): Promise<IssuedAccessToken> {
    const { kid, privateKey } = await this.keys.signingKey();
    const jti = randomUUID();
    const expiresIn = this.accessTokenTtlSeconds;
    const accessToken = await new SignJWT({
      ...input.extra,
      client_id: input.clientId,
      scope: input.scopes.join(' '),
      ...(input.sessionId ? { sid: input.sessionId } : {}),
    })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: ACCESS_TOKEN_TYPE })
      .setIssuer(this.issuer)
      .setSubject(input.userId)
      .setAudience(input.clientId)
      .setIssuedAt()
      .setExpirationTime(`${expiresIn}s`)
      .setJti(jti)
      .sign(privateKey);
    return { accessToken, expiresIn, jti };
  }

  /** An OpenID Connect ID token for `clientId` (code flow with the `openid` scope). */
  async issueIdToken(input: {
    userId: string;
    clientId: string;
    authTime: Date;
    nonce?: string | null;
    claims?: Record<string, unknown>;
  }): Promise<string> {
    const { kid, privateKey } = await this.keys.signingKey();
    return new SignJWT({
      ...input.claims,
      auth_time: Math.floor(input.authTime.getTime() / 1000),
      azp: input.clientId,
      ...(input.nonce ? { nonce: input.nonce } : {}),
    })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setSubject(input.userId)
      .setAudience(input.clientId)
      .setIssuedAt()
      .setExpirationTime(`${this.accessTokenTtlSeconds}s`)
      .sign(privateKey);
  }

  /**
   * Verifies signature (RS256 only; `alg: none` and HMAC are refused; the `kid` must be published), token
   * type, issuer, expiry and that the audience is the token's own client. Any failure is INVALID_TOKEN.
   */
  async verifyAccessToken(token: string): Promise<AccessTokenClaims> {
    const jwks = createLocalJWKSet({ keys: await this.keys.publicJwks() });
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: this.issuer,
        algorithms: [SIGNING_ALGORITHM],
        typ: ACCESS_TOKEN_TYPE,
      });
      const claims = payload as Partial<AccessTokenClaims>;
      const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (
        typeof claims.sub !== 'string' ||
        typeof claims.client_id !== 'string' ||
        typeof claims.scope !== 'string' ||
        typeof claims.jti !== 'string' ||
        !audiences.includes(claims.client_id)
      ) {
        throw new AppException(ErrorCode.INVALID_TOKEN, {
          details: [{ reason: 'token claims are incomplete' }],
        });
      }
      return claims as AccessTokenClaims;
    } catch (error) {
      if (error instanceof AppException) {
        throw error;
      }
      const reason =
        error instanceof joseErrors.JWTExpired ? 'token expired' : 'token signature or claims invalid';
      throw new AppException(ErrorCode.INVALID_TOKEN, { details: [{ reason }] });
    }
  }

  /** A signed, short-lived value for one step of the /authorize pages; only `purpose` accepts it back. */
  async signInteraction(purpose: string, data: Record<string, unknown>, ttlSeconds: number): Promise<string> {
    const { kid, privateKey } = await this.keys.signingKey();
    return new SignJWT({ data })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: INTERACTION_TOKEN_TYPE })
      .setIssuer(this.issuer)
      .setAudience(`urn:quire:${purpose}`)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(privateKey);
  }

  /** The data of an interaction token, or null when it is forged, expired or for another purpose. */
  async verifyInteraction(purpose: string, token: string): Promise<Record<string, unknown> | null> {
    try {
      const jwks = createLocalJWKSet({ keys: await this.keys.publicJwks() });
      const { payload } = await jwtVerify(token, jwks, {
        issuer: this.issuer,
        audience: `urn:quire:${purpose}`,
        algorithms: [SIGNING_ALGORITHM],
        typ: INTERACTION_TOKEN_TYPE,
      });
      const data = payload.data;
      return typeof data === 'object' && data !== null && !Array.isArray(data)
        ? (data as Record<string, unknown>)
        : null;
    } catch {
      return null;
    }
  }
}
