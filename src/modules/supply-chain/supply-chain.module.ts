import { Module, type OnModuleInit } from '@nestjs/common';
import { DocumentDeletionListeners } from '../documents/services/document-deletion-listeners.js';
import { DocumentsModule } from '../documents/documents.module.js';
import { TenancyModule } from '../tenancy/tenancy.module.js';
import { CatalogsController } from './controllers/catalogs.controller.js';
import { ConnectionsController, ShareLinksController } from './controllers/connections.controller.js';
import { ConnectorsController } from './controllers/connectors.controller.js';
import { OrderBooksController } from './controllers/orderbooks.controller.js';
import { OrganizationArchivedListener } from './listeners/organization-archived.listener.js';
import { BindingRepository } from './repositories/binding.repository.js';
import { CatalogRepository } from './repositories/catalog.repository.js';
import { ConnectionRepository } from './repositories/connection.repository.js';
import { ConnectorRepository } from './repositories/connector.repository.js';
import { SyncRepository } from './repositories/sync.repository.js';
import { BindingsService } from './services/bindings.service.js';
import { CatalogsService } from './services/catalogs.service.js';
import { ConnectionAdmissionService } from './services/connection-admission.service.js';
import { ConnectionsService } from './services/connections.service.js';
import { ShareLinksService } from './services/share-links.service.js';
import { ConnectorsService } from './services/connectors.service.js';
import { DocumentWritesService } from './services/document-writes.service.js';
import { OrderBooksService } from './services/orderbooks.service.js';
import { SupplyChainAccessService } from './services/supply-chain-access.service.js';
import { SupplyChainDirectory } from './services/supply-chain-directory.service.js';
import { SyncLogService } from './services/sync-log.service.js';
import { SyncRequestService } from './services/sync-requests.service.js';
import { BindingActivations } from './services/binding-activations.js';
import { ActingMembers } from './services/acting-members.service.js';
import { ShareScopeChanges } from './services/share-scope-changes.js';

/**
 * Supply-chain resources (spec 2.14, 3, 4.8; docs/supply-chain.md): catalogs, connections and share links, order
 * books, bindings, sync requests and logs, connectors. The propagation and connector runs live in
 * supply-chain-sync, which uses the exports below (the service API is listed in docs/supply-chain.md).
 */
@Module({
  imports: [TenancyModule, DocumentsModule],
  // ShareLinksController is served at the host root (HOST_ROOT_ROUTES: connect/share/…).
  controllers: [
    CatalogsController,
    ConnectionsController,
    ShareLinksController,
    OrderBooksController,
    ConnectorsController,
  ],
  providers: [
    CatalogRepository,
    ConnectionRepository,
    BindingRepository,
    SyncRepository,
    ConnectorRepository,
    SupplyChainAccessService,
    DocumentWritesService,
    CatalogsService,
    ConnectionAdmissionService,
    ConnectionsService,
    ShareLinksService,
    OrderBooksService,
    BindingsService,
    SyncRequestService,
    SyncLogService,
    ConnectorsService,
    SupplyChainDirectory,
    BindingActivations,
    ShareScopeChanges,
    ActingMembers,
    OrganizationArchivedListener,
  ],
  exports: [
    SupplyChainDirectory,
    BindingActivations,
    ShareScopeChanges,
    ActingMembers,
    SyncLogService,
    SyncRequestService,
    SupplyChainAccessService,
    ConnectionsService,
    // Read by supply-chain-sync's adapter; prefer SupplyChainDirectory for new code.
    CatalogRepository,
    ConnectionRepository,
    BindingRepository,
    SyncRepository,
    ConnectorRepository,
  ],
})
export class SupplyChainModule implements OnModuleInit {
  constructor(
    private readonly deletions: DocumentDeletionListeners,
    private readonly catalogs: CatalogRepository,
    private readonly connections: ConnectionRepository,
    private readonly bindings: BindingRepository,
    private readonly access: SupplyChainAccessService,
  ) {}

  /**
   * A catalog or order book deleted through `/doc` leaves the supply-chain routes with it, a catalog's connections
   * are disabled as `POST …/disable` would, and an order book's live bindings end (same transaction;
   * docs/supply-chain.md, "Connection states", "Bindings"). Deleting a catalog needs organization owner/admin, as
   * disabling a connection does: a member's deletion is refused here, which rolls it back ("Catalogs and order books
   * are documents").
   */
  onModuleInit(): void {
    this.deletions.register(async (document, deletedBy) => {
      const catalogs = await this.catalogs.retireByDocument(document.uuid);
      // A member may not do through /doc what the connection routes refuse it (the refusal rolls the deletion back).
      for (const catalog of catalogs) {
        await this.access.requireCatalogDeletion(deletedBy, catalog.organizationId);
      }
      await this.connections.disableForCatalogs(catalogs, deletedBy);
      // An order book's bindings end with it (`rejected`, the ending state of spec 3), as a catalog's connections do.
      await this.bindings.endForOrderBookDocument(document.uuid, deletedBy, 'the order book was deleted');
    });
  }
}
