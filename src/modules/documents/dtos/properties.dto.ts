import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsInt, Min } from 'class-validator';
import { ReadOnlyEcho, PresentNotNull } from '../../../common/http/validation-decorators.js';
import { Int64Body } from '../../../common/http/pagination.js';
import { ValueEntryDto, WriteResultDto } from './row.dto.js';

/** DocumentProperties (spec 2.6). */
export class DocumentPropertiesDto {
  @ApiProperty() id: string;
  @ApiProperty() docId: string;
  @ApiProperty() docType: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String, description: 'Null for organization-level documents' }) workspaceId: string | null;
  @ApiProperty({ type: [ValueEntryDto], description: 'Field ids refer to Metadata.properties' }) properties: ValueEntryDto[];
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
  @ApiProperty({ nullable: true, type: String }) updatedBy: string | null;
}

export class PropertiesWriteResponseDto extends DocumentPropertiesDto {
  @ApiProperty({ type: WriteResultDto }) request: WriteResultDto;
}

export class PropertiesBodyDto {
  @ApiProperty({ type: [ValueEntryDto], description: 'Array of {fieldId, value} or an object of field id to value' })
  @Allow()
  properties: unknown;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Optimistic lock (also accepted as query parameter on PATCH). int64: a number, or its decimal string as proto3 JSON writes it. With requestId, the committed version re-bases properties in conflict (docs/documents.md)' })
  @PresentNotNull()
  @Int64Body()
  @IsInt()
  @Min(0)
  version?: number;

  // The other keys of DocumentProperties (the read representation): accepted and ignored, so what GET answered
  // can be sent back with new values.
  @ReadOnlyEcho() id?: unknown;
  @ReadOnlyEcho() docId?: unknown;
  @ReadOnlyEcho() docType?: unknown;
  @ReadOnlyEcho() organizationId?: unknown;
  @ReadOnlyEcho() workspaceId?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
  @ReadOnlyEcho() updatedBy?: unknown;
}
