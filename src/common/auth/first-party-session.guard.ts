import { applyDecorators, type CanActivate, type ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import type { AuthenticatedRequest } from './auth.decorators.js';
import { AppException } from '../errors/app.exception.js';
import { type Principal, SCOPES } from './principal.js';

/**
 * Account-security operations (sessions, two-step verification, API keys, OAuth clients and bindings,
 * administration) need a first-party sign-in with its full scope: an API key, a third-party client's token or a
 * first-party token narrowed at `/token` (`scope=doc:read`) could otherwise mint credentials with more scopes than
 * it was given. Runs after the global authentication guard.
 */
@Injectable()
export class FirstPartySessionGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    assertFirstPartySession(context.switchToHttp().getRequest<AuthenticatedRequest>().principal);
    return true;
  }
}

/** FORBIDDEN unless the principal is a first-party signed-in session with every scope (the guard's rule). */
export function assertFirstPartySession(principal: Principal | undefined): asserts principal is Principal {
  if (principal?.kind !== 'session') {
    throw AppException.forbidden('this operation needs a signed-in session, not an API key or client token');
  }
  const missing = SCOPES.filter((scope) => !principal.scopes.includes(scope));
  if (missing.length > 0) {
    throw AppException.forbidden(`this operation needs a session with every scope; this token lacks ${missing.join(' ')}`);
  }
}

/**
 * The operation needs a first-party signed-in session (spec is silent; see docs/decisions/auth-*.md):
 * account security and tenancy changes cannot be made with an API key or a third-party client's token.
 */
export const FirstPartyOnly = (): MethodDecorator & ClassDecorator => applyDecorators(UseGuards(FirstPartySessionGuard));
