import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { AuthenticatedRequest } from '../auth/auth.decorators.js';
import { markRateLimitExempt, RateLimiter } from './rate-limiter.service.js';

export { rateLimitKey } from './rate-limiter.service.js';

const SKIP_RATE_LIMIT = 'quire:skip-rate-limit';

/** Probes and metrics scrapes are not counted. */
export const SkipRateLimit = (): MethodDecorator & ClassDecorator => SetMetadata(SKIP_RATE_LIMIT, true);

/**
 * Runs after the authentication guard so an authenticated caller is counted by identity, not address.
 * (Requests the authentication guard refuses with 401 are counted against their address there.)
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') {
      return true;
    }
    if (
      this.reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, [context.getHandler(), context.getClass()])
    ) {
      markRateLimitExempt(context.switchToHttp().getRequest<Request>());
      return true;
    }
    const http = context.switchToHttp();
    await this.limiter.consume(
      http.getRequest<Request & AuthenticatedRequest>(),
      http.getResponse<Response>(),
    );
    return true;
  }
}
