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


/**
 * The statistics of an organization's detail. Documents belong to the documents module, which registers
 * the counter at start-up (tenancy cannot depend on documents: documents depends on tenancy).
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
      documentCount: this.documentCounter ? await this.documentCounter(organizationId) : 0,
    };
  }
}
