import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type {
  BindingRecord,
  CatalogRecord,
  ConnectionRecord,
  ConnectorRecord,
} from '../../supply-chain/domain/supply-chain.types.js';
import { SyncRepository } from '../../supply-chain/repositories/sync.repository.js';
import { ActingMembers } from '../../supply-chain/services/acting-members.service.js';
import { SupplyChainDirectory } from '../../supply-chain/services/supply-chain-directory.service.js';
import { SyncLogService } from '../../supply-chain/services/sync-log.service.js';
import {
  type BindingContext,
  type NewPropagatedSyncRequest,
  type SiblingBinding,
  SupplyChainPort,
  type SyncLogEntry,
} from './supply-chain.port.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Sync logs per INSERT. */
const LOG_CHUNK = 5000;

/**
 * SupplyChainPort over SupplyChainModule's exports: SupplyChainDirectory for lookups, SyncLogService for the logs,
 * and SyncRepository for the sync-request record (the propagation writes the order book itself, in its own
 * transaction with the ledger, so SyncRequestService.createForBinding — which writes too — does not fit).
 */
@Injectable()
export class SupplyChainAdapter extends SupplyChainPort {
  constructor(
    private readonly directory: SupplyChainDirectory,
    private readonly logs: SyncLogService,
    private readonly sync: SyncRepository,
    private readonly members: ActingMembers,
  ) {
    super();
  }

  async catalog(organizationId: string, catalogId: string): Promise<CatalogRecord | null> {
    const catalog = UUID.test(catalogId) ? await this.directory.catalog(catalogId) : null;
    return catalog?.organizationId === organizationId ? catalog : null;
  }

  activeConnections(catalogId: string): Promise<ConnectionRecord[]> {
    return this.directory.activeConnectionsForCatalog(catalogId);
  }

  activeBindings(connectionId: string): Promise<BindingRecord[]> {
    return this.directory.activeBindingsForConnection(connectionId);
  }

  async bindingContext(bindingId: string): Promise<BindingContext | null> {
    const binding = await this.directory.binding(bindingId);
    if (!binding) {
      return null;
    }
    const connection = await this.directory.connection(binding.connectionId);
    const catalog = await this.directory.catalog(binding.catalogId);
    const orderBook = await this.directory.orderBook(binding.orderBookId);
    return connection && catalog && orderBook ? { binding, connection, catalog, orderBook } : null;
  }

  async orderBookBinding(
    organizationId: string,
    orderBookId: string,
    bindingId: string,
  ): Promise<BindingRecord | null> {
    const binding = await this.directory.binding(bindingId);
    if (!binding || binding.organizationId !== organizationId || binding.orderBookId !== orderBookId) {
      return null;
    }
    return (await this.directory.orderBook(orderBookId)) ? binding : null;
  }

  async siblingBindings(binding: BindingRecord): Promise<SiblingBinding[]> {
    const siblings: SiblingBinding[] = [];
    for (const id of await this.directory.siblingBindingIds(binding)) {
      const sibling = await this.directory.binding(id);
      if (sibling) {
        siblings.push({ id: sibling.id, status: sibling.status });
      }
    }
    return siblings;
  }

  async actingUser(organizationId: string, userId: string): Promise<string> {
    // An unknown or archived organization has no one to act for; its bindings have ended (nothing is written).
    return (await this.members.actor(organizationId, userId)) ?? userId;
  }

  recipients(organizationId: string, userId: string): Promise<string[]> {
    // Sync requests and binding decisions are the business of any member who may write rows (accept, re-bind).
    return this.members.recipients(organizationId, userId, 'member');
  }

  lockOrderBook(orderBookId: string): Promise<void> {
    return this.directory.lockOrderBook(orderBookId);
  }

  async recordLogs(entries: SyncLogEntry[]): Promise<void> {
    for (let start = 0; start < entries.length; start += LOG_CHUNK) {
      await this.logs.record(...entries.slice(start, start + LOG_CHUNK));
    }
  }

  async createSyncRequest(input: NewPropagatedSyncRequest): Promise<{ id: string }> {
    const record = await this.sync.insertRequest({ id: randomUUID(), ...input });
    return { id: record.id };
  }

  connectorsOfDocument(_organizationId: string, documentUuid: string): Promise<ConnectorRecord[]> {
    return this.directory.connectorsForDocument(documentUuid);
  }

  async connector(organizationId: string, connectorId: string): Promise<ConnectorRecord | null> {
    const connector = await this.directory.connector(connectorId);
    return connector?.organizationId === organizationId ? connector : null;
  }

  connectorById(connectorId: string): Promise<ConnectorRecord | null> {
    return this.directory.connector(connectorId);
  }

  scheduledConnectors(): Promise<ConnectorRecord[]> {
    return this.directory.scheduledConnectors();
  }
}
