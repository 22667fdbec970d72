import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { APP_CONFIG, type AppConfig } from '../../config/app.config.js';
import type { AuthenticatedRequest } from '../auth/auth.decorators.js';
import { AppException } from '../errors/app.exception.js';
import { ErrorCode } from '../errors/error-code.js';
import { RateLimitStore } from './rate-limit.store.js';

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

/** Set on a request once it has been counted (or found exempt), so no later step counts it again. */
const COUNTED = Symbol('quire:rate-limit-counted');

type CountableRequest = Request & AuthenticatedRequest & { [COUNTED]?: true };

/** `@SkipRateLimit()` routes (probes, scrapes): nothing counts them, not even when they fail. */
export function markRateLimitExempt(request: Request): void {
  (request as CountableRequest)[COUNTED] = true;
}

/**
 * Spec 8: RATE_LIMIT_PER_MINUTE requests per caller per window (fixed windows). Every counted response
 * carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (seconds); a refused one is
 * 429 RATE_LIMIT_EXCEEDED with Retry-After. If the shared store is unreachable the request is let through
 * (and logged): an outage of Redis must not take the API down.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimiter.name);

  constructor(
    private readonly store: RateLimitStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Counts the request against its caller's budget; throws RATE_LIMIT_EXCEEDED once it is spent. */
  async consume(request: Request & AuthenticatedRequest, response: Response): Promise<void> {
    (request as CountableRequest)[COUNTED] = true;
    const { perMinute: limit, windowMs } = this.config.rateLimit;
    let hit;
    try {
      hit = await this.store.hit(rateLimitKey(request), windowMs);
    } catch (error) {
      this.logger.warn({ err: error }, 'rate-limit store unavailable; request not counted');
      return;
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
  }

  /**
   * Counts a request that failed before the guards ran (unknown path, wrong method, a body that could not be
   * read: malformed, too large, of another type), against its address since no credential was read. Without this
   * such requests were never counted and never refused. Resolves to the 429 to answer instead once the budget is
   * spent, else null; `null` at once (no promise) for a request already counted or exempt.
   */
  countUncounted(request: Request, response: Response): Promise<AppException | null> | null {
    if ((request as CountableRequest)[COUNTED]) {
      return null;
    }
    return this.consume(request, response).then(
      () => null,
      (error: unknown) => (error instanceof AppException ? error : null),
    );
  }
}
