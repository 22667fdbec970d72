import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { TARGET_KINDS } from '../domain/document.records.js';
import { EXPORT_FORMATS } from '../services/export/export-writers.js';
import { DocumentScopeQueryDto, PagedScopeQueryDto } from './document-query.dto.js';
import { ChangedPropertyDto, FieldChangesDto, RequestResponseDto, UpdatedCellDto } from './request.dto.js';
import { ChangeOperationDto, RevisionResponseDto } from './revision.dto.js';
import { ValueEntryDto } from './row.dto.js';

export class RevisionDiffQueryDto extends PagedScopeQueryDto {
  // Not checked for its form: an id that names no revision of the document is NOT_FOUND (field base), malformed or not.
  @ApiPropertyOptional({ description: 'The revision to compare with (default: the previous revision); must be older', maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  base?: string;
}

export class RevisionHistoryQueryDto extends PagedScopeQueryDto {
  @ApiPropertyOptional({ enum: TARGET_KINDS, description: 'The kind of target; `row` when only rowId is given (one of the two is required). `row` includes the relation edges of the row; `relation` (an extension) reads only those' })
  @IsOptional()
  @IsIn(TARGET_KINDS)
  targetKind?: string;

  @ApiPropertyOptional({ description: 'The row (targetKind row, or relation)', maxLength: 128 }) @IsOptional() @IsString() @MaxLength(128) rowId?: string;

  @ApiPropertyOptional({ description: 'The field or property (with targetKind row: the operations touching that cell)', maxLength: 64 })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  fieldId?: string;
}

/** A row as it stood (deleted rows: before the range; added rows: after it). */
export class DiffRowDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: [ValueEntryDto] }) values: ValueEntryDto[];
}

export class RevisionDiffDto {
  @ApiProperty() revisionId: string;
  @ApiProperty({ type: 'integer' }) version: number;
  @ApiProperty({ nullable: true, type: String, description: 'null: compared with the empty document before the first revision' }) baseRevisionId: string | null;
  @ApiProperty({ type: 'integer' }) baseVersion: number;
  @ApiProperty({ type: [DiffRowDto], description: 'Rows created in the range, whole, as the range leaves them' }) addedRows: DiffRowDto[];
  @ApiProperty({ type: [UpdatedCellDto] }) updatedCells: UpdatedCellDto[];
  @ApiProperty({ type: [DiffRowDto], description: 'Rows deleted in the range, whole, as they stood at base' }) deletedRows: DiffRowDto[];
  @ApiProperty({ type: [ChangedPropertyDto] }) changedProperties: ChangedPropertyDto[];
  @ApiProperty({ type: FieldChangesDto }) fields: FieldChangesDto;
  @ApiProperty() settingsChanged: boolean;
  @ApiProperty({ type: 'integer', description: 'Changed rows in all (the row arrays are this page of them, by row id)' }) rowsTotal: number;
  @ApiProperty({ type: 'integer' }) page: number;
  @ApiProperty({ type: 'integer' }) pageSize: number;
}

export class HistoryEntryDto extends ChangeOperationDto {
  @ApiProperty() revisionId: string;
  @ApiProperty({ type: 'integer' }) revisionVersion: number;
}

export class SkippedOperationDto {
  @ApiProperty({ type: 'integer' }) ordinal: number;
  @ApiProperty() type: string;
  @ApiProperty() reason: string;
}

export class RevertResponseDto {
  @ApiProperty({ type: RequestResponseDto, description: 'The revert request (merged, or open while it waits for approval)' }) request: RequestResponseDto;
  @ApiProperty({ type: RevisionResponseDto, nullable: true, description: 'The revision the revert produced (null while it waits)' })
  revision: RevisionResponseDto | null;
  @ApiProperty() merged: boolean;
  @ApiProperty() pendingApproval: boolean;
  @ApiProperty({ type: [SkippedOperationDto], description: 'Operations of the reverted revision that have no inverse' }) skipped: SkippedOperationDto[];
}

export class RevisionExportQueryDto extends DocumentScopeQueryDto {
  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'json' }) @IsOptional() @IsIn(EXPORT_FORMATS) format?: (typeof EXPORT_FORMATS)[number];

  @ApiPropertyOptional({ enum: ['rows', 'changes'], default: 'rows', description: 'rows: the document as it stood; changes: the revision\'s operations' })
  @IsOptional()
  @IsIn(['rows', 'changes'])
  what?: 'rows' | 'changes';
}
