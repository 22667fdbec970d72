import type {
  BindingRecord,
  BindingStatus,
  CatalogRecord,
  ConnectionRecord,
  ConnectorRecord,
  OrderBookRecord,
  SyncChange,
  SyncRequestStatus,
} from '../../supply-chain/domain/supply-chain.types.js';
import type { NewSyncLog } from '../../supply-chain/repositories/sync.repository.js';

export interface BindingContext {
  binding: BindingRecord;
  connection: ConnectionRecord;
  catalog: CatalogRecord;
  orderBook: OrderBookRecord;
}

/** Another binding of the same order book and catalog, with its state (an ended one's rows may be withdrawn). */
export interface SiblingBinding {
  id: string;
  status: BindingStatus;
}

/** A sync-log row as supply-chain records it (one shape, owned there). */
export type SyncLogEntry = NewSyncLog;

export interface NewPropagatedSyncRequest {
  organizationId: string;
  orderBookId: string;
  bindingId: string;
  requestType: string;
  source: Record<string, unknown>;
  changes: SyncChange[];
  status: SyncRequestStatus;
  message: string | null;
  documentRequestId: string;
  productInfo: Record<string, unknown>;
  decidedBy: string | null;
  createdBy: string;
}

/**
 * What propagation and connectors need from the supply-chain module (its resources), in one place:
 * SupplyChainAdapter implements it with that module's exported services.
 */
export abstract class SupplyChainPort {
  /** The catalog whose organization-level document is `catalog/{catalogId}` of `organizationId`. */
  abstract catalog(organizationId: string, catalogId: string): Promise<CatalogRecord | null>;
  abstract activeConnections(catalogId: string): Promise<ConnectionRecord[]>;
  abstract activeBindings(connectionId: string): Promise<BindingRecord[]>;
  /** A binding with its connection, catalog and order book (any status); null when one is gone. */
  abstract bindingContext(bindingId: string): Promise<BindingContext | null>;
  /**
   * The buyer organization's binding of the order book (any status, also once its catalog or connection is gone: the
   * binding and its ledger stay the buyer's to read); null when it is not that order book's or the order book is gone.
   */
  abstract orderBookBinding(
    organizationId: string,
    orderBookId: string,
    bindingId: string,
  ): Promise<BindingRecord | null>;
  /**
   * The other bindings (any state) of the binding's order book to connections of the same catalog: the rows they
   * propagated are the rows this binding continues (docs/supply-chain.md, "Initial sync and reconcile").
   */
  abstract siblingBindings(binding: BindingRecord): Promise<SiblingBinding[]>;
  /**
   * Who server-side work for `userId` in the organization acts as: that user while an active member who may write,
   * else the organization's owner (docs/supply-chain.md, "Who the propagation acts as, who is told").
   */
  abstract actingUser(organizationId: string, userId: string): Promise<string>;
  /** Who is told what `userId` would be told: that user while an active member, else the active owners and admins. */
  abstract recipients(organizationId: string, userId: string): Promise<string[]>;
  /**
   * Waits for (and holds until commit) the order book's turn: bindings of one order book apply one after the other,
   * and not while one of its sync requests is decided, so each sees the rows the other committed.
   */
  abstract lockOrderBook(orderBookId: string): Promise<void>;
  abstract recordLogs(entries: SyncLogEntry[]): Promise<void>;
  abstract createSyncRequest(input: NewPropagatedSyncRequest): Promise<{ id: string }>;
  /** Connectors of the organization reading (`source`) or, bidirectional, writing (`target`) the document. */
  abstract connectorsOfDocument(organizationId: string, documentUuid: string): Promise<ConnectorRecord[]>;
  abstract connector(organizationId: string, connectorId: string): Promise<ConnectorRecord | null>;
  abstract connectorById(connectorId: string): Promise<ConnectorRecord | null>;
  abstract scheduledConnectors(): Promise<ConnectorRecord[]>;
}
