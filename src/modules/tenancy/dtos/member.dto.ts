import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { FixedEcho, ReadOnlyEcho } from '../../../common/http/validation-decorators.js';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { MEMBER_STATUSES, type MemberStatus, ORGANIZATION_ROLES, type OrganizationRole } from '../entities/organization-member.entity.js';
import { LowerCaseUuid, UserSummaryDto } from './tenancy-common.dto.js';

export class AddMemberDto {
  @ApiProperty({ format: 'uuid' }) @LowerCaseUuid() @IsUUID() userId: string;
  @ApiPropertyOptional({ enum: ORGANIZATION_ROLES, default: 'member', description: '`owner` only by transfer-ownership' })
  @IsOptional()
  @IsIn(ORGANIZATION_ROLES)
  role?: OrganizationRole;
}

/**
 * PATCH: `role` and `status`. The body may be the member as read: `id` and `userId` must then be this member's (a
 * membership never moves to another user), and the other read-only keys are ignored.
 */
export class UpdateMemberDto {
  @ApiPropertyOptional({ enum: ORGANIZATION_ROLES }) @IsOptional() @IsIn(ORGANIZATION_ROLES) role?: OrganizationRole;
  @ApiPropertyOptional({ enum: MEMBER_STATUSES }) @IsOptional() @IsIn(MEMBER_STATUSES) status?: MemberStatus;

  @FixedEcho({ type: String, format: 'uuid', description: "The member's id; when given it must be the id in the path" })
  id?: unknown;

  @FixedEcho({ type: String, format: 'uuid', description: "The member's user; when given it must be this member's (fixed)" })
  userId?: unknown;

  @ReadOnlyEcho() organizationId?: unknown;
  @ReadOnlyEcho() user?: unknown;
  @ReadOnlyEcho() joinedAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
}

export class MemberQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: ORGANIZATION_ROLES }) @IsOptional() @IsIn(ORGANIZATION_ROLES) role?: OrganizationRole;
  @ApiPropertyOptional({ enum: MEMBER_STATUSES }) @IsOptional() @IsIn(MEMBER_STATUSES) status?: MemberStatus;
  @ApiPropertyOptional({ description: 'Case-insensitive substring of the display name or e-mail', maxLength: 100 })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  search?: string;
}

export class MemberResponseDto {
  @ApiProperty({ format: 'uuid', description: 'The member id used in /members/{memberId}' }) id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty({ type: UserSummaryDto }) user: UserSummaryDto;
  @ApiProperty({ enum: ORGANIZATION_ROLES }) role: OrganizationRole;
  @ApiProperty({ enum: MEMBER_STATUSES }) status: MemberStatus;
  @ApiProperty() joinedAt: string;
  @ApiProperty() updatedAt: string;
}
