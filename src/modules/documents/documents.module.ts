import { Module, type OnModuleInit } from '@nestjs/common';
import { OrganizationStatisticsService } from '../tenancy/services/organization-statistics.service.js';
import { TenancyModule } from '../tenancy/tenancy.module.js';
import { ComputedValuesRepository } from './repositories/computed-values.repository.js';
import { ComputedAccessService } from './services/computed/computed-access.service.js';
import { ComputedEventsRecorder } from './services/computed/computed-events.recorder.js';
import { ComputedFieldsService } from './services/computed/computed-fields.service.js';
import { ComputedMetadataService } from './services/computed/computed-metadata.service.js';
import { ComputedReadService } from './services/computed/computed-read.service.js';
import { DataController } from './controllers/data.controller.js';
import { DocumentAccessGuard } from './controllers/document-access.guard.js';
import { DocumentsController } from './controllers/documents.controller.js';
import { MetadataController } from './controllers/metadata.controller.js';
import { PropertiesController } from './controllers/properties.controller.js';
import { RequestsController } from './controllers/requests.controller.js';
import { RevisionsController } from './controllers/revisions.controller.js';
import { DocumentRepository } from './repositories/document.repository.js';
import { FieldIndexRepository } from './repositories/field-index.repository.js';
import { FieldValuesRepository } from './repositories/field-values.repository.js';
import { PropertiesRepository } from './repositories/properties.repository.js';
import { RequestRepository } from './repositories/request.repository.js';
import { RevisionRepository } from './repositories/revision.repository.js';
import { RevisionHistoryRepository } from './repositories/revision-history.repository.js';
import { RowQueryRepository } from './repositories/row-query.repository.js';
import { RowRepository } from './repositories/row.repository.js';
import { WriteBatcher } from './services/write-batcher.js';
import { ChangeEngineService } from './services/change-engine.service.js';
import { DocumentAccessService } from './services/document-access.service.js';
import { DocumentDeletionListeners } from './services/document-deletion-listeners.js';
import { DocumentFacts } from './services/document-facts.service.js';
import { DocumentEventsService } from './services/document-events.service.js';
import { DocumentIndexService } from './services/document-index.service.js';
import { DocumentsService } from './services/documents.service.js';
import { DraftReadService } from './services/draft-read.service.js';
import { MergeService } from './services/merge/merge.service.js';
import { MetadataMergeService } from './services/merge/metadata-merge.service.js';
import { RowMergeService } from './services/merge/row-merge.service.js';
import { RelationsController } from './controllers/relations.controller.js';
import { RelationRepository } from './repositories/relation.repository.js';
import { RelationMergeService } from './services/merge/relation-merge.service.js';
import { RelationsService } from './services/relations.service.js';
import { MetadataService } from './services/metadata.service.js';
import { PropertiesService } from './services/properties.service.js';
import { RequestsService } from './services/requests.service.js';
import { RevisionsService } from './services/revisions.service.js';
import { RevisionHistoryService } from './services/revision-history.service.js';
import { RevisionRevertService } from './services/revision-revert.service.js';
import { RevisionExportService } from './services/export/revision-export.service.js';
import { RevisionExportRepository } from './repositories/revision-export.repository.js';
import { RequestHooks } from './services/request-hooks.js';
import { RowQueryService } from './services/row-query.service.js';
import { RowsService } from './services/rows.service.js';
import { TypeSettingsController } from './controllers/type-settings.controller.js';
import { RequestRetentionJob } from './jobs/request-retention.job.js';
import { TypeSettingsRepository } from './repositories/type-settings.repository.js';
import { BundleSections } from './services/bundle-sections.js';
import { DocumentSettingsPolicy } from './services/document-settings.policy.js';
import { MetadataChangeListeners } from './services/metadata-change-listeners.js';
import { TypeSettingsService } from './services/type-settings.service.js';
import { ViewResolver } from './services/view-resolver.js';
import { DocumentNotificationsListener } from './listeners/document-notifications.listener.js';
import { ParticipantsRepository } from './repositories/participants.repository.js';

/**
 * Documents: metadata, rows, properties, the query engine, and the change-request → merge → revision workflow.
 * Every write goes through ChangeEngineService; every applied change through MergeService (docs/documents.md).
 */
@Module({
  imports: [TenancyModule],
  // TypeSettingsController first: `/doc/{docType}/setting` must not be taken for the bundle of a document "setting".
  controllers: [TypeSettingsController, DocumentsController, MetadataController, DataController, PropertiesController, RequestsController, RevisionsController, RelationsController],
  providers: [
    DocumentDeletionListeners,
    DocumentFacts,
    DocumentRepository,
    RowRepository,
    RowQueryRepository,
    FieldValuesRepository,
    FieldIndexRepository,
    PropertiesRepository,
    RequestRepository,
    RevisionRepository,
    RevisionHistoryRepository,
    DocumentAccessService,
    DocumentAccessGuard,
    DocumentEventsService,
    DocumentIndexService,
    ChangeEngineService,
    WriteBatcher,
    MergeService,
    RowMergeService,
    RelationRepository,
    RelationMergeService,
    RelationsService,
    MetadataMergeService,
    DraftReadService,
    DocumentsService,
    MetadataService,
    RowsService,
    RowQueryService,
    PropertiesService,
    RequestsService,
    RevisionsService,
    RevisionHistoryService,
    RevisionRevertService,
    RevisionExportService,
    RevisionExportRepository,
    RequestHooks,
    TypeSettingsRepository,
    TypeSettingsService,
    DocumentSettingsPolicy,
    BundleSections,
    MetadataChangeListeners,
    ViewResolver,
    RequestRetentionJob,
    ParticipantsRepository,
    DocumentNotificationsListener,
    ComputedValuesRepository,
    ComputedFieldsService,
    ComputedEventsRecorder,
    ComputedAccessService,
    ComputedReadService,
    ComputedMetadataService,
  ],
  exports: [
    DocumentAccessService,
    DocumentDeletionListeners,
    DocumentFacts,
    ChangeEngineService,
    MergeService,
    RowQueryService,
    DocumentSettingsPolicy,
    BundleSections,
    MetadataChangeListeners,
    ViewResolver,
    TypeSettingsService,
    RequestHooks,
    RequestsService,
    // Supply chain (catalogs and order books are organization-level documents).
    DocumentsService,
    RowsService,
    MetadataService,
    RevisionsService,
    // Supply chain: when a buyer last edited a field of an order-book row (latest_wins).
    RevisionHistoryService,
    // Realtime and webhooks: row values of events as their reader may see them (docs/formulas.md, "Access").
    ComputedAccessService,
  ],
})
export class DocumentsModule implements OnModuleInit {
  constructor(
    private readonly statistics: OrganizationStatisticsService,
    private readonly documents: DocumentRepository,
  ) {}

  /** The organization detail's document count comes from here, so tenancy never reads the documents table. */
  onModuleInit(): void {
    this.statistics.useDocumentCounter((organizationId) => this.documents.countByOrganization(organizationId));
  }
}
