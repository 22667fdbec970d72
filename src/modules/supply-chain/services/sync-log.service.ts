import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import type { SyncLogOutcome, SyncLogRecord } from '../domain/supply-chain.types.js';
import type { SyncLogResponseDto } from '../dtos/orderbook.dto.js';
import { type NewSyncLog, SyncRepository } from '../repositories/sync.repository.js';
import { SupplyChainAccessService } from './supply-chain-access.service.js';

export type { NewSyncLog } from '../repositories/sync.repository.js';

function toDto(record: SyncLogRecord): SyncLogResponseDto {
  const { organizationId: _organizationId, createdAt, ...rest } = record;
  return { ...rest, createdAt: new Date(createdAt).toISOString() };
}

/**
 * Sync logs of order books: one entry per (binding, catalog row) outcome of a propagation run. Written by the
 * propagation through `record()` (joins the caller's transaction; entries with a (bindingId, idempotencyKey)
 * recorded before are skipped), read by the buyer at `GET /orderbooks/{id}/sync-logs`.
 */
@Injectable()
export class SyncLogService {
  constructor(
    private readonly repository: SyncRepository,
    private readonly access: SupplyChainAccessService,
  ) {}

  /** Records outcomes; returns the entries actually inserted. */
  record(...entries: NewSyncLog[]): Promise<SyncLogRecord[]> {
    return this.repository.insertLogs(entries);
  }

  async list(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    query: { page: number; pageSize: number; bindingId?: string; outcome?: string },
  ): Promise<Page<SyncLogResponseDto>> {
    const { orderBook } = await this.access.orderBook(principal, organizationId, orderBookId, 'read');
    const { items, total } = await this.repository.listLogs(
      organizationId,
      orderBook.id,
      { bindingId: query.bindingId, outcome: query.outcome as SyncLogOutcome | undefined },
      { limit: query.pageSize, offset: (query.page - 1) * query.pageSize },
    );
    return pageOf(items.map(toDto), total, query);
  }
}
