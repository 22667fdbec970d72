import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { type Page, offsetOf, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { UsersService } from '../../identity/services/users.service.js';
import type { UserOrganizationDto } from '../dtos/user-organization.dto.js';

interface Row {
  id: string;
  name: string;
  slug: string;
  display_name: string | null;
  description: string | null;
  type: string;
  logo_url: string | null;
  role: string;
  joined_at: Date;
}

/**
 * GET /users/me/organizations: the organizations the caller is an active member of (archived ones left
 * out), with the caller's role, oldest membership first.
 */
@Injectable()
export class UserOrganizationsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersService,
  ) {}

  async list(
    principal: Principal,
    query: { page: number; pageSize: number },
  ): Promise<Page<UserOrganizationDto>> {
    const from = `FROM organization_members m
                  JOIN organizations o ON o.id = m.organization_id
                 WHERE m.user_id = $1 AND m.status = 'active' AND o.archived_at IS NULL`;
    const rows = await this.tx.manager.query<Row[]>(
      `SELECT o.id, o.name, o.slug, o.display_name, o.description, o.type, o.logo_url, m.role, m.joined_at
         ${from}
        ORDER BY m.joined_at ASC, o.id ASC
        LIMIT $2 OFFSET $3`,
      [principal.userId, query.pageSize, offsetOf(query)],
    );
    const [{ total }] = await this.tx.manager.query<Array<{ total: number }>>(
      `SELECT count(*)::int AS total ${from}`,
      [principal.userId],
    );
    const defaultOrganizationId = (await this.users.findById(principal.userId))?.defaultOrganizationId ?? null;
    const items = rows.map((row) => ({
      id: row.id,
      name: row.name,
      slug: row.slug,
      displayName: row.display_name,
      description: row.description,
      type: row.type,
      logoUrl: row.logo_url,
      role: row.role,
      joinedAt: new Date(row.joined_at).toISOString(),
      isDefault: row.id === defaultOrganizationId,
    }));
    return pageOf(items, total, query);
  }
}
