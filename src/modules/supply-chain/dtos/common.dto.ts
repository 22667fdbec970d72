import { AppException } from '../../../common/errors/app.exception.js';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../../common/http/pagination.js';

/** `requestId`: append the write to this open request of the document instead of merging at once. */
export class RequestIdQueryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Open request of the document to append to; without it the write is merged at once',
  })
  @IsOptional()
  @IsUUID()
  requestId?: string;
}

export class ScSelectOptionDto {
  @ApiProperty() id: string;
  @ApiPropertyOptional() label?: string;
  @ApiPropertyOptional() color?: string;
}

export class ScFieldDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'A field type of spec 2.5' }) type: string;
  @ApiPropertyOptional() required?: boolean;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional({ type: [ScSelectOptionDto] }) selectOptions?: ScSelectOptionDto[];
}

/**
 * The note of a supplier's or buyer's decision. `reviewNote` is the name spec 2.4 gives a decision's note (and the
 * binding record's field); `note` is kept. Both given must agree.
 */
export class ReviewNoteDto {
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) note?: string;
  @ApiPropertyOptional({ maxLength: 2000, description: 'Same as note (spec 2.4 name)' }) @IsOptional() @IsString() @MaxLength(2000) reviewNote?: string;
}

/** The note of a decision body, from either name; VALIDATION_ERROR when both are given and differ. */
export function reviewNoteOf(dto: ReviewNoteDto): string | undefined {
  if (dto.note !== undefined && dto.reviewNote !== undefined && dto.note !== dto.reviewNote) {
    throw AppException.validation([{ field: 'reviewNote', reason: 'note and reviewNote differ; send one of them' }]);
  }
  return dto.reviewNote ?? dto.note;
}

export class PageQueryWithStatusDto extends PageQueryDto {
  @ApiPropertyOptional({ maxLength: 32 }) @IsOptional() @IsString() @MaxLength(32) status?: string;
}

/** Swagger shape of a filter group (validated by sync-config.validation.ts). */
export class FilterGroupDocDto {
  @ApiProperty({ enum: ['AND', 'OR'] }) operator: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', example: { fieldId: 'price', operator: 'gte', value: 10 } },
  })
  conditions?: unknown[];
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } }) groups?: unknown[];
}
