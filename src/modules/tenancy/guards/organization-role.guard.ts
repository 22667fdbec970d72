import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { AuthenticatedRequest } from '../../../common/auth/auth.decorators.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import type { OrganizationRole } from '../entities/organization-member.entity.js';
import { OrganizationAccessService } from '../services/organization-access.service.js';
import { ORG_ROLE_KEY } from './tenancy-metadata.js';

/** Enforces @RequireOrgRole(minimum) against the `organizationId` route parameter. */
@Injectable()
export class OrganizationRoleGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: OrganizationAccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const minimum = this.reflector.getAllAndOverride<OrganizationRole | undefined>(ORG_ROLE_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!minimum) {
      return true;
    }
    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    if (!request.principal) {
      throw new AppException(ErrorCode.UNAUTHORIZED);
    }
    const organizationId = request.params.organizationId;
    if (typeof organizationId !== 'string') {
      throw AppException.notFound('organization');
    }
    await this.access.require(request.principal.userId, organizationId, minimum);
    return true;
  }
}
