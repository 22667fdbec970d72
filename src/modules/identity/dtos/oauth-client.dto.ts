import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';
import { SCOPES } from '../../../common/auth/principal.js';
import {
  CLIENT_GRANT_TYPES,
  type ClientGrantType,
  type OAuthClientEntity,
} from '../entities/oauth-client.entity.js';
import { Trimmed } from '../../../common/http/validation-decorators.js';

export class CreateOAuthClientDto {
  @ApiProperty({ example: 'Reporting dashboard', description: 'Trimmed; blank is refused', minLength: 1, maxLength: 100 })
  @Trimmed()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  name: string;

  @ApiPropertyOptional({
    type: [String],
    description: 'Exact redirect URIs (https, or http on a loopback host); required for authorization_code',
    example: ['https://dashboard.example.com/oauth/callback'],
    maxItems: 10,
    maxLength: 2048,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @IsString({ each: true })
  @MaxLength(2048, { each: true })
  redirectUris?: string[];

  @ApiPropertyOptional({
    enum: SCOPES,
    isArray: true,
    description: 'The most a token of this client may carry (spec 5.8); required unless given as `scopes`',
    minItems: 1,
    maxItems: SCOPES.length,
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCOPES.length)
  @IsString({ each: true })
  allowedScopes?: string[];

  @ApiPropertyOptional({ enum: SCOPES, isArray: true, description: 'The same as allowedScopes (the name API keys use)', minItems: 1, maxItems: SCOPES.length })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCOPES.length)
  @IsString({ each: true })
  scopes?: string[];

  @ApiPropertyOptional({
    enum: CLIENT_GRANT_TYPES,
    isArray: true,
    description:
      'Default: authorization_code, refresh_token and client_credentials with redirect URIs; client_credentials without',
    minItems: 1,
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(CLIENT_GRANT_TYPES, { each: true })
  grantTypes?: ClientGrantType[];
}

export class OAuthClientResponseDto {
  @ApiProperty({ example: 'qc_3f9a1c0d7e2b4a6f8c1d2e3f' }) clientId: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String] }) redirectUris: string[];
  @ApiProperty({ enum: SCOPES, isArray: true }) allowedScopes: string[];
  @ApiProperty({ enum: CLIENT_GRANT_TYPES, isArray: true }) grantTypes: ClientGrantType[];
  @ApiProperty({ description: 'client_secret_basic or client_secret_post', example: 'client_secret_basic' })
  tokenEndpointAuthMethod: string;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
  @ApiProperty({ nullable: true, type: String }) secretRotatedAt: string | null;

  static from(client: OAuthClientEntity): OAuthClientResponseDto {
    return {
      clientId: client.clientId,
      name: client.name,
      redirectUris: client.redirectUris,
      allowedScopes: client.allowedScopes,
      grantTypes: client.grantTypes,
      tokenEndpointAuthMethod: 'client_secret_basic',
      createdAt: new Date(client.createdAt).toISOString(),
      updatedAt: new Date(client.updatedAt).toISOString(),
      secretRotatedAt: client.secretRotatedAt ? new Date(client.secretRotatedAt).toISOString() : null,
    };
  }
}

/** Create and regenerate-secret answers: the only time the secret is readable. */
export class OAuthClientWithSecretDto extends OAuthClientResponseDto {
  @ApiProperty({ description: 'Shown once; stored hashed', example: 'qcs_…' }) clientSecret: string;
}
