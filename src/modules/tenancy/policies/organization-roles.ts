import { GRANTABLE_ROLES, type GrantableRole } from '../entities/organization-invitation.entity.js';
import type { OrganizationRole } from '../entities/organization-member.entity.js';

/** Organization roles from most to least powerful: a minimum role admits every role above it. */
const ORG_ROLE_RANK: Record<OrganizationRole, number> = { owner: 4, admin: 3, member: 2, guest: 1 };

export function hasOrgRole(role: OrganizationRole, minimum: OrganizationRole): boolean {
  return ORG_ROLE_RANK[role] >= ORG_ROLE_RANK[minimum];
}

export function isOrgAdmin(role: OrganizationRole | null | undefined): boolean {
  return role === 'owner' || role === 'admin';
}

/** The organization settings Quire reads; any other keys a client stores are kept and returned as given. */
export interface OrganizationSettings {
  /**
   * Whether non-members may ask to join (POST /organizations/{id}/join-requests). Default true: spec 3 makes
   * "the organization allows requests" the condition, and an organization created with the spec's fields alone
   * must accept them; an owner or admin closes it with `false`. Every request still needs an owner's or admin's
   * approval.
   */
  allowJoinRequests: boolean;
  /** The role an approved join request grants when the approver names none. Default `member`. */
  defaultJoinRole: GrantableRole;
  [key: string]: unknown;
}

export function effectiveSettings(stored: Record<string, unknown> | null | undefined): OrganizationSettings {
  const raw = stored ?? {};
  const role = raw.defaultJoinRole;
  return {
    ...raw,
    allowJoinRequests: raw.allowJoinRequests !== false,
    defaultJoinRole: (GRANTABLE_ROLES as readonly unknown[]).includes(role) ? (role as GrantableRole) : 'member',
  };
}

/** Why a settings object is not acceptable, or null. Known keys are typed; other keys are free JSON. */
export function settingsProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'settings must be an object';
  }
  const raw = value as Record<string, unknown>;
  // null is "no value": a PATCH removes the key (the default applies again), a create stores nothing meaningful.
  if (raw.allowJoinRequests !== undefined && raw.allowJoinRequests !== null && typeof raw.allowJoinRequests !== 'boolean') {
    return 'settings.allowJoinRequests must be a boolean';
  }
  if (raw.defaultJoinRole !== undefined && raw.defaultJoinRole !== null && !(GRANTABLE_ROLES as readonly unknown[]).includes(raw.defaultJoinRole)) {
    return `settings.defaultJoinRole must be one of ${GRANTABLE_ROLES.join(', ')}`;
  }
  return settingsSizeProblem(raw);
}

const MAX_SETTINGS_BYTES = 16_384;

/**
 * docs/tenancy.md: settings hold at most 16 KB of JSON, in UTF-8 bytes (`.length` counted UTF-16 units, letting
 * non-Latin text through at up to three times that). A PATCH merges key by key, so the merged object is checked too.
 */
export function settingsSizeProblem(settings: Record<string, unknown>, before?: Record<string, unknown>): string | null {
  const size = Buffer.byteLength(JSON.stringify(settings));
  // Settings stored over the bound before the merge was checked may still shrink (`before`: what a PATCH merges into).
  const grows = before === undefined || size > Buffer.byteLength(JSON.stringify(before));
  return size > MAX_SETTINGS_BYTES && grows ? 'settings must be at most 16 KB of JSON' : null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Path ids that are not uuids name nothing: callers answer NOT_FOUND rather than a validation error. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
