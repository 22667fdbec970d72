import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ANSWERED_TARGET_KINDS, REVISION_OPERATION_TYPES } from '../domain/document.records.js';

export class OperationTargetDto {
  @ApiProperty({ enum: ANSWERED_TARGET_KINDS, description: 'A relation edge operation targets the row it starts from (rowId)' }) kind: string;
  @ApiPropertyOptional() rowId?: string;
  @ApiPropertyOptional() fieldId?: string;
}

/**
 * ChangeOperation (spec 2.9). Row values in `oldValue`/`newValue` are `{values: ValueEntry[], version}`;
 * field operations carry `{field}` (and `values`, the previous values keyed by row id, for deleted or converted
 * fields); property operations `{value}`.
 */
export class ChangeOperationDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: REVISION_OPERATION_TYPES }) type: string;
  @ApiProperty({ type: OperationTargetDto }) target: OperationTargetDto;
  @ApiProperty({ nullable: true }) oldValue: unknown;
  @ApiProperty({ nullable: true }) newValue: unknown;
  @ApiProperty({ nullable: true, type: String }) operator: string | null;
  @ApiProperty() timestamp: string;
  @ApiProperty({ nullable: true, type: String }) note: string | null;
}

export class RevisionStatsDto {
  @ApiProperty({ type: 'integer' }) rowsCreated: number;
  @ApiProperty({ type: 'integer' }) rowsUpdated: number;
  @ApiProperty({ type: 'integer' }) rowsDeleted: number;
  @ApiProperty({ type: 'integer' }) fieldsCreated: number;
  @ApiProperty({ type: 'integer' }) fieldsUpdated: number;
  @ApiProperty({ type: 'integer' }) fieldsDeleted: number;
}

export class RevisionResponseDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty({ nullable: true, type: String }) requestId: string | null;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
  @ApiProperty({ nullable: true, type: String }) description: string | null;
  @ApiProperty({ type: [String] }) contributors: string[];
  @ApiProperty({ nullable: true, type: String }) mergedBy: string | null;
  @ApiProperty({
    type: [ChangeOperationDto],
    description: 'The operations in order: the first 1000 of one revision, the first 100 of each list or bundle item (operationCount is the total; all: /operations)',
  })
  changes: ChangeOperationDto[];
  @ApiProperty({ type: 'integer' }) operationCount: number;
  @ApiProperty({ type: RevisionStatsDto }) stats: RevisionStatsDto;
  @ApiProperty({ nullable: true, type: String }) previousRevisionId: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class PropertyHistoryEntryDto extends ChangeOperationDto {
  @ApiProperty() revisionId: string;
  @ApiProperty({ type: 'integer' }) revisionVersion: number;
}
