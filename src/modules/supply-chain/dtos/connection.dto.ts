import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  Allow,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
  NotEquals,
} from 'class-validator';
import { PageQueryDto } from '../../../common/http/pagination.js';
import { FixedEcho, IsInstant, PresentNotNull, ReadOnlyEcho, Trimmed } from '../../../common/http/validation-decorators.js';
import {
  ACCEPT_MODES,
  ACCESS_MODES,
  BINDING_STATUSES,
  CONNECTION_STATUSES,
  PROPAGATION_EVENT_TYPES,
} from '../domain/supply-chain.types.js';
import { FilterGroupDocDto, ScFieldDto } from './common.dto.js';

export class AccessControlDocDto {
  @ApiProperty({ enum: ACCESS_MODES }) mode: string;
  @ApiPropertyOptional({
    type: [String],
    format: 'uuid',
    description: 'Organization ids (whitelist: admitted at once)',
  })
  allowedOrganizations?: string[];
}

export class ShareScopeDocDto {
  @ApiPropertyOptional({ enum: ['all', 'filter'], description: '{type: all}' }) type?: string;
  @ApiPropertyOptional({ enum: ['filter', 'all'], description: '{mode: filter, filterGroup}' }) mode?: string;
  @ApiPropertyOptional({ type: FilterGroupDocDto, description: 'On catalog field ids' })
  filterGroup?: FilterGroupDocDto;
}

export class PropagationEventsDocDto {
  @ApiPropertyOptional({ enum: PROPAGATION_EVENT_TYPES, isArray: true, description: 'Default: all four' })
  eventTypes?: string[];
  @ApiPropertyOptional({ default: false }) batchMerge?: boolean;
  @ApiPropertyOptional({ type: 'integer', default: 300, minimum: 1, maximum: 86400 })
  batchWindowSeconds?: number;
}

export class DefaultReceiverConfigDocDto {
  @ApiPropertyOptional({
    type: 'object',
    description: 'A field mapping {rules[], unmappedFields}',
    additionalProperties: true,
  })
  suggestedFieldMapping?: unknown;
  @ApiPropertyOptional({ enum: ACCEPT_MODES }) suggestedAcceptMode?: string;
}

const accessControlDoc = {
  description:
    'public | approval | {mode: whitelist|approval|public, allowedOrganizations: [organization ids]}; default approval',
  oneOf: [
    { type: 'string', enum: ['public', 'approval'] },
    { $ref: '#/components/schemas/AccessControlDocDto' },
  ],
};

export class CreateConnectionDto {
  @ApiProperty({ minLength: 1, maxLength: 255 }) @Trimmed() @IsString() @MinLength(1) @MaxLength(255) name: string;
  @ApiPropertyOptional({ maxLength: 10_000 }) @IsOptional() @IsString() @MaxLength(10_000) description?: string;
  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'Required on POST /connections; on POST /catalogs/{catalogId}/connections it must equal the path when given',
  })
  @IsOptional()
  @IsUUID()
  sourceCatalogId?: string;
  @ApiPropertyOptional({ default: 'multiple', description: 'A string such as multiple (kept as given)', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  shareMode?: string;
  @ApiPropertyOptional(accessControlDoc) @IsOptional() @Allow() accessControl?: unknown;
  @ApiPropertyOptional({ type: ShareScopeDocDto, description: 'Default {type: all}' })
  @IsOptional()
  @Allow()
  shareScope?: unknown;
  @ApiPropertyOptional({ type: DefaultReceiverConfigDocDto })
  @IsOptional()
  @Allow()
  defaultReceiverConfig?: unknown;
  @ApiPropertyOptional({ type: PropagationEventsDocDto }) @IsOptional() @Allow() propagationEvents?: unknown;
}

/** PATCH refuses null for what cannot be null (only description and defaultReceiverConfig clear with null). */
const NOT_NULL = { message: '$property must not be null' };

/**
 * PATCH: the given keys change, omitted ones are kept. The body may be the connection as read: `id` and
 * `sourceCatalogId` must then be this connection's (a connection never moves to another catalog), and the other
 * read-only keys are ignored (`status` changes through pause, resume and disable).
 */
export class UpdateConnectionDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255 }) @PresentNotNull() @Trimmed() @IsString() @MinLength(1) @MaxLength(255) name?: string;
  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 10_000 })
  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  description?: string | null;
  @ApiPropertyOptional({ maxLength: 64 }) @PresentNotNull() @IsString() @MaxLength(64) shareMode?: string;
  // null would reset to the widest defaults (approval open to ask, every row shared): refused, as the schema says.
  @ApiPropertyOptional(accessControlDoc) @PresentNotNull() @NotEquals(null, NOT_NULL) accessControl?: unknown;
  @ApiPropertyOptional({ type: ShareScopeDocDto })
  @PresentNotNull()
  @NotEquals(null, NOT_NULL)
  shareScope?: unknown;
  @ApiPropertyOptional({ type: DefaultReceiverConfigDocDto, nullable: true })
  @IsOptional()
  @Allow()
  defaultReceiverConfig?: unknown;
  @ApiPropertyOptional({ type: PropagationEventsDocDto })
  @PresentNotNull()
  @NotEquals(null, NOT_NULL)
  propagationEvents?: unknown;

  @FixedEcho({ type: String, format: 'uuid', description: "The connection's id; when given it must be the id in the path" })
  id?: unknown;

  @FixedEcho({ type: String, format: 'uuid', description: "The connection's catalog; when given it must be the current one (fixed)" })
  sourceCatalogId?: unknown;

  @ReadOnlyEcho() view?: unknown;
  @ReadOnlyEcho() sourceOrganization?: unknown;
  @ReadOnlyEcho() catalog?: unknown;
  @ReadOnlyEcho() status?: unknown;
  @ReadOnlyEcho() activeBindings?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
}

/** `GET /catalogs/{catalogId}/connections`: the catalog is the path's, so no `catalogId` query parameter. */
export class CatalogConnectionListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: CONNECTION_STATUSES })
  @IsOptional()
  @IsIn(CONNECTION_STATUSES)
  status?: string;
}

export class ConnectionListQueryDto extends CatalogConnectionListQueryDto {
  @ApiPropertyOptional({ format: 'uuid' }) @IsOptional() @IsUUID() catalogId?: string;
}

export class CatalogSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() catalogType: string;
  @ApiProperty({ type: 'integer' }) fieldCount: number;
  @ApiPropertyOptional({ type: [ScFieldDto], description: 'The shared fields (on connection reads)' })
  fields?: ScFieldDto[];
}

export class OrganizationSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
}

/**
 * A connection. The supplier sees every field; a buyer organization that may see it (public, whitelisted, or
 * holding a live binding) sees `view: "shared"`: no `accessControl.allowedOrganizations`, no share-scope filter.
 */
@ApiExtraModels(AccessControlDocDto)
export class ConnectionResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['owner', 'shared'] }) view: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ format: 'uuid' }) sourceCatalogId: string;
  @ApiProperty({ type: OrganizationSummaryDto }) sourceOrganization: OrganizationSummaryDto;
  @ApiProperty({
    type: CatalogSummaryDto,
    nullable: true,
    description: 'null once the catalog is deleted (the connection is then disabled)',
  })
  catalog: CatalogSummaryDto | null;
  @ApiProperty() shareMode: string;
  @ApiProperty({
    description: '`public` for a public connection (spec 2.14); otherwise the object (`allowedOrganizations` in the owner view only)',
    oneOf: [{ type: 'string', enum: ['public'] }, { $ref: '#/components/schemas/AccessControlDocDto' }],
  })
  accessControl: 'public' | { mode: string; allowedOrganizations?: string[] };
  @ApiPropertyOptional({ type: ShareScopeDocDto }) shareScope?: unknown;
  @ApiProperty({ type: DefaultReceiverConfigDocDto, nullable: true }) defaultReceiverConfig: unknown;
  @ApiProperty({ type: PropagationEventsDocDto }) propagationEvents: unknown;
  @ApiProperty({ enum: CONNECTION_STATUSES }) status: string;
  @ApiPropertyOptional({ type: 'integer', description: 'Owner view: bindings by state' })
  activeBindings?: number;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class CreateShareLinkDto {
  @ApiPropertyOptional({ format: 'date-time', description: 'Must be in the future; default: never expires' })
  @IsOptional()
  // An impossible calendar day (2030-02-30) is refused instead of rolling over to another expiry.
  @IsInstant('expiresAt must be an ISO 8601 date or date-time of a real calendar day')
  expiresAt?: string;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 1_000_000,
    description: 'How many organizations the link may admit (a binding through it); default: unlimited',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  maxUses?: number;
}

export class ShareLinkResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ description: 'The link (shown only here): {PUBLIC_BASE_URL}/connect/share/{code}' })
  shareUrl: string;
  @ApiProperty({
    description: 'The share code (also the last path segment of shareUrl); present as shareCode when binding',
  })
  code: string;
  @ApiProperty({ description: 'PNG data URL of a QR code of shareUrl' }) qrCode: string;
  @ApiProperty({ nullable: true, type: String }) expiresAt: string | null;
  @ApiProperty({ nullable: true, type: 'integer' }) maxUses: number | null;
  @ApiProperty({
    type: 'integer',
    description: 'Organizations admitted through the link (bindings it let in)',
  })
  uses: number;
}

export class ShareLinkInfoDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ nullable: true, type: String }) expiresAt: string | null;
  @ApiProperty({ nullable: true, type: 'integer' }) maxUses: number | null;
  @ApiProperty({
    type: 'integer',
    description: 'Organizations admitted through the link (bindings it let in)',
  })
  uses: number;
  @ApiProperty({ nullable: true, type: String }) revokedAt: string | null;
  @ApiProperty() createdAt: string;
}

export class SharedConnectionDto {
  @ApiProperty({ format: 'uuid' }) connectionId: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: OrganizationSummaryDto }) sourceOrganization: OrganizationSummaryDto;
  @ApiProperty({ type: CatalogSummaryDto }) catalog: CatalogSummaryDto;
  @ApiProperty() shareMode: string;
  @ApiProperty({ enum: ACCESS_MODES }) accessMode: string;
  @ApiProperty({ enum: CONNECTION_STATUSES }) status: string;
  @ApiProperty({ nullable: true, type: String }) expiresAt: string | null;
  @ApiProperty({
    nullable: true,
    type: 'integer',
    description: 'How many more organizations the link may admit (maxUses minus uses); null = unlimited',
  })
  remainingUses: number | null;
}

export class SupplierBindingDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) connectionId: string;
  @ApiProperty({ type: OrganizationSummaryDto }) buyerOrganization: OrganizationSummaryDto;
  @ApiProperty({ enum: BINDING_STATUSES }) status: string;
  @ApiProperty({ enum: ['public', 'whitelist', 'approval', 'share_link'] }) admittedVia: string;
  @ApiProperty({ nullable: true, type: String }) reviewNote: string | null;
  @ApiProperty({ nullable: true, type: String }) reviewedAt: string | null;
  @ApiProperty() createdAt: string;
}

export class BindingListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: BINDING_STATUSES }) @IsOptional() @IsIn(BINDING_STATUSES) status?: string;
}
