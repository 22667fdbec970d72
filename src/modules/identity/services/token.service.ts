import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { createLocalJWKSet, errors as joseErrors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { SIGNING_ALGORITHM, SigningKeyService } from './signing-key.service.js';

/** The client id of Quire's own sign-in (register/login); tokens it issues carry every scope. */
export const FIRST_PARTY_CLIENT_ID = 'quire';

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

/** Signs and verifies access tokens (spec 5.2): RS256 JWTs with iss, sub, aud, client_id, scope, iat, exp, jti. */
@Injectable()
export class TokenService {
  constructor(
    private readonly keys: SigningKeyService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  get issuer(): string {
    return this.config.authIssuerUrl;
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
    const expiresIn = this.config.auth.accessTokenTtlSeconds;
    const accessToken = await new SignJWT({
      ...input.extra,
      client_id: input.clientId,
      scope: input.scopes.join(' '),
      ...(input.sessionId ? { sid: input.sessionId } : {}),
    })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: 'at+jwt' })
      .setIssuer(this.issuer)
      .setSubject(input.userId)
      .setAudience(input.clientId)
      .setIssuedAt()
      .setExpirationTime(`${expiresIn}s`)
      .setJti(jti)
      .sign(privateKey);
    return { accessToken, expiresIn, jti };
  }

  /**
   * Verifies signature (RS256 only; `alg: none` and HMAC are refused), issuer, expiry and that the audience
   * is the token's own client. Any failure is INVALID_TOKEN.
   */
  async verifyAccessToken(token: string): Promise<AccessTokenClaims> {
    const jwks = createLocalJWKSet({ keys: await this.keys.publicJwks() });
    try {
      const { payload } = await jwtVerify(token, jwks, { issuer: this.issuer, algorithms: [SIGNING_ALGORITHM] });
      const claims = payload as Partial<AccessTokenClaims>;
      const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (
        typeof claims.sub !== 'string' ||
        typeof claims.client_id !== 'string' ||
        typeof claims.scope !== 'string' ||
        typeof claims.jti !== 'string' ||
        !audiences.includes(claims.client_id)
      ) {
        throw new AppException(ErrorCode.INVALID_TOKEN, { details: [{ reason: 'token claims are incomplete' }] });
      }
      return claims as AccessTokenClaims;
    } catch (error) {
      if (error instanceof AppException) {
        throw error;
      }
      const reason = error instanceof joseErrors.JWTExpired ? 'token expired' : 'token signature or claims invalid';
      throw new AppException(ErrorCode.INVALID_TOKEN, { details: [{ reason }] });
    }
  }
}
