import {
  applySettingsRevert,
  combineSettingsChanges,
  propertyRevertConflicts,
  settingsChanges,
  settingsRevertConflicts,
} from './settings-revert.js';

describe('settings revert', () => {
  it('lists the entries a settings change made, walking sections (absent and {} alike)', () => {
    expect(
      settingsChanges(
        { permissions: {}, notifications: {} },
        { notifications: { onMerge: true }, workflow: { approvers: ['a'] } },
      ),
    ).toEqual([
      { path: ['notifications', 'onMerge'], restore: undefined, expected: true },
      { path: ['workflow', 'approvers'], restore: undefined, expected: ['a'] },
    ]);
    expect(settingsChanges({ permissions: { view: ['*'] } }, { permissions: { view: ['*'] } })).toEqual([]);
  });

  it('undoes only those entries and keeps later ones', () => {
    const entries = settingsChanges({ notifications: {} }, { notifications: { onMerge: true } });
    const now = { notifications: { onMerge: true }, permissions: { view: ['role:editor'] } };
    expect(settingsRevertConflicts(now, entries)).toEqual([]);
    expect(applySettingsRevert(now, entries)).toEqual({
      notifications: {},
      permissions: { view: ['role:editor'] },
    });
  });

  it('conflicts on an entry changed since', () => {
    const entries = settingsChanges(
      { permissions: { view: ['*'] } },
      { permissions: { view: ['role:editor'] } },
    );
    expect(settingsRevertConflicts({ permissions: { view: ['role:owner'] } }, entries)).toEqual([
      expect.objectContaining({
        type: 'settings-changed',
        targetId: 'settings',
        fieldId: 'permissions.view',
      }),
    ]);
    expect(settingsRevertConflicts({ permissions: {} }, entries)).toHaveLength(1);
  });

  it('combines operations taken last to first: the earliest value back, the latest expected', () => {
    const later = settingsChanges(
      { notifications: { onMerge: false } },
      { notifications: { onMerge: true } },
    );
    const earlier = settingsChanges({ notifications: {} }, { notifications: { onMerge: false } });
    expect(combineSettingsChanges(later, earlier)).toEqual([
      { path: ['notifications', 'onMerge'], restore: undefined, expected: true },
    ]);
  });

  it('conflicts on a property whose value is not the one the revision left', () => {
    expect(propertyRevertConflicts({ status: 'A', other: 1 }, { status: 'A', gone: null })).toEqual([]);
    expect(propertyRevertConflicts({ status: 'B' }, { status: 'A' })).toEqual([
      expect.objectContaining({ type: 'properties-changed', fieldId: 'status' }),
    ]);
  });
});
