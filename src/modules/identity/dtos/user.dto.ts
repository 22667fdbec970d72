import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsNotEmpty, IsOptional, IsString, IsTimeZone, IsUrl, IsUUID, Matches, MaxLength } from 'class-validator';
import { PresentNotNull, ReadOnlyEcho, Trimmed } from '../../../common/http/validation-decorators.js';
import type { UserEntity } from '../entities/user.entity.js';

export class UserResponseDto {
  @ApiProperty() id: string;
  @ApiProperty() email: string;
  @ApiProperty() displayName: string;
  @ApiProperty({ nullable: true, type: String }) avatarUrl: string | null;
  @ApiProperty({ nullable: true, type: String }) locale: string | null;
  @ApiProperty({ nullable: true, type: String }) timezone: string | null;
  @ApiProperty({ nullable: true, type: String }) phone: string | null;
  @ApiProperty({ nullable: true, type: String }) defaultOrganizationId: string | null;
  @ApiProperty({ nullable: true, type: String }) defaultWorkspaceId: string | null;
  @ApiProperty() twoFactorEnabled: boolean;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static from(user: UserEntity): UserResponseDto {
    return {
      id: user.id,
      email: user.email,
      displayName: user.displayName,
      avatarUrl: user.avatarUrl,
      locale: user.locale,
      timezone: user.timezone,
      phone: user.phone,
      defaultOrganizationId: user.defaultOrganizationId,
      defaultWorkspaceId: user.defaultWorkspaceId,
      twoFactorEnabled: user.twoFactorEnabled,
      createdAt: new Date(user.createdAt).toISOString(),
      updatedAt: new Date(user.updatedAt).toISOString(),
    };
  }
}

/**
 * Spec 2.1: every field optional. The body may be the user as read (`GET /users/me`) with changes: `id`,
 * `twoFactorEnabled` and the timestamps are ignored; `email` and `phone` are not changed here (the e-mail never,
 * the phone by enrolling SMS two-step verification), so when sent they must be the stored values.
 */
/** A language tag: a 2–3 letter language, then subtags joined by - or _. */
const LOCALE_PATTERN = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$/;
/**
 * The pattern alone had no end. RFC 5646 asks implementations to hold at least 35 characters (language, script,
 * region) and tags with extensions go past that, so the bound is a generous one on the stored text.
 */
const MAX_LOCALE_LENGTH = 255;

export class UpdateUserDto {
  @ApiPropertyOptional({ description: 'Not null: every user has a name; trimmed, blank is refused', minLength: 1, maxLength: 100 }) @PresentNotNull() @Trimmed() @IsString() @IsNotEmpty() @MaxLength(100) displayName?: string;
  @ApiPropertyOptional({ description: 'An http(s) URL; null removes it', maxLength: 2048, nullable: true, type: String }) @IsOptional() @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }) @MaxLength(2048) avatarUrl?: string;
  @ApiPropertyOptional({ example: 'en-US', nullable: true, type: String, description: 'A language tag: a 2–3 letter language, then subtags joined by - or _ (en, de-CH, zh_CN); null resets it', pattern: LOCALE_PATTERN.source, maxLength: MAX_LOCALE_LENGTH })
  @IsOptional()
  @Matches(LOCALE_PATTERN)
  @MaxLength(MAX_LOCALE_LENGTH)
  locale?: string;
  @ApiPropertyOptional({ example: 'Europe/Berlin', description: 'An IANA time zone; null resets it', maxLength: 64, nullable: true, type: String }) @IsOptional() @IsString() @MaxLength(64) @IsTimeZone() timezone?: string;
  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'An organization you are an active member of; null clears it (and the default workspace with it)',
  })
  @IsOptional()
  @IsUUID()
  defaultOrganizationId?: string | null;
  @ApiPropertyOptional({ format: 'uuid', nullable: true, type: String, description: 'A workspace of the default organization you can read; null clears it' })
  @IsOptional()
  @IsUUID()
  defaultWorkspaceId?: string | null;

  @ApiPropertyOptional({ type: String, description: 'Not changed here; when sent it must be the stored address (any letter case)' })
  @IsOptional()
  @Allow()
  email?: unknown;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Not changed here (enrol SMS two-step verification); when sent it must be the stored number' })
  @IsOptional()
  @Allow()
  phone?: unknown;

  @ReadOnlyEcho() id?: unknown;
  @ReadOnlyEcho() twoFactorEnabled?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
}
