import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { BindingRecord } from '../../supply-chain/domain/supply-chain.types.js';
import { SyncWorker } from '../jobs/sync.worker.js';
import { PropagationJobRepository, type ReconcileKind } from '../repositories/propagation-job.repository.js';
import { SupplyChainPort } from './supply-chain.port.js';
import { SyncClock } from './sync-clock.js';
import { SyncDocumentReadGateway } from './sync-document-read.gateway.js';
import { SyncDocumentGateway } from './sync-document.gateway.js';

export interface ReconcileRequest {
  kind: ReconcileKind;
  /** Why (kept in the job's `result`): e.g. `share_scope_changed`. */
  reason?: string;
  /** The change that asked for it (a reconcile only; see NewJob.triggerKey). */
  triggerKey?: string;
}

/**
 * Queues a binding's reconcile job — its initial sync, or a reconcile after what its connection shares changed —
 * in the ledger, in the caller's transaction (so it commits, once, with the change that asked for it), at the
 * catalog's newest revision; the worker runs it after commit (docs/supply-chain.md, "Initial sync and reconcile").
 * Nothing is queued while the connection is not active (as for changes), nor when there is nothing to reconcile.
 */
@Injectable()
export class ReconcileScheduler {
  constructor(
    private readonly tx: TransactionHost,
    private readonly port: SupplyChainPort,
    private readonly jobs: PropagationJobRepository,
    private readonly documents: SyncDocumentGateway,
    private readonly reads: SyncDocumentReadGateway,
    private readonly clock: SyncClock,
    private readonly worker: SyncWorker,
  ) {}

  async schedule(binding: BindingRecord, request: ReconcileRequest): Promise<boolean> {
    const context = await this.port.bindingContext(binding.id);
    if (!context || context.connection.status !== 'active') {
      return false;
    }
    const { catalog, connection } = context;
    const catalogCtx = await this.documents.open(
      catalog.organizationId,
      'catalog',
      catalog.id,
      await this.port.actingUser(catalog.organizationId, connection.createdBy),
    );
    if (!catalogCtx) {
      return false;
    }
    // A new binding of an empty catalog has nothing to bring — unless the order book holds rows an earlier binding of
    // the catalog propagated, which the reconcile withdraws. An active binding's reconcile may have rows to withdraw.
    if (
      request.kind === 'initial_sync' &&
      !(await this.reads.hasRows(catalogCtx)) &&
      (await this.port.siblingBindings(binding)).length === 0
    ) {
      return false;
    }
    const head = await this.reads.headRevision(catalogCtx);
    if (!head) {
      return false;
    }
    await this.jobs.enqueue(
      {
        organizationId: binding.organizationId,
        bindingId: binding.id,
        orderBookId: binding.orderBookId,
        catalogDocumentId: catalog.documentId,
        catalogRevisionId: head.id,
        catalogRevisionVersion: head.version,
        revisionCreatedAt: head.createdAt,
        kind: request.kind,
        reason: request.reason,
        triggerKey: request.triggerKey,
      },
      this.clock.now(),
      0,
    );
    this.tx.afterCommit(() => this.worker.kick());
    return true;
  }
}
