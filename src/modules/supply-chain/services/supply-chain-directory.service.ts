import { Injectable } from '@nestjs/common';
import type {
  BindingRecord,
  CatalogRecord,
  ConnectionRecord,
  ConnectorRecord,
  OrderBookRecord,
} from '../domain/supply-chain.types.js';
import { BindingRepository } from '../repositories/binding.repository.js';
import { CatalogRepository } from '../repositories/catalog.repository.js';
import { ConnectionRepository } from '../repositories/connection.repository.js';
import { ConnectorRepository } from '../repositories/connector.repository.js';
import { SyncRepository } from '../repositories/sync.repository.js';

/**
 * Read-only lookups for server-side work (the propagation and connector runner in supply-chain-sync). No tenant
 * check: callers act for the system. Every method joins the caller's transaction.
 */
@Injectable()
export class SupplyChainDirectory {
  constructor(
    private readonly catalogs: CatalogRepository,
    private readonly connections: ConnectionRepository,
    private readonly bindings: BindingRepository,
    private readonly connectors: ConnectorRepository,
    private readonly sync: SyncRepository,
  ) {}

  /** Holds the order book's turn until commit (SyncRepository.lockOrderBook): propagation and decisions in turn. */
  lockOrderBook(orderBookId: string): Promise<void> {
    return this.sync.lockOrderBook(orderBookId);
  }

  catalog(catalogId: string): Promise<CatalogRecord | null> {
    return this.catalogs.findCatalogById(catalogId);
  }

  /** The catalog whose document is `documents.id` = documentId (a revision event names the document). */
  catalogByDocument(documentId: string): Promise<CatalogRecord | null> {
    return this.catalogs.findCatalogByDocument(documentId);
  }

  orderBook(orderBookId: string): Promise<OrderBookRecord | null> {
    return this.catalogs.findOrderBookById(orderBookId);
  }

  connection(connectionId: string): Promise<ConnectionRecord | null> {
    return this.connections.findById(connectionId);
  }

  binding(bindingId: string): Promise<BindingRecord | null> {
    return this.bindings.findById(bindingId);
  }

  /** The other bindings (any state) of the binding's order book to connections of the same catalog. */
  siblingBindingIds(binding: BindingRecord): Promise<string[]> {
    return this.bindings.siblingIds(binding.orderBookId, binding.catalogId, binding.id);
  }

  activeConnectionsForCatalog(catalogId: string): Promise<ConnectionRecord[]> {
    return this.connections.activeForCatalog(catalogId);
  }

  activeBindingsForConnection(connectionId: string): Promise<BindingRecord[]> {
    return this.bindings.activeForConnection(connectionId);
  }

  activeBindingsForOrderBook(orderBookId: string): Promise<BindingRecord[]> {
    return this.bindings.activeForOrderBook(orderBookId);
  }

  connector(connectorId: string): Promise<ConnectorRecord | null> {
    return this.connectors.findById(connectorId);
  }

  /** Active connectors reading from the document (or writing back to it when bidirectional). */
  connectorsForDocument(documentId: string): Promise<ConnectorRecord[]> {
    return this.connectors.forDocument(documentId);
  }

  scheduledConnectors(): Promise<ConnectorRecord[]> {
    return this.connectors.scheduled();
  }
}
