import { Module } from '@nestjs/common';
import { DocumentsModule } from '../documents/documents.module.js';
import { SupplyChainModule } from '../supply-chain/supply-chain.module.js';
import { TenancyModule } from '../tenancy/tenancy.module.js';
import { SyncAdminController } from './controllers/sync-admin.controller.js';
import { SyncWorker } from './jobs/sync.worker.js';
import { BindingActivatedListener } from './listeners/binding-activated.listener.js';
import { RevisionCreatedListener } from './listeners/revision-created.listener.js';
import { ShareScopeChangedListener } from './listeners/share-scope-changed.listener.js';
import { ConnectorRunRepository } from './repositories/connector-run.repository.js';
import { CurrencyRateRepository } from './repositories/currency-rate.repository.js';
import { PropagationJobRepository } from './repositories/propagation-job.repository.js';
import { RevisionOriginRepository } from './repositories/revision-origin.repository.js';
import { RowLinkRepository } from './repositories/row-link.repository.js';
import { ConnectorRunnerService } from './services/connector-runner.service.js';
import { FormulaRunner } from './services/formula-runner.js';
import { PropagationBatch } from './services/propagation-batch.service.js';
import { PropagationService } from './services/propagation.service.js';
import { ReconcileScheduler } from './services/reconcile-scheduler.service.js';
import { SupplyChainAdapter } from './services/supply-chain.adapter.js';
import { SupplyChainPort } from './services/supply-chain.port.js';
import { SyncAdminService } from './services/sync-admin.service.js';
import { SyncAnnouncer } from './services/sync-announcer.service.js';
import { SyncClock } from './services/sync-clock.js';
import { SyncDocumentReadGateway } from './services/sync-document-read.gateway.js';
import { SyncDocumentGateway } from './services/sync-document.gateway.js';

/**
 * Supply-chain propagation (spec 3, rules 1–8) and connectors (docs/supply-chain.md, "Propagation", "Connectors"):
 * the revision listener enqueues (binding, revision) jobs and connector runs from the outbox; SyncWorker applies them
 * after commit through the documents module's change engine. The resources themselves are SupplyChainModule's.
 */
@Module({
  imports: [DocumentsModule, SupplyChainModule, TenancyModule],
  controllers: [SyncAdminController],
  providers: [
    SyncClock,
    FormulaRunner,
    SyncDocumentGateway,
    SyncDocumentReadGateway,
    { provide: SupplyChainPort, useClass: SupplyChainAdapter },
    PropagationJobRepository,
    RowLinkRepository,
    RevisionOriginRepository,
    CurrencyRateRepository,
    ConnectorRunRepository,
    SyncAnnouncer,
    PropagationBatch,
    PropagationService,
    ConnectorRunnerService,
    SyncWorker,
    ReconcileScheduler,
    RevisionCreatedListener,
    BindingActivatedListener,
    ShareScopeChangedListener,
    SyncAdminService,
  ],
  exports: [SyncClock, SyncWorker],
})
export class SupplyChainSyncModule {}
