import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUrl, IsUUID, Matches, MaxLength, MinLength, ValidateBy } from 'class-validator';
import { GRANTABLE_ROLES, type GrantableRole } from '../entities/organization-invitation.entity.js';
import { ORGANIZATION_ROLES, type OrganizationRole } from '../entities/organization-member.entity.js';
import { ORGANIZATION_TYPES, type OrganizationEntity, type OrganizationType } from '../entities/organization.entity.js';
import { ORGANIZATION_NAME_MAX } from '../policies/organization-name.js';
import { effectiveSettings, settingsProblem } from '../policies/organization-roles.js';
import { FixedEcho, PresentNotNull, ReadOnlyEcho, Trimmed } from '../../../common/http/validation-decorators.js';
import { isoRequired, LowerCaseUuid } from './tenancy-common.dto.js';

export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const SLUG_RULE = 'lower-case letters, digits and hyphens, 1-64 characters, not starting or ending with a hyphen';

const IsOrganizationSettings = (): PropertyDecorator =>
  ValidateBy({
    name: 'isOrganizationSettings',
    validator: {
      validate: (value: unknown) => settingsProblem(value) === null,
      defaultMessage: (args) => settingsProblem(args?.value) ?? 'settings are not valid',
    },
  });

const settingsDoc = {
  type: 'object',
  additionalProperties: true,
  description:
    'Free-form JSON object. Keys Quire reads: `allowJoinRequests` (boolean, default true) and `defaultJoinRole` ' +
    '(`admin`, `member` or `guest`, default `member`): the role an approved join request grants.',
  example: { allowJoinRequests: true, defaultJoinRole: 'member' },
} as const;

export class CreateOrganizationDto {
  @ApiProperty({ maxLength: ORGANIZATION_NAME_MAX, description: 'Trimmed; blank is refused', minLength: 1 }) @Trimmed() @IsString() @MinLength(1) @MaxLength(ORGANIZATION_NAME_MAX) name: string;
  @ApiProperty({ description: `Globally unique; ${SLUG_RULE}`, example: 'acme', pattern: SLUG_PATTERN.source })
  @IsString()
  @Matches(SLUG_PATTERN, { message: `slug must be ${SLUG_RULE}` })
  slug: string;
  @ApiPropertyOptional({ maxLength: 200, description: 'Trimmed; blank is refused (leave it out for none)', minLength: 1 }) @IsOptional() @Trimmed() @IsString() @MinLength(1) @MaxLength(200) displayName?: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) description?: string;
  @ApiProperty({ enum: ORGANIZATION_TYPES }) @IsIn(ORGANIZATION_TYPES) type: OrganizationType;
  @ApiPropertyOptional(settingsDoc) @IsOptional() @IsOrganizationSettings() settings?: Record<string, unknown>;
}

/**
 * PATCH: every field optional; `displayName`, `description` and `logoUrl` may be null to clear them. The body may be
 * the organization as read (GET's detail): `id`, `slug` and `type` must then be this organization's (none of them
 * ever changes), and the other read-only keys are ignored.
 */
export class UpdateOrganizationDto {
  @ApiPropertyOptional({ maxLength: ORGANIZATION_NAME_MAX, description: 'Trimmed; blank is refused', minLength: 1 }) @PresentNotNull() @Trimmed() @IsString() @MinLength(1) @MaxLength(ORGANIZATION_NAME_MAX) name?: string;
  @ApiPropertyOptional({ maxLength: 200, nullable: true, type: String, description: 'Trimmed; blank is refused (null clears it)', minLength: 1 }) @IsOptional() @Trimmed() @IsString() @MinLength(1) @MaxLength(200) displayName?: string | null;
  @ApiPropertyOptional({ maxLength: 2000, nullable: true, type: String }) @IsOptional() @IsString() @MaxLength(2000) description?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 2048 }) @IsOptional() @IsUrl({ require_tld: false }) @MaxLength(2048) logoUrl?: string | null;
  @ApiPropertyOptional({ ...settingsDoc, description: `${settingsDoc.description} Merged key by key into the stored settings; a key set to null is removed.` })
  @PresentNotNull()
  @IsOrganizationSettings()
  settings?: Record<string, unknown>;

  @FixedEcho({ type: String, format: 'uuid', description: "The organization's id; when given it must be the id in the path" })
  id?: unknown;

  @FixedEcho({ type: String, description: "The organization's slug; when given it must be the current one (the slug is fixed)" })
  slug?: unknown;

  @FixedEcho({ enum: ORGANIZATION_TYPES, description: "The organization's type; when given it must be the current one (the type is fixed)" })
  type?: unknown;

  @ReadOnlyEcho() ownerId?: unknown;
  @ReadOnlyEcho() createdBy?: unknown;
  @ReadOnlyEcho() role?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
  @ReadOnlyEcho() defaultWorkspaceId?: unknown;
  @ReadOnlyEcho() statistics?: unknown;
}

export class TransferOwnershipDto {
  @ApiProperty({ format: 'uuid', description: 'An active member who becomes the owner; the previous owner becomes admin' })
  @LowerCaseUuid()
  @IsUUID()
  userId: string;
}

export class OrganizationSettingsDto {
  @ApiProperty() allowJoinRequests: boolean;
  @ApiProperty({ enum: GRANTABLE_ROLES }) defaultJoinRole: GrantableRole;
  [key: string]: unknown;
}

export class OrganizationStatisticsDto {
  @ApiProperty({ description: 'Members of every status' }) memberCount: number;
  @ApiProperty() activeMemberCount: number;
  @ApiProperty({ description: 'Workspaces not deleted (archived included)' }) workspaceCount: number;
  @ApiProperty({ description: 'Documents not deleted in the organization' }) documentCount: number;
}

export class OrganizationResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ nullable: true, type: String }) displayName: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ enum: ORGANIZATION_TYPES }) type: OrganizationType;
  @ApiProperty({ nullable: true, type: String }) logoUrl: string | null;
  @ApiProperty({ type: OrganizationSettingsDto }) settings: OrganizationSettingsDto;
  @ApiProperty({ format: 'uuid' }) ownerId: string;
  @ApiProperty({ format: 'uuid' }) createdBy: string;
  @ApiProperty({ enum: ORGANIZATION_ROLES, description: "The caller's role" }) role: OrganizationRole;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static from(org: OrganizationEntity, role: OrganizationRole): OrganizationResponseDto {
    return {
      id: org.id,
      name: org.name,
      slug: org.slug,
      displayName: org.displayName,
      description: org.description,
      type: org.type,
      logoUrl: org.logoUrl,
      settings: effectiveSettings(org.settings),
      ownerId: org.ownerId,
      createdBy: org.createdBy,
      role,
      createdAt: isoRequired(org.createdAt),
      updatedAt: isoRequired(org.updatedAt),
    };
  }
}

export class OrganizationDetailDto extends OrganizationResponseDto {
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'The workspace created with the organization' })
  defaultWorkspaceId: string | null;
  @ApiProperty({ type: OrganizationStatisticsDto }) statistics: OrganizationStatisticsDto;
}
