import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { PresentNotNull, Trimmed } from '../../../common/http/validation-decorators.js';
import {
  OAUTH_PROVIDERS,
  type OAuthProvider,
  type OidcProviderEntity,
} from '../entities/oidc-provider.entity.js';

const URL_OPTIONS = { require_tld: false, protocols: ['http', 'https'], require_protocol: true };
/** An OAuth scope token (RFC 6749 3.3): printable ASCII but space, " and \. */
const SCOPE_TOKEN_PATTERN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

export class ProviderParamDto {
  @ApiProperty({ enum: OAUTH_PROVIDERS })
  @IsIn(OAUTH_PROVIDERS)
  provider: OAuthProvider;
}

export class CreateOidcProviderDto {
  @ApiProperty({ enum: OAUTH_PROVIDERS, description: 'Tenant.OAuthProvider; one configuration per provider' })
  @IsIn(OAUTH_PROVIDERS)
  provider: OAuthProvider;

  @ApiPropertyOptional({ example: 'Google', description: 'Trimmed; blank is refused', minLength: 1, maxLength: 100 })
  @IsOptional()
  @Trimmed()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  displayName?: string;

  @ApiProperty({
    description: 'OpenID issuer URL (discovery is read from it): https, or http only on a loopback host',
    example: 'https://accounts.google.com',
    maxLength: 2048,
  })
  @IsUrl(URL_OPTIONS)
  @MaxLength(2048)
  issuer: string;

  @ApiProperty({ minLength: 1, maxLength: 512 })
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  clientId: string;

  @ApiPropertyOptional({ description: 'Stored encrypted; never returned', maxLength: 2048 })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  clientSecret?: string;

  @ApiPropertyOptional({ type: [String], default: ['openid', 'email', 'profile'], maxItems: 20, pattern: SCOPE_TOKEN_PATTERN.source })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @Matches(SCOPE_TOKEN_PATTERN, { each: true, message: 'each scope must be a scope token' })
  scopes?: string[];

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ description: 'For OAuth 2.0 providers without discovery' })
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  authorizationEndpoint?: string;

  @ApiPropertyOptional({ description: 'For OAuth 2.0 providers without discovery' })
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  tokenEndpoint?: string;

  @ApiPropertyOptional({ description: 'For OAuth 2.0 providers without discovery' })
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  userinfoEndpoint?: string;
}

/** Fields left out stay as they are; the ones stored as non-null values refuse an explicit null (VALIDATION_ERROR). */
export class UpdateOidcProviderDto {
  @ApiPropertyOptional({ description: 'Trimmed; blank is refused', minLength: 1, maxLength: 100 }) @PresentNotNull() @Trimmed() @IsString() @MinLength(1) @MaxLength(100) displayName?: string;
  @ApiPropertyOptional({ maxLength: 2048 }) @PresentNotNull() @IsUrl(URL_OPTIONS) @MaxLength(2048) issuer?: string;
  @ApiPropertyOptional({ minLength: 1, maxLength: 512 }) @PresentNotNull() @IsString() @MinLength(1) @MaxLength(512) clientId?: string;
  @ApiPropertyOptional({ description: 'Stored encrypted; never returned', maxLength: 2048 })
  @PresentNotNull()
  @IsString()
  @MaxLength(2048)
  clientSecret?: string;
  @ApiPropertyOptional({ type: [String], maxItems: 20, pattern: SCOPE_TOKEN_PATTERN.source })
  @PresentNotNull()
  @IsArray()
  @ArrayMaxSize(20)
  @Matches(SCOPE_TOKEN_PATTERN, { each: true, message: 'each scope must be a scope token' })
  scopes?: string[];
  @ApiPropertyOptional() @PresentNotNull() @IsBoolean() enabled?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsUrl(URL_OPTIONS) authorizationEndpoint?: string;
  @ApiPropertyOptional() @IsOptional() @IsUrl(URL_OPTIONS) tokenEndpoint?: string;
  @ApiPropertyOptional() @IsOptional() @IsUrl(URL_OPTIONS) userinfoEndpoint?: string;
}

export class OidcProviderAdminDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: OAUTH_PROVIDERS }) provider: OAuthProvider;
  @ApiProperty() displayName: string;
  @ApiProperty() issuer: string;
  @ApiProperty() clientId: string;
  @ApiProperty({ description: 'Whether a client secret is stored (the secret itself is never returned)' })
  hasClientSecret: boolean;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty() enabled: boolean;
  @ApiProperty({ nullable: true, type: String }) authorizationEndpoint: string | null;
  @ApiProperty({ nullable: true, type: String }) tokenEndpoint: string | null;
  @ApiProperty({ nullable: true, type: String }) userinfoEndpoint: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static from(entity: OidcProviderEntity): OidcProviderAdminDto {
    return {
      id: entity.id,
      provider: entity.provider,
      displayName: entity.displayName,
      issuer: entity.issuer,
      clientId: entity.clientId,
      hasClientSecret: entity.clientSecretEncrypted !== null,
      scopes: entity.scopes,
      enabled: entity.enabled,
      authorizationEndpoint: entity.authorizationEndpoint,
      tokenEndpoint: entity.tokenEndpoint,
      userinfoEndpoint: entity.userinfoEndpoint,
      createdAt: new Date(entity.createdAt).toISOString(),
      updatedAt: new Date(entity.updatedAt).toISOString(),
    };
  }
}

/** What the public login page needs to show a "Sign in with …" button. */
export class OidcProviderPublicDto {
  @ApiProperty({ enum: OAUTH_PROVIDERS }) provider: OAuthProvider;
  @ApiProperty() displayName: string;
  @ApiProperty({
    description: 'GET it (with redirectUri) for the provider sign-in URL',
    example: '/api/v1/auth/oauth/google/authorize',
  })
  authorizeUrl: string;
}

export class ThirdPartyAuthorizeQueryDto {
  @ApiProperty({
    description: 'Where the provider sends the browser back; must be registered at the provider',
    maxLength: 2048,
  })
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  @MaxLength(2048)
  redirectUri: string;
}

export class ThirdPartyAuthorizeDto {
  @ApiProperty({ description: 'Send the browser here' }) authorizationUrl: string;
  @ApiProperty({ description: 'Returned by the provider with the code; valid for `expiresIn` seconds' })
  state: string;
  @ApiProperty({ example: 600 }) expiresIn: number;
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

export class ThirdPartyCallbackDto {
  @ApiPropertyOptional({
    description: 'The `code` the provider returned. Required unless sent as `authorizationCode`.',
    minLength: 1,
    maxLength: 4096,
  })
  // One of the two must be a string: null counts as not sent, so two nulls are refused.
  @ValidateIf((body: ThirdPartyCallbackDto) => isAbsent(body.authorizationCode) || !isAbsent(body.code))
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  code?: string;

  @ApiPropertyOptional({
    description: 'The same code under the name spec 2.1 gives it (bind request); send one of the two.',
    minLength: 1,
    maxLength: 4096,
  })
  @ValidateIf((body: ThirdPartyCallbackDto) => isAbsent(body.code) || !isAbsent(body.authorizationCode))
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  authorizationCode?: string;

  @ApiPropertyOptional({
    description: 'Optional: when sent, it must be the `redirectUri` of the authorize step the `state` names.',
    maxLength: 2048,
  })
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  @MaxLength(2048)
  redirectUri?: string;

  @ApiProperty({ description: 'The `state` the provider returned', minLength: 1, maxLength: 512 })
  @IsString()
  @MinLength(1)
  @MaxLength(512)
  state: string;

  @ApiPropertyOptional({ description: 'The `iss` the provider returned (RFC 9207), when it sends one', maxLength: 2048 })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  iss?: string;
}

/** Spec 2.1 bind request. `state` (optional, Quire addition) names the authorize step it follows. */
export class BindOAuthDto {
  @ApiProperty({ minLength: 1, maxLength: 4096 })
  @IsString()
  @MinLength(1)
  @MaxLength(4096)
  authorizationCode: string;

  @ApiPropertyOptional({
    description:
      'Where the provider returned the code. Optional after an authorize step made with your bearer token (its redirectUri is used); required without one.',
    maxLength: 2048,
  })
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  @MaxLength(2048)
  redirectUri?: string;

  @ApiPropertyOptional({
    description: 'The state of GET /auth/oauth/{provider}/authorize made with your bearer token',
    maxLength: 512,
  })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  state?: string;
}

export class OAuthBindingDto {
  @ApiProperty({ enum: OAUTH_PROVIDERS }) provider: OAuthProvider;
  @ApiProperty({ description: 'The account id at the provider' }) subject: string;
  @ApiProperty({ nullable: true, type: String }) email: string | null;
  @ApiProperty({ nullable: true, type: String }) displayName: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty({ nullable: true, type: String }) lastLoginAt: string | null;
}
