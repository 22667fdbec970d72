import { Body, Controller, Get, HttpCode, Injectable, Module, Post, Query } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsNumber, IsOptional, Max, Min } from 'class-validator';
import { Public } from '../../../../src/common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../../../src/common/http/api-envelope.decorator.js';
import { Deprecated } from '../../../../src/common/http/deprecated.decorator.js';
import {
  type CursorPage,
  CursorQueryDto,
  decodeCursor,
  DEFAULT_CURSOR_LIMIT,
  encodeCursor,
  offsetOf,
  type Page,
  pageOf,
  PageQueryDto,
} from '../../../../src/common/http/pagination.js';
import { TransactionHost } from '../../../../src/database/transaction-host.js';
import type { DomainEvent } from '../../../../src/modules/events/domain-event.js';
import { OnDomainEvent } from '../../../../src/modules/events/on-domain-event.decorator.js';

/** 45 items, so pages of 20 give 3 pages. */
export const PROBE_ITEMS = Array.from({ length: 45 }, (_, index) => ({ n: index + 1 }));

export class ProbeNumbersDto {
  @ApiProperty({ minimum: 0, maximum: 1000 })
  @IsInt()
  @Min(0)
  @Max(1000)
  count: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  ratio?: number;
}

export class ProbeQueryDto {
  @ApiPropertyOptional()
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(-2147483648)
  @Max(2147483647)
  value?: number;
}

/** Test-only endpoints exercising the shared paging DTO, cursors, deprecation and number bounds. */
@Controller('platform-probe')
@Public()
export class ProbeController {
  constructor(private readonly tx: TransactionHost) {}

  @Get('items')
  @ApiEnvelope(null, { shape: 'page' })
  items(@Query() query: PageQueryDto): Page<{ n: number }> {
    const offset = offsetOf(query);
    return pageOf(PROBE_ITEMS.slice(offset, offset + query.pageSize), PROBE_ITEMS.length, query);
  }

  @Get('cursor')
  @ApiEnvelope(null, { shape: 'cursor' })
  cursor(@Query() query: CursorQueryDto): CursorPage<{ n: number }> {
    const limit = query.limit ?? DEFAULT_CURSOR_LIMIT;
    const after = query.cursor ? Number(decodeCursor('probe', query.cursor)[0]) : 0;
    const items = PROBE_ITEMS.filter((item) => item.n > after).slice(0, limit);
    const last = items[items.length - 1];
    const more = last !== undefined && last.n < PROBE_ITEMS.length;
    return { items, limit, nextCursor: more ? encodeCursor('probe', [last.n]) : null };
  }

  @Get('old')
  @Deprecated('Use /platform-probe/items')
  @ApiEnvelope(null)
  old(): { ok: boolean } {
    return { ok: true };
  }

  @Post('old-numbers')
  @HttpCode(200)
  @Deprecated('Use /platform-probe/numbers')
  @ApiEnvelope(null)
  oldNumbers(@Body() dto: ProbeNumbersDto): ProbeNumbersDto {
    return dto;
  }

  @Post('numbers')
  @HttpCode(200)
  @ApiEnvelope(null)
  numbers(@Body() dto: ProbeNumbersDto): ProbeNumbersDto {
    return dto;
  }

  /** Hands the value to PostgreSQL as int4: out-of-range values must come back as VALIDATION_ERROR. */
  @Get('int4')
  @ApiEnvelope(null)
  async int4(@Query('value') value: string): Promise<{ value: number }> {
    const rows = await this.tx.manager.query<Array<{ value: number }>>('SELECT $1::int4 AS value', [value]);
    return { value: rows[0].value };
  }

  @Get('boom')
  @ApiEnvelope(null)
  boom(): never {
    throw new Error('secret internal detail');
  }
}

/**
 * Records every probe event it receives (events named `platform_probe_*`). `failuresLeft` makes the next
 * deliveries of an event name throw, to exercise retry with back-off.
 */
@Injectable()
export class ProbeSubscriber {
  readonly received: DomainEvent[] = [];
  readonly failuresLeft = new Map<string, number>();

  @OnDomainEvent('*')
  async handle(event: DomainEvent): Promise<void> {
    if (!event.event.startsWith('platform_probe')) {
      return;
    }
    const failures = this.failuresLeft.get(event.event) ?? 0;
    if (failures > 0) {
      this.failuresLeft.set(event.event, failures - 1);
      throw new Error(`probe subscriber failure for ${event.event}`);
    }
    this.received.push(event);
  }
}

@Module({ controllers: [ProbeController], providers: [ProbeSubscriber] })
export class ProbeModule {}
