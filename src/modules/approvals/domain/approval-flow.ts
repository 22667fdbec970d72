import type { ApprovalDecision, ApprovalInstanceRecord, ApprovalNodeRecord, ApprovalStatus, NodeStatus } from './approval.records.js';
import { assertNever } from '../../../common/assert-never.js';

/** The node whose turn it is: sequential — the first pending one; parallel — the first pending one too (any may decide). */
export function currentNode(instance: Pick<ApprovalInstanceRecord, 'status' | 'nodes'>): ApprovalNodeRecord | null {
  if (instance.status !== 'pending') {
    return null;
  }
  return [...instance.nodes].sort((a, b) => a.ordinal - b.ordinal).find((node) => node.status === 'pending') ?? null;
}

/** Nodes that may decide now: sequential — the current node only; parallel — every pending node. */
export function nodesAllowedToDecide(instance: Pick<ApprovalInstanceRecord, 'status' | 'nodes' | 'strategy'>): ApprovalNodeRecord[] {
  if (instance.status !== 'pending') {
    return [];
  }
  switch (instance.strategy) {
    case 'sequential': {
      const node = currentNode(instance);
      return node ? [node] : [];
    }
    case 'parallel':
      return instance.nodes.filter((node) => node.status === 'pending');
    default:
      return assertNever(instance.strategy);
  }
}

export function nodeStatusOf(decision: ApprovalDecision): NodeStatus {
  switch (decision) {
    case 'approved':
      return 'approved';
    case 'rejected':
      return 'rejected';
    case 'request_changes':
      return 'changes_requested';
    default:
      return assertNever(decision);
  }
}

export type DecisionOutcome =
  | { ok: false; reason: 'not-pending' | 'not-an-approver' | 'not-your-turn' }
  | { ok: true; node: ApprovalNodeRecord; nodeStatus: NodeStatus; instanceStatus: ApprovalStatus; completed: boolean; next: ApprovalNodeRecord | null };

/**
 * What a decision does (pure logic, unit-tested): only a node allowed to decide may; any rejection rejects the
 * instance, `request_changes` sends it back to the author (`changes_requested`), and the last approval approves it.
 */
export function decide(instance: ApprovalInstanceRecord, userId: string, decision: ApprovalDecision): DecisionOutcome {
  if (instance.status !== 'pending') {
    return { ok: false, reason: 'not-pending' };
  }
  const own = instance.nodes.find((node) => node.approver === userId && node.status === 'pending');
  if (!own) {
    return { ok: false, reason: 'not-an-approver' };
  }
  if (!nodesAllowedToDecide(instance).some((node) => node.id === own.id)) {
    return { ok: false, reason: 'not-your-turn' };
  }
  const nodeStatus = nodeStatusOf(decision);
  const after = instance.nodes.map((node) => (node.id === own.id ? { ...node, status: nodeStatus } : node));
  let instanceStatus: ApprovalStatus = 'pending';
  if (nodeStatus === 'rejected') {
    instanceStatus = 'rejected';
  } else if (nodeStatus === 'changes_requested') {
    instanceStatus = 'changes_requested';
  } else if (after.every((node) => node.status === 'approved')) {
    instanceStatus = 'approved';
  }
  const next = instanceStatus === 'pending' ? currentNode({ status: 'pending', nodes: after }) : null;
  return { ok: true, node: own, nodeStatus, instanceStatus, completed: instanceStatus !== 'pending', next };
}

/** What the gate asks of an approver: the parts of the document's `workflow` settings and of the request it reads. */
export interface GateSubject {
  workflow: { requiresApproval?: boolean; approvers?: unknown } | undefined;
  request: { author: string; contributors: readonly string[] };
}

/**
 * Why `userId` may not approve the request while the document requires approval (docs/decisions/approvals-gate.md),
 * or null: someone who wrote changes of the request (its author, a contributor) would satisfy the gate alone, and
 * `workflow.approvers`, when the owner configured any, bounds who approves. Without `requiresApproval` approvals are
 * advisory and anyone who can read the document may approve.
 */
export function gateRefusal(subject: GateSubject, userId: string): 'own-request' | 'not-listed' | null {
  if (subject.workflow?.requiresApproval !== true) {
    return null;
  }
  const id = userId.toLowerCase();
  if ([subject.request.author, ...subject.request.contributors].some((writer) => writer.toLowerCase() === id)) {
    return 'own-request';
  }
  const listed = Array.isArray(subject.workflow.approvers) ? subject.workflow.approvers : [];
  if (listed.length > 0 && !listed.some((approver) => typeof approver === 'string' && approver.toLowerCase() === id)) {
    return 'not-listed';
  }
  return null;
}
