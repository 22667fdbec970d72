import type { OrganizationEntity } from '../entities/organization.entity.js';

/** Organization names (`name`) are refused above this many characters, on create and PATCH. */
export const ORGANIZATION_NAME_MAX = 100;

const PERSONAL_SUFFIX = "'s organization";

/**
 * The name messages show for an organization: its `displayName`, or `name` when there is none. A blank display
 * name is refused on create and PATCH, but rows stored before that rule may still hold one, and a message must
 * never read "invited you to  on Quire".
 */
export function organizationLabel(org: Pick<OrganizationEntity, 'name' | 'displayName'>): string {
  const displayName = org.displayName?.trim();
  return displayName ? displayName : org.name;
}

/**
 * The name of a user's personal organization, "<display name>'s organization", within ORGANIZATION_NAME_MAX so the
 * record can be sent back unchanged: a longer display name is cut (by code points, never inside a surrogate pair,
 * as the length rule counts them) and ends in "…".
 */
export function personalOrganizationName(displayName: string): string {
  const room = ORGANIZATION_NAME_MAX - PERSONAL_SUFFIX.length;
  const chars = Array.from(displayName.trim());
  if (chars.length <= room) {
    return `${chars.join('')}${PERSONAL_SUFFIX}`;
  }
  const cut = chars
    .slice(0, room - 1)
    .join('')
    .trimEnd();
  return `${cut}…${PERSONAL_SUFFIX}`;
}
