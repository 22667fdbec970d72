import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { CatalogRecord, GeneratedField, OrderBookRecord } from '../domain/supply-chain.types.js';
import { queryFirst, queryRows } from '../../../database/sql-result.js';
import { countOf, type Paging } from './sql.js';
import type { PermissionSubjects } from '../../documents/domain/document-settings.js';
import { permissionListAdmitsSql } from '../../documents/repositories/settings-sql.js';

const CATALOG_COLUMNS = `c.id, c.organization_id AS "organizationId", c.document_id AS "documentId", c.name, c.description,
  c.catalog_type AS "catalogType", c.sharing_enabled AS "sharingEnabled", c.field_descriptions AS "fieldDescriptions", c.created_by AS "createdBy",
  c.created_at AS "createdAt", c.updated_at AS "updatedAt"`;

const ORDERBOOK_COLUMNS = `o.id, o.organization_id AS "organizationId", o.document_id AS "documentId", o.name, o.description,
  o.generated_fields AS "generatedFields", o.field_descriptions AS "fieldDescriptions", o.source_connection_ids AS "sourceConnectionIds", o.created_by AS "createdBy",
  o.created_at AS "createdAt", o.updated_at AS "updatedAt"`;

/**
 * FROM … WHERE of a list of catalogs or order books (`table` aliased `alias`) of an organization; with `viewer`, only
 * those whose document's `permissions.view` admits them (the type's list was asked before: viewNarrowing).
 */
function viewableFrom(
  table: string,
  alias: string,
  organizationId: string,
  viewer: PermissionSubjects | null,
): { from: string; params: unknown[] } {
  const live = `${alias}.organization_id = $1 AND ${alias}.deleted_at IS NULL`;
  if (viewer === null) {
    return { from: `FROM ${table} WHERE ${live}`, params: [organizationId] };
  }
  return {
    from: `FROM ${table} JOIN documents d ON d.id = ${alias}.document_id
      WHERE ${live} AND ${permissionListAdmitsSql(`d.settings -> 'permissions' -> 'view'`, '$2', '$3')}`,
    params: [organizationId, viewer.roles, viewer.userId],
  };
}

/** Catalog and order-book records (the supply-chain side of their organization-level documents). */
@Injectable()
export class CatalogRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insertCatalog(row: Omit<CatalogRecord, 'createdAt' | 'updatedAt'>): Promise<CatalogRecord> {
    return (await queryFirst<CatalogRecord>(
      this.tx,
      `INSERT INTO catalogs AS c (id, organization_id, document_id, name, description, catalog_type, sharing_enabled, field_descriptions, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9) RETURNING ${CATALOG_COLUMNS}`,
      [
        row.id,
        row.organizationId,
        row.documentId,
        row.name,
        row.description,
        row.catalogType,
        row.sharingEnabled,
        JSON.stringify(row.fieldDescriptions),
        row.createdBy,
      ],
    )) as CatalogRecord;
  }

  /**
   * Retires the catalog or order book built on a document deleted through the document API (called in the
   * deletion's transaction through DocumentDeletionListeners), so every lookup here only checks its own table.
   * Returns the catalog retired, if the document was one.
   */
  async retireByDocument(documentUuid: string): Promise<Array<{ id: string; organizationId: string }>> {
    const catalogs = await queryRows<{ id: string; organizationId: string }>(
      this.tx,
      `UPDATE catalogs SET deleted_at = now() WHERE document_id = $1 AND deleted_at IS NULL
        RETURNING id, organization_id AS "organizationId"`,
      [documentUuid],
    );
    await this.tx.manager.query(`UPDATE orderbooks SET deleted_at = now() WHERE document_id = $1 AND deleted_at IS NULL`, [documentUuid]);
    return catalogs;
  }

  /** A live catalog of the organization (its document not deleted). */
  findCatalog(organizationId: string, id: string): Promise<CatalogRecord | null> {
    return queryFirst<CatalogRecord>(
      this.tx,
      `SELECT ${CATALOG_COLUMNS} FROM catalogs c
        WHERE c.organization_id = $1 AND c.id = $2 AND c.deleted_at IS NULL`,
      [organizationId, id],
    );
  }

  /** Without a tenant: for server-side work (propagation) and cross-organization summaries. */
  findCatalogById(id: string): Promise<CatalogRecord | null> {
    return queryFirst<CatalogRecord>(
      this.tx,
      `SELECT ${CATALOG_COLUMNS} FROM catalogs c
        WHERE c.id = $1 AND c.deleted_at IS NULL`,
      [id],
    );
  }

  findCatalogByDocument(documentId: string): Promise<CatalogRecord | null> {
    return queryFirst<CatalogRecord>(
      this.tx,
      `SELECT ${CATALOG_COLUMNS} FROM catalogs c WHERE c.document_id = $1 AND c.deleted_at IS NULL`,
      [documentId],
    );
  }

  /**
   * A page of the organization's catalogs; `viewer` (not a manager) narrows it to those whose document's
   * `permissions.view` admits them, in SQL, so `total` and the pages count only those.
   */
  async listCatalogs(
    organizationId: string,
    viewer: PermissionSubjects | null,
    paging: Paging,
  ): Promise<{ items: CatalogRecord[]; total: number }> {
    const { from, params } = viewableFrom('catalogs c', 'c', organizationId, viewer);
    const n = params.length;
    const [items, total] = await Promise.all([
      queryRows<CatalogRecord>(
        this.tx,
        `SELECT ${CATALOG_COLUMNS} ${from} ORDER BY c.created_at, c.id LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...params, paging.limit, paging.offset],
      ),
      countOf(this.tx, `SELECT count(*) ${from}`, params),
    ]);
    return { items, total };
  }

  async updateCatalog(
    id: string,
    changes: { name?: string; description?: string | null; catalogType?: string; sharingEnabled?: boolean },
  ): Promise<CatalogRecord | null> {
    return queryFirst<CatalogRecord>(
      this.tx,
      `UPDATE catalogs c SET name = COALESCE($2, name), description = CASE WHEN $3::boolean THEN $4 ELSE description END,
              catalog_type = COALESCE($5, catalog_type), sharing_enabled = COALESCE($6, sharing_enabled), updated_at = now()
        WHERE id = $1 RETURNING ${CATALOG_COLUMNS}`,
      [
        id,
        changes.name ?? null,
        changes.description !== undefined,
        changes.description ?? null,
        changes.catalogType ?? null,
        changes.sharingEnabled ?? null,
      ],
    );
  }

  async insertOrderBook(row: Omit<OrderBookRecord, 'createdAt' | 'updatedAt'>): Promise<OrderBookRecord> {
    return (await queryFirst<OrderBookRecord>(
      this.tx,
      `INSERT INTO orderbooks AS o (id, organization_id, document_id, name, description, generated_fields, field_descriptions, source_connection_ids, created_by)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::uuid[], $9) RETURNING ${ORDERBOOK_COLUMNS}`,
      [
        row.id,
        row.organizationId,
        row.documentId,
        row.name,
        row.description,
        JSON.stringify(row.generatedFields),
        JSON.stringify(row.fieldDescriptions),
        row.sourceConnectionIds,
        row.createdBy,
      ],
    )) as OrderBookRecord;
  }

  findOrderBook(organizationId: string, id: string): Promise<OrderBookRecord | null> {
    return queryFirst<OrderBookRecord>(
      this.tx,
      `SELECT ${ORDERBOOK_COLUMNS} FROM orderbooks o
        WHERE o.organization_id = $1 AND o.id = $2 AND o.deleted_at IS NULL`,
      [organizationId, id],
    );
  }

  findOrderBookById(id: string): Promise<OrderBookRecord | null> {
    return queryFirst<OrderBookRecord>(
      this.tx,
      `SELECT ${ORDERBOOK_COLUMNS} FROM orderbooks o
        WHERE o.id = $1 AND o.deleted_at IS NULL`,
      [id],
    );
  }

  /** A page of the organization's order books, narrowed like listCatalogs. */
  async listOrderBooks(
    organizationId: string,
    viewer: PermissionSubjects | null,
    paging: Paging,
  ): Promise<{ items: OrderBookRecord[]; total: number }> {
    const { from, params } = viewableFrom('orderbooks o', 'o', organizationId, viewer);
    const n = params.length;
    const [items, total] = await Promise.all([
      queryRows<OrderBookRecord>(
        this.tx,
        `SELECT ${ORDERBOOK_COLUMNS} ${from} ORDER BY o.created_at, o.id LIMIT $${n + 1} OFFSET $${n + 2}`,
        [...params, paging.limit, paging.offset],
      ),
      countOf(this.tx, `SELECT count(*) ${from}`, params),
    ]);
    return { items, total };
  }

  async addGeneratedFields(id: string, fields: GeneratedField[], connectionIds: string[]): Promise<void> {
    await queryRows(
      this.tx,
      `UPDATE orderbooks SET generated_fields = generated_fields || $2::jsonb,
              source_connection_ids = ARRAY(SELECT DISTINCT unnest(source_connection_ids || $3::uuid[])), updated_at = now()
        WHERE id = $1`,
      [id, JSON.stringify(fields), connectionIds],
    );
  }
}
