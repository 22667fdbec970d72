import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { GRANTABLE_ROLES, type GrantableRole } from '../entities/organization-invitation.entity.js';
import { JOIN_REQUEST_STATUSES, type JoinRequestStatus } from '../entities/join-request.entity.js';
import { ORGANIZATION_ROLES, type OrganizationRole } from '../entities/organization-member.entity.js';
import { UserSummaryDto } from './tenancy-common.dto.js';
import { NOT_BLANK_PATTERN } from '../../../common/http/validation-decorators.js';


export class CreateJoinRequestDto {
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) message?: string;
}

export class ApproveJoinRequestDto {
  @ApiPropertyOptional({ enum: ORGANIZATION_ROLES, description: "Default: the organization's settings.defaultJoinRole; `owner` is refused" })
  @IsOptional()
  @IsIn(ORGANIZATION_ROLES)
  role?: OrganizationRole;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) reviewNote?: string;
}

export class RejectJoinRequestDto {
  @ApiProperty({ minLength: 1, maxLength: 2000, description: 'Required; blank (only spaces) is refused', pattern: NOT_BLANK_PATTERN.source })
  @IsString()
  @IsNotEmpty()
  @Matches(NOT_BLANK_PATTERN, { message: 'reviewNote must not be blank' })
  @MaxLength(2000)
  reviewNote: string;
}

export class JoinRequestQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: JOIN_REQUEST_STATUSES }) @IsOptional() @IsIn(JOIN_REQUEST_STATUSES) status?: JoinRequestStatus;
}

export class JoinRequestResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ format: 'uuid' }) userId: string;
  @ApiProperty({ type: UserSummaryDto }) applicant: UserSummaryDto;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  @ApiProperty({ enum: JOIN_REQUEST_STATUSES }) status: JoinRequestStatus;
  @ApiProperty({ enum: GRANTABLE_ROLES, nullable: true, description: 'The role granted on approval' }) role: GrantableRole | null;
  @ApiProperty({ nullable: true, type: String }) reviewNote: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) reviewedBy: string | null;
  @ApiProperty({ nullable: true, type: String }) reviewedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) cancelledAt: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}
