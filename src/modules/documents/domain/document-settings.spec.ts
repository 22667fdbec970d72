import { AppException } from '../../../common/errors/app.exception.js';
import { commentsAllowed, notificationOn, permissionListAdmits, validateDocumentSettings } from './document-settings.js';

const USER = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const viewer = { canRead: true, canWrite: false, canManage: false };
const editor = { canRead: true, canWrite: true, canManage: false };
const manager = { canRead: true, canWrite: true, canManage: true };

describe('permissionListAdmits', () => {
  it('does not narrow without a list, and never narrows managers', () => {
    expect(permissionListAdmits(undefined, viewer, USER)).toBe(true);
    expect(permissionListAdmits([], manager, USER)).toBe(true);
  });
  it('admits named users and holders of at least the named role', () => {
    expect(permissionListAdmits([USER], viewer, USER)).toBe(true);
    expect(permissionListAdmits([OTHER], viewer, USER)).toBe(false);
    expect(permissionListAdmits(['role:editor'], editor, USER)).toBe(true);
    expect(permissionListAdmits(['role:editor'], viewer, USER)).toBe(false);
    expect(permissionListAdmits(['role:viewer'], editor, USER)).toBe(true);
    expect(permissionListAdmits(['role:owner'], editor, USER)).toBe(false);
    expect(permissionListAdmits([], editor, USER)).toBe(false);
  });
});

describe('validateDocumentSettings', () => {
  it('copies permissions.requireApproval to workflow.requiresApproval and keeps the rest', () => {
    expect(validateDocumentSettings({ permissions: { requireApproval: true, view: ['role:viewer', USER] } })).toEqual({
      permissions: { requireApproval: true, view: ['role:viewer', USER] },
      workflow: { requiresApproval: true },
    });
  });
  it('refuses unknown keys, bad subjects and non-booleans', () => {
    try {
      validateDocumentSettings({ permissions: { share: ['role:admin'] }, notifications: { onMerge: 1 }, workflow: { approvers: [USER, 'x'] } });
      throw new Error('expected a validation error');
    } catch (error) {
      expect(error).toBeInstanceOf(AppException);
      expect((error as AppException).options.details?.map((d) => d.field)).toEqual(['permissions.share[0]', 'notifications.onMerge', 'workflow.approvers[1]']);
    }
  });
  it('reads allowComment and notification switches strictly', () => {
    expect(commentsAllowed({})).toBe(true);
    expect(commentsAllowed({ permissions: { allowComment: false } })).toBe(false);
    expect(notificationOn({ notifications: { onMerge: true } }, 'onMerge')).toBe(true);
    expect(notificationOn({}, 'onMerge')).toBe(false);
  });
});
