import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { SCOPES } from '../../../common/auth/principal.js';
import type { ApiKeyEntity } from '../entities/api-key.entity.js';
import { IsInstant, Trimmed } from '../../../common/http/validation-decorators.js';

export class CreateApiKeyDto {
  @ApiProperty({
    example: 'CI pipeline',
    description: 'Trimmed; blank is refused',
    minLength: 1,
    maxLength: 100,
  })
  @Trimmed()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  name: string;

  @ApiProperty({
    enum: SCOPES,
    isArray: true,
    description: 'Spec 5.8 scopes the key carries (at least one)',
    minItems: 1,
    maxItems: SCOPES.length,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCOPES.length)
  @IsString({ each: true })
  scopes: string[];

  @ApiPropertyOptional({
    description: 'ISO 8601; must be in the future. Omitted: the key does not expire',
    example: '2030-01-01T00:00:00Z',
  })
  @IsOptional()
  @IsInstant('expiresAt must be an ISO 8601 date or date-time such as 2030-01-01T00:00:00Z')
  expiresAt?: string;

  @ApiPropertyOptional({
    type: [String],
    description: 'Client addresses or CIDR ranges allowed to use the key; empty: any',
    example: ['203.0.113.0/24', '2001:db8::1'],
    maxItems: 50,
    maxLength: 64,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  ipAllowlist?: string[];
}

export class ApiKeyResponseDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'The first characters of the key, to recognise it', example: 'qk_AbC12xYz' })
  prefix: string;
  @ApiProperty({ enum: SCOPES, isArray: true }) scopes: string[];
  @ApiProperty({ type: [String] }) ipAllowlist: string[];
  @ApiProperty({ nullable: true, type: String }) expiresAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastUsedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastUsedIp: string | null;
  @ApiProperty({ nullable: true, type: String }) revokedAt: string | null;
  @ApiProperty({ enum: ['active', 'revoked', 'expired'] }) status: 'active' | 'revoked' | 'expired';
  @ApiProperty() createdAt: string;

  static from(key: ApiKeyEntity, now = new Date()): ApiKeyResponseDto {
    const iso = (value: Date | null): string | null => (value ? new Date(value).toISOString() : null);
    const status = key.revokedAt
      ? 'revoked'
      : key.expiresAt && new Date(key.expiresAt) <= now
        ? 'expired'
        : 'active';
    return {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      scopes: key.scopes,
      ipAllowlist: key.ipAllowlist,
      expiresAt: iso(key.expiresAt),
      lastUsedAt: iso(key.lastUsedAt),
      lastUsedIp: key.lastUsedIp,
      revokedAt: iso(key.revokedAt),
      status,
      createdAt: new Date(key.createdAt).toISOString(),
    };
  }
}

/** The create answer: the only time the key is readable. */
export class ApiKeyWithSecretDto extends ApiKeyResponseDto {
  @ApiProperty({
    description: 'Shown once; send as `Authorization: Bearer <key>` or `X-API-Key: <key>`',
    example: 'qk_…',
  })
  key: string;
}

export class ApiKeyUsageDto {
  @ApiProperty() usedAt: string;
  @ApiProperty({ nullable: true, type: String }) ip: string | null;
  @ApiProperty() method: string;
  @ApiProperty() path: string;
}
