import type { DocumentRecord } from '../../documents/domain/document.records.js';
import { type CommentRecord, type ReactionGroup, targetOf } from '../domain/comment.records.js';
import type { CommentResponseDto } from '../dtos/comment.dto.js';

/**
 * The ids a comment target's `fieldId` may name: a `field` comment is about a row field or a document property (both
 * are fields of the metadata, spec 2.5); a `cell` is a row's value, so only row fields.
 */
export function commentableFieldIds(document: DocumentRecord, scope: CommentRecord['scope']): Set<string> {
  const fields = document.metadata.fields.map((field) => field.id);
  return new Set(scope === 'field' ? [...fields, ...document.metadata.properties.map((property) => property.id)] : fields);
}

/**
 * A comment as the API shows it. `targetDeleted`: the target row is gone (not in `existingRows`, the document's
 * rows among those the comments target), or the target field is no longer in the document's metadata — both
 * computed at read time, so restoring the row (or field) restores the link.
 */
export function toCommentDto(
  record: CommentRecord,
  document: DocumentRecord,
  reactions: ReadonlyMap<string, ReactionGroup[]>,
  existingRows: ReadonlySet<string>,
  replies?: readonly CommentRecord[],
): CommentResponseDto {
  const rowGone = record.rowId !== null && !existingRows.has(record.rowId);
  const fieldGone = record.fieldId !== null && !commentableFieldIds(document, record.scope).has(record.fieldId);
  const dto: CommentResponseDto = {
    id: record.id,
    docType: document.docType,
    docId: document.docId,
    target: targetOf(record),
    targetDeleted: rowGone || fieldGone,
    parentId: record.parentId,
    content: record.content,
    mentions: record.mentions,
    reactions: (reactions.get(record.id) ?? []).map((group) => ({ emoji: group.emoji, users: group.users, count: group.users.length })),
    pinned: record.pinnedAt !== null,
    pinnedAt: record.pinnedAt?.toISOString() ?? null,
    pinnedBy: record.pinnedBy,
    resolved: record.resolvedAt !== null,
    resolvedAt: record.resolvedAt?.toISOString() ?? null,
    resolvedBy: record.resolvedBy,
    createdAt: record.createdAt.toISOString(),
    createdBy: record.createdBy,
    updatedAt: record.updatedAt.toISOString(),
    updatedBy: record.updatedBy,
  };
  if (replies) {
    dto.replies = replies.map((reply) => toCommentDto(reply, document, reactions, existingRows));
  }
  return dto;
}
