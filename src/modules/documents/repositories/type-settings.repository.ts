import { Injectable } from '@nestjs/common';
import type { TtlCache } from '../../../common/cache/ttl-cache.js';
import { AccessChangeListener } from '../../../database/access-change.listener.js';
import { TransactionHost } from '../../../database/transaction-host.js';

/** One `document_type_settings` row: the settings of a document type in a workspace, or at organization level. */
export interface TypeSettingsRecord {
  organizationId: string;
  /** Null for the organization-level documents of the type. */
  workspaceId: string | null;
  docType: string;
  defaultViewId: string | null;
  sharing: Record<string, unknown>;
  /** Any JSON (spec 2.11); enforced only as an object of subject lists (DocumentSettingsPolicy). */
  permissions: unknown;
  retention: Record<string, unknown>;
  updatedAt: Date;
  updatedBy: string | null;
}

export interface TypeScope {
  organizationId: string;
  workspaceId: string | null;
}

const COLUMNS = `s.organization_id AS "organizationId", s.workspace_id AS "workspaceId", s.doc_type AS "docType",
  s.default_view_id AS "defaultViewId", s.sharing, s.permissions, s.retention, s.updated_at AS "updatedAt", s.updated_by AS "updatedBy"`;

/**
 * The scope condition over `$1` organization, `$2` workspace, `$3` type: a workspace's row, or the organization-level
 * row (workspace_id NULL). Two spellings so each uses its unique index (IS NOT DISTINCT FROM would use neither).
 */
function scopeSql(scope: TypeScope): string {
  return scope.workspaceId
    ? `s.workspace_id = $2::uuid AND s.doc_type = $3 AND s.organization_id = $1`
    : `s.organization_id = $1 AND s.workspace_id IS NULL AND s.doc_type = $3 AND $2::uuid IS NULL`;
}

/**
 * SQL for type-level settings (`document_type_settings`, migration 1732240500000) and for what they enforce:
 * the retention of closed requests. Keyed by `(workspace_id, doc_type)`, or `(organization_id, doc_type)` for
 * organization-level documents.
 */
@Injectable()
export class TypeSettingsRepository {
  /**
   * Type-level settings read on the access path (permissions, sharing), cached like access rights (docs/auth.md,
   * "Caches"): a trigger of migration 1732240500000 announces every change on `quire_access_changed`, which clears
   * the cache on every instance when it commits.
   */
  private readonly cache: TtlCache<string, TypeSettingsRecord | null>;

  constructor(
    private readonly tx: TransactionHost,
    private readonly accessChanges: AccessChangeListener,
  ) {
    this.cache = accessChanges.createCache();
  }

  /** As find(), through the cache outside transactions (the access path). */
  async cached(scope: TypeScope, docType: string): Promise<TypeSettingsRecord | null> {
    if (!this.accessChanges.active || this.tx.inTransaction) {
      return this.find(scope, docType);
    }
    const key = `${scope.organizationId}:${scope.workspaceId ?? ''}:${docType}`;
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      return hit;
    }
    const record = await this.find(scope, docType);
    this.cache.set(key, record);
    return record;
  }

  async find(scope: TypeScope, docType: string): Promise<TypeSettingsRecord | null> {
    const rows = await this.tx.manager.query<TypeSettingsRecord[]>(`SELECT ${COLUMNS} FROM document_type_settings s WHERE ${scopeSql(scope)}`, [
      scope.organizationId,
      scope.workspaceId,
      docType,
    ]);
    return rows[0] ?? null;
  }

  async upsert(scope: TypeScope, docType: string, input: Omit<TypeSettingsRecord, 'organizationId' | 'workspaceId' | 'docType' | 'updatedAt'>): Promise<TypeSettingsRecord> {
    const conflict = scope.workspaceId
      ? `(workspace_id, doc_type) WHERE workspace_id IS NOT NULL`
      : `(organization_id, doc_type) WHERE workspace_id IS NULL`;
    const rows = await this.tx.manager.query<TypeSettingsRecord[]>(
      `INSERT INTO document_type_settings AS s (organization_id, workspace_id, doc_type, default_view_id, sharing, permissions, retention, updated_by)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8)
       ON CONFLICT ${conflict}
       DO UPDATE SET default_view_id = EXCLUDED.default_view_id, sharing = EXCLUDED.sharing, permissions = EXCLUDED.permissions,
                     retention = EXCLUDED.retention, updated_by = EXCLUDED.updated_by, updated_at = now()
       RETURNING ${COLUMNS}`,
      [
        scope.organizationId,
        scope.workspaceId,
        docType,
        input.defaultViewId,
        JSON.stringify(input.sharing),
        JSON.stringify(input.permissions),
        JSON.stringify(input.retention),
        input.updatedBy,
      ],
    );
    this.accessChanges.changed();
    return rows[0] as TypeSettingsRecord;
  }

  /**
   * Deletes up to `batch` closed requests older than their type's `retention.closedRequestsDays` (with their
   * changes, by cascade). Only `closed` requests: open ones are work in progress and merged ones are referenced by
   * their revision; a closed request never produced a revision, and the NOT EXISTS keeps it that way even if one
   * did. Returns how many were deleted.
   */
  async deleteExpiredClosedRequests(batch: number): Promise<number> {
    // DELETE … RETURNING answers [rows, count] through TypeORM's pg driver.
    const [rows] = await this.tx.manager.query<[{ id: string }[], number]>(
      `DELETE FROM requests WHERE id IN (
         SELECT r.id
           FROM document_type_settings s
           JOIN documents d ON d.doc_type = s.doc_type
                           AND ((s.workspace_id IS NOT NULL AND d.workspace_id = s.workspace_id)
                             OR (s.workspace_id IS NULL AND d.workspace_id IS NULL AND d.organization_id = s.organization_id))
           JOIN requests r ON r.document_id = d.id AND r.status = 'closed'
          WHERE s.retention ? 'closedRequestsDays'
            AND r.closed_at < now() - make_interval(days => (s.retention->>'closedRequestsDays')::int)
            AND NOT EXISTS (SELECT 1 FROM revisions v WHERE v.request_id = r.id)
          LIMIT $1)
       RETURNING id`,
      [batch],
    );
    return rows.length;
  }
}
