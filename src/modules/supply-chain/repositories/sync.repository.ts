import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type {
  SyncLogOutcome,
  SyncLogRecord,
  SyncRequestRecord,
  SyncRequestStatus,
} from '../domain/supply-chain.types.js';
import { queryFirst, queryRows } from '../../../database/sql-result.js';
import { countOf, type Paging } from './sql.js';

const REQUEST_COLUMNS = `r.id, r.organization_id AS "organizationId", r.orderbook_id AS "orderBookId", r.binding_id AS "bindingId",
  r.request_type AS "requestType", r.source, r.changes, r.status, r.message, r.document_request_id AS "documentRequestId",
  r.product_info AS "productInfo", r.review_note AS "reviewNote", r.decided_by AS "decidedBy", r.decided_at AS "decidedAt", r.created_by AS "createdBy",
  r.created_at AS "createdAt", r.updated_at AS "updatedAt"`;

const LOG_COLUMNS = `g.id, g.organization_id AS "organizationId", g.orderbook_id AS "orderBookId", g.binding_id AS "bindingId",
  g.connection_id AS "connectionId", g.catalog_id AS "catalogId", g.catalog_revision_id AS "catalogRevisionId",
  g.catalog_revision_version::int AS "catalogRevisionVersion", g.event_type AS "eventType", g.source_row_id AS "sourceRowId",
  g.target_row_id AS "targetRowId", g.outcome, g.reason, g.sync_request_id AS "syncRequestId", g.details, g.created_at AS "createdAt"`;

export type NewSyncRequest = Omit<SyncRequestRecord, 'decidedAt' | 'createdAt' | 'updatedAt' | 'reviewNote'>;

export interface NewSyncLog {
  organizationId: string;
  orderBookId: string;
  bindingId?: string | null;
  connectionId?: string | null;
  catalogId?: string | null;
  catalogRevisionId?: string | null;
  catalogRevisionVersion?: number | null;
  eventType?: string | null;
  sourceRowId?: string | null;
  targetRowId?: string | null;
  outcome: SyncLogOutcome;
  reason?: string | null;
  syncRequestId?: string | null;
  details?: Record<string, unknown> | null;
  /** With bindingId: a second record with the same key is ignored (exactly-once logging). */
  idempotencyKey?: string | null;
}

/** Order-book sync requests and sync logs (both owned by the buyer organization). */
@Injectable()
export class SyncRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Waits for (and holds until commit) the order book's decision turn: sync requests of one order book are decided
   * one after the other, so a decision reading which of its rows exist (a pending create of a row another decision
   * just created) sees what the concurrent one committed. Propagation takes the same turn (through
   * SupplyChainDirectory), so bindings of one order book apply one after the other and not during a decision.
   */
  async lockOrderBook(orderBookId: string): Promise<void> {
    await queryRows(this.tx, `SELECT pg_advisory_xact_lock(hashtext($1))`, [`orderbook:${orderBookId}`]);
  }

  async insertRequest(input: NewSyncRequest): Promise<SyncRequestRecord> {
    return (await this.insert(input, false)) as SyncRequestRecord;
  }

  /** Like insertRequest, but null when the organization already has a sync request with this id. */
  insertRequestIfNew(input: NewSyncRequest): Promise<SyncRequestRecord | null> {
    return this.insert(input, true);
  }

  private insert(input: NewSyncRequest, ifNew: boolean): Promise<SyncRequestRecord | null> {
    return queryFirst<SyncRequestRecord>(
      this.tx,
      `INSERT INTO orderbook_sync_requests AS r (id, organization_id, orderbook_id, binding_id, request_type, source, changes, status, message,
              document_request_id, product_info, decided_by, decided_at, created_by)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10, $11::jsonb, $12, CASE WHEN $8 <> 'pending' THEN now() END, $13)
       ${ifNew ? 'ON CONFLICT (organization_id, id) DO NOTHING' : ''}
       RETURNING ${REQUEST_COLUMNS}`,
      [
        input.id,
        input.organizationId,
        input.orderBookId,
        input.bindingId,
        input.requestType,
        JSON.stringify(input.source),
        JSON.stringify(input.changes),
        input.status,
        input.message,
        input.documentRequestId,
        input.productInfo === null ? null : JSON.stringify(input.productInfo),
        input.decidedBy,
        input.createdBy,
      ],
    );
  }

  findRequest(
    organizationId: string,
    orderBookId: string,
    id: string,
    lock = false,
  ): Promise<SyncRequestRecord | null> {
    return queryFirst<SyncRequestRecord>(
      this.tx,
      `SELECT ${REQUEST_COLUMNS} FROM orderbook_sync_requests r WHERE r.organization_id = $1 AND r.orderbook_id = $2 AND r.id = $3${lock ? ' FOR UPDATE' : ''}`,
      [organizationId, orderBookId, id],
    );
  }

  /** A sync request by its id within the organization, whatever its order book (ids are unique per organization). */
  findRequestInOrganization(organizationId: string, id: string): Promise<SyncRequestRecord | null> {
    return queryFirst<SyncRequestRecord>(
      this.tx,
      `SELECT ${REQUEST_COLUMNS} FROM orderbook_sync_requests r WHERE r.organization_id = $1 AND r.id = $2`,
      [organizationId, id],
    );
  }

  async listRequests(
    organizationId: string,
    orderBookId: string,
    filter: { status?: SyncRequestStatus; bindingId?: string },
    paging: Paging,
  ): Promise<{ items: SyncRequestRecord[]; total: number }> {
    const where = `FROM orderbook_sync_requests r WHERE r.organization_id = $1 AND r.orderbook_id = $2 AND ($3::text IS NULL OR r.status = $3)
      AND ($4::uuid IS NULL OR r.binding_id = $4)`;
    const params = [organizationId, orderBookId, filter.status ?? null, filter.bindingId ?? null];
    const [items, total] = await Promise.all([
      queryRows<SyncRequestRecord>(
        this.tx,
        `SELECT ${REQUEST_COLUMNS} ${where} ORDER BY r.created_at DESC, r.id LIMIT $5 OFFSET $6`,
        [...params, paging.limit, paging.offset],
      ),
      countOf(this.tx, `SELECT count(*) ${where}`, params),
    ]);
    return { items, total };
  }

  async decideRequest(
    request: Pick<SyncRequestRecord, 'id' | 'organizationId'>,
    status: 'accepted' | 'rejected',
    userId: string,
    reviewNote: string | null,
  ): Promise<SyncRequestRecord> {
    // The request's `message` is the proposer's and stays; the decision's note is its own column.
    return (await queryFirst<SyncRequestRecord>(
      this.tx,
      `UPDATE orderbook_sync_requests r SET status = $2, decided_by = $3, decided_at = now(), updated_at = now(), review_note = $5
        WHERE r.organization_id = $4 AND r.id = $1 RETURNING ${REQUEST_COLUMNS}`,
      [request.id, status, userId, request.organizationId, reviewNote],
    )) as SyncRequestRecord;
  }

  /** Points a sync request at another document request (its carrier was replaced, see SyncRequestService). */
  async moveToDocumentRequest(
    request: Pick<SyncRequestRecord, 'id' | 'organizationId'>,
    documentRequestId: string,
  ): Promise<void> {
    await this.tx.manager.query(
      `UPDATE orderbook_sync_requests SET document_request_id = $3, updated_at = now() WHERE organization_id = $1 AND id = $2`,
      [request.organizationId, request.id, documentRequestId],
    );
  }

  /**
   * Keeps the sync requests carried by a document request in step with it (called in the transaction that merged
   * or closed it): merged → `accepted` (also one rejected before, whose request was reopened and merged), closed →
   * `rejected` (only a pending one). Returns the sync requests changed.
   */
  followDocumentRequest(
    organizationId: string,
    orderBookId: string,
    documentRequestId: string,
    status: 'accepted' | 'rejected',
    userId: string,
  ): Promise<SyncRequestRecord[]> {
    return queryRows<SyncRequestRecord>(
      this.tx,
      `UPDATE orderbook_sync_requests r SET status = $4, decided_by = $5, decided_at = now(), updated_at = now()
        WHERE r.organization_id = $1 AND r.orderbook_id = $2 AND r.document_request_id = $3
          AND (r.status = 'pending' OR ($4 = 'accepted' AND r.status = 'rejected'))
        RETURNING ${REQUEST_COLUMNS}`,
      [organizationId, orderBookId, documentRequestId, status, userId],
    );
  }

  /** Inserts log rows; rows whose (binding, idempotencyKey) was recorded before are skipped. Returns the inserted ones. */
  async insertLogs(entries: NewSyncLog[]): Promise<SyncLogRecord[]> {
    if (entries.length === 0) {
      return [];
    }
    const payload = entries.map((entry) => ({
      organization_id: entry.organizationId,
      orderbook_id: entry.orderBookId,
      binding_id: entry.bindingId ?? null,
      connection_id: entry.connectionId ?? null,
      catalog_id: entry.catalogId ?? null,
      catalog_revision_id: entry.catalogRevisionId ?? null,
      catalog_revision_version: entry.catalogRevisionVersion ?? null,
      event_type: entry.eventType ?? null,
      source_row_id: entry.sourceRowId ?? null,
      target_row_id: entry.targetRowId ?? null,
      outcome: entry.outcome,
      reason: entry.reason ?? null,
      sync_request_id: entry.syncRequestId ?? null,
      details: entry.details ?? null,
      idempotency_key: entry.idempotencyKey ?? null,
    }));
    return queryRows<SyncLogRecord>(
      this.tx,
      `INSERT INTO orderbook_sync_logs AS g (organization_id, orderbook_id, binding_id, connection_id, catalog_id, catalog_revision_id,
              catalog_revision_version, event_type, source_row_id, target_row_id, outcome, reason, sync_request_id, details, idempotency_key)
       SELECT organization_id, orderbook_id, binding_id, connection_id, catalog_id, catalog_revision_id, catalog_revision_version, event_type,
              source_row_id, target_row_id, outcome, reason, sync_request_id, details, idempotency_key
         FROM jsonb_to_recordset($1::jsonb) AS x(organization_id uuid, orderbook_id uuid, binding_id uuid, connection_id uuid, catalog_id uuid,
              catalog_revision_id uuid, catalog_revision_version bigint, event_type text, source_row_id text, target_row_id text, outcome text,
              reason text, sync_request_id text, details jsonb, idempotency_key text)
       ON CONFLICT (binding_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${LOG_COLUMNS}`,
      [JSON.stringify(payload)],
    );
  }

  async listLogs(
    organizationId: string,
    orderBookId: string,
    filter: { bindingId?: string; outcome?: SyncLogOutcome },
    paging: Paging,
  ): Promise<{ items: SyncLogRecord[]; total: number }> {
    const where = `FROM orderbook_sync_logs g WHERE g.organization_id = $1 AND g.orderbook_id = $2 AND ($3::uuid IS NULL OR g.binding_id = $3)
      AND ($4::text IS NULL OR g.outcome = $4)`;
    const params = [organizationId, orderBookId, filter.bindingId ?? null, filter.outcome ?? null];
    const [items, total] = await Promise.all([
      queryRows<SyncLogRecord>(
        this.tx,
        `SELECT ${LOG_COLUMNS} ${where} ORDER BY g.created_at DESC, g.id LIMIT $5 OFFSET $6`,
        [...params, paging.limit, paging.offset],
      ),
      countOf(this.tx, `SELECT count(*) ${where}`, params),
    ]);
    return { items, total };
  }
}
