import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { OrganizationStatisticsDto } from '../dtos/organization.dto.js';

/** Counts the documents of an organization; registered by the documents module when it wants to own it. */
export type DocumentCounter = (organizationId: string) => Promise<number>;

interface CountsRow {
  member_count: number;
  active_member_count: number;
  workspace_count: number;
}

interface DocumentsProbe {
  present: boolean;
  scoped: boolean;
  soft: boolean;
}

/**
 * The statistics of an organization's detail. Documents live in the documents module's `documents` table;
 * until that module registers a counter, the table is counted directly when it exists (guarded by
 * `to_regclass`, so this works before the documents migration has run).
 */
@Injectable()
export class OrganizationStatisticsService {
  private documentCounter?: DocumentCounter;

  constructor(private readonly tx: TransactionHost) {}

  useDocumentCounter(counter: DocumentCounter): void {
    this.documentCounter = counter;
  }

  async of(organizationId: string): Promise<OrganizationStatisticsDto> {
    const [counts] = await this.tx.manager.query<CountsRow[]>(
      `SELECT (SELECT count(*)::int FROM organization_members WHERE organization_id = $1) AS member_count,
              (SELECT count(*)::int FROM organization_members WHERE organization_id = $1 AND status = 'active') AS active_member_count,
              (SELECT count(*)::int FROM workspaces WHERE organization_id = $1 AND deleted_at IS NULL) AS workspace_count`,
      [organizationId],
    );
    return {
      memberCount: counts.member_count,
      activeMemberCount: counts.active_member_count,
      workspaceCount: counts.workspace_count,
      documentCount: this.documentCounter ? await this.documentCounter(organizationId) : await this.countDocuments(organizationId),
    };
  }

  private async countDocuments(organizationId: string): Promise<number> {
    const [probe] = await this.tx.manager.query<DocumentsProbe[]>(
      `SELECT to_regclass('public.documents') IS NOT NULL AS present,
              EXISTS (SELECT 1 FROM information_schema.columns
                       WHERE table_schema = 'public' AND table_name = 'documents' AND column_name = 'organization_id') AS scoped,
              EXISTS (SELECT 1 FROM information_schema.columns
                       WHERE table_schema = 'public' AND table_name = 'documents' AND column_name = 'deleted_at') AS soft`,
    );
    if (!probe.present || !probe.scoped) {
      return 0;
    }
    const [row] = await this.tx.manager.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM documents WHERE organization_id = $1${probe.soft ? ' AND deleted_at IS NULL' : ''}`,
      [organizationId],
    );
    return row.n;
  }
}
