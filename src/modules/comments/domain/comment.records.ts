export const COMMENT_SCOPES = ['document', 'field', 'row', 'cell'] as const;
export type CommentScope = (typeof COMMENT_SCOPES)[number];

/** Spec 2.8 CommentTarget: `fieldId` for field and cell, `rowId` for row and cell. */
export interface CommentTarget {
  scope: CommentScope;
  fieldId?: string;
  rowId?: string;
}

/** One `comments` row, with whether its target row still exists (computed at read time). */
export interface CommentRecord {
  id: string;
  organizationId: string;
  workspaceId: string | null;
  documentUuid: string;
  rootId: string | null;
  parentId: string | null;
  scope: CommentScope;
  fieldId: string | null;
  rowId: string | null;
  content: string;
  mentions: string[];
  pinnedAt: Date | null;
  pinnedBy: string | null;
  resolvedAt: Date | null;
  resolvedBy: string | null;
  createdAt: Date;
  createdBy: string;
  updatedAt: Date;
  updatedBy: string;
}

export interface ReactionGroup {
  emoji: string;
  users: string[];
}

export interface CommentFilters {
  scope?: CommentScope;
  fieldId?: string;
  rowId?: string;
  resolved?: boolean;
}

export interface UserSummary {
  id: string;
  displayName: string;
  email: string;
}

export function targetOf(record: Pick<CommentRecord, 'scope' | 'fieldId' | 'rowId'>): CommentTarget {
  return {
    scope: record.scope,
    ...(record.fieldId !== null ? { fieldId: record.fieldId } : {}),
    ...(record.rowId !== null ? { rowId: record.rowId } : {}),
  };
}
