import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { SessionEntity } from '../entities/session.entity.js';

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function newOpaqueToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** Sessions of first-party sign-in; ending one stops its refresh token and its access tokens. */
@Injectable()
export class SessionService {
  constructor(
    private readonly tx: TransactionHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(userId: string, meta: { userAgent?: string; ip?: string }): Promise<{ session: SessionEntity; refreshToken: string }> {
    const refreshToken = newOpaqueToken('qrt_');
    const session = this.tx.manager.create(SessionEntity, {
      userId,
      refreshTokenHash: hashToken(refreshToken),
      userAgent: meta.userAgent?.slice(0, 512) ?? null,
      ip: meta.ip ?? null,
      expiresAt: new Date(Date.now() + this.config.auth.refreshTokenTtlSeconds * 1000),
    });
    await this.tx.manager.save(session);
    return { session, refreshToken };
  }

  /** True while the session exists, is not revoked and has not expired. */
  async isActive(sessionId: string): Promise<boolean> {
    const rows = await this.tx.manager.query<unknown[]>(
      'SELECT 1 FROM sessions WHERE id = $1 AND revoked_at IS NULL AND expires_at > now()',
      [sessionId],
    );
    return rows.length > 0;
  }
}
