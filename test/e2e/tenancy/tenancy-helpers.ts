import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { bearer, registerUser, type TestUser } from '../../factories/users.factory.js';

export const API = '/api/v1';

export interface TestOrganization {
  id: string;
  slug: string;
  defaultWorkspaceId: string;
}

export function uniqueSlug(prefix = 'org'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** Creates a team organization owned by `owner` through the API. */
export async function createOrganization(
  http: App,
  owner: TestUser,
  overrides: Record<string, unknown> = {},
): Promise<TestOrganization> {
  const slug = uniqueSlug();
  const res = await request(http)
    .post(`${API}/organizations`)
    .set(bearer(owner))
    .send({ name: 'Acme', slug, type: 'team', ...overrides });
  if (res.status !== 201) {
    throw new Error(`create organization failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return { id: res.body.payload.id, slug: res.body.payload.slug, defaultWorkspaceId: res.body.payload.defaultWorkspaceId };
}

/** Adds `user` to the organization directly (the caller must be owner/admin); returns the member id. */
export async function addMember(http: App, admin: TestUser, organizationId: string, user: TestUser, role = 'member'): Promise<string> {
  const res = await request(http).post(`${API}/organizations/${organizationId}/members`).set(bearer(admin)).send({ userId: user.id, role });
  if (res.status !== 201) {
    throw new Error(`add member failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.payload.id;
}

/** An organization with an owner, an admin, a member and a guest. */
export async function organizationWithRoles(http: App): Promise<{
  org: TestOrganization;
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  guest: TestUser;
  outsider: TestUser;
  memberIds: Record<'admin' | 'member' | 'guest', string>;
}> {
  const [owner, admin, member, guest, outsider] = await Promise.all([
    registerUser(http),
    registerUser(http),
    registerUser(http),
    registerUser(http),
    registerUser(http),
  ]);
  const org = await createOrganization(http, owner);
  const memberIds = {
    admin: await addMember(http, owner, org.id, admin, 'admin'),
    member: await addMember(http, owner, org.id, member, 'member'),
    guest: await addMember(http, owner, org.id, guest, 'guest'),
  };
  return { org, owner, admin, member, guest, outsider, memberIds };
}

export { bearer, registerUser };
export type { TestUser };
