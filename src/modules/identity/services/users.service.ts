import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { UserEntity } from '../entities/user.entity.js';

export interface UserSummary {
  id: string;
  email: string;
  displayName: string;
  avatarUrl: string | null;
}

/** Reads and updates accounts; what other modules use to look users up. */
@Injectable()
export class UsersService {
  constructor(private readonly tx: TransactionHost) {}

  async findById(id: string): Promise<UserEntity | null> {
    return this.tx.manager.findOne(UserEntity, { where: { id } });
  }

  async getById(id: string): Promise<UserEntity> {
    const user = await this.findById(id);
    if (!user) {
      throw AppException.notFound('user');
    }
    return user;
  }

  /**
   * The account, its row locked until the surrounding transaction ends: changes that must keep the account a
   * way to sign in (unbinding a provider) run one at a time per account. Call inside a transaction.
   */
  async getByIdForUpdate(id: string): Promise<UserEntity> {
    const user = await this.tx.manager.findOne(UserEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
    if (!user) {
      throw AppException.notFound('user');
    }
    return user;
  }

  async findByEmail(email: string): Promise<UserEntity | null> {
    return this.tx.manager
      .createQueryBuilder(UserEntity, 'u')
      .where('lower(u.email) = lower(:email)', { email })
      .getOne();
  }

  async summaries(ids: string[]): Promise<Map<string, UserSummary>> {
    if (ids.length === 0) {
      return new Map();
    }
    const users = await this.tx.manager
      .createQueryBuilder(UserEntity, 'u')
      .where('u.id IN (:...ids)', { ids: [...new Set(ids)] })
      .getMany();
    return new Map(
      users.map((u) => [u.id, { id: u.id, email: u.email, displayName: u.displayName, avatarUrl: u.avatarUrl }]),
    );
  }

  async setDefaults(userId: string, organizationId: string | null, workspaceId: string | null): Promise<void> {
    await this.tx.manager.update(UserEntity, { id: userId }, { defaultOrganizationId: organizationId, defaultWorkspaceId: workspaceId });
  }

  /** Clears the defaults of everyone (or one user) whose default organization is `organizationId`: one UPDATE. */
  async clearDefaultOrganization(organizationId: string, userId?: string): Promise<void> {
    await this.tx.manager.query(
      `UPDATE users SET default_organization_id = NULL, default_workspace_id = NULL, updated_at = now()
        WHERE default_organization_id = $1 AND ($2::uuid IS NULL OR id = $2)`,
      [organizationId, userId ?? null],
    );
  }

  /** Clears the default workspace of everyone (or one user) whose default it is: one UPDATE. */
  async clearDefaultWorkspace(workspaceId: string, userId?: string): Promise<void> {
    await this.tx.manager.query(
      `UPDATE users SET default_workspace_id = NULL, updated_at = now()
        WHERE default_workspace_id = $1 AND ($2::uuid IS NULL OR id = $2)`,
      [workspaceId, userId ?? null],
    );
  }
}
