import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { planBinding } from '../domain/binding-plan.js';
import type { RowLink, TargetRowState } from '../domain/binding-plan.types.js';
import { describeError } from '../domain/describe-error.js';
import type { FieldMapping } from '../domain/field-mapping.js';
import { invertMapping, nextCronTime } from '../domain/connector-rules.js';
import type { FilterGroup } from '../domain/filter-group.js';
import type { SourceRowChange } from '../domain/row-changes.js';
import {
  type ConnectorRun,
  ConnectorRunRepository,
  type RunResult,
} from '../repositories/connector-run.repository.js';
import { CurrencyRateRepository } from '../repositories/currency-rate.repository.js';
import { RevisionOriginRepository } from '../repositories/revision-origin.repository.js';
import { RowLinkRepository } from '../repositories/row-link.repository.js';
import { FormulaRunner } from './formula-runner.js';
import { plainReader } from './row-reader.js';
import { SupplyChainPort } from './supply-chain.port.js';
import { SyncClock } from './sync-clock.js';
import { SyncDocumentReadGateway } from './sync-document-read.gateway.js';
import { SYNC_TITLE_PREFIX, SyncDocumentGateway } from './sync-document.gateway.js';

/**
 * Runs connectors inside one organization (`orderbook_to_catalog`, `catalog_clone`): a realtime run applies one
 * revision of the source (or, bidirectional, of the target back to the source); a scheduled or manual run
 * reconciles every row. The rules are the propagation planner's with `auto` accept and `source_wins` (the source
 * overwrites the target), the source filter as the scope and no deduplication. Each run writes one request merged at
 * once in the target, marks its revision with the connector as origin (a change is not sent back), and is logged.
 */
@Injectable()
export class ConnectorRunnerService {
  private readonly logger = new Logger(ConnectorRunnerService.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly runs: ConnectorRunRepository,
    private readonly links: RowLinkRepository,
    private readonly origins: RevisionOriginRepository,
    private readonly rates: CurrencyRateRepository,
    private readonly documents: SyncDocumentGateway,
    private readonly reads: SyncDocumentReadGateway,
    private readonly port: SupplyChainPort,
    private readonly clock: SyncClock,
    private readonly formulas: FormulaRunner,
  ) {}

  /** Runs the oldest pending run; false when none is pending. A failing run is logged as failed. */
  async runNextPending(): Promise<boolean> {
    let claimed: ConnectorRun | null = null;
    const startedAt = new Date();
    try {
      return await this.tx.run(async () => {
        const run = await this.runs.claimPending();
        if (!run) {
          return false;
        }
        claimed = run;
        await this.runs.finish(run.id, await this.execute(run), startedAt);
        return true;
      });
    } catch (error) {
      const run = claimed as ConnectorRun | null;
      if (!run) {
        throw error;
      }
      this.logger.warn({ err: error, connectorId: run.connectorId }, 'connector run failed');
      await this.tx.run(() =>
        this.runs.finish(
          run.id,
          {
            status: 'failed',
            targetRevisionId: null,
            rowsCreated: 0,
            rowsUpdated: 0,
            rowsDeleted: 0,
            rowsSkipped: 0,
            error: describeError(error).slice(0, 2000),
          },
          startedAt,
        ),
      );
      return true;
    }
  }

  /** Creates the schedule of new scheduled connectors and enqueues the due scheduled runs; returns how many. */
  async enqueueDueSchedules(): Promise<number> {
    const now = this.clock.now();
    await this.tx.run(async () => {
      const known = await this.runs.scheduledIds();
      for (const connector of await this.port.scheduledConnectors()) {
        if (!known.has(connector.id) && connector.scheduleCron) {
          await this.runs.ensureSchedule(
            connector.organizationId,
            connector.id,
            nextCronTime(connector.scheduleCron, connector.scheduleTimezone, now),
          );
        }
      }
    });
    let enqueued = 0;
    for (;;) {
      const done = await this.tx.run(async () => {
        const due = await this.runs.claimDueSchedule(now);
        if (!due) {
          return false;
        }
        const connector = await this.port.connectorById(due.connectorId);
        if (!connector || connector.syncMode !== 'scheduled' || !connector.scheduleCron) {
          await this.runs.dropSchedule(due.connectorId);
          return true;
        }
        if (connector.status === 'active') {
          await this.runs.enqueue(
            connector.organizationId,
            connector.id,
            'scheduled',
            new Date(due.nextRunAt),
          );
          enqueued += 1;
        }
        await this.runs.advanceSchedule(
          connector.id,
          now,
          nextCronTime(connector.scheduleCron, connector.scheduleTimezone, now),
        );
        return true;
      });
      if (!done) {
        return enqueued;
      }
    }
  }

  private async execute(run: ConnectorRun): Promise<RunResult> {
    const empty: RunResult = {
      status: 'skipped',
      targetRevisionId: null,
      rowsCreated: 0,
      rowsUpdated: 0,
      rowsDeleted: 0,
      rowsSkipped: 0,
      error: null,
    };
    const connector = await this.port.connectorById(run.connectorId);
    if (!connector) {
      return { ...empty, error: 'the connector is gone' };
    }
    if (connector.status !== 'active') {
      return { ...empty, error: `the connector is ${connector.status}` };
    }
    const reverse = run.direction === 'reverse';
    const from = reverse
      ? { type: connector.targetDocType, id: connector.targetDocId }
      : { type: connector.sourceDocType, id: connector.sourceDocId };
    const to = reverse
      ? { type: connector.sourceDocType, id: connector.sourceDocId }
      : { type: connector.targetDocType, id: connector.targetDocId };
    const sourceCtx = await this.documents.open(
      connector.organizationId,
      from.type,
      from.id,
      connector.createdBy,
    );
    const targetCtx = await this.documents.open(
      connector.organizationId,
      to.type,
      to.id,
      connector.createdBy,
    );
    if (!sourceCtx || !targetCtx) {
      return { ...empty, status: 'failed', error: 'the source or the target document is gone' };
    }

    // Links are kept source → target; the reverse direction reads them the other way round.
    const storedLinks = await this.links.all(connector.id);
    const links = new Map<string, RowLink>(
      storedLinks.map((link) =>
        reverse
          ? [
              link.targetRowId,
              { targetRowId: link.sourceRowId, lastValues: {}, syncedAt: new Date(link.syncedAt) },
            ]
          : [
              link.sourceRowId,
              {
                targetRowId: link.targetRowId,
                lastValues: link.lastValues,
                syncedAt: new Date(link.syncedAt),
              },
            ],
      ),
    );
    let changes: SourceRowChange[];
    if (run.trigger === 'realtime' && run.sourceRevisionId) {
      changes = await this.reads.rowChanges(sourceCtx, run.sourceRevisionId);
    } else {
      const ids = await this.reads.allRowIds(sourceCtx);
      const present = new Set(ids);
      changes = [
        ...ids.map((rowId) => ({
          rowId,
          kind: (links.has(rowId) ? 'updated' : 'created') as SourceRowChange['kind'],
          fieldIds: [],
        })),
        ...[...links.keys()]
          .filter((rowId) => !present.has(rowId))
          .map((rowId) => ({ rowId, kind: 'deleted' as const, fieldIds: [] })),
      ];
    }
    const sourceRows = new Map<string, Record<string, unknown>>();
    for (const [id, state] of await this.reads.rows(
      sourceCtx,
      changes.filter((change) => change.kind !== 'deleted').map((change) => change.rowId),
    )) {
      if (state.exists) {
        sourceRows.set(id, state.values);
      }
    }
    const targetRows = new Map<string, TargetRowState>();
    const targetIds = changes
      .map((change) => links.get(change.rowId)?.targetRowId)
      .filter((id): id is string => id !== undefined);
    for (const [id, state] of await this.reads.rows(targetCtx, targetIds, true)) {
      targetRows.set(id, { exists: state.exists, values: state.values });
    }
    const config = connector.config;
    const mapping = reverse
      ? invertMapping(config.fieldMapping as unknown as FieldMapping)
      : (config.fieldMapping as unknown as FieldMapping);
    const sourceFields = sourceCtx.document.metadata.fields;
    const targetFields = targetCtx.document.metadata.fields;
    const targetById = new Map(targetFields.map((field) => [field.id, field]));
    const targetByName = new Map(targetFields.map((field) => [field.name.trim().toLowerCase(), field]));
    const sourceById = new Map(sourceFields.map((field) => [field.id, field]));
    const now = this.clock.now();
    const sourceFilter = reverse ? undefined : (config.sourceFilter as FilterGroup | undefined);
    const plan = planBinding({
      changes,
      sourceRows,
      reader: plainReader(sourceFields),
      sharedFieldIds: sourceFields.map((field) => field.id),
      shareScope: sourceFilter ? { type: 'filter', filterGroup: sourceFilter } : { type: 'all' },
      eventTypes: [],
      fieldMapping: mapping,
      receiverFilter: { acceptMode: 'auto' },
      // source_wins: the source's value replaces the target's, edited or not.
      conflictResolution: { defaultStrategy: 'keep_upstream' },
      links,
      targetRows,
      dedupIndex: new Map(),
      unmappedTarget: (sourceFieldId) => {
        if (targetById.has(sourceFieldId)) {
          return sourceFieldId;
        }
        const name = sourceById.get(sourceFieldId)?.name.trim().toLowerCase();
        return name ? (targetByName.get(name)?.id ?? null) : null;
      },
      mapping: {
        targetType: (fieldId) => targetById.get(fieldId)?.type,
        rates: await this.rates.list(connector.organizationId),
        today: now.toISOString().slice(0, 10),
        formula: (source, read) => this.formulas.evaluate(source, read, now),
      },
      toStored: (values) => this.documents.toStored(targetFields, values, true) as Record<string, unknown>,
      localChangedAt: () => null,
      upstreamChangedAt: now,
      newRowId: () => randomUUID(),
    });
    const outcome = await this.documents.write(
      targetCtx,
      plan.changes.map((change) => ({ kind: change.kind, rowId: change.targetRowId, values: change.values })),
      {
        title: `${SYNC_TITLE_PREFIX} connector ${connector.name} (${run.trigger}${reverse ? ', reverse' : ''})`,
        description: `Connector ${connector.id} run ${run.id}.`,
        pending: false,
      },
    );
    if (outcome?.merge) {
      await this.origins.record({
        revisionId: outcome.merge.revision.id,
        organizationId: connector.organizationId,
        documentId: targetCtx.document.uuid,
        originKind: 'connector',
        originId: connector.id,
        sourceDocumentId: sourceCtx.document.uuid,
        sourceRevisionId: run.sourceRevisionId,
      });
    }
    const linkUpdates: Map<string, { targetRowId: string; lastValues: Record<string, unknown> } | null> =
      reverse
        ? new Map(
            [...plan.links]
              .filter(([, link]) => link !== null)
              .map(([sourceRowId, link]) => [
                (link as { targetRowId: string }).targetRowId,
                { targetRowId: sourceRowId, lastValues: {} },
              ]),
          )
        : plan.links;
    if (reverse) {
      // Forget links whose target-side row was deleted (the source row is deleted in this run).
      const byTarget = new Map(storedLinks.map((item) => [item.targetRowId, item]));
      for (const [rowId, link] of plan.links) {
        if (link === null) {
          const stored = byTarget.get(rowId);
          if (stored) {
            linkUpdates.set(stored.sourceRowId, null);
          }
        }
      }
    }
    await this.links.apply(connector.organizationId, connector.id, linkUpdates);
    const count = (kind: string): number => plan.changes.filter((change) => change.kind === kind).length;
    return {
      status: 'succeeded',
      targetRevisionId: outcome?.merge?.revision.id ?? null,
      rowsCreated: count('create'),
      rowsUpdated: count('update'),
      rowsDeleted: count('delete'),
      rowsSkipped: plan.logs.length - plan.changes.length,
      error: null,
    };
  }
}
