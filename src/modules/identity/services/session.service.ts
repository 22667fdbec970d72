import { Inject, Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { offsetOf } from '../../../common/http/pagination.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { AccessChangeListener } from '../../../database/access-change.listener.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { SessionEntity } from '../entities/session.entity.js';
import { SecretBoxService } from './secret-box.service.js';
import { hashToken, newOpaqueToken } from './secret-tokens.js';
import { returnedRows } from '../../../database/sql-result.js';
import { FIRST_PARTY_CLIENT_ID } from './token.service.js';

export interface ClientMeta {
  userAgent?: string;
  ip?: string;
}

export interface NewSession {
  userId: string;
  meta: ClientMeta;
  authMethod: string;
  /** Defaults to the first-party client `quire`. */
  clientId?: string;
  /** Granted scopes of an OAuth authorization; omitted for first-party sessions. */
  scopes?: string[];
  /** False for an OAuth authorization whose client may not use refresh tokens. */
  withRefreshToken?: boolean;
  /** Lifetime; default the refresh token's (an implicit grant's session lives as long as its one access token). */
  ttlSeconds?: number;
}

export type RotationResult =
  { ok: true; session: SessionEntity; refreshToken: string } | { ok: false; reason: string };

/**
 * Sessions: one per sign-in (first party) or per OAuth authorization (a refresh-token family). A session owns
 * one current refresh token; rotating it records the old one as spent, and presenting a spent token again
 * revokes the whole session (after a short reuse grace window, see rotate()). Access tokens carry the session id
 * (`sid`), so ending a session stops them too.
 */
@Injectable()
export class SessionService {
  constructor(
    private readonly tx: TransactionHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly accessChanges: AccessChangeListener,
    private readonly box: SecretBoxService,
  ) {}

  async create(input: NewSession): Promise<{ session: SessionEntity; refreshToken?: string }> {
    const refreshToken = input.withRefreshToken === false ? undefined : newOpaqueToken('qrt_');
    const session = this.tx.manager.create(SessionEntity, {
      userId: input.userId,
      clientId: input.clientId ?? FIRST_PARTY_CLIENT_ID,
      scope: input.scopes ? input.scopes.join(' ') : null,
      authMethod: input.authMethod,
      refreshTokenHash: refreshToken ? hashToken(refreshToken) : null,
      userAgent: input.meta.userAgent?.slice(0, 512) ?? null,
      ip: input.meta.ip ?? null,
      expiresAt: new Date(Date.now() + (input.ttlSeconds ?? this.config.auth.refreshTokenTtlSeconds) * 1000),
    });
    await this.tx.manager.save(session);
    return { session, refreshToken };
  }

  /**
   * Exchanges a refresh token of `clientId` for its successor (sliding expiry). A token that was already
   * rotated revokes its session — unless it comes back within the reuse grace window
   * (`REFRESH_TOKEN_REUSE_GRACE_SECONDS`) while its successor is still the session's current, unused token: then
   * it is a client refreshing from several requests at once, and it gets that same successor again. The caller
   * throws after a failure returns so the revocation commits.
   * `check` runs on the session inside the rotation's transaction: if it throws (a refresh asking for scopes the
   * session does not hold), the rotation is undone and the presented token stays valid.
   */
  async rotate(
    refreshToken: string,
    clientId: string,
    check: (session: SessionEntity) => void = () => undefined,
  ): Promise<RotationResult> {
    const oldHash = hashToken(refreshToken);
    // The successor is derived from the presented token with a server-side key, not drawn at random: requests
    // racing with one token all compute the same successor, so the ones that lose the race can be handed it
    // without the token ever being stored (only its hash is). Without the key, a token does not reveal its successor.
    const next = `qrt_${await this.box.mac('refresh-token-successor', refreshToken)}`;
    const nextHash = hashToken(next);
    return this.tx.run(async () => {
      const [updated] = returnedRows<{ id: string }>(
        await this.tx.manager.query(
          `UPDATE sessions
            SET refresh_token_hash = $2, last_used_at = now(), expires_at = now() + make_interval(secs => $4)
          WHERE refresh_token_hash = $1 AND client_id = $3 AND revoked_at IS NULL AND expires_at > now()
          RETURNING id`,
          [oldHash, nextHash, clientId, this.config.auth.refreshTokenTtlSeconds],
        ),
      );
      if (updated) {
        await this.tx.manager.query(
          `INSERT INTO spent_refresh_tokens (token_hash, session_id) VALUES ($1, $2)`,
          [oldHash, updated.id],
        );
        const session = await this.tx.manager.findOneByOrFail(SessionEntity, { id: updated.id });
        check(session);
        return { ok: true as const, session, refreshToken: next };
      }
      // A racing rotation that won holds the row lock until it commits; this statement runs after that, so it sees
      // the spent token. `spent_at` is the winner's transaction time; the clock, not this transaction's start, is
      // compared with it (so a window of 0 is off even for a transaction that began before the winner's).
      const spent = await this.tx.manager.query<Array<{ session_id: string; in_grace: boolean }>>(
        `SELECT session_id, spent_at > clock_timestamp() - make_interval(secs => $2) AS in_grace
           FROM spent_refresh_tokens WHERE token_hash = $1`,
        [oldHash, this.config.auth.refreshTokenReuseGraceSeconds],
      );
      if (spent.length > 0) {
        if (spent[0].in_grace) {
          // Only while the successor is the current token: once it has been used itself (the presented token is
          // then spent twice over) this is theft; a revoked, ended or expired session is never revived.
          const [current] = await this.tx.manager.query<Array<{ id: string }>>(
            `SELECT id FROM sessions
              WHERE id = $1 AND refresh_token_hash = $2 AND client_id = $3 AND revoked_at IS NULL AND expires_at > now()`,
            [spent[0].session_id, nextHash, clientId],
          );
          if (current) {
            const session = await this.tx.manager.findOneByOrFail(SessionEntity, { id: current.id });
            check(session);
            return { ok: true as const, session, refreshToken: next };
          }
        }
        await this.revoke(spent[0].session_id);
        return { ok: false as const, reason: 'refresh token was already used; the session has been revoked' };
      }
      return { ok: false as const, reason: 'refresh token is invalid, expired or revoked' };
    });
  }

  /** Like rotate(), but throws INVALID_TOKEN (after the reuse revocation has committed). */
  async rotateOrThrow(
    refreshToken: string,
    clientId: string,
    options: {
      /** See rotate(). */
      check?: (session: SessionEntity) => void;
      /** The request field that carried the token, for the error detail (`refreshToken` on /auth/refresh). */
      field?: string;
    } = {},
  ): Promise<{ session: SessionEntity; refreshToken: string }> {
    const result = await this.rotate(refreshToken, clientId, options.check);
    if (!result.ok) {
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ field: options.field ?? 'refresh_token', reason: result.reason }],
      });
    }
    return result;
  }

  /** True while the session exists, is not revoked and has not expired. */
  async isActive(sessionId: string): Promise<boolean> {
    const rows = await this.tx.manager.query<unknown[]>(
      'SELECT 1 FROM sessions WHERE id = $1 AND revoked_at IS NULL AND expires_at > now()',
      [sessionId],
    );
    return rows.length > 0;
  }

  async listActive(
    userId: string,
    page: { page: number; pageSize: number },
  ): Promise<{ items: SessionEntity[]; total: number }> {
    const [items, total] = await this.tx.manager
      .createQueryBuilder(SessionEntity, 's')
      .where('s.user_id = :userId AND s.revoked_at IS NULL AND s.expires_at > now()', { userId })
      .orderBy('s.last_used_at', 'DESC')
      .addOrderBy('s.id', 'ASC')
      .skip(offsetOf(page))
      .take(page.pageSize)
      .getManyAndCount();
    return { items, total };
  }

  /** Ends one of the user's active sessions; NOT_FOUND for another user's or an ended session. */
  async end(userId: string, sessionId: string): Promise<void> {
    // Verified tokens of the session are cached (docs/auth.md): drop them here the moment this commits.
    this.accessChanges.changed();
    const rows = returnedRows<{ id: string }>(
      await this.tx.manager.query(
        `UPDATE sessions SET revoked_at = now(), refresh_token_hash = NULL
          WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > now() RETURNING id`,
        [sessionId, userId],
      ),
    );
    if (rows.length === 0) {
      throw AppException.notFound('session');
    }
  }

  /** Ends every active session of the user (first-party and OAuth authorizations); returns how many. */
  async endAll(userId: string): Promise<number> {
    // Verified tokens of the session are cached (docs/auth.md): drop them here the moment this commits.
    this.accessChanges.changed();
    const rows = returnedRows<{ id: string }>(
      await this.tx.manager.query(
        `UPDATE sessions SET revoked_at = now(), refresh_token_hash = NULL
          WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now() RETURNING id`,
        [userId],
      ),
    );
    return rows.length;
  }

  async revoke(sessionId: string): Promise<void> {
    // Verified tokens of the session are cached (docs/auth.md): drop them here the moment this commits.
    this.accessChanges.changed();
    await this.tx.manager.query(
      `UPDATE sessions SET revoked_at = now(), refresh_token_hash = NULL WHERE id = $1 AND revoked_at IS NULL`,
      [sessionId],
    );
  }

  /** Ends every authorization of a deleted OAuth client. */
  async revokeForClient(clientId: string): Promise<void> {
    // Verified tokens of the session are cached (docs/auth.md): drop them here the moment this commits.
    this.accessChanges.changed();
    await this.tx.manager.query(
      `UPDATE sessions SET revoked_at = now(), refresh_token_hash = NULL WHERE client_id = $1 AND revoked_at IS NULL`,
      [clientId],
    );
  }
}
