import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsObject, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { ReadOnlyEcho } from '../../../common/http/validation-decorators.js';
import { ANY_JSON_SCHEMA } from '../../../common/http/api-envelope.decorator.js';

/**
 * `PUT /doc/{docType}/setting` (spec 2.11): a full replace; omitted sections go back to their defaults. The body may
 * be the settings as read: their read-only keys are ignored (the context comes from the query or headers).
 */
export class TypeSettingsDto {
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Id of the view used as default by documents of this type that set none of their own', maxLength: 128 })
  @IsOptional()
  @ValidateIf((_object, value) => value !== null)
  @IsString()
  @MaxLength(128)
  defaultViewId?: string | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { allowDataSourceReferences: false } })
  @IsOptional()
  @IsObject()
  sharing?: Record<string, unknown>;

  @ApiPropertyOptional({
    ...ANY_JSON_SCHEMA,
    description:
      'Any JSON (spec 2.11). When an object, its `view`, `edit`, `delete` and `share` lists of subjects narrow access to documents of the type; everything else is stored as given',
    example: { edit: ['role:editor'], delete: [] },
  })
  @IsOptional()
  @Allow()
  permissions?: unknown;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { closedRequestsDays: 90 } })
  @IsOptional()
  @IsObject()
  retention?: Record<string, unknown>;

  @ReadOnlyEcho() docType?: unknown;
  @ReadOnlyEcho() organizationId?: unknown;
  @ReadOnlyEcho() workspaceId?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
  @ReadOnlyEcho() updatedBy?: unknown;
}

export class TypeSettingsResponseDto {
  @ApiProperty() docType: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) workspaceId: string | null;
  @ApiProperty({ type: String, nullable: true }) defaultViewId: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) sharing: Record<string, unknown>;
  @ApiProperty({ ...ANY_JSON_SCHEMA, description: 'As given (any JSON); {} when never set' }) permissions: unknown;
  @ApiProperty({ type: 'object', additionalProperties: true }) retention: Record<string, unknown>;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) updatedAt: string | null;
  @ApiProperty({ type: String, nullable: true }) updatedBy: string | null;
}
