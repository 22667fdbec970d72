import { decide, gateRefusal, nodesAllowedToDecide } from './approval-flow.js';
import type { ApprovalInstanceRecord, ApprovalStrategy } from './approval.records.js';

function instance(strategy: ApprovalStrategy, approvers: string[], decided: Record<string, 'approved'> = {}): ApprovalInstanceRecord {
  return {
    id: 'i',
    organizationId: 'o',
    workspaceId: 'w',
    documentUuid: 'd',
    requestId: 'r',
    flowId: 'submitted',
    strategy,
    status: 'pending',
    createdBy: 'author',
    createdAt: new Date(0),
    updatedAt: new Date(0),
    completedAt: null,
    resetCount: 0,
    nodes: approvers.map((approver, index) => ({ id: `n${index}`, ordinal: index + 1, approver, status: decided[approver] ?? 'pending', decidedAt: null, comment: null, signature: null })),
  };
}

describe('approval flow', () => {
  it('sequential: only the current approver may decide; the last approval approves', () => {
    const fresh = instance('sequential', ['a', 'b']);
    expect(decide(fresh, 'b', 'approved')).toEqual({ ok: false, reason: 'not-your-turn' });
    expect(decide(fresh, 'x', 'approved')).toEqual({ ok: false, reason: 'not-an-approver' });
    const first = decide(fresh, 'a', 'approved');
    expect(first).toMatchObject({ ok: true, instanceStatus: 'pending', completed: false, next: { approver: 'b' } });
    const last = decide(instance('sequential', ['a', 'b'], { a: 'approved' }), 'b', 'approved');
    expect(last).toMatchObject({ ok: true, instanceStatus: 'approved', completed: true, next: null });
  });

  it('parallel: any pending approver may decide; all must approve', () => {
    const fresh = instance('parallel', ['a', 'b', 'c']);
    expect(nodesAllowedToDecide(fresh).map((node) => node.approver)).toEqual(['a', 'b', 'c']);
    expect(decide(fresh, 'c', 'approved')).toMatchObject({ ok: true, instanceStatus: 'pending' });
    expect(decide(instance('parallel', ['a', 'b'], { b: 'approved' }), 'a', 'approved')).toMatchObject({ instanceStatus: 'approved' });
  });

  it('a rejection rejects, request_changes sends it back, a decided instance takes no more decisions', () => {
    expect(decide(instance('parallel', ['a', 'b']), 'b', 'rejected')).toMatchObject({ instanceStatus: 'rejected', nodeStatus: 'rejected', completed: true });
    expect(decide(instance('sequential', ['a', 'b']), 'a', 'request_changes')).toMatchObject({ instanceStatus: 'changes_requested', nodeStatus: 'changes_requested' });
    expect(decide({ ...instance('sequential', ['a']), status: 'canceled' }, 'a', 'approved')).toEqual({ ok: false, reason: 'not-pending' });
    expect(decide(instance('sequential', ['a', 'b'], { a: 'approved' }), 'a', 'approved')).toEqual({ ok: false, reason: 'not-an-approver' });
  });

  it('the gate: while approval is required, no writer of the request approves it, and configured approvers bound who does', () => {
    const request = { author: 'author', contributors: ['author', 'helper'] };
    const required = (approvers?: string[]) => ({ workflow: { requiresApproval: true, ...(approvers ? { approvers } : {}) }, request });
    expect(gateRefusal(required(), 'author')).toBe('own-request');
    expect(gateRefusal(required(), 'HELPER')).toBe('own-request');
    expect(gateRefusal(required(['author', 'a']), 'author')).toBe('own-request');
    expect(gateRefusal(required(), 'a')).toBeNull();
    expect(gateRefusal(required(['a', 'b']), 'c')).toBe('not-listed');
    expect(gateRefusal(required(['a', 'B']), 'b')).toBeNull();
    expect(gateRefusal(required([]), 'c')).toBeNull();
    expect(gateRefusal({ workflow: { requiresApproval: false, approvers: ['a'] }, request }, 'author')).toBeNull();
    expect(gateRefusal({ workflow: undefined, request }, 'author')).toBeNull();
  });
});
