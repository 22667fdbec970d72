import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { AppException } from '../errors/app.exception.js';
import { ErrorCode } from '../errors/error-code.js';
import { ERROR_ENVELOPE_SCHEMA } from '../http/api-envelope.decorator.js';
import type { Principal, Scope } from './principal.js';

export const IS_PUBLIC = 'quire:public';
export const REQUIRED_SCOPES = 'quire:scopes';
export const AUTHENTICATED_ONLY = 'quire:authenticated';

/** The route needs no credential. Every route must say @Public(), @Authenticated() or @RequireScopes(). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

const protectedDocs = [
  ApiBearerAuth(),
  ApiUnauthorizedResponse({ description: 'UNAUTHORIZED / INVALID_TOKEN', schema: ERROR_ENVELOPE_SCHEMA }),
  ApiForbiddenResponse({ description: 'FORBIDDEN', schema: ERROR_ENVELOPE_SCHEMA }),
];

/** Any valid credential will do; no particular scope is needed (account and tenancy management). */
export const Authenticated = (): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(AUTHENTICATED_ONLY, true), ...protectedDocs);

/** The credential must carry every listed scope (spec 5.8); missing scope → 403 FORBIDDEN. */
export const RequireScopes = (...scopes: Scope[]): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(REQUIRED_SCOPES, scopes), ...protectedDocs);

export interface AuthenticatedRequest {
  principal?: Principal;
}

/** The caller's Principal; only on protected routes. */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal => {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (!request.principal) {
      throw new AppException(ErrorCode.UNAUTHORIZED);
    }
    return request.principal;
  },
);
