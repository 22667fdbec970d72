import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type {
  AccessControl,
  ConnectionRecord,
  ConnectionStatus,
  ShareLinkRecord,
} from '../domain/supply-chain.types.js';
import { queryFirst, queryRows } from '../../../database/sql-result.js';
import { countOf, type Paging } from './sql.js';

/** The connection's organization is not deleted (an archived organization answers nothing, docs/tenancy.md). */
const SUPPLIER_ACTIVE = `NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = k.organization_id AND o.archived_at IS NOT NULL)`;

interface ConnectionRow extends Omit<ConnectionRecord, 'accessControl'> {
  accessMode: AccessControl['mode'];
  allowedOrganizations: string[];
}

const COLUMNS = `k.id, k.organization_id AS "organizationId", k.catalog_id AS "catalogId", k.name, k.description,
  k.share_mode AS "shareMode", k.access_mode AS "accessMode", k.allowed_organizations AS "allowedOrganizations",
  k.share_scope AS "shareScope", k.default_receiver_config AS "defaultReceiverConfig", k.propagation_events AS "propagationEvents",
  k.status, k.created_by AS "createdBy", k.updated_by AS "updatedBy", k.created_at AS "createdAt", k.updated_at AS "updatedAt",
  k.paused_at AS "pausedAt", k.disabled_at AS "disabledAt"`;

/** Organizations admitted through share link `l` (its bindings, found through the supplier's index). */
const ADMITTED_ORGANIZATIONS = `(SELECT count(DISTINCT b.organization_id)::int FROM orderbook_bindings b
  WHERE b.supplier_organization_id = l.organization_id AND b.connection_id = l.connection_id AND b.share_link_id = l.id)`;

/**
 * `uses` is the number of organizations admitted through the link: buyer organizations holding a binding (of any
 * state) that it admitted. The stored `uses` column counted opens of `GET /connect/share` before and is not read.
 */
const LINK_COLUMNS = `l.id, l.organization_id AS "organizationId", l.connection_id AS "connectionId", l.expires_at AS "expiresAt",
  l.max_uses AS "maxUses", ${ADMITTED_ORGANIZATIONS} AS uses, l.revoked_at AS "revokedAt", l.created_by AS "createdBy",
  l.created_at AS "createdAt", l.last_used_at AS "lastUsedAt"`;

function toRecord(row: ConnectionRow): ConnectionRecord {
  const { accessMode, allowedOrganizations, ...rest } = row;
  return { ...rest, accessControl: { mode: accessMode, allowedOrganizations } };
}

export type NewConnection = Pick<
  ConnectionRecord,
  | 'organizationId'
  | 'catalogId'
  | 'name'
  | 'description'
  | 'shareMode'
  | 'accessControl'
  | 'shareScope'
  | 'defaultReceiverConfig'
  | 'propagationEvents'
  | 'createdBy'
>;

/** What an update may change: everything but the owner, the catalog and the creator. */
export type ConnectionChanges = Partial<Omit<NewConnection, 'organizationId' | 'catalogId' | 'createdBy'>>;

/** Connections (owned by the supplier organization) and their share links. */
@Injectable()
export class ConnectionRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(input: NewConnection): Promise<ConnectionRecord> {
    const row = await queryFirst<ConnectionRow>(
      this.tx,
      `INSERT INTO catalog_connections AS k (organization_id, catalog_id, name, description, share_mode, access_mode, allowed_organizations,
              share_scope, default_receiver_config, propagation_events, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7::uuid[], $8::jsonb, $9::jsonb, $10::jsonb, $11) RETURNING ${COLUMNS}`,
      [
        input.organizationId,
        input.catalogId,
        input.name,
        input.description,
        input.shareMode,
        input.accessControl.mode,
        input.accessControl.allowedOrganizations,
        JSON.stringify(input.shareScope),
        input.defaultReceiverConfig === null ? null : JSON.stringify(input.defaultReceiverConfig),
        JSON.stringify(input.propagationEvents),
        input.createdBy,
      ],
    );
    return toRecord(row as ConnectionRow);
  }

  async find(organizationId: string, id: string, lock = false): Promise<ConnectionRecord | null> {
    const row = await queryFirst<ConnectionRow>(
      this.tx,
      `SELECT ${COLUMNS} FROM catalog_connections k WHERE k.organization_id = $1 AND k.id = $2${lock ? ' FOR UPDATE' : ''}`,
      [organizationId, id],
    );
    return row ? toRecord(row) : null;
  }

  /**
   * A connection by id as buyers and propagation reach it (not through its supplier's own routes): none once its
   * organization is deleted (archived), so its share links, bindings and catalog stop serving other tenants with it.
   */
  async findById(id: string): Promise<ConnectionRecord | null> {
    const row = await queryFirst<ConnectionRow>(
      this.tx,
      `SELECT ${COLUMNS} FROM catalog_connections k WHERE k.id = $1 AND ${SUPPLIER_ACTIVE}`,
      [id],
    );
    return row ? toRecord(row) : null;
  }

  /**
   * The connection as a binding is admitted against it, inside the binding's transaction: FOR SHARE conflicts with
   * the row lock of an update (access control, state), so an admission and a concurrent narrowing or disabling run
   * one after the other — either the admission sees the new state, or the update's end-bindings step (a later
   * statement of its transaction) sees the committed binding. The foreign key's own KEY SHARE lock does not conflict
   * with such an update, hence the explicit lock.
   */
  async findForAdmission(id: string): Promise<ConnectionRecord | null> {
    const row = await queryFirst<ConnectionRow>(
      this.tx,
      `SELECT ${COLUMNS} FROM catalog_connections k WHERE k.id = $1 AND ${SUPPLIER_ACTIVE} FOR SHARE OF k`,
      [id],
    );
    return row ? toRecord(row) : null;
  }

  async findByIds(ids: string[]): Promise<ConnectionRecord[]> {
    const rows = await queryRows<ConnectionRow>(
      this.tx,
      `SELECT ${COLUMNS} FROM catalog_connections k WHERE k.id = ANY($1::uuid[]) AND ${SUPPLIER_ACTIVE}`,
      [ids],
    );
    return rows.map(toRecord);
  }

  async list(
    organizationId: string,
    filter: { catalogId?: string; status?: ConnectionStatus },
    paging: Paging,
  ): Promise<{ items: ConnectionRecord[]; total: number }> {
    const where = `FROM catalog_connections k WHERE k.organization_id = $1 AND ($2::uuid IS NULL OR k.catalog_id = $2) AND ($3::text IS NULL OR k.status = $3)`;
    const params = [organizationId, filter.catalogId ?? null, filter.status ?? null];
    const [rows, total] = await Promise.all([
      queryRows<ConnectionRow>(
        this.tx,
        `SELECT ${COLUMNS} ${where} ORDER BY k.created_at, k.id LIMIT $4 OFFSET $5`,
        [...params, paging.limit, paging.offset],
      ),
      countOf(this.tx, `SELECT count(*) ${where}`, params),
    ]);
    return { items: rows.map(toRecord), total };
  }

  async activeForCatalog(catalogId: string): Promise<ConnectionRecord[]> {
    const rows = await queryRows<ConnectionRow>(
      this.tx,
      `SELECT ${COLUMNS} FROM catalog_connections k WHERE k.catalog_id = $1 AND k.status = 'active' ORDER BY k.created_at, k.id`,
      [catalogId],
    );
    return rows.map(toRecord);
  }

  async update(id: string, changes: ConnectionChanges, userId: string): Promise<ConnectionRecord> {
    const sets: string[] = [];
    const params: unknown[] = [id, userId];
    const add = (column: string, value: unknown, cast = ''): void => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (changes.name !== undefined) {
      add('name', changes.name);
    }
    if (changes.description !== undefined) {
      add('description', changes.description);
    }
    if (changes.shareMode !== undefined) {
      add('share_mode', changes.shareMode);
    }
    if (changes.accessControl !== undefined) {
      add('access_mode', changes.accessControl.mode);
      add('allowed_organizations', changes.accessControl.allowedOrganizations, '::uuid[]');
    }
    if (changes.shareScope !== undefined) {
      add('share_scope', JSON.stringify(changes.shareScope), '::jsonb');
    }
    if (changes.defaultReceiverConfig !== undefined) {
      add(
        'default_receiver_config',
        changes.defaultReceiverConfig === null ? null : JSON.stringify(changes.defaultReceiverConfig),
        '::jsonb',
      );
    }
    if (changes.propagationEvents !== undefined) {
      add('propagation_events', JSON.stringify(changes.propagationEvents), '::jsonb');
    }
    const row = await queryFirst<ConnectionRow>(
      this.tx,
      `UPDATE catalog_connections k SET ${[...sets, 'updated_by = $2', 'updated_at = now()'].join(', ')} WHERE k.id = $1 RETURNING ${COLUMNS}`,
      params,
    );
    return toRecord(row as ConnectionRow);
  }

  /**
   * Disables the live connections of catalogs that were deleted (their catalog document deleted through `/doc`),
   * as `POST …/disable` would. Returns the connections disabled.
   */
  async disableForCatalogs(
    catalogs: Array<{ id: string; organizationId: string }>,
    userId: string,
  ): Promise<ConnectionRecord[]> {
    const rows: ConnectionRow[] = [];
    for (const catalog of catalogs) {
      rows.push(
        ...(await queryRows<ConnectionRow>(
          this.tx,
          `UPDATE catalog_connections k SET status = 'disabled', disabled_at = now(), updated_by = $3, updated_at = now()
            WHERE k.organization_id = $1 AND k.catalog_id = $2 AND k.status <> 'disabled' RETURNING ${COLUMNS}`,
          [catalog.organizationId, catalog.id, userId],
        )),
      );
    }
    return rows.map(toRecord);
  }

  async setStatus(id: string, status: ConnectionStatus, userId: string): Promise<ConnectionRecord> {
    const row = await queryFirst<ConnectionRow>(
      this.tx,
      `UPDATE catalog_connections k SET status = $2, updated_by = $3, updated_at = now(),
              paused_at = CASE WHEN $2 = 'paused' THEN now() WHEN $2 = 'active' THEN NULL ELSE paused_at END,
              disabled_at = CASE WHEN $2 = 'disabled' THEN now() ELSE disabled_at END
        WHERE k.id = $1 RETURNING ${COLUMNS}`,
      [id, status, userId],
    );
    return toRecord(row as ConnectionRow);
  }

  async insertLink(input: {
    organizationId: string;
    connectionId: string;
    codeHash: string;
    expiresAt: Date | null;
    maxUses: number | null;
    createdBy: string;
  }): Promise<ShareLinkRecord> {
    return (await queryFirst<ShareLinkRecord>(
      this.tx,
      `INSERT INTO connection_share_links AS l (organization_id, connection_id, code_hash, expires_at, max_uses, created_by)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${LINK_COLUMNS}`,
      [
        input.organizationId,
        input.connectionId,
        input.codeHash,
        input.expiresAt,
        input.maxUses,
        input.createdBy,
      ],
    )) as ShareLinkRecord;
  }

  findLinkByHash(codeHash: string, lock = false): Promise<ShareLinkRecord | null> {
    return queryFirst<ShareLinkRecord>(
      this.tx,
      `SELECT ${LINK_COLUMNS} FROM connection_share_links l WHERE l.code_hash = $1${lock ? ' FOR UPDATE' : ''}`,
      [codeHash],
    );
  }

  /**
   * The organizations admitted through the link, counted in a statement of its own: run after the link row is
   * locked, it sees the bindings committed by an admission that held the lock before.
   */
  async admittedCount(link: ShareLinkRecord): Promise<number> {
    return countOf(
      this.tx,
      `SELECT count(DISTINCT b.organization_id) FROM orderbook_bindings b
        WHERE b.supplier_organization_id = $1 AND b.connection_id = $2 AND b.share_link_id = $3`,
      [link.organizationId, link.connectionId, link.id],
    );
  }

  /** Whether one of `organizationIds` was admitted through the link (it may use it again without a new use). */
  async admitsAny(link: ShareLinkRecord, organizationIds: string[]): Promise<boolean> {
    if (organizationIds.length === 0) {
      return false;
    }
    const rows = await queryRows(
      this.tx,
      `SELECT 1 FROM orderbook_bindings b WHERE b.organization_id = ANY($1::uuid[]) AND b.share_link_id = $2 LIMIT 1`,
      [organizationIds, link.id],
    );
    return rows.length > 0;
  }

  /** Marks an admission through the link (the count itself comes from the bindings). */
  async touchLink(id: string): Promise<void> {
    await queryRows(this.tx, `UPDATE connection_share_links SET last_used_at = now() WHERE id = $1`, [id]);
  }

  async listLinks(
    organizationId: string,
    connectionId: string,
    paging: Paging,
  ): Promise<{ items: ShareLinkRecord[]; total: number }> {
    const where = `FROM connection_share_links l WHERE l.organization_id = $1 AND l.connection_id = $2`;
    const [items, total] = await Promise.all([
      queryRows<ShareLinkRecord>(
        this.tx,
        `SELECT ${LINK_COLUMNS} ${where} ORDER BY l.created_at DESC, l.id LIMIT $3 OFFSET $4`,
        [organizationId, connectionId, paging.limit, paging.offset],
      ),
      countOf(this.tx, `SELECT count(*) ${where}`, [organizationId, connectionId]),
    ]);
    return { items, total };
  }

  revokeLink(organizationId: string, connectionId: string, linkId: string): Promise<ShareLinkRecord | null> {
    return queryFirst<ShareLinkRecord>(
      this.tx,
      `UPDATE connection_share_links l SET revoked_at = COALESCE(revoked_at, now())
        WHERE l.organization_id = $1 AND l.connection_id = $2 AND l.id = $3 RETURNING ${LINK_COLUMNS}`,
      [organizationId, connectionId, linkId],
    );
  }
}
