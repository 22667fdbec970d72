import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { AppException } from '../errors/app.exception.js';
import { ErrorCode } from '../errors/error-code.js';
import {
  AUTHENTICATED_ONLY,
  type AuthenticatedRequest,
  IS_PUBLIC,
  REQUIRED_SCOPES,
} from './auth.decorators.js';
import { ACCEPTS_APPLY, DEPRECATED, markDeprecated } from '../http/deprecated.decorator.js';
import { RateLimiter } from '../rate-limit/rate-limiter.service.js';
import { CredentialVerifier } from './credential-verifier.js';
import type { Scope } from './principal.js';

/** `Authorization: Bearer <token or API key>`, or `X-API-Key: <key>`. */
export function credentialOf(request: Request): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match?.[1];
  }
  const apiKey = request.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.trim() !== '' ? apiKey.trim() : undefined;
}

/**
 * Global, deny by default: a route must declare @Public(), @Authenticated() or @RequireScopes(...).
 * Protected routes need a valid credential (401 otherwise) carrying every required scope (403 otherwise).
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: CredentialVerifier,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') {
      return true;
    }
    const targets = [context.getHandler(), context.getClass()];
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets);
    const scopes = this.reflector.getAllAndOverride<Scope[] | undefined>(REQUIRED_SCOPES, targets);
    const authenticatedOnly = this.reflector.getAllAndOverride<boolean>(AUTHENTICATED_ONLY, targets);
    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    const usesApply =
      request.query?.apply !== undefined &&
      this.reflector.getAllAndOverride<boolean>(ACCEPTS_APPLY, targets) === true;
    if (usesApply || this.reflector.get<boolean | undefined>(DEPRECATED, context.getHandler())) {
      // First thing on every matched route, so that failures of a deprecated operation carry it too.
      markDeprecated(context.switchToHttp().getResponse<Response>());
    }

    if (isPublic) {
      return true;
    }
    if (!scopes && !authenticatedOnly) {
      throw AppException.forbidden('route declares no access rule');
    }
    const credential = credentialOf(request);
    if (!credential) {
      await this.chargeAddress(context, request);
      throw new AppException(ErrorCode.UNAUTHORIZED, { details: [{ reason: 'missing bearer token' }] });
    }
    try {
      request.principal = await this.verifier.verify(credential, request);
    } catch (error) {
      await this.chargeAddress(context, request);
      throw error;
    }
    const missing = (scopes ?? []).filter((scope) => !request.principal?.scopes.includes(scope));
    if (missing.length > 0) {
      throw AppException.forbidden(`missing scope ${missing.join(' ')}`);
    }
    return true;
  }

  /**
   * A refused credential is counted against the caller's address (the rate-limit guard never sees it), so
   * guessing tokens or keys is rate limited like any anonymous traffic. Throws RATE_LIMIT_EXCEEDED once the
   * address's budget is spent.
   */
  private async chargeAddress(
    context: ExecutionContext,
    request: Request & AuthenticatedRequest,
  ): Promise<void> {
    request.principal = undefined;
    await this.limiter.consume(request, context.switchToHttp().getResponse<Response>());
  }
}
