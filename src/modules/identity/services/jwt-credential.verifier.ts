import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { CredentialVerifier } from '../../../common/auth/credential-verifier.js';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { TtlCache } from '../../../common/cache/ttl-cache.js';
import { AccessChangeListener } from '../../../database/access-change.listener.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { SessionService } from './session.service.js';
import { FIRST_PARTY_CLIENT_ID, TokenService } from './token.service.js';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Resolves bearer credentials. A JWT must verify (TokenService) and, when it belongs to a session, that
 * session must still be active; a token of an OAuth client without a session needs the client to exist. Other credentials are handed to `verifyOther` (API keys, added by the
 * API-key service).
 */
@Injectable()
export class JwtCredentialVerifier extends CredentialVerifier {
  private otherVerifier?: (credential: string, request: Request) => Promise<Principal | undefined>;

  /** Verified access tokens (signature, claims, live session or client), reused for AUTH_CACHE_TTL_MS at most. */
  private readonly verified: TtlCache<string, { principal: Principal; expiresAt: number }>;

  constructor(
    private readonly tx: TransactionHost,
    private readonly tokens: TokenService,
    private readonly sessions: SessionService,
    private readonly accessChanges: AccessChangeListener,
  ) {
    super();
    this.verified = accessChanges.createCache();
  }

  /** Registers the verifier for credentials that are not JWTs (API keys). */
  useOtherVerifier(verifier: (credential: string, request: Request) => Promise<Principal | undefined>): void {
    this.otherVerifier = verifier;
  }

  async verify(credential: string, request: Request): Promise<Principal> {
    if (!JWT_SHAPE.test(credential)) {
      const principal = await this.otherVerifier?.(credential, request);
      if (!principal) {
        throw new AppException(ErrorCode.UNAUTHORIZED, { details: [{ reason: 'unknown credential' }] });
      }
      return principal;
    }
    const useCache = this.accessChanges.active && !this.tx.inTransaction;
    const hit = useCache ? this.verified.get(credential) : undefined;
    if (hit && hit.expiresAt > Date.now()) {
      return { ...hit.principal, scopes: [...hit.principal.scopes] };
    }
    const principal = await this.verifyJwt(credential);
    if (useCache) {
      const expiresAt = (this.expiryOf(credential) ?? 0) * 1000;
      this.verified.set(credential, { principal, expiresAt }, expiresAt - Date.now());
    }
    return principal;
  }

  private expiryOf(token: string): number | undefined {
    try {
      const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp?: unknown };
      return typeof payload.exp === 'number' ? payload.exp : undefined;
    } catch {
      return undefined;
    }
  }

  private async verifyJwt(credential: string): Promise<Principal> {
    const claims = await this.tokens.verifyAccessToken(credential);
    if (claims.sid && !(await this.sessions.isActive(claims.sid))) {
      throw new AppException(ErrorCode.INVALID_TOKEN, { details: [{ reason: 'session ended' }] });
    }
    if (
      !claims.sid &&
      claims.client_id !== FIRST_PARTY_CLIENT_ID &&
      !(await this.clientExists(claims.client_id))
    ) {
      throw new AppException(ErrorCode.INVALID_TOKEN, { details: [{ reason: 'client no longer exists' }] });
    }
    return {
      userId: claims.sub,
      kind: claims.client_id === FIRST_PARTY_CLIENT_ID ? 'session' : 'oauth',
      scopes: claims.scope.split(' ').filter(Boolean),
      clientId: claims.client_id,
      sessionId: claims.sid,
      tokenId: claims.jti,
    };
  }

  /** Client-credentials tokens have no session: they stop working when their client is deleted. */
  private async clientExists(clientId: string): Promise<boolean> {
    const rows = await this.tx.manager.query<unknown[]>(`SELECT 1 FROM oauth_clients WHERE client_id = $1`, [
      clientId,
    ]);
    return rows.length > 0;
  }
}
