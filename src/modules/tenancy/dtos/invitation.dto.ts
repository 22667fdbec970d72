import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { GRANTABLE_ROLES, type GrantableRole, INVITATION_STATUSES, type InvitationStatus } from '../entities/organization-invitation.entity.js';
import { ORGANIZATION_TYPES, type OrganizationType } from '../entities/organization.entity.js';
import { MemberResponseDto } from './member.dto.js';
import { UserSummaryDto } from './tenancy-common.dto.js';

export const DEFAULT_INVITATION_DAYS = 7;

export class CreateInvitationDto {
  @ApiProperty({ format: 'email', maxLength: 320 }) @IsEmail() @MaxLength(320) email: string;
  @ApiPropertyOptional({ enum: GRANTABLE_ROLES, default: 'member' }) @IsOptional() @IsIn(GRANTABLE_ROLES) role?: GrantableRole;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) message?: string;
  @ApiPropertyOptional({ type: 'integer', format: 'int32', minimum: 1, maximum: 365, default: DEFAULT_INVITATION_DAYS })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(365)
  expiresInDays?: number;
}

export class InvitationQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: INVITATION_STATUSES }) @IsOptional() @IsIn(INVITATION_STATUSES) status?: InvitationStatus;
}

/** An invitation as the organization's owners/admins (and its inviter) see it. The token is never shown. */
export class InvitationResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: GRANTABLE_ROLES }) role: GrantableRole;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  @ApiProperty({ enum: INVITATION_STATUSES }) status: InvitationStatus;
  @ApiProperty({ format: 'uuid' }) invitedBy: string;
  @ApiProperty({ type: UserSummaryDto, nullable: true }) inviter: UserSummaryDto | null;
  @ApiProperty() expiresAt: string;
  @ApiProperty({ nullable: true, type: String }) acceptedAt: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) acceptedBy: string | null;
  @ApiProperty({ nullable: true, type: String }) declinedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) revokedAt: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) revokedBy: string | null;
  @ApiProperty({ nullable: true, type: String }) expiredAt: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

/**
 * The answer to creating an invitation: the invitation, plus its token and acceptance URL, shown this once to the
 * inviter (the database keeps only the token's hash). Accepting still needs the invitee's own sign-in with the
 * invited e-mail address, so the inviter holding the token gains nothing; they can pass the link on another way.
 */
export class CreatedInvitationDto extends InvitationResponseDto {
  @ApiProperty({ description: 'The invitation token (GET /invitations/{token}, …/accept, …/decline); shown only here and in the e-mail' })
  token: string;
  @ApiProperty({ description: 'GET this URL for the details; POST …/accept or …/decline signed in as the invitee' }) url: string;
}

export class InvitedOrganizationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ nullable: true, type: String }) displayName: string | null;
  @ApiProperty({ nullable: true, type: String }) logoUrl: string | null;
  @ApiProperty({ enum: ORGANIZATION_TYPES }) type: OrganizationType;
}

/** What the holder of an invitation token sees (GET /invitations/{token}). */
export class InvitationDetailsDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: InvitedOrganizationDto }) organization: InvitedOrganizationDto;
  @ApiProperty() email: string;
  @ApiProperty({ enum: GRANTABLE_ROLES }) role: GrantableRole;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  @ApiProperty({ enum: INVITATION_STATUSES }) status: InvitationStatus;
  @ApiProperty({ nullable: true, type: String, description: "The inviter's display name" }) invitedByName: string | null;
  @ApiProperty() expiresAt: string;
  @ApiProperty() createdAt: string;
}

export class InvitationAcceptedDto {
  @ApiProperty({ type: InvitationDetailsDto }) invitation: InvitationDetailsDto;
  @ApiProperty({ type: MemberResponseDto, description: 'The organization member record created' }) member: MemberResponseDto;
}
