import { decideAccept, dedupKey, resolveFieldConflict } from './sync-rules.js';
import { eventScope } from './propagation-events.js';

const row: Record<string, unknown> = { price: 50, status: 'draft' };
const read = (id: string): unknown => row[id];

describe('accept rules', () => {
  it('auto accepts, manual pends, selective checks accept → approval → reject → default', () => {
    expect(decideAccept({ acceptMode: 'auto' }, read)).toBe('accept');
    expect(decideAccept(undefined, read)).toBe('accept');
    expect(decideAccept({ acceptMode: 'manual' }, read)).toBe('pending');
    const selective = (rules: object) =>
      decideAccept({ acceptMode: 'selective', manualAcceptRules: rules }, read);
    const cond = (operator: string, value: unknown) => ({
      conditions: [{ fieldId: 'price', operator, value }],
    });
    expect(selective({ autoAcceptIf: cond('lt', 100), autoRejectIf: cond('lt', 100) })).toBe('accept');
    expect(
      selective({
        autoAcceptIf: cond('gt', 100),
        requireApprovalIf: cond('eq', 50),
        autoRejectIf: cond('eq', 50),
      }),
    ).toBe('pending');
    expect(selective({ autoAcceptIf: cond('gt', 100), autoRejectIf: cond('eq', 50) })).toBe('reject');
    expect(selective({ autoAcceptIf: cond('gt', 100) })).toBe('pending');
    expect(selective({ autoAcceptIf: cond('gt', 100), defaultAction: 'accept' })).toBe('accept');
    expect(selective({ autoAcceptIf: {}, defaultAction: 'manual' })).toBe('pending');
  });
});

describe('dedup keys', () => {
  it('by_field uses the first field, by_fields all of them; an empty part gives no key', () => {
    const values = { sku: ' AB-1 ', color: 'red' };
    expect(
      dedupKey({ deduplicationStrategy: 'by_field', deduplicationFieldIds: ['sku', 'color'] }, values),
    ).toBe('["ab-1"]');
    expect(
      dedupKey({ deduplicationStrategy: 'by_fields', deduplicationFieldIds: ['sku', 'color'] }, values),
    ).toBe('["ab-1","red"]');
    expect(
      dedupKey({ deduplicationStrategy: 'by_fields', deduplicationFieldIds: ['sku', 'size'] }, values),
    ).toBeNull();
    expect(dedupKey({}, values)).toBeNull();
  });
});

describe('conflict resolution', () => {
  const at = new Date('2026-05-01T10:00:00Z');
  const base = {
    fieldId: 'price',
    local: 12,
    lastPropagated: 10,
    localChangedAt: new Date('2026-05-01T09:00:00Z'),
    upstreamChangedAt: at,
  };
  it('is no conflict when the buyer did not change the field', () => {
    expect(resolveFieldConflict({ defaultStrategy: 'keep_local' }, { ...base, local: 10 })).toEqual({
      conflict: false,
    });
    expect(
      resolveFieldConflict({ defaultStrategy: 'keep_local' }, { ...base, lastPropagated: undefined }),
    ).toEqual({ conflict: false });
  });
  it('applies the field strategy, else the default, else keep_upstream', () => {
    expect(resolveFieldConflict(undefined, base)).toEqual({
      conflict: true,
      strategy: 'keep_upstream',
      winner: 'upstream',
    });
    expect(resolveFieldConflict({ defaultStrategy: 'keep_local' }, base)).toMatchObject({ winner: 'local' });
    expect(
      resolveFieldConflict(
        { defaultStrategy: 'keep_local', fieldStrategies: { price: { strategy: 'keep_upstream' } } },
        base,
      ),
    ).toMatchObject({ winner: 'upstream' });
    expect(resolveFieldConflict({ defaultStrategy: 'latest_wins' }, base)).toMatchObject({
      winner: 'upstream',
    });
    expect(
      resolveFieldConflict(
        { defaultStrategy: 'latest_wins' },
        { ...base, localChangedAt: new Date('2026-05-01T11:00:00Z') },
      ),
    ).toMatchObject({ winner: 'local' });
  });
});

describe('event types', () => {
  it('filters by eventTypes; field_value_changed alone passes the changed fields', () => {
    expect(eventScope('created', undefined)).toBe('row');
    expect(eventScope('created', ['row_updated'])).toBe('skip');
    expect(eventScope('deleted', ['row_deleted'])).toBe('row');
    expect(eventScope('updated', ['row_updated', 'field_value_changed'])).toBe('row');
    expect(eventScope('updated', ['field_value_changed'])).toBe('changed_fields');
    expect(eventScope('updated', ['row_created'])).toBe('skip');
  });
});
