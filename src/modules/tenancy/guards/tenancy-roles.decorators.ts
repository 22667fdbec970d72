import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiNotFoundResponse } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import type { OrganizationRole } from '../entities/organization-member.entity.js';
import type { WorkspaceRole } from '../entities/workspace-member.entity.js';
import type { WorkspaceNeed } from '../services/workspace-access.service.js';
import { OrganizationRoleGuard } from './organization-role.guard.js';
import { ORG_ROLE_KEY, WORKSPACE_NEED_KEY } from './tenancy-metadata.js';
import { WorkspaceRoleGuard } from './workspace-role.guard.js';


const notFoundDoc = ApiNotFoundResponse({ description: 'NOT_FOUND (unknown id, or one of another organization)', schema: ERROR_ENVELOPE_SCHEMA });

/**
 * The caller must be an active member of the organization named by the `organizationId` route parameter,
 * with at least `minimum` (owner > admin > member > guest). Non-members get 404 NOT_FOUND, suspended
 * members and lower roles 403 FORBIDDEN. Combine with @Authenticated() or @RequireScopes(), which run first.
 */
export const RequireOrgRole = (minimum: OrganizationRole): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(ORG_ROLE_KEY, minimum), UseGuards(OrganizationRoleGuard), notFoundDoc);

const WORKSPACE_ROLE_NEED: Record<WorkspaceRole, WorkspaceNeed> = { viewer: 'read', editor: 'write', owner: 'manage' };

/**
 * The caller needs at least `minimum` in the workspace named by the `workspaceId` route parameter (which
 * must belong to the `organizationId` parameter): `viewer` reads, `editor` writes, `owner` manages.
 * Organization owners/admins pass every level; archived workspaces refuse `editor` and `owner` levels.
 */
export const RequireWorkspaceRole = (minimum: WorkspaceRole): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(WORKSPACE_NEED_KEY, WORKSPACE_ROLE_NEED[minimum]), UseGuards(WorkspaceRoleGuard), notFoundDoc);

/** The spec 3 rules that are not a plain role level: `archive` (and restore) and `delete`. */
export const RequireWorkspacePermission = (need: 'archive' | 'delete'): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(WORKSPACE_NEED_KEY, need), UseGuards(WorkspaceRoleGuard), notFoundDoc);
