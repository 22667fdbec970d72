import { hasOrgRole } from '../../../src/modules/tenancy/policies/organization-roles.js';
import { accessOf, type AccessRow } from '../../../src/modules/tenancy/services/workspace-access.service.js';

/** The permission matrix of docs/tenancy.md, checked on the pure rule (no database needed). */
describe('tenancy: access rules', () => {
  const row = (over: Partial<AccessRow>): AccessRow => ({
    organization_id: 'o',
    workspace_id: 'w',
    visibility: 'private',
    archived: false,
    org_role: 'member',
    org_status: 'active',
    ws_role: null,
    ws_status: null,
    ...over,
  });
  const flags = (r: AccessRow): string => {
    const a = accessOf(r);
    return [a.canRead && 'read', a.canWrite && 'write', a.canManage && 'manage', a.canArchive && 'archive', a.canDelete && 'delete'].filter(Boolean).join(' ');
  };

  it.each([
    ['org owner', { org_role: 'owner' }, 'read write manage archive delete'],
    ['org admin', { org_role: 'admin' }, 'read write manage archive'],
    ['workspace owner', { ws_role: 'owner', ws_status: 'active' }, 'read write manage archive delete'],
    ['editor', { ws_role: 'editor', ws_status: 'active' }, 'read write'],
    ['viewer', { ws_role: 'viewer', ws_status: 'active' }, 'read'],
    ['org member, private workspace', {}, ''],
    ['org member, public workspace', { visibility: 'public' }, 'read'],
    ['org guest, public workspace', { org_role: 'guest', visibility: 'public' }, 'read'],
    ['suspended workspace editor', { ws_role: 'editor', ws_status: 'suspended' }, ''],
    ['suspended org admin', { org_role: 'admin', org_status: 'suspended' }, ''],
    ['editor while organization membership suspended', { org_status: 'suspended', ws_role: 'editor', ws_status: 'active', visibility: 'public' }, ''],
    ['org owner, archived workspace', { org_role: 'owner', archived: true }, 'read archive delete'],
    ['editor, archived workspace', { ws_role: 'editor', ws_status: 'active', archived: true }, 'read'],
    ['workspace owner, archived workspace', { ws_role: 'owner', ws_status: 'active', archived: true }, 'read archive delete'],
  ] as Array<[string, Partial<AccessRow>, string]>)('%s', (_name, over, expected) => {
    expect(flags(row(over))).toBe(expected);
  });

  it('ranks organization roles owner > admin > member > guest', () => {
    expect(hasOrgRole('owner', 'admin')).toBe(true);
    expect(hasOrgRole('admin', 'admin')).toBe(true);
    expect(hasOrgRole('member', 'admin')).toBe(false);
    expect(hasOrgRole('guest', 'member')).toBe(false);
    expect(hasOrgRole('guest', 'guest')).toBe(true);
  });
});
