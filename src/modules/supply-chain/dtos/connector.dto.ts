import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { CONNECTOR_CONFLICT_RESOLUTIONS, CONNECTOR_TYPES, SYNC_MODES } from '../domain/supply-chain.types.js';
import { FilterGroupDocDto } from './common.dto.js';
import { FieldMappingDocDto } from './orderbook.dto.js';

export class ScheduleConfigDocDto {
  @ApiProperty({
    example: '0 */6 * * *',
    description: 'Cron expression (5 or 6 fields), validated with cron-parser',
  })
  cron: string;
  @ApiPropertyOptional({ example: 'Europe/Paris', default: 'UTC' }) timezone?: string;
}

export class ConnectorConfigDocDto {
  @ApiPropertyOptional({ type: FieldMappingDocDto, description: 'Source field ids → target field ids' })
  fieldMapping?: FieldMappingDocDto;
  @ApiPropertyOptional({ type: FilterGroupDocDto, description: 'On source field ids' })
  sourceFilter?: FilterGroupDocDto;
  @ApiPropertyOptional({ enum: SYNC_MODES, default: 'realtime' }) syncMode?: string;
  @ApiPropertyOptional({ type: ScheduleConfigDocDto, description: 'Required when syncMode is scheduled' })
  scheduleConfig?: ScheduleConfigDocDto;
  @ApiPropertyOptional({ enum: CONNECTOR_CONFLICT_RESOLUTIONS, default: 'source_wins' })
  conflictResolution?: string;
  @ApiPropertyOptional({ default: false }) bidirectional?: boolean;
}

export class CreateConnectorDto {
  @ApiProperty({ minLength: 1, maxLength: 255 }) @IsString() @MinLength(1) @MaxLength(255) name: string;
  @ApiProperty({ enum: CONNECTOR_TYPES }) @IsIn(CONNECTOR_TYPES) connectorType: string;
  @ApiProperty({
    description:
      'Id of the source order book (orderbook_to_catalog) or catalog (catalog_clone) of this organization',
    maxLength: 128,
  })
  @IsString()
  @MaxLength(128)
  sourceDocId: string;
  @ApiPropertyOptional({
    enum: ['orderbook', 'catalog'],
    description: 'Default from connectorType; must match it',
  })
  @IsOptional()
  @IsIn(['orderbook', 'catalog'])
  sourceDocType?: string;
  @ApiProperty({ description: 'Id of the target catalog of this organization', maxLength: 128 })
  @IsString()
  @MaxLength(128)
  targetDocId: string;
  @ApiPropertyOptional({ enum: ['catalog'], description: 'Default catalog' })
  @IsOptional()
  @IsIn(['catalog'])
  targetDocType?: string;
  @ApiPropertyOptional({ type: ConnectorConfigDocDto, description: 'Required for orderbook_to_catalog' })
  @IsOptional()
  @IsObject()
  orderbookToCatalogConfig?: unknown;
  @ApiPropertyOptional({ type: ConnectorConfigDocDto, description: 'Required for catalog_clone' })
  @IsOptional()
  @IsObject()
  catalogCloneConfig?: unknown;
}

export class ConnectorResponseDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) organizationId: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: CONNECTOR_TYPES }) connectorType: string;
  @ApiProperty() sourceDocId: string;
  @ApiProperty() sourceDocType: string;
  @ApiProperty() targetDocId: string;
  @ApiProperty() targetDocType: string;
  @ApiPropertyOptional({ type: ConnectorConfigDocDto }) orderbookToCatalogConfig?: unknown;
  @ApiPropertyOptional({ type: ConnectorConfigDocDto }) catalogCloneConfig?: unknown;
  @ApiProperty({ enum: SYNC_MODES }) syncMode: string;
  @ApiProperty({ enum: ['active', 'paused'] }) status: string;
  @ApiProperty() createdBy: string;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}
