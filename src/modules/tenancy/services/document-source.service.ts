import { Injectable } from '@nestjs/common';
import { TtlCache } from '../../../common/cache/ttl-cache.js';
import { AccessChangeListener } from '../../../database/access-change.listener.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { isUuid } from '../policies/organization-roles.js';

export interface DocumentSource {
  /** The workspace whose documents of this type are served. */
  workspaceId: string;
  /** True when a data-source reference replaces the local data: the served documents are read-only here. */
  readOnly: boolean;
  /** The reference doing the replacement, if any. */
  referenceId: string | null;
}

/**
 * Data-source references (replacement mode, spec 2.3): which workspace serves a document type for a
 * given workspace. The documents module asks this for every read and write, so the rule lives here only:
 * - an `active` reference of `docType` on the workspace whose source workspace still exists (not deleted)
 *   → the source workspace serves, read-only (writes are refused with FORBIDDEN by the caller), and the
 *   workspace's own documents of that type are hidden but kept;
 * - otherwise (no reference, paused, removed, or source deleted) → the workspace serves its own documents.
 * One hop only: the source's own documents are served, whatever references the source itself has.
 */
@Injectable()
export class DocumentSourceService {
  /** Per `workspace:docType`, for AUTH_CACHE_TTL_MS at most; cleared when a reference or workspace changes (docs/auth.md). */
  private readonly sources: TtlCache<string, DocumentSource>;

  constructor(
    private readonly tx: TransactionHost,
    private readonly accessChanges: AccessChangeListener,
  ) {
    this.sources = accessChanges.createCache();
  }

  async resolve(workspaceId: string, docType: string): Promise<DocumentSource> {
    if (!isUuid(workspaceId)) {
      return { workspaceId, readOnly: false, referenceId: null };
    }
    if (this.accessChanges.active && !this.tx.inTransaction) {
      return this.sources.getOrLoad(`${workspaceId}:${docType}`, () => this.load(workspaceId, docType));
    }
    return this.load(workspaceId, docType);
  }

  private async load(workspaceId: string, docType: string): Promise<DocumentSource> {
    const rows = await this.tx.manager.query<Array<{ id: string; source_workspace_id: string }>>(
      `SELECT r.id, r.source_workspace_id
         FROM data_source_references r
         JOIN workspaces s ON s.id = r.source_workspace_id AND s.deleted_at IS NULL
        WHERE r.workspace_id = $1 AND r.doc_type = $2 AND r.status = 'active'
        LIMIT 1`,
      [workspaceId, docType],
    );
    const ref = rows[0];
    return ref ? { workspaceId: ref.source_workspace_id, readOnly: true, referenceId: ref.id } : { workspaceId, readOnly: false, referenceId: null };
  }
}
