import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsISO8601,
  IsNumber,
  IsPositive,
  IsString,
  Matches,
  ValidateNested,
} from 'class-validator';

/** An ISO 4217 currency code (either letter case). */
const CURRENCY_CODE_PATTERN = /^[A-Za-z]{3}$/;
/** A day, YYYY-MM-DD. */
const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

export class CurrencyRateDto {
  @ApiProperty({
    description: 'ISO 4217 code of the currency converted from',
    example: 'USD',
    pattern: CURRENCY_CODE_PATTERN.source,
  })
  @IsString()
  @Matches(CURRENCY_CODE_PATTERN, { message: 'base must be a three-letter currency code' })
  base: string;

  @ApiProperty({
    description: 'ISO 4217 code of the currency converted to',
    example: 'EUR',
    pattern: CURRENCY_CODE_PATTERN.source,
  })
  @IsString()
  @Matches(CURRENCY_CODE_PATTERN, { message: 'quote must be a three-letter currency code' })
  quote: string;

  @ApiProperty({ description: '1 base = rate quote', example: 0.92 })
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @IsPositive()
  rate: number;

  @ApiProperty({
    description:
      'First day (UTC) the rate applies to (`daily` conversions use the newest rate on or before the day)',
    example: '2026-01-01',
    pattern: DAY_PATTERN.source,
  })
  @IsString()
  @Matches(DAY_PATTERN, { message: 'effectiveDate must be a date YYYY-MM-DD' })
  // A day that does not exist (2026-02-30) is refused here, naming the field, not by the database.
  @IsISO8601({ strict: true }, { message: 'effectiveDate must be a real calendar day' })
  effectiveDate: string;
}

export class PutCurrencyRatesDto {
  @ApiProperty({
    type: [CurrencyRateDto],
    description: 'The whole table (replaces the current one); at most 1000 entries',
    maxItems: 1000,
  })
  @IsArray()
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => CurrencyRateDto)
  rates: CurrencyRateDto[];
}

export class CurrencyRateResponseDto {
  @ApiProperty() base: string;
  @ApiProperty() quote: string;
  @ApiProperty() rate: number;
  @ApiProperty() effectiveDate: string;
  @ApiProperty() updatedBy: string;
  @ApiProperty() updatedAt: string;
}

export class CurrencyRatesResponseDto {
  @ApiProperty({ type: [CurrencyRateResponseDto] }) rates: CurrencyRateResponseDto[];
}

export class ConnectorRunResponseDto {
  @ApiProperty() id: string;
  @ApiProperty() connectorId: string;
  @ApiProperty({ enum: ['realtime', 'scheduled', 'manual'] }) trigger: string;
  @ApiProperty({
    enum: ['forward', 'reverse'],
    description: 'reverse: a bidirectional connector applying the target back to the source',
  })
  direction: string;
  @ApiProperty({ enum: ['pending', 'succeeded', 'failed', 'skipped'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) sourceRevisionId: string | null;
  @ApiProperty({ nullable: true, type: String }) targetRevisionId: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'The cron slot a scheduled run was for' })
  scheduledFor: string | null;
  @ApiProperty() rowsCreated: number;
  @ApiProperty() rowsUpdated: number;
  @ApiProperty() rowsDeleted: number;
  @ApiProperty() rowsSkipped: number;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty({ nullable: true, type: String }) startedAt: string | null;
  @ApiProperty({ nullable: true, type: String }) finishedAt: string | null;
}

export class ConnectorScheduleResponseDto {
  @ApiPropertyOptional({ nullable: true, type: String }) nextRunAt: string | null;
  @ApiPropertyOptional({ nullable: true, type: String }) lastRunAt: string | null;
}

export class PropagationJobResponseDto {
  @ApiProperty() id: string;
  @ApiProperty() bindingId: string;
  @ApiProperty() catalogRevisionId: string;
  @ApiProperty() catalogRevisionVersion: number;
  @ApiProperty({ enum: ['pending', 'applied', 'skipped', 'failed'] }) status: string;
  @ApiProperty({ description: 'When the job is (was) due: the end of its batch window' }) dueAt: string;
  @ApiProperty() attempts: number;
  @ApiProperty({ nullable: true, type: String }) lastError: string | null;
  @ApiProperty({ nullable: true, type: Object }) result: Record<string, unknown> | null;
  @ApiProperty({ nullable: true, type: String }) appliedAt: string | null;
}
