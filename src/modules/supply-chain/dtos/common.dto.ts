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

export class ReviewNoteDto {
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptional() @IsString() @MaxLength(2000) note?: string;
}

export class PageQueryWithStatusDto extends PageQueryDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(32) status?: string;
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
