import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { DocumentContext } from '../../documents/services/document-access.service.js';
import { renderValues } from '../../documents/mappers/document.mapper.js';
import { describeError } from '../domain/describe-error.js';
import { planBinding } from '../domain/binding-plan.js';
import {
  type PlannedChange,
  PENDING_ALTERNATES,
  type RowLink,
  type TargetRowState,
} from '../domain/binding-plan.types.js';
import type { FieldMapping } from '../domain/field-mapping.js';
import { evaluateFilterGroup, type FieldReader, type FilterGroup } from '../domain/filter-group.js';
import type { SourceRowChange } from '../domain/row-changes.js';
import { dedupFieldIds, dedupKey, type ReceiverFilter } from '../domain/sync-rules.js';
import type { CurrencyRateRecord } from '../repositories/currency-rate.repository.js';
import type { PropagationJob } from '../repositories/propagation-job.repository.js';
import { RevisionOriginRepository } from '../repositories/revision-origin.repository.js';
import { RowLinkRepository } from '../repositories/row-link.repository.js';
import { FormulaRunner } from './formula-runner.js';
import { plainReader } from './row-reader.js';
import { productInfoOf, SyncAnnouncer } from './sync-announcer.service.js';
import {
  type BindingContext,
  type SiblingBinding,
  SupplyChainPort,
  type SyncLogEntry,
} from './supply-chain.port.js';
import { type RowState, SyncDocumentReadGateway } from './sync-document-read.gateway.js';
import { SYNC_TITLE_PREFIX, SyncDocumentGateway } from './sync-document.gateway.js';

/** One claim of a binding's due jobs, applied in one transaction (possibly in several steps: a reconcile). */
export interface PropagationRun {
  context: BindingContext;
  jobs: PropagationJob[];
  catalogCtx: DocumentContext;
  orderCtx: DocumentContext;
  /** Who the order-book writes and sync requests act as (SupplyChainPort.actingUser). */
  actorId: string;
  /** An initial sync or a reconcile (the catalog as it is), not the revisions' changes. */
  reconcile: boolean;
  /** Prefix of the row logs' idempotency keys. */
  logKey: string;
  revisionLabel: string;
  rateTable: CurrencyRateRecord[];
  now: Date;
  upstreamChangedAt: Date;
  siblings: SiblingBinding[] | null;
  counts: Record<string, number>;
  rows: number;
  requestIds: string[];
  /** Statuses of the sync requests already mailed in this run. */
  mailed: Set<string>;
}

/**
 * The idempotency key of a job's logs: its revision, and for a reconcile queued by a change also that change (the
 * binding's logs of the same revision — its initial sync, that revision's own job — are other runs).
 */
export function logKeyOf(job: PropagationJob): string {
  return job.triggerKey ? `${job.catalogRevisionId}:${job.triggerKey}` : job.catalogRevisionId;
}

/** The fields every sync log of a job carries. */
export function logBase(context: BindingContext, job: PropagationJob): SyncLogEntry {
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

/**
 * Spec 3 rules 2–8 for one bounded set of a binding's row changes, inside the propagation's transaction
 * (PropagationService): share scope, receiver filter, mapping, deduplication, accept mode and conflict resolution
 * (binding-plan.ts), then the order-book writes, the sync requests with their events, the sync logs and the row links.
 */
@Injectable()
export class PropagationBatch {
  constructor(
    private readonly links: RowLinkRepository,
    private readonly origins: RevisionOriginRepository,
    private readonly documents: SyncDocumentGateway,
    private readonly reads: SyncDocumentReadGateway,
    private readonly port: SupplyChainPort,
    private readonly announcer: SyncAnnouncer,
    private readonly formulas: FormulaRunner,
  ) {}

  /** The binding's siblings (SupplyChainPort.siblingBindings), read once per run. */
  async siblingsOf(run: PropagationRun): Promise<SiblingBinding[]> {
    run.siblings ??= await this.port.siblingBindings(run.context.binding);
    return run.siblings;
  }

  /**
   * Spec 3 rules 2–8 for one bounded set of folded row changes: plans them (binding-plan.ts), writes the order book
   * (accepted: one request merged at once; pending: an open request), records the sync requests and their events,
   * the sync logs and the row links, and adds to the run's totals.
   */
  async apply(run: PropagationRun, rowChanges: SourceRowChange[]): Promise<void> {
    if (rowChanges.length === 0) {
      return;
    }
    const { context, catalogCtx, orderCtx, jobs } = run;
    const { binding, connection, catalog, orderBook } = context;
    const catalogFields = catalogCtx.document.metadata.fields;
    const orderFields = orderCtx.document.metadata.fields;
    const receiverFilter = binding.receiverFilter as unknown as ReceiverFilter;
    const fieldMapping = binding.fieldMapping as unknown as FieldMapping;
    const shareScope = connection.shareScope as
      { type: 'all' } | { type: 'filter'; filterGroup: FilterGroup };
    const reader = plainReader(catalogFields);
    const inShareScope = (read: FieldReader): boolean =>
      shareScope.type !== 'filter' || evaluateFilterGroup(shareScope.filterGroup, read);

    let changes = rowChanges;
    const sourceIds = changes.map((change) => change.rowId);
    const sourceRows = new Map<string, Record<string, unknown>>();
    for (const [id, state] of await this.reads.rows(
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
    // created a second time. Only rows still in the order book count; the first run stores this binding's link. A
    // row a live binding holds is continued only when this binding brings it too (in its share scope and receiver
    // filter): never withdrawn from under the other binding. Rows of ended bindings are this binding's to keep or
    // withdraw.
    const ended = new Set<string>();
    const unlinked = sourceIds.filter((id) => !stored.has(id));
    if (unlinked.length > 0) {
      const siblings = await this.siblingsOf(run);
      const live = new Set(
        siblings.filter((sibling) => sibling.status === 'active').map((sibling) => sibling.id),
      );
      const inherited = await this.links.findLatestAmong(
        siblings.map((sibling) => sibling.id),
        unlinked,
      );
      const present =
        inherited.size > 0
          ? await this.reads.rows(
              orderCtx,
              [...inherited.values()].map((link) => link.targetRowId),
            )
          : new Map<string, RowState>();
      for (const [sourceRowId, link] of inherited) {
        if (!present.get(link.targetRowId)?.exists) {
          continue;
        }
        if (link.ownerId && live.has(link.ownerId)) {
          const source = sourceRows.get(sourceRowId);
          const read = source ? reader(source) : null;
          if (!read || !inShareScope(read) || !evaluateFilterGroup(receiverFilter?.filterGroup, read)) {
            continue;
          }
        } else {
          ended.add(sourceRowId);
        }
        stored.set(sourceRowId, link);
      }
    }
    // A reconcile withdraws a row an ended binding propagated that this binding's receiver filter does not let in
    // (the path of a deleted row, with its accept mode). A row this binding propagated itself keeps its order-book
    // row when it stops matching, as for a change. A deletion of a row nothing links has nothing to do.
    const outsideFilter = new Set<string>();
    if (run.reconcile) {
      changes = changes
        .map((change): SourceRowChange => {
          const source = sourceRows.get(change.rowId);
          if (change.kind === 'deleted' || !source || !ended.has(change.rowId)) {
            return change;
          }
          const read = reader(source);
          if (!inShareScope(read) || evaluateFilterGroup(receiverFilter?.filterGroup, read)) {
            return change;
          }
          outsideFilter.add(change.rowId);
          sourceRows.delete(change.rowId);
          return { rowId: change.rowId, kind: 'deleted', fieldIds: [], oldValues: source };
        })
        .filter((change) => change.kind !== 'deleted' || stored.has(change.rowId));
      if (changes.length === 0) {
        return;
      }
    }
    const links = new Map<string, RowLink>(
      [...stored].map(([id, link]) => [
        id,
        { targetRowId: link.targetRowId, lastValues: link.lastValues, syncedAt: new Date(link.syncedAt) },
      ]),
    );

    const generated = orderBook.generatedFields.filter((field) => field.sourceCatalogId === catalog.id);
    const orderById = new Map(orderFields.map((field) => [field.id, field]));
    const orderByName = new Map(orderFields.map((field) => [field.name.trim().toLowerCase(), field]));
    const catalogById = new Map(catalogFields.map((field) => [field.id, field]));
    const now = run.now;

    // Target rows: the linked ones (locked until commit, so a buyer's edit cannot slip between read and write).
    const targetRows = new Map<string, TargetRowState>();
    const loadTargets = async (rowIds: string[]): Promise<void> => {
      const missing = rowIds.filter((id) => !targetRows.has(id));
      for (const [id, state] of await this.reads.rows(orderCtx, missing, true)) {
        targetRows.set(id, { exists: state.exists, values: state.values });
      }
    };
    await loadTargets([...links.values()].map((link) => link.targetRowId));

    const updatedAt = new Map<string, Date | null>();
    const input = {
      changes,
      sourceRows,
      reader,
      sharedFieldIds: catalogFields.map((field) => field.id),
      shareScope,
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
        rates: run.rateTable,
        today: now.toISOString().slice(0, 10),
        formula: (source: string, read: (fieldId: string) => unknown) =>
          this.formulas.evaluate(source, read, now),
      },
      toStored: (values: Record<string, unknown>) =>
        this.documents.toStored(orderFields, values, true) as Record<string, unknown>,
      localChangedAt: (rowId: string, fieldId: string) => updatedAt.get(`${rowId}:${fieldId}`) ?? null,
      upstreamChangedAt: run.upstreamChangedAt,
      newRowId: () => randomUUID(),
    };

    // Deduplication: a first pass finds the mapped keys of rows without a link; their order-book matches are looked up.
    const dedupFields = dedupFieldIds(receiverFilter);
    if (dedupFields.length > 0) {
      // The dry pass lets creates through even when the connection does not propagate row_created: an update of a
      // row the order book lacks is planned as a create, and only its dedup match decides whether it may go as an
      // update of that row (the real pass filters it otherwise).
      const eventTypes =
        input.eventTypes.length > 0 && !input.eventTypes.includes('row_created')
          ? [...input.eventTypes, 'row_created']
          : input.eventTypes;
      const dry = planBinding({ ...input, eventTypes });
      const wanted = dry.changes
        .filter((change) => change.kind === 'create')
        .map((change) => change.values[dedupFields[0] as string]);
      if (wanted.length > 0) {
        const found = await this.reads.findByValues(orderCtx, dedupFields[0] as string, wanted, dedupFields);
        for (const [rowId, values] of found) {
          const key = dedupKey(receiverFilter, values);
          if (key && !input.dedupIndex.has(key)) {
            input.dedupIndex.set(key, rowId);
          }
        }
        await loadTargets([...input.dedupIndex.values()]);
      }
    }
    // latest_wins needs the time of the buyer's edit of each field: read only for local edits of propagated fields.
    if (
      Object.values(binding.conflictResolution.fieldStrategies ?? {}).some(
        (item) => item.strategy === 'latest_wins',
      ) ||
      binding.conflictResolution.defaultStrategy === 'latest_wins'
    ) {
      for (const link of links.values()) {
        const target = targetRows.get(link.targetRowId);
        if (!target?.exists) {
          continue;
        }
        for (const [fieldId, value] of Object.entries(link.lastValues)) {
          if (
            fieldId !== PENDING_ALTERNATES &&
            JSON.stringify(target.values[fieldId] ?? null) !== JSON.stringify(value ?? null)
          ) {
            updatedAt.set(
              `${link.targetRowId}:${fieldId}`,
              await this.reads.fieldUpdatedAt(orderCtx, link.targetRowId, fieldId),
            );
          }
        }
      }
    }

    const plan = planBinding(input);
    // Rows the supplier does not share leave no trace in the buyer's organization (logs, ledger counts).
    const shownLogs = plan.logs.filter((log) => !log.unshared);
    for (const log of shownLogs) {
      if (outsideFilter.has(log.sourceRowId)) {
        log.reason = `${log.reason ?? log.outcome}: outside this binding's receiver filter`;
      }
    }

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
    const last = jobs[jobs.length - 1] as PropagationJob;
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
          title: `${SYNC_TITLE_PREFIX} ${catalog.name} ${run.revisionLabel}`,
          description: `Propagated from catalog ${catalog.id} through connection ${connection.id} (binding ${binding.id}).`,
          pending: decision === 'pending',
        },
      );
      if (!outcome?.request) {
        continue;
      }
      if (outcome.merge) {
        await this.origins.recordBindingWrite(outcome.merge.revision.id, binding, orderCtx.document.uuid, {
          documentId: catalogCtx.document.uuid,
          revisionId: last.catalogRevisionId,
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
            : {
                values: renderValues(
                  this.documents.toStored(orderCtx.document.metadata.fields, change.values, true),
                  orderCtx.document.metadata.fields,
                ),
              }),
        })),
        status: merged ? 'accepted' : 'pending',
        message: merged
          ? `${group.length} row change(s) applied automatically`
          : `${group.length} row change(s) waiting for acceptance`,
        documentRequestId: outcome.request.id,
        productInfo,
        decidedBy: merged ? run.actorId : null,
        createdBy: run.actorId,
      });
      requestIds.set(decision, syncRequest.id);
      run.requestIds.push(syncRequest.id);
      // A reconcile in several steps mails once per status (the events still name every request).
      const status = merged ? 'accepted' : 'pending';
      await this.announcer.announce(
        context,
        syncRequest.id,
        productInfo,
        status,
        outcome.request.id,
        run.actorId,
        !run.mailed.has(status),
      );
      run.mailed.add(status);
    }

    const bySource = new Map(writable.map((change) => [change.sourceRowId, change]));
    const logs: SyncLogEntry[] = shownLogs.map((log) => {
      const change = bySource.get(log.sourceRowId);
      return {
        ...logBase(context, last),
        eventType: log.eventType,
        sourceRowId: log.sourceRowId,
        targetRowId: log.targetRowId,
        outcome: log.outcome,
        reason: log.reason,
        details: log.details ?? null,
        syncRequestId: change ? (requestIds.get(change.decision) ?? null) : null,
        idempotencyKey: `${run.logKey}:${log.sourceRowId}`,
      };
    });
    await this.port.recordLogs(logs);
    await this.links.apply(binding.organizationId, binding.id, plan.links);
    for (const log of shownLogs) {
      run.counts[log.outcome] = (run.counts[log.outcome] ?? 0) + 1;
    }
    run.rows += changes.length - (plan.logs.length - shownLogs.length);
  }
}
