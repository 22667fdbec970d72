import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { FixedEcho, ReadOnlyEcho } from '../../../common/http/validation-decorators.js';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { MEMBER_STATUSES, type MemberStatus } from '../entities/organization-member.entity.js';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../entities/workspace-member.entity.js';
import { LowerCaseUuid, UserSummaryDto } from './tenancy-common.dto.js';

export class AddWorkspaceMemberDto {
  @ApiProperty({ format: 'uuid', description: 'Must already be a member of the organization' }) @LowerCaseUuid() @IsUUID() userId: string;
  @ApiPropertyOptional({ enum: WORKSPACE_ROLES, default: 'editor' }) @IsOptional() @IsIn(WORKSPACE_ROLES) role?: WorkspaceRole;
}

/**
 * PATCH: `role` and `status`. The body may be the workspace member as read: `id` and `userId` must then be this
 * member's (a membership never moves to another user), and the other read-only keys are ignored.
 */
export class UpdateWorkspaceMemberDto {
  @ApiPropertyOptional({ enum: WORKSPACE_ROLES }) @IsOptional() @IsIn(WORKSPACE_ROLES) role?: WorkspaceRole;
  @ApiPropertyOptional({ enum: MEMBER_STATUSES }) @IsOptional() @IsIn(MEMBER_STATUSES) status?: MemberStatus;

  @FixedEcho({ type: String, format: 'uuid', description: "The member's id; when given it must be the id in the path" })
  id?: unknown;

  @FixedEcho({ type: String, format: 'uuid', description: "The member's user; when given it must be this member's (fixed)" })
  userId?: unknown;

  @ReadOnlyEcho() organizationId?: unknown;
  @ReadOnlyEcho() workspaceId?: unknown;
  @ReadOnlyEcho() user?: unknown;
  @ReadOnlyEcho() joinedAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
}

export class WorkspaceMemberQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: WORKSPACE_ROLES }) @IsOptional() @IsIn(WORKSPACE_ROLES) role?: WorkspaceRole;
  @ApiPropertyOptional({ enum: MEMBER_STATUSES }) @IsOptional() @IsIn(MEMBER_STATUSES) status?: MemberStatus;
}

export class WorkspaceMemberResponseDto {
  @ApiProperty({ format: 'uuid', description: 'The member id used in /members/{memberId}' }) id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ format: 'uuid' }) workspaceId: string;
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty({ type: UserSummaryDto }) user: UserSummaryDto;
  @ApiProperty({ enum: WORKSPACE_ROLES }) role: WorkspaceRole;
  @ApiProperty({ enum: MEMBER_STATUSES }) status: MemberStatus;
  @ApiProperty() joinedAt: string;
  @ApiProperty() updatedAt: string;
}
