import { Injectable, type OnModuleInit } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { BindingRecord } from '../../supply-chain/domain/supply-chain.types.js';
import { BindingActivations } from '../../supply-chain/services/binding-activations.js';
import { SyncWorker } from '../jobs/sync.worker.js';
import { PropagationJobRepository } from '../repositories/propagation-job.repository.js';
import { SupplyChainPort } from '../services/supply-chain.port.js';
import { SyncClock } from '../services/sync-clock.js';
import { SyncDocumentGateway } from '../services/sync-document.gateway.js';

/**
 * Spec 3: a binding "becomes active and begins syncing". When it becomes active (created active, or approved) it
 * gets one initial-sync job in the ledger, in the activating transaction: at the catalog's newest revision, applying
 * every catalog row as a `row_created` through the same pipeline (share scope, receiver filter, mapping, accept mode;
 * docs/supply-chain.md, "Initial sync"). The ledger's unique (binding, revision) makes it once; the worker runs it
 * after commit. Nothing is queued for a catalog without rows, or while the connection is not active (as for changes).
 */
@Injectable()
export class BindingActivatedListener implements OnModuleInit {
  constructor(
    private readonly tx: TransactionHost,
    private readonly activations: BindingActivations,
    private readonly port: SupplyChainPort,
    private readonly jobs: PropagationJobRepository,
    private readonly documents: SyncDocumentGateway,
    private readonly clock: SyncClock,
    private readonly worker: SyncWorker,
  ) {}

  onModuleInit(): void {
    this.activations.onActivated((binding) => this.enqueueInitialSync(binding));
  }

  private async enqueueInitialSync(binding: BindingRecord): Promise<void> {
    const context = await this.port.bindingContext(binding.id);
    if (!context || context.connection.status !== 'active') {
      return;
    }
    const { catalog, connection } = context;
    const catalogCtx = await this.documents.open(
      catalog.organizationId,
      'catalog',
      catalog.id,
      connection.createdBy,
    );
    const head =
      catalogCtx && (await this.documents.hasRows(catalogCtx))
        ? await this.documents.headRevision(catalogCtx)
        : null;
    if (!head) {
      return;
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
        kind: 'initial_sync',
      },
      this.clock.now(),
      0,
    );
    this.tx.afterCommit(() => this.worker.kick());
  }
}
