import { Injectable, Logger } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { generatedSourcesOf } from '../domain/generated-fields.js';
import { foldRowChanges, type SourceRowChange } from '../domain/row-changes.js';
import { CurrencyRateRepository } from '../repositories/currency-rate.repository.js';
import {
  type PropagationJob,
  PropagationJobRepository,
  reconcileKindOf,
} from '../repositories/propagation-job.repository.js';
import { RevisionOriginRepository } from '../repositories/revision-origin.repository.js';
import { RowLinkRepository } from '../repositories/row-link.repository.js';
import { logBase, logKeyOf, PropagationBatch, type PropagationRun } from './propagation-batch.service.js';
import { SupplyChainPort } from './supply-chain.port.js';
import { SyncClock } from './sync-clock.js';
import { SyncDocumentReadGateway } from './sync-document-read.gateway.js';
import { SYNC_TITLE_PREFIX, SyncDocumentGateway } from './sync-document.gateway.js';

/** Attempts of a failing (binding, revision) job before it is marked failed. */
export const MAX_JOB_ATTEMPTS = 5;

/** Catalog rows (or row links) an initial sync or a reconcile reads, plans and writes per step. */
export const RECONCILE_BATCH = 1000;

export interface BindingRunResult {
  bindingId: string;
  jobs: number;
  outcome: 'applied' | 'skipped' | 'failed';
  counts?: Record<string, number>;
  error?: string;
}

/**
 * Spec 3 propagation rules 2–8 for one binding over its due catalog revisions (one or several: a batch window),
 * in one transaction with the ledger: the jobs are claimed (PropagationJobRepository), the order book is written
 * through the change engine (accepted changes: one request merged at once, so a batch is one revision; pending ones:
 * an open request), the sync requests, sync logs, row links and the `orderbook_sync_request_created` events are
 * recorded, and the jobs are marked applied — all or nothing. A failure rolls back, and the jobs are retried with
 * back-off (an `error` sync log says why), without holding back other bindings.
 */
@Injectable()
export class PropagationService {
  private readonly logger = new Logger(PropagationService.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly jobs: PropagationJobRepository,
    private readonly links: RowLinkRepository,
    private readonly rates: CurrencyRateRepository,
    private readonly documents: SyncDocumentGateway,
    private readonly reads: SyncDocumentReadGateway,
    private readonly port: SupplyChainPort,
    private readonly clock: SyncClock,
    private readonly batch: PropagationBatch,
    private readonly origins: RevisionOriginRepository,
  ) {}

  /** Applies the due jobs of one binding; null when nothing is due, 'busy' when another worker holds the next binding. */
  async runNext(): Promise<BindingRunResult | null | 'busy'> {
    let claimed: PropagationJob[] = [];
    try {
      return await this.tx.run(async () => {
        const jobs = await this.jobs.claimDueBinding(this.clock.now());
        if (jobs === 'busy') {
          return 'busy';
        }
        if (jobs.length === 0) {
          return null;
        }
        claimed = jobs;
        return this.apply(jobs);
      });
    } catch (error) {
      if (claimed.length === 0) {
        throw error;
      }
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.warn({ err: error, bindingId: claimed[0]?.bindingId }, 'propagation failed; will retry');
      await this.tx.run(async () => {
        await this.jobs.retryLater(
          claimed.map((job) => job.id),
          reason,
          this.clock.now(),
          MAX_JOB_ATTEMPTS,
        );
        const first = claimed[0] as PropagationJob;
        await this.port.recordLogs(
          claimed.map((job) => ({
            organizationId: job.organizationId,
            orderBookId: job.orderBookId,
            bindingId: job.bindingId,
            catalogRevisionId: job.catalogRevisionId,
            catalogRevisionVersion: job.catalogRevisionVersion,
            outcome: 'error',
            reason:
              `propagation failed (attempt ${Number(first.attempts) + 1} of ${MAX_JOB_ATTEMPTS}): ${reason}`.slice(
                0,
                2000,
              ),
          })),
        );
      });
      return {
        bindingId: claimed[0]?.bindingId ?? '',
        jobs: claimed.length,
        outcome: 'failed',
        error: reason,
      };
    }
  }

  private async apply(jobs: PropagationJob[]): Promise<BindingRunResult> {
    const first = jobs[0] as PropagationJob;
    const ids = jobs.map((job) => job.id);
    const last = jobs[jobs.length - 1] as PropagationJob;
    const context = await this.port.bindingContext(first.bindingId);
    const skip = async (reason: string): Promise<BindingRunResult> => {
      await this.jobs.finish(ids, 'skipped', { reason });
      if (context) {
        await this.port.recordLogs(
          jobs.map((job) => ({
            ...logBase(context, job),
            outcome: 'skipped',
            reason,
            idempotencyKey: `${logKeyOf(job)}:job`,
          })),
        );
      }
      return { bindingId: first.bindingId, jobs: jobs.length, outcome: 'skipped' };
    };
    if (!context) {
      await this.jobs.finish(ids, 'skipped', {
        reason: 'the binding, its connection or its documents are gone',
      });
      return { bindingId: first.bindingId, jobs: jobs.length, outcome: 'skipped' };
    }
    if (context.binding.status !== 'active') {
      return skip(`the binding is ${context.binding.status}`);
    }
    if (context.connection.status !== 'active') {
      return skip(`the connection is ${context.connection.status}`);
    }
    const { binding, connection, catalog, orderBook } = context;
    await this.port.lockOrderBook(orderBook.id);
    // The binding's creator while still an active member of the buyer organization, else its owner: never a
    // non-member (docs/supply-chain.md, "Who the propagation acts as, who is told"). The catalog is only read.
    const actorId = await this.port.actingUser(binding.organizationId, binding.createdBy);
    const catalogCtx = await this.documents.open(
      catalog.organizationId,
      'catalog',
      catalog.id,
      await this.port.actingUser(catalog.organizationId, connection.createdBy),
    );
    const orderCtx = await this.documents.open(binding.organizationId, 'orderbook', orderBook.id, actorId);
    if (!catalogCtx || !orderCtx) {
      return skip('the catalog or the order book document is gone');
    }

    // An initial sync or a reconcile claimed with later revisions covers them: it reads the catalog as it is now.
    const reconcileJob = jobs.find((job) => reconcileKindOf(job) !== null);
    const run: PropagationRun = {
      context,
      jobs,
      catalogCtx,
      orderCtx,
      actorId,
      reconcile: reconcileJob !== undefined,
      logKey: reconcileJob?.triggerKey ? logKeyOf(reconcileJob) : last.catalogRevisionId,
      revisionLabel:
        jobs.length === 1
          ? `revision ${first.catalogRevisionVersion}`
          : `revisions ${first.catalogRevisionVersion}–${last.catalogRevisionVersion}`,
      rateTable: await this.rates.list(binding.organizationId),
      now: this.clock.now(),
      upstreamChangedAt: new Date(Math.max(...jobs.map((job) => new Date(job.revisionCreatedAt).getTime()))),
      siblings: null,
      counts: {},
      rows: 0,
      requestIds: [],
      mailed: new Set(),
    };
    if (reconcileJob) {
      await this.reconcile(run);
    } else {
      // Rule 1: what the revisions changed, folded per row (a batch window applies them as one change).
      const perRevision: SourceRowChange[][] = [];
      for (const job of jobs) {
        const changedAt = new Date(job.revisionCreatedAt);
        perRevision.push(
          (await this.reads.rowChanges(catalogCtx, job.catalogRevisionId)).map((change) => ({
            ...change,
            changedAt,
          })),
        );
      }
      await this.batch.apply(run, foldRowChanges(perRevision));
    }
    const kind = reconcileJob ? reconcileKindOf(reconcileJob) : null;
    await this.jobs.finish(ids, 'applied', {
      counts: run.counts,
      rows: run.rows,
      syncRequestIds: run.requestIds,
      ...(kind ? { kind } : {}),
      ...(reconcileJob?.result?.reason ? { reason: reconcileJob.result.reason } : {}),
    });
    return { bindingId: binding.id, jobs: jobs.length, outcome: 'applied', counts: run.counts };
  }

  /**
   * An initial sync or a reconcile: brings the order book in line with the catalog as it is, in SQL-bounded steps of
   * RECONCILE_BATCH rows (docs/supply-chain.md, "Initial sync and reconcile"). First every catalog row, as a
   * `row_created` (linked rows are updated, rows newly in scope created, linked rows now outside the share scope
   * withdrawn); then every row this binding — or an ended binding of the catalog it continues — propagated whose
   * catalog row is gone, as a `row_deleted`. Each step is planned and written like a change of those rows.
   */
  private async reconcile(run: PropagationRun): Promise<void> {
    await this.alignGeneratedFields(run);
    let cursor: string | null = null;
    do {
      const page = await this.reads.rowIdPage(run.catalogCtx, cursor, RECONCILE_BATCH);
      await this.batch.apply(
        run,
        page.ids.map((rowId) => ({ rowId, kind: 'created', fieldIds: [] })),
      );
      cursor = page.nextCursor;
    } while (cursor);

    const owners = [
      run.context.binding.id,
      ...(await this.batch.siblingsOf(run))
        .filter((sibling) => sibling.status !== 'active')
        .map((sibling) => sibling.id),
    ];
    let after = '';
    for (;;) {
      const linked = await this.links.sourceIdPage(owners, after, RECONCILE_BATCH);
      if (linked.length === 0) {
        break;
      }
      after = linked[linked.length - 1] as string;
      const present = await this.reads.rows(run.catalogCtx, linked);
      // The catalog row is gone: its last values went with it, so accept rules see an empty row.
      await this.batch.apply(
        run,
        linked
          .filter((rowId) => !present.get(rowId)?.exists)
          .map((rowId) => ({ rowId, kind: 'deleted', fieldIds: [], oldValues: {} })),
      );
      if (linked.length < RECONCILE_BATCH) {
        break;
      }
    }
  }

  /**
   * The order book's generated fields brought in step with the catalog as it is, before an initial sync or a reconcile
   * writes rows (docs/supply-chain.md, "Generated fields in step"): options the catalog gained while the order book had
   * no live binding would otherwise leave the values naming them out. The run's order-book context is reopened after
   * a change, so the rows are converted against the fields as they now are.
   */
  private async alignGeneratedFields(run: PropagationRun): Promise<void> {
    const { binding, catalog, orderBook } = run.context;
    const generated = generatedSourcesOf(orderBook.generatedFields, catalog.id);
    if (generated.length === 0) {
      return;
    }
    const outcome = await this.documents.alignGeneratedFields(
      run.orderCtx,
      run.catalogCtx.document.metadata.fields,
      generated,
      `${SYNC_TITLE_PREFIX} ${catalog.name} ${run.revisionLabel}: fields in step with the catalog`,
    );
    if (!outcome?.merge) {
      return;
    }
    await this.origins.recordBindingWrite(outcome.merge.revision.id, binding, run.orderCtx.document.uuid, {
      documentId: run.catalogCtx.document.uuid,
      revisionId: (run.jobs[run.jobs.length - 1] as PropagationJob).catalogRevisionId,
    });
    run.orderCtx =
      (await this.documents.open(binding.organizationId, 'orderbook', orderBook.id, run.actorId)) ??
      run.orderCtx;
  }
}
