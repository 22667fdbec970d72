import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { describeError } from '../domain/describe-error.js';
import {
  type PlannedChange,
  PENDING_ALTERNATES,
  planBinding,
  type RowLink,
  type TargetRowState,
} from '../domain/binding-plan.js';
import type { FieldMapping } from '../domain/field-mapping.js';
import type { FilterGroup } from '../domain/filter-group.js';
import { foldRowChanges, type SourceRowChange } from '../domain/row-changes.js';
import { dedupFieldIds, dedupKey, type ReceiverFilter } from '../domain/sync-rules.js';
import { CurrencyRateRepository } from '../repositories/currency-rate.repository.js';
import {
  isInitialSync,
  type PropagationJob,
  PropagationJobRepository,
} from '../repositories/propagation-job.repository.js';
import { RevisionOriginRepository } from '../repositories/revision-origin.repository.js';
import { RowLinkRepository } from '../repositories/row-link.repository.js';
import { FormulaRunner } from './formula-runner.js';
import { plainReader } from './row-reader.js';
import { productInfoOf, SyncAnnouncer } from './sync-announcer.service.js';
import { SupplyChainPort, type BindingContext, type SyncLogEntry } from './supply-chain.port.js';
import { SyncClock } from './sync-clock.js';
import { SYNC_TITLE_PREFIX, SyncDocumentGateway } from './sync-document.gateway.js';
import { renderValues } from '../../documents/mappers/document.mapper.js';

/** Attempts of a failing (binding, revision) job before it is marked failed. */
export const MAX_JOB_ATTEMPTS = 5;

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
    private readonly origins: RevisionOriginRepository,
    private readonly rates: CurrencyRateRepository,
    private readonly documents: SyncDocumentGateway,
    private readonly port: SupplyChainPort,
    private readonly announcer: SyncAnnouncer,
    private readonly clock: SyncClock,
    private readonly formulas: FormulaRunner,
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
            ...this.logBase(context, job),
            outcome: 'skipped',
            reason,
            idempotencyKey: `${job.catalogRevisionId}:job`,
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
    const catalogCtx = await this.documents.open(
      catalog.organizationId,
      'catalog',
      catalog.id,
      connection.createdBy,
    );
    const orderCtx = await this.documents.open(
      binding.organizationId,
      'orderbook',
      orderBook.id,
      binding.createdBy,
    );
    if (!catalogCtx || !orderCtx) {
      return skip('the catalog or the order book document is gone');
    }

    // Rule 1: what the revisions changed, folded per row (a batch window applies them as one change).
    // An initial sync (the binding just became active) takes every row the catalog has now as created: the later
    // revisions claimed with it are already in those rows, and a new binding has no row to delete.
    const initial = jobs.some(isInitialSync);
    const perRevision: SourceRowChange[][] = [];
    if (initial) {
      perRevision.push(
        (await this.documents.allRowIds(catalogCtx)).map((rowId) => ({ rowId, kind: 'created', fieldIds: [] })),
      );
    } else {
      for (const job of jobs) {
        perRevision.push(await this.documents.rowChanges(catalogCtx, job.catalogRevisionId));
      }
    }
    const changes = foldRowChanges(perRevision);
    const sourceIds = changes.map((change) => change.rowId);
    const sourceRows = new Map<string, Record<string, unknown>>();
    for (const [id, state] of await this.documents.rows(
      catalogCtx,
      changes.filter((change) => change.kind !== 'deleted').map((change) => change.rowId),
    )) {
      if (state.exists) {
        sourceRows.set(id, state.values);
      }
    }
    const stored = await this.links.find(binding.id, sourceIds);
    // A catalog row the order book already holds from another binding of the same catalog (an ended one, rebound;
    // or one to another connection of the catalog) continues that row: updated and linked to this binding, not
    // created a second time. Only rows still in the order book count; the first run stores this binding's link.
    const unlinked = sourceIds.filter((id) => !stored.has(id));
    const siblings = unlinked.length > 0 ? await this.port.siblingBindingIds(binding) : [];
    const inherited = await this.links.findLatestAmong(siblings, unlinked);
    if (inherited.size > 0) {
      const present = await this.documents.rows(
        orderCtx,
        [...inherited.values()].map((link) => link.targetRowId),
      );
      for (const [sourceRowId, link] of inherited) {
        if (present.get(link.targetRowId)?.exists) {
          stored.set(sourceRowId, link);
        }
      }
    }
    const links = new Map<string, RowLink>(
      [...stored].map(([id, link]) => [
        id,
        { targetRowId: link.targetRowId, lastValues: link.lastValues, syncedAt: new Date(link.syncedAt) },
      ]),
    );

    const catalogFields = catalogCtx.document.metadata.fields;
    const orderFields = orderCtx.document.metadata.fields;
    const receiverFilter = binding.receiverFilter as unknown as ReceiverFilter;
    const fieldMapping = binding.fieldMapping as unknown as FieldMapping;
    const generated = orderBook.generatedFields.filter((field) => field.sourceCatalogId === catalog.id);
    const orderById = new Map(orderFields.map((field) => [field.id, field]));
    const orderByName = new Map(orderFields.map((field) => [field.name.trim().toLowerCase(), field]));
    const catalogById = new Map(catalogFields.map((field) => [field.id, field]));
    const rateTable = await this.rates.list(binding.organizationId);
    const now = this.clock.now();
    const upstreamChangedAt = new Date(
      Math.max(...jobs.map((job) => new Date(job.revisionCreatedAt).getTime())),
    );

    // Target rows: the linked ones (locked until commit, so a buyer's edit cannot slip between read and write).
    const targetRows = new Map<string, TargetRowState>();
    const loadTargets = async (rowIds: string[]): Promise<void> => {
      const missing = rowIds.filter((id) => !targetRows.has(id));
      for (const [id, state] of await this.documents.rows(orderCtx, missing, true)) {
        targetRows.set(id, { exists: state.exists, values: state.values });
      }
    };
    await loadTargets([...links.values()].map((link) => link.targetRowId));

    const updatedAt = new Map<string, Date | null>();
    const input = {
      changes,
      sourceRows,
      reader: plainReader(catalogFields),
      sharedFieldIds: catalogFields.map((field) => field.id),
      shareScope: connection.shareScope as { type: 'all' } | { type: 'filter'; filterGroup: FilterGroup },
      eventTypes: connection.propagationEvents.eventTypes,
      fieldMapping,
      receiverFilter,
      conflictResolution: binding.conflictResolution,
      links,
      targetRows,
      dedupIndex: new Map<string, string>(),
      unmappedTarget: (sourceFieldId: string): string | null => {
        const fromGenerated = generated.find((field) => field.sourceFieldId === sourceFieldId);
        if (fromGenerated && orderById.has(fromGenerated.id)) {
          return fromGenerated.id;
        }
        if (orderById.has(sourceFieldId)) {
          return sourceFieldId;
        }
        const name = catalogById.get(sourceFieldId)?.name.trim().toLowerCase();
        return name ? (orderByName.get(name)?.id ?? null) : null;
      },
      mapping: {
        targetType: (fieldId: string) => orderById.get(fieldId)?.type,
        rates: rateTable,
        today: now.toISOString().slice(0, 10),
        formula: (source: string, read: (fieldId: string) => unknown) =>
          this.formulas.evaluate(source, read, now),
      },
      toStored: (values: Record<string, unknown>) =>
        this.documents.toStored(orderFields, values, true) as Record<string, unknown>,
      localChangedAt: (rowId: string) => updatedAt.get(rowId) ?? null,
      upstreamChangedAt,
      newRowId: () => randomUUID(),
    };

    // Deduplication: a first pass finds the mapped keys of rows without a link; their order-book matches are looked up.
    const dedupFields = dedupFieldIds(receiverFilter);
    if (dedupFields.length > 0) {
      const dry = planBinding(input);
      const wanted = dry.changes
        .filter((change) => change.kind === 'create')
        .map((change) => change.values[dedupFields[0] as string]);
      if (wanted.length > 0) {
        const found = await this.documents.findByValues(
          orderCtx,
          dedupFields[0] as string,
          wanted,
          dedupFields,
        );
        for (const [rowId, values] of found) {
          const key = dedupKey(receiverFilter, values);
          if (key && !input.dedupIndex.has(key)) {
            input.dedupIndex.set(key, rowId);
          }
        }
        await loadTargets([...input.dedupIndex.values()]);
      }
    }
    // latest_wins needs the time of the buyer's edit: read only for rows with a local edit of a propagated field.
    if (
      Object.values(binding.conflictResolution.fieldStrategies ?? {}).some(
        (item) => item.strategy === 'latest_wins',
      ) ||
      binding.conflictResolution.defaultStrategy === 'latest_wins'
    ) {
      for (const link of links.values()) {
        const target = targetRows.get(link.targetRowId);
        if (
          target?.exists &&
          Object.entries(link.lastValues).some(
            ([fieldId, value]) =>
              fieldId !== PENDING_ALTERNATES &&
              JSON.stringify(target.values[fieldId] ?? null) !== JSON.stringify(value ?? null),
          )
        ) {
          updatedAt.set(link.targetRowId, await this.documents.rowUpdatedAt(orderCtx, link.targetRowId));
        }
      }
    }

    const plan = planBinding(input);

    // Creates must hold every required field: a row that does not is an error, the others go on.
    const logOf = new Map(plan.logs.map((log) => [log.sourceRowId, log]));
    const failedCreates = new Set<string>();
    for (const change of plan.changes) {
      if (change.kind !== 'create') {
        continue;
      }
      try {
        this.documents.toStored(orderFields, change.values, false);
      } catch (error) {
        failedCreates.add(change.sourceRowId);
        const entry = logOf.get(change.sourceRowId);
        if (entry) {
          entry.outcome = 'error';
          entry.reason = `the row cannot be created in the order book: ${describeError(error)}`;
        }
        plan.links.delete(change.sourceRowId);
      }
    }
    const writable = plan.changes.filter((change) => !failedCreates.has(change.sourceRowId));
    const accepted = writable.filter((change) => change.decision === 'accept');
    const pending = writable.filter((change) => change.decision === 'pending');
    const revisionLabel =
      jobs.length === 1
        ? `revision ${first.catalogRevisionVersion}`
        : `revisions ${first.catalogRevisionVersion}–${last.catalogRevisionVersion}`;
    const requestIds = new Map<PlannedChange['decision'], string>();

    for (const [group, decision] of [
      [accepted, 'accept'],
      [pending, 'pending'],
    ] as const) {
      if (group.length === 0) {
        continue;
      }
      const outcome = await this.documents.write(
        orderCtx,
        group.map((change) => ({ kind: change.kind, rowId: change.targetRowId, values: change.values })),
        {
          title: `${SYNC_TITLE_PREFIX} ${catalog.name} ${revisionLabel}`,
          description: `Propagated from catalog ${catalog.id} through connection ${connection.id} (binding ${binding.id}).`,
          pending: decision === 'pending',
        },
      );
      if (!outcome?.request) {
        continue;
      }
      if (outcome.merge) {
        await this.origins.record({
          revisionId: outcome.merge.revision.id,
          organizationId: binding.organizationId,
          documentId: orderCtx.document.uuid,
          originKind: 'binding',
          originId: binding.id,
          sourceDocumentId: catalogCtx.document.uuid,
          sourceRevisionId: last.catalogRevisionId,
        });
      }
      const merged = outcome.merge !== null;
      const productInfo = productInfoOf(context, group, sourceRows, catalogFields, jobs);
      const syncRequest = await this.port.createSyncRequest({
        organizationId: binding.organizationId,
        orderBookId: orderBook.id,
        bindingId: binding.id,
        requestType: 'catalog_sync',
        source: {
          catalogId: catalog.id,
          connectionId: connection.id,
          supplierOrganizationId: catalog.organizationId,
          catalogRevisionIds: jobs.map((job) => job.catalogRevisionId),
        },
        changes: group.map((change) => ({
          operation:
            change.kind === 'create' ? 'create_row' : change.kind === 'update' ? 'update_row' : 'delete_row',
          rowId: change.targetRowId,
          sourceRowId: change.sourceRowId,
          // As Value objects (spec 2.6 ValueEntry), like a sync request created through the API; the plain values
          // the mapping produced are parsed as the write parsed them.
          ...(change.kind === 'delete'
            ? {}
            : { values: renderValues(this.documents.toStored(orderCtx.document.metadata.fields, change.values, true), orderCtx.document.metadata.fields) }),
        })),
        status: merged ? 'accepted' : 'pending',
        message: merged
          ? `${group.length} row change(s) applied automatically`
          : `${group.length} row change(s) waiting for acceptance`,
        documentRequestId: outcome.request.id,
        productInfo,
        decidedBy: merged ? binding.createdBy : null,
        createdBy: binding.createdBy,
      });
      requestIds.set(decision, syncRequest.id);
      await this.announcer.announce(
        context,
        syncRequest.id,
        productInfo,
        merged ? 'accepted' : 'pending',
        outcome.request.id,
      );
    }

    const bySource = new Map(writable.map((change) => [change.sourceRowId, change]));
    const logs: SyncLogEntry[] = plan.logs.map((log) => {
      const change = bySource.get(log.sourceRowId);
      return {
        ...this.logBase(context, last),
        eventType: log.eventType,
        sourceRowId: log.sourceRowId,
        targetRowId: log.targetRowId,
        outcome: log.outcome,
        reason: log.reason,
        details: log.details ?? null,
        syncRequestId: change ? (requestIds.get(change.decision) ?? null) : null,
        idempotencyKey: `${last.catalogRevisionId}:${log.sourceRowId}`,
      };
    });
    await this.port.recordLogs(logs);
    await this.links.apply(binding.organizationId, binding.id, plan.links);
    const counts: Record<string, number> = {};
    for (const log of plan.logs) {
      counts[log.outcome] = (counts[log.outcome] ?? 0) + 1;
    }
    await this.jobs.finish(ids, 'applied', {
      counts,
      rows: changes.length,
      syncRequestIds: [...requestIds.values()],
      ...(initial ? { kind: 'initial_sync' } : {}),
    });
    return { bindingId: binding.id, jobs: jobs.length, outcome: 'applied', counts };
  }

  private logBase(context: BindingContext, job: PropagationJob): SyncLogEntry {
    return {
      organizationId: context.binding.organizationId,
      orderBookId: context.orderBook.id,
      bindingId: context.binding.id,
      connectionId: context.connection.id,
      catalogId: context.catalog.id,
      catalogRevisionId: job.catalogRevisionId,
      catalogRevisionVersion: job.catalogRevisionVersion,
      outcome: 'skipped',
    };
  }
}
