import { type CanActivate, type ExecutionContext, Inject, Injectable, Logger, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../../config/app.config.js';
import type { AuthenticatedRequest } from '../auth/auth.decorators.js';
import { AppException } from '../errors/app.exception.js';
import { ErrorCode } from '../errors/error-code.js';
import { RateLimitStore } from './rate-limit.store.js';

const SKIP_RATE_LIMIT = 'quire:skip-rate-limit';

/** Probes and metrics scrapes are not counted. */
export const SkipRateLimit = (): MethodDecorator & ClassDecorator => SetMetadata(SKIP_RATE_LIMIT, true);

/** The budget's owner: the API key, OAuth client + user, or user when authenticated; the address otherwise. */
export function rateLimitKey(request: Request & AuthenticatedRequest): string {
  const principal = request.principal;
  if (principal?.apiKeyId) {
    return `key:${principal.apiKeyId}`;
  }
  if (principal?.kind === 'oauth' && principal.clientId) {
    return `client:${principal.clientId}:${principal.userId}`;
  }
  if (principal) {
    return `user:${principal.userId}`;
  }
  return `ip:${request.ip ?? 'unknown'}`;
}

/**
 * Spec 8: 100 requests a minute per caller (RATE_LIMIT_PER_MINUTE), fixed windows. Runs after the
 * authentication guard so an authenticated caller is counted by identity, not address. Every counted
 * response carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds); a refused one is
 * 429 RATE_LIMIT_EXCEEDED with Retry-After. If the shared store is unreachable the request is let through
 * (and logged): an outage of Redis must not take the API down.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly logger = new Logger(RateLimitGuard.name);

  constructor(
    private readonly reflector: Reflector,
    private readonly store: RateLimitStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') {
      return true;
    }
    if (this.reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, [context.getHandler(), context.getClass()])) {
      return true;
    }
    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const response = context.switchToHttp().getResponse<Response>();
    const { perMinute: limit, windowMs } = this.config.rateLimit;
    let hit;
    try {
      hit = await this.store.hit(rateLimitKey(request), windowMs);
    } catch (error) {
      this.logger.warn({ err: error }, 'rate-limit store unavailable; request not counted');
      return true;
    }
    const resetSeconds = Math.max(1, Math.ceil(hit.resetMs / 1000));
    response.setHeader('RateLimit-Limit', String(limit));
    response.setHeader('RateLimit-Remaining', String(Math.max(0, limit - hit.hits)));
    response.setHeader('RateLimit-Reset', String(resetSeconds));
    if (hit.hits > limit) {
      throw new AppException(ErrorCode.RATE_LIMIT_EXCEEDED, {
        headers: { 'Retry-After': String(resetSeconds) },
        details: [{ reason: `limit of ${limit} requests per ${Math.round(windowMs / 1000)} s reached` }],
      });
    }
    return true;
  }
}
