import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { ReadOnlyEcho, Trimmed } from '../../../common/http/validation-decorators.js';
import { CHART_TYPES, VIEW_TYPES, type ViewType } from '../domain/view-config.js';
import { CLIENT_ID_PATTERN, CLIENT_ID_RULE } from '../../../common/http/client-ids.js';

const CONFIG_DESCRIPTION =
  'Spec 2.7 keys, validated against the metadata: columns, displayFields (field ids), filters and sorts (the query language of ' +
  'POST /data/query, both shapes), groupBy (a field id, field ids, or a GroupBy {fields, aggregations}), groupByField, kanbanConfig {groupByField (select field), cardFields}, calendarConfig ' +
  '{dateField (date field), titleField}, chartConfig {xField, yField, chartType bar|line|pie, aggregation}. Unknown top-level keys are kept; ' +
  'unknown keys inside filters, sorts and the type sections are VALIDATION_ERROR.';

export class CreateViewDto {
  @ApiPropertyOptional({ description: 'Id, unique in the document (generated when absent)', example: 'by-status', pattern: CLIENT_ID_PATTERN.source })
  @IsOptional()
  @IsString()
  @Matches(CLIENT_ID_PATTERN, { message: `$property ${CLIENT_ID_RULE}` })
  id?: string;

  @ApiProperty({ example: 'Open items by status', description: 'Trimmed; blank is refused', minLength: 1, maxLength: 200 }) @Trimmed() @IsString() @IsNotEmpty() @MaxLength(200) name: string;

  @ApiProperty({ enum: VIEW_TYPES }) @IsIn(VIEW_TYPES) type: ViewType;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: CONFIG_DESCRIPTION })
  @IsOptional()
  @IsObject()
  config?: Record<string, unknown>;
}

/**
 * `PUT /views/{viewId}`: the given keys replace the view's (config as a whole); omitted ones are kept. The body may
 * be a View as read: `id` must then name this view, and the read-only keys are ignored.
 */
export class UpdateViewDto {
  @ApiPropertyOptional({ description: "The view's id; when given it must be the id in the path (a view is never renamed by id)" })
  @IsOptional()
  @IsString()
  id?: string;

  @ApiPropertyOptional({ description: 'Trimmed; blank is refused', minLength: 1, maxLength: 200 }) @IsOptional() @Trimmed() @IsString() @IsNotEmpty() @MaxLength(200) name?: string;
  @ApiPropertyOptional({ enum: VIEW_TYPES }) @IsOptional() @IsIn(VIEW_TYPES) type?: ViewType;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: CONFIG_DESCRIPTION })
  @IsOptional()
  @IsObject()
  config?: Record<string, unknown>;

  @ReadOnlyEcho() isDefault?: unknown;
  @ReadOnlyEcho() defaultSource?: unknown;
  @ReadOnlyEcho() createdAt?: unknown;
  @ReadOnlyEcho() createdBy?: unknown;
  @ReadOnlyEcho() updatedAt?: unknown;
  @ReadOnlyEcho() updatedBy?: unknown;
}

export class ViewResponseDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: VIEW_TYPES }) type: ViewType;
  @ApiProperty({ type: 'object', additionalProperties: true }) config: Record<string, unknown>;
  @ApiProperty({ description: "The document's default view: its own, else the type-level defaultViewId" }) isDefault: boolean;
  @ApiProperty({ type: String, enum: ['document', 'type'], nullable: true, description: 'Where isDefault comes from' }) defaultSource: 'document' | 'type' | null;
  @ApiProperty({ type: String, format: 'date-time' }) createdAt: string;
  @ApiProperty() createdBy: string;
  @ApiProperty({ type: String, format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: String, nullable: true }) updatedBy: string | null;
}

export class SeriesPointDto {
  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true, description: 'The xField value (Value), null for rows without one' }) x: unknown;
  @ApiProperty({ type: Number, nullable: true }) y: number | null;
}

/** `GET /views/{viewId}/series`: a chart view's rows grouped by xField with yField aggregated, computed in SQL. */
export class ChartSeriesDto {
  @ApiProperty() viewId: string;
  @ApiProperty({ enum: CHART_TYPES }) chartType: string;
  @ApiProperty() xField: string;
  @ApiProperty({ type: String, nullable: true }) yField: string | null;
  @ApiProperty({ enum: ['count', 'sum', 'avg', 'min', 'max'] }) aggregation: string;
  @ApiProperty({ type: [SeriesPointDto] }) points: SeriesPointDto[];
}
