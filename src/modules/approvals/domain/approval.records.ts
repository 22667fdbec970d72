/** Approval instance states (docs/approvals.md): `pending` → `approved` | `rejected` | `changes_requested` | `canceled`. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'changes_requested', 'canceled'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** Node states: one node per approver. */
export const NODE_STATUSES = ['pending', 'approved', 'rejected', 'changes_requested'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

export const APPROVAL_STRATEGIES = ['sequential', 'parallel'] as const;
export type ApprovalStrategy = (typeof APPROVAL_STRATEGIES)[number];

/** A decision: the `result` query form knows the first two, the `decision` body form all three. */
export const APPROVAL_DECISIONS = ['approved', 'rejected', 'request_changes'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

export interface ApprovalNodeRecord {
  id: string;
  ordinal: number;
  approver: string;
  status: NodeStatus;
  decidedAt: Date | null;
  comment: string | null;
  signature: string | null;
}

export interface ApprovalInstanceRecord {
  id: string;
  organizationId: string;
  workspaceId: string | null;
  documentUuid: string;
  requestId: string;
  flowId: string;
  strategy: ApprovalStrategy;
  status: ApprovalStatus;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  resetCount: number;
  nodes: ApprovalNodeRecord[];
}
