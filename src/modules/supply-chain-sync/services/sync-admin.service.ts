import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { OrganizationAccessService } from '../../tenancy/services/organization-access.service.js';
import type {
  ConnectorRunResponseDto,
  ConnectorScheduleResponseDto,
  CurrencyRatesResponseDto,
  PropagationJobResponseDto,
  PutCurrencyRatesDto,
} from '../dtos/sync-admin.dto.js';
import { SyncWorker } from '../jobs/sync.worker.js';
import { type ConnectorRun, ConnectorRunRepository } from '../repositories/connector-run.repository.js';
import { CurrencyRateRepository } from '../repositories/currency-rate.repository.js';
import { PropagationJobRepository } from '../repositories/propagation-job.repository.js';
import { SupplyChainPort } from './supply-chain.port.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function iso(value: Date | string | null): string | null {
  return value === null ? null : new Date(value).toISOString();
}

export function toRunDto(run: ConnectorRun): ConnectorRunResponseDto {
  return {
    id: run.id,
    connectorId: run.connectorId,
    trigger: run.trigger,
    direction: run.direction,
    status: run.status,
    sourceRevisionId: run.sourceRevisionId,
    targetRevisionId: run.targetRevisionId,
    scheduledFor: iso(run.scheduledFor),
    rowsCreated: run.rowsCreated,
    rowsUpdated: run.rowsUpdated,
    rowsDeleted: run.rowsDeleted,
    rowsSkipped: run.rowsSkipped,
    error: run.error,
    createdAt: iso(run.createdAt) as string,
    startedAt: iso(run.startedAt),
    finishedAt: iso(run.finishedAt),
  };
}

/** The organization's rate table, connector runs (list, run now) and a binding's propagation ledger. */
@Injectable()
export class SyncAdminService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly organizations: OrganizationAccessService,
    private readonly rates: CurrencyRateRepository,
    private readonly runs: ConnectorRunRepository,
    private readonly jobs: PropagationJobRepository,
    private readonly port: SupplyChainPort,
    private readonly worker: SyncWorker,
  ) {}

  async listRates(principal: Principal, organizationId: string): Promise<CurrencyRatesResponseDto> {
    await this.organizations.require(principal.userId, organizationId);
    return {
      rates: (await this.rates.list(organizationId)).map((rate) => ({
        ...rate,
        base: rate.base,
        rate: Number(rate.rate),
        updatedAt: iso(rate.updatedAt) as string,
      })),
    };
  }

  async putRates(
    principal: Principal,
    organizationId: string,
    dto: PutCurrencyRatesDto,
  ): Promise<CurrencyRatesResponseDto> {
    const seen = new Set<string>();
    const details = [];
    for (const [index, rate] of dto.rates.entries()) {
      const key = `${rate.base.toUpperCase()}/${rate.quote.toUpperCase()}/${rate.effectiveDate}`;
      if (seen.has(key)) {
        details.push({ field: `rates[${index}]`, reason: `${key} is given twice` });
      }
      if (rate.base.toUpperCase() === rate.quote.toUpperCase()) {
        details.push({ field: `rates[${index}].quote`, reason: 'base and quote must differ' });
      }
      if (Number.isNaN(new Date(`${rate.effectiveDate}T00:00:00Z`).getTime())) {
        details.push({ field: `rates[${index}].effectiveDate`, reason: 'not a valid date' });
      }
      seen.add(key);
    }
    if (details.length > 0) {
      throw AppException.validation(details);
    }
    await this.tx.run(async () => {
      await this.organizations.require(principal.userId, organizationId, 'admin');
      await this.rates.replace(
        organizationId,
        dto.rates.map((rate) => ({
          base: rate.base.toUpperCase(),
          quote: rate.quote.toUpperCase(),
          rate: rate.rate,
          effectiveDate: rate.effectiveDate,
        })),
        principal.userId,
      );
    });
    return this.listRates(principal, organizationId);
  }

  async listRuns(
    principal: Principal,
    organizationId: string,
    connectorId: string,
    paging: { page: number; pageSize: number },
  ): Promise<Page<ConnectorRunResponseDto>> {
    await this.connector(principal, organizationId, connectorId, 'guest');
    const { items, total } = await this.runs.list(organizationId, connectorId, {
      limit: paging.pageSize,
      offset: (paging.page - 1) * paging.pageSize,
    });
    return pageOf(items.map(toRunDto), total, paging);
  }

  /** When a scheduled connector runs next (null: not scheduled, or not seen by the scheduler yet). */
  async schedule(
    principal: Principal,
    organizationId: string,
    connectorId: string,
  ): Promise<ConnectorScheduleResponseDto> {
    await this.connector(principal, organizationId, connectorId, 'guest');
    const schedule = await this.runs.scheduleOf(connectorId);
    return {
      nextRunAt: schedule ? iso(schedule.nextRunAt) : null,
      lastRunAt: schedule ? iso(schedule.lastRunAt) : null,
    };
  }

  /** Enqueues a full (manual) run now; the worker runs it after commit. */
  async runNow(
    principal: Principal,
    organizationId: string,
    connectorId: string,
  ): Promise<ConnectorRunResponseDto> {
    const run = await this.tx.run(async () => {
      await this.connector(principal, organizationId, connectorId, 'member');
      return this.runs.enqueue(organizationId, connectorId, 'manual', null);
    });
    if (!run) {
      throw new Error('run not enqueued');
    }
    this.worker.kick();
    return toRunDto(run);
  }

  async listJobs(
    principal: Principal,
    organizationId: string,
    orderBookId: string,
    bindingId: string,
    query: { page: number; pageSize: number },
  ): Promise<Page<PropagationJobResponseDto>> {
    await this.organizations.require(principal.userId, organizationId);
    // Not the binding's full context: its ledger stays readable after its catalog (or connection) is gone, as the
    // binding itself does — it says what became of the jobs the deletion skipped.
    const binding = UUID.test(bindingId)
      ? await this.port.orderBookBinding(organizationId, orderBookId, bindingId)
      : null;
    if (!binding) {
      throw AppException.notFound('binding');
    }
    const { items, total } = await this.jobs.listForBinding(organizationId, bindingId, {
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    const jobs = items.map((job) => ({
      id: job.id,
      bindingId: job.bindingId,
      catalogRevisionId: job.catalogRevisionId,
      catalogRevisionVersion: Number(job.catalogRevisionVersion),
      status: job.status,
      dueAt: iso(job.dueAt) as string,
      attempts: job.attempts,
      lastError: job.lastError,
      result: job.result,
      appliedAt: iso(job.appliedAt),
    }));
    return pageOf(jobs, total, query);
  }

  private async connector(
    principal: Principal,
    organizationId: string,
    connectorId: string,
    minimum: 'guest' | 'member',
  ): Promise<void> {
    await this.organizations.require(principal.userId, organizationId, minimum);
    const connector = UUID.test(connectorId) ? await this.port.connector(organizationId, connectorId) : null;
    if (!connector) {
      throw AppException.notFound('connector');
    }
  }
}
