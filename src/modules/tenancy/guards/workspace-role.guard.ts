import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { AuthenticatedRequest } from '../../../common/auth/auth.decorators.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type WorkspaceNeed, WorkspaceAccessService } from '../services/workspace-access.service.js';
import { WORKSPACE_NEED_KEY } from './tenancy-metadata.js';

/** Enforces @RequireWorkspaceRole / @RequireWorkspacePermission against the route's workspace. */
@Injectable()
export class WorkspaceRoleGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: WorkspaceAccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const need = this.reflector.getAllAndOverride<WorkspaceNeed | undefined>(WORKSPACE_NEED_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!need) {
      return true;
    }
    const request = context.switchToHttp().getRequest<Request & AuthenticatedRequest>();
    if (!request.principal) {
      throw new AppException(ErrorCode.UNAUTHORIZED);
    }
    const { organizationId, workspaceId } = request.params;
    if (typeof organizationId !== 'string' || typeof workspaceId !== 'string') {
      throw AppException.notFound('workspace');
    }
    await this.access.requireIn(request.principal.userId, organizationId, workspaceId, need);
    return true;
  }
}
