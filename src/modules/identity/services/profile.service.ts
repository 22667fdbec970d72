import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { UpdateUserDto, UserResponseDto } from '../dtos/user.dto.js';
import { UserEntity } from '../entities/user.entity.js';
import { UsersService } from './users.service.js';

/**
 * Checks new defaults (null clears one); may return the default workspace that goes with a new (or cleared)
 * default organization.
 */
export type DefaultsValidator = (
  userId: string,
  organizationId?: string | null,
  workspaceId?: string | null,
) => Promise<{ defaultWorkspaceId: string | null } | undefined>;

/** The current user's own record (spec 4.1). */
@Injectable()
export class ProfileService {
  private defaultsValidator?: DefaultsValidator;

  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersService,
  ) {}

  /** Tenancy checks that a new default organization/workspace is one the user belongs to. */
  useDefaultsValidator(validator: DefaultsValidator): void {
    this.defaultsValidator = validator;
  }

  async get(principal: Principal): Promise<UserResponseDto> {
    return UserResponseDto.from(await this.users.getById(principal.userId));
  }

  async update(principal: Principal, dto: UpdateUserDto): Promise<UserResponseDto> {
    return this.tx.run(async () => {
      const user = await this.users.getById(principal.userId);
      requireStoredContacts(dto, user);
      const following =
        dto.defaultOrganizationId !== undefined || dto.defaultWorkspaceId !== undefined
          ? await this.defaultsValidator?.(user.id, dto.defaultOrganizationId, dto.defaultWorkspaceId)
          : undefined;
      const changes: Partial<UserEntity> = {};
      if (dto.displayName !== undefined) {
        changes.displayName = dto.displayName;
      }
      // null clears these (the validator above has accepted a null default).
      for (const key of ['avatarUrl', 'locale', 'timezone', 'defaultOrganizationId', 'defaultWorkspaceId'] as const) {
        if (dto[key] !== undefined) {
          changes[key] = dto[key] ?? null;
        }
      }
      if (following) {
        changes.defaultWorkspaceId = following.defaultWorkspaceId;
      }
      if (Object.keys(changes).length > 0) {
        await this.tx.manager.update(UserEntity, { id: user.id }, changes);
      }
      return UserResponseDto.from(await this.users.getById(user.id));
    });
  }
}

/**
 * `email` and `phone` of a user record sent back: accepted when they are the stored values, refused otherwise, so a
 * changed address is never answered 200 and silently dropped.
 */
function requireStoredContacts(dto: UpdateUserDto, user: UserEntity): void {
  const problems: Array<{ field: string; reason: string }> = [];
  // E-mail addresses are matched without regard to letter case (sign-in and registration do the same).
  if (dto.email !== undefined && (typeof dto.email !== 'string' || dto.email.toLowerCase() !== user.email.toLowerCase())) {
    problems.push({ field: 'email', reason: 'the e-mail address cannot be changed' });
  }
  if (dto.phone !== undefined && dto.phone !== user.phone) {
    problems.push({ field: 'phone', reason: 'the phone number is changed by enrolling SMS two-step verification, not here' });
  }
  if (problems.length > 0) {
    throw AppException.validation(problems);
  }
}
