import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { BindingRecord, BindingStatus } from '../domain/supply-chain.types.js';
import { queryFirst, queryRows } from '../../../database/sql-result.js';
import { countOf, type Paging } from './sql.js';

const COLUMNS = `b.id, b.organization_id AS "organizationId", b.orderbook_id AS "orderBookId", b.connection_id AS "connectionId",
  b.supplier_organization_id AS "supplierOrganizationId", b.catalog_id AS "catalogId", b.field_mapping AS "fieldMapping",
  b.receiver_filter AS "receiverFilter", b.conflict_resolution AS "conflictResolution", b.status, b.admitted_via AS "admittedVia",
  b.share_link_id AS "shareLinkId", b.review_note AS "reviewNote", b.reviewed_by AS "reviewedBy", b.reviewed_at AS "reviewedAt",
  b.activated_at AS "activatedAt", b.created_by AS "createdBy", b.created_at AS "createdAt", b.updated_at AS "updatedAt"`;

export type NewBinding = Pick<
  BindingRecord,
  | 'organizationId'
  | 'orderBookId'
  | 'connectionId'
  | 'supplierOrganizationId'
  | 'catalogId'
  | 'fieldMapping'
  | 'receiverFilter'
  | 'conflictResolution'
  | 'status'
  | 'admittedVia'
  | 'shareLinkId'
  | 'createdBy'
>;

/** Bindings: owned by the buyer (organization_id); the supplier reaches them by supplier_organization_id. */
@Injectable()
export class BindingRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Inserts the binding unless the order book already has a live one to the connection (null then): a concurrent
   * creation waits for the other transaction and, once it committed, inserts nothing instead of failing on
   * `orderbook_bindings_live_uq`, so the caller answers it like a sequential duplicate.
   */
  async insertIfNoLive(input: NewBinding): Promise<BindingRecord | null> {
    return queryFirst<BindingRecord>(
      this.tx,
      `INSERT INTO orderbook_bindings AS b (organization_id, orderbook_id, connection_id, supplier_organization_id, catalog_id, field_mapping,
              receiver_filter, conflict_resolution, status, admitted_via, share_link_id, created_by, activated_at)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9, $10, $11, $12, CASE WHEN $9 = 'active' THEN now() END)
       ON CONFLICT (orderbook_id, connection_id) WHERE status IN ('pending', 'active') DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        input.organizationId,
        input.orderBookId,
        input.connectionId,
        input.supplierOrganizationId,
        input.catalogId,
        JSON.stringify(input.fieldMapping),
        JSON.stringify(input.receiverFilter),
        JSON.stringify(input.conflictResolution),
        input.status,
        input.admittedVia,
        input.shareLinkId,
        input.createdBy,
      ],
    );
  }

  /** A live (pending or active) binding of this order book to this connection. */
  findLive(orderBookId: string, connectionId: string): Promise<BindingRecord | null> {
    return queryFirst<BindingRecord>(
      this.tx,
      `SELECT ${COLUMNS} FROM orderbook_bindings b WHERE b.orderbook_id = $1 AND b.connection_id = $2 AND b.status IN ('pending', 'active')`,
      [orderBookId, connectionId],
    );
  }

  /** The buyer's view: a binding of one of its order books. */
  findForBuyer(organizationId: string, orderBookId: string, id: string): Promise<BindingRecord | null> {
    return queryFirst<BindingRecord>(
      this.tx,
      `SELECT ${COLUMNS} FROM orderbook_bindings b WHERE b.organization_id = $1 AND b.orderbook_id = $2 AND b.id = $3`,
      [organizationId, orderBookId, id],
    );
  }

  /** The supplier's view: a binding of one of its connections. */
  findForSupplier(
    supplierOrganizationId: string,
    connectionId: string,
    id: string,
    lock = false,
  ): Promise<BindingRecord | null> {
    return queryFirst<BindingRecord>(
      this.tx,
      `SELECT ${COLUMNS} FROM orderbook_bindings b WHERE b.supplier_organization_id = $1 AND b.connection_id = $2 AND b.id = $3${lock ? ' FOR UPDATE' : ''}`,
      [supplierOrganizationId, connectionId, id],
    );
  }

  findById(id: string): Promise<BindingRecord | null> {
    return queryFirst<BindingRecord>(this.tx, `SELECT ${COLUMNS} FROM orderbook_bindings b WHERE b.id = $1`, [
      id,
    ]);
  }

  /** The buyer's bindings of one order book. */
  listForOrderBook(
    organizationId: string,
    orderBookId: string,
    status: BindingStatus | undefined,
    paging: Paging,
  ): Promise<{ items: BindingRecord[]; total: number }> {
    return this.list(
      'b.organization_id = $1 AND b.orderbook_id = $2',
      [organizationId, orderBookId],
      status,
      paging,
    );
  }

  /** The supplier's bindings of one connection. */
  listForConnection(
    supplierOrganizationId: string,
    connectionId: string,
    status: BindingStatus | undefined,
    paging: Paging,
  ): Promise<{ items: BindingRecord[]; total: number }> {
    return this.list(
      'b.supplier_organization_id = $1 AND b.connection_id = $2',
      [supplierOrganizationId, connectionId],
      status,
      paging,
    );
  }

  /** A page of bindings matching `scope` (over $1 and $2), optionally of one status, oldest first. */
  private async list(
    scope: string,
    scopeParams: [string, string],
    status: BindingStatus | undefined,
    paging: Paging,
  ): Promise<{ items: BindingRecord[]; total: number }> {
    const where = `FROM orderbook_bindings b WHERE ${scope} AND ($3::text IS NULL OR b.status = $3)`;
    const params = [...scopeParams, status ?? null];
    const [items, total] = await Promise.all([
      queryRows<BindingRecord>(
        this.tx,
        `SELECT ${COLUMNS} ${where} ORDER BY b.created_at, b.id LIMIT $4 OFFSET $5`,
        [...params, paging.limit, paging.offset],
      ),
      countOf(this.tx, `SELECT count(*) ${where}`, params),
    ]);
    return { items, total };
  }

  /**
   * The active bindings a catalog change propagates to: none of an organization deleted (archived) since — its
   * bindings end when the archival is dispatched (OrganizationArchivedListener); until then they receive nothing.
   */
  activeForConnection(connectionId: string): Promise<BindingRecord[]> {
    return queryRows<BindingRecord>(
      this.tx,
      `SELECT ${COLUMNS} FROM orderbook_bindings b WHERE b.connection_id = $1 AND b.status = 'active'
          AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = b.organization_id AND o.archived_at IS NOT NULL)
        ORDER BY b.created_at, b.id`,
      [connectionId],
    );
  }

  /** Ids of the other bindings (any state) of an order book to connections of one catalog. */
  async siblingIds(orderBookId: string, catalogId: string, exceptId: string): Promise<string[]> {
    const rows = await queryRows<{ id: string }>(
      this.tx,
      `SELECT b.id FROM orderbook_bindings b WHERE b.orderbook_id = $1 AND b.catalog_id = $2 AND b.id <> $3`,
      [orderBookId, catalogId, exceptId],
    );
    return rows.map((row) => row.id);
  }

  activeForOrderBook(orderBookId: string): Promise<BindingRecord[]> {
    return queryRows<BindingRecord>(
      this.tx,
      `SELECT ${COLUMNS} FROM orderbook_bindings b WHERE b.orderbook_id = $1 AND b.status = 'active' ORDER BY b.created_at, b.id`,
      [orderBookId],
    );
  }

  /** Whether the organization has a pending or active binding to the connection (it may then see the connection). */
  async organizationHasLiveBinding(organizationId: string, connectionId: string): Promise<boolean> {
    return (
      (await countOf(
        this.tx,
        `SELECT count(*) FROM orderbook_bindings WHERE organization_id = $1 AND connection_id = $2 AND status IN ('pending', 'active')`,
        [organizationId, connectionId],
      )) > 0
    );
  }

  /**
   * Ends (`rejected`, with the note) the live bindings of a connection whose organization is not in `admitted` and
   * that were admitted by the access control (a share link's admission stays). Returns them.
   */
  endNotAdmitted(connectionId: string, admitted: string[], by: string, note: string): Promise<BindingRecord[]> {
    return queryRows<BindingRecord>(
      this.tx,
      `UPDATE orderbook_bindings b SET status = 'rejected', reviewed_by = $3, reviewed_at = now(), review_note = $4, updated_at = now()
        WHERE b.connection_id = $1 AND b.status IN ('pending', 'active') AND b.admitted_via <> 'share_link'
          AND NOT (b.organization_id = ANY($2::uuid[]))
        RETURNING ${COLUMNS}`,
      [connectionId, admitted, by, note],
    );
  }

  /** Ends (`rejected`, with the note) the live bindings of the order books of a deleted document. */
  endForOrderBookDocument(documentUuid: string, by: string, note: string): Promise<BindingRecord[]> {
    return queryRows<BindingRecord>(
      this.tx,
      `UPDATE orderbook_bindings b SET status = 'rejected', reviewed_by = $2, reviewed_at = now(), review_note = $3, updated_at = now()
        WHERE b.orderbook_id IN (SELECT o.id FROM orderbooks o WHERE o.document_id = $1) AND b.status IN ('pending', 'active')
        RETURNING ${COLUMNS}`,
      [documentUuid, by, note],
    );
  }

  /**
   * Ends (`rejected`, with a note) the live bindings of a deleted organization: its own (buyer) and those to its
   * connections (supplier). Returns them.
   */
  endForOrganization(organizationId: string, by: string | null): Promise<BindingRecord[]> {
    return queryRows<BindingRecord>(
      this.tx,
      `UPDATE orderbook_bindings b SET status = 'rejected', reviewed_by = $2::uuid, reviewed_at = now(), updated_at = now(),
              review_note = CASE WHEN b.organization_id = $1 THEN 'the organization was deleted'
                                 ELSE 'the supplier organization was deleted' END
        WHERE (b.organization_id = $1 OR b.supplier_organization_id = $1) AND b.status IN ('pending', 'active')
        RETURNING ${COLUMNS}`,
      [organizationId, by],
    );
  }

  /**
   * Records the supplier's refusal of a buyer organization on a connection (its reject of `bindingId`): new bindings
   * of the organization to the connection then wait for approval (docs/supply-chain.md, "Bindings").
   */
  async refuse(connectionId: string, organizationId: string, bindingId: string, by: string): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO connection_refusals (connection_id, organization_id, binding_id, refused_by)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (connection_id, organization_id)
         DO UPDATE SET binding_id = EXCLUDED.binding_id, refused_by = EXCLUDED.refused_by, refused_at = now()`,
      [connectionId, organizationId, bindingId, by],
    );
  }

  /** Lifts the refusal of a buyer organization on a connection (the supplier approved one of its bindings). */
  async lift(connectionId: string, organizationId: string): Promise<void> {
    await this.tx.manager.query(
      `DELETE FROM connection_refusals WHERE connection_id = $1 AND organization_id = $2`,
      [connectionId, organizationId],
    );
  }

  /** Whether the supplier's refusal of the organization on the connection stands. */
  async isRefused(connectionId: string, organizationId: string): Promise<boolean> {
    return (
      (await countOf(
        this.tx,
        `SELECT count(*) FROM connection_refusals WHERE connection_id = $1 AND organization_id = $2`,
        [connectionId, organizationId],
      )) > 0
    );
  }

  async decide(
    id: string,
    status: 'active' | 'rejected',
    reviewer: string,
    note: string | null,
  ): Promise<BindingRecord> {
    return (await queryFirst<BindingRecord>(
      this.tx,
      `UPDATE orderbook_bindings b SET status = $2, reviewed_by = $3, reviewed_at = now(), review_note = $4, updated_at = now(),
              activated_at = CASE WHEN $2 = 'active' THEN now() ELSE activated_at END
        WHERE b.id = $1 RETURNING ${COLUMNS}`,
      [id, status, reviewer, note],
    )) as BindingRecord;
  }
}
