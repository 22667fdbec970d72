import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentRecord } from '../../documents/domain/document.records.js';
import { type DocumentContext, DocumentAccessService } from '../../documents/services/document-access.service.js';
import { DocumentFacts } from '../../documents/services/document-facts.service.js';
import { DocumentSettingsPolicy } from '../../documents/services/document-settings.policy.js';
import { UsersService } from '../../identity/services/users.service.js';
import type { CommentRecord, CommentTarget, UserSummary } from '../domain/comment.records.js';
import { canonicalEmoji } from '../domain/emoji.js';
import type { CommentDeleteResponseDto, CommentResponseDto, CreateCommentDto, ListCommentsQueryDto, UpdateCommentDto } from '../dtos/comment.dto.js';
import { CommentRepository } from '../repositories/comment.repository.js';
import { CommentEventsService } from './comment-events.service.js';
import { commentableFieldIds, toCommentDto } from '../mappers/comment.mapper.js';
import { sameUuid } from '../../../common/uuids.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const DEFAULT_BUNDLE_COMMENTS = 20;

function commentNotFound(): AppException {
  return AppException.notFound('comment');
}

/**
 * Comments on a document (spec 2.8, docs/comments.md): threads of a top-level comment and its replies, targets
 * checked against the document, mentions of readers with an e-mail each, reactions, pin and resolve state. Every
 * change and its event commit together.
 */
@Injectable()
export class CommentsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly comments: CommentRepository,
    private readonly access: DocumentAccessService,
    private readonly events: CommentEventsService,
    private readonly policy: DocumentSettingsPolicy,
    private readonly facts: DocumentFacts,
    private readonly userDirectory: UsersService,
  ) {}

  /** Threads, newest first, each with its replies oldest first; the filters select threads. */
  async list(ctx: DocumentContext, query: ListCommentsQueryDto): Promise<Page<CommentResponseDto>> {
    const { items, total } = await this.comments.listThreads(
      ctx.document.uuid,
      { scope: query.scope, fieldId: query.fieldId, rowId: query.rowId, resolved: query.resolved },
      { limit: query.pageSize, offset: (query.page - 1) * query.pageSize },
    );
    return pageOf(await this.withThreads(ctx, items), total, query);
  }

  /** The bundle's `comments` section: the newest `limit` threads with their replies. */
  async listForBundle(ctx: DocumentContext, limit = DEFAULT_BUNDLE_COMMENTS): Promise<CommentResponseDto[]> {
    if (limit <= 0) {
      return [];
    }
    const { items } = await this.comments.listThreads(ctx.document.uuid, {}, { limit, offset: 0 });
    return this.withThreads(ctx, items);
  }

  async get(ctx: DocumentContext, commentId: string): Promise<CommentResponseDto> {
    return this.render(ctx, await this.find(ctx, commentId));
  }

  async create(ctx: DocumentContext, dto: CreateCommentDto): Promise<CommentResponseDto> {
    // `permissions.allowComment: false` refuses new comments and replies (docs/settings.md).
    this.policy.assertCanComment(ctx);
    const userId = ctx.principal.userId;
    const id = await this.tx.run(async () => {
      let rootId: string | null = null;
      let target: CommentTarget;
      // `parentId: null` is a top-level comment, as leaving it out is.
      if (dto.parentId !== undefined && dto.parentId !== null) {
        // Locked (thread first) so a concurrent delete of the thread or of the parent cannot leave the reply
        // without its parent, nor miss it when counting what it deletes.
        const parent = await this.lockedInThread(ctx.document.uuid, dto.parentId);
        if (!parent) {
          throw AppException.validation([{ field: 'parentId', reason: 'the parent comment is not a comment of this document' }]);
        }
        rootId = parent.rootId ?? parent.id;
        target = { scope: parent.scope, fieldId: parent.fieldId ?? undefined, rowId: parent.rowId ?? undefined };
        if (dto.target && JSON.stringify(normalTarget(dto.target)) !== JSON.stringify(normalTarget(target))) {
          throw AppException.validation([{ field: 'target', reason: 'a reply takes the target of its thread' }]);
        }
      } else {
        if (!dto.target) {
          throw AppException.validation([{ field: 'target', reason: 'target is required for a top-level comment' }]);
        }
        target = await this.checkTarget(ctx, dto.target);
      }
      const mentioned = await this.readers(ctx.document, dto.mentions ?? []);
      const commentId = await this.comments.insert({
        organizationId: ctx.document.organizationId,
        workspaceId: ctx.document.workspaceId,
        documentUuid: ctx.document.uuid,
        rootId,
        parentId: dto.parentId ?? null,
        scope: target.scope,
        fieldId: target.fieldId ?? null,
        rowId: target.rowId ?? null,
        content: dto.content,
        mentions: mentioned.map((user) => user.id),
        createdBy: userId,
      });
      const record = (await this.comments.find(ctx.document.uuid, commentId)) as CommentRecord;
      await this.events.record(ctx.document, 'comment_created', record, mentioned, userId);
      await this.events.mentioned(ctx.document, record, mentioned, userId, await this.nameOf(userId));
      return commentId;
    });
    return this.get(ctx, id);
  }

  /** Only the author edits the content; people newly mentioned are notified. */
  async update(ctx: DocumentContext, commentId: string, dto: UpdateCommentDto): Promise<CommentResponseDto> {
    const userId = ctx.principal.userId;
    if (dto.id !== undefined && !sameUuid(dto.id, commentId)) {
      throw AppException.validation([{ field: 'id', reason: `the body names comment ${dto.id}, the path ${commentId}` }]);
    }
    await this.tx.run(async () => {
      const record = await this.find(ctx, commentId, true);
      if (record.createdBy !== userId) {
        throw AppException.forbidden('only the author edits a comment');
      }
      // Mentions not given: kept as they are (not re-checked, so a mentioned person who lost access does not block
      // edits); null clears them, as on create. Given, only the people newly named are checked: the comment as read
      // names the same people and must be accepted back.
      const mentioned = dto.mentions === undefined ? await this.users(record.mentions) : await this.editedMentions(ctx.document, record.mentions, dto.mentions ?? []);
      const ids = mentioned.map((user) => user.id);
      await this.comments.updateContent(record.id, dto.content, ids, userId);
      const updated = { ...record, content: dto.content, mentions: ids };
      await this.events.record(ctx.document, 'comment_updated', updated, mentioned, userId, { change: 'content' });
      const added = mentioned.filter((user) => !record.mentions.includes(user.id));
      await this.events.mentioned(ctx.document, updated, added, userId, await this.nameOf(userId));
    });
    return this.get(ctx, commentId);
  }

  /**
   * The author, the workspace's managers (its owners) and organization owners/admins delete. A top-level comment
   * goes with its whole thread (every reply counted in `repliesDeleted`, each with its own `comment_deleted`); a
   * reply goes alone: the answers to it, whoever wrote them, stay in the thread and now answer the deleted reply's
   * parent (`comment_updated` with `change: "reparented"` each). Nothing is removed that is not counted and recorded.
   */
  async remove(ctx: DocumentContext, commentId: string): Promise<CommentDeleteResponseDto> {
    const userId = ctx.principal.userId;
    return this.tx.run(async () => {
      const record = UUID.test(commentId) ? await this.lockedInThread(ctx.document.uuid, commentId) : null;
      if (!record) {
        throw commentNotFound();
      }
      if (record.createdBy !== userId && !ctx.access.canManage && !ctx.access.isOrganizationAdmin) {
        throw AppException.forbidden('only the author, a workspace owner or an organization owner/admin deletes a comment');
      }
      let replies: CommentRecord[] = [];
      let reparented: CommentRecord[] = [];
      if (record.rootId === null) {
        // The thread is locked, and every reply is created under that lock: this is the whole thread.
        replies = await this.comments.replies(ctx.document.uuid, [record.id]);
      } else {
        reparented = await this.comments.reparentChildren(ctx.document.uuid, record.id, record.parentId ?? record.rootId);
      }
      await this.comments.delete(
        ctx.document.uuid,
        record.id,
        replies.map((reply) => reply.id),
      );
      const mentioned = new Map((await this.users([record, ...replies, ...reparented].flatMap((comment) => comment.mentions))).map((user) => [user.id, user]));
      const mentionsOf = (comment: CommentRecord) => comment.mentions.flatMap((id) => mentioned.get(id) ?? []);
      // Answers first: after each event a receiver's copy of the thread is whole.
      await this.events.recordMany(
        ctx.document,
        'comment_updated',
        reparented.map((answer) => ({ comment: answer, mentions: mentionsOf(answer), extra: { change: 'reparented', previousParentId: record.id } })),
        userId,
      );
      // Each reply that went with its thread is a deleted comment too: a receiver following comments sees every one.
      await this.events.recordMany(
        ctx.document,
        'comment_deleted',
        [
          { comment: record, mentions: mentionsOf(record), extra: { deletedBy: userId } },
          ...replies.map((reply) => ({ comment: reply, mentions: mentionsOf(reply), extra: { deletedBy: userId, deletedWithThread: record.id } })),
        ],
        userId,
      );
      return { id: record.id, deleted: true, repliesDeleted: replies.length };
    });
  }

  async setPinned(ctx: DocumentContext, commentId: string, pinned: boolean): Promise<CommentResponseDto> {
    await this.tx.run(async () => {
      const record = await this.find(ctx, commentId, true);
      if ((record.pinnedAt !== null) === pinned) {
        return;
      }
      await this.comments.setPinned(record.id, pinned ? ctx.principal.userId : null);
      await this.events.record(ctx.document, 'comment_updated', record, await this.users(record.mentions), ctx.principal.userId, {
        change: pinned ? 'pinned' : 'unpinned',
      });
    });
    return this.get(ctx, commentId);
  }

  async setResolved(ctx: DocumentContext, commentId: string, resolved: boolean): Promise<CommentResponseDto> {
    await this.tx.run(async () => {
      const record = await this.find(ctx, commentId, true);
      if ((record.resolvedAt !== null) === resolved) {
        return;
      }
      const userId = ctx.principal.userId;
      const stored = await this.comments.setResolved(record.id, resolved ? userId : null);
      const mentions = await this.users(record.mentions);
      if (resolved) {
        // The stored who and when (the database's clock), as GET answers them.
        await this.events.record(ctx.document, 'comment_resolved', record, mentions, userId, {
          resolvedBy: stored.resolvedBy,
          resolvedAt: stored.resolvedAt?.toISOString() ?? null,
        });
      } else {
        await this.events.record(ctx.document, 'comment_updated', record, mentions, userId, { change: 'unresolved' });
      }
    });
    return this.get(ctx, commentId);
  }

  /** One reaction per person per emoji: adding it again changes nothing. The emoji comes in the query or the body. */
  async addReaction(ctx: DocumentContext, commentId: string, emoji: { query?: string; body?: string }): Promise<CommentResponseDto> {
    const canonical = reactionEmoji(emoji);
    await this.tx.run(async () => {
      const record = await this.find(ctx, commentId, true);
      if (await this.comments.addReaction(record.id, canonical, ctx.principal.userId)) {
        await this.events.record(ctx.document, 'comment_updated', record, await this.users(record.mentions), ctx.principal.userId, {
          change: 'reaction_added',
          emoji: canonical,
        });
      }
    });
    return this.get(ctx, commentId);
  }

  /** Removes the caller's reaction; removing one that is not there changes nothing. */
  async removeReaction(ctx: DocumentContext, commentId: string, emoji: string): Promise<CommentResponseDto> {
    const canonical = parseEmoji(emoji);
    await this.tx.run(async () => {
      const record = await this.find(ctx, commentId, true);
      if (await this.comments.removeReaction(record.id, canonical, ctx.principal.userId)) {
        await this.events.record(ctx.document, 'comment_updated', record, await this.users(record.mentions), ctx.principal.userId, {
          change: 'reaction_removed',
          emoji: canonical,
        });
      }
    });
    return this.get(ctx, commentId);
  }

  private async find(ctx: DocumentContext, commentId: string, lock = false): Promise<CommentRecord> {
    const record = UUID.test(commentId) ? await this.comments.find(ctx.document.uuid, commentId, lock) : null;
    if (!record) {
      throw commentNotFound();
    }
    return record;
  }

  /**
   * A comment locked for a change of its thread, the thread's top-level comment locked first: creating a reply and
   * deleting a comment take the locks in this order, so they serialize per thread without deadlocks. Null when the
   * comment is not (or no longer) one of this document.
   */
  private async lockedInThread(documentUuid: string, commentId: string): Promise<CommentRecord | null> {
    const seen = await this.comments.find(documentUuid, commentId);
    if (!seen) {
      return null;
    }
    if (seen.rootId !== null && !(await this.comments.find(documentUuid, seen.rootId, true))) {
      return null;
    }
    return this.comments.find(documentUuid, commentId, true);
  }

  private async render(ctx: DocumentContext, record: CommentRecord): Promise<CommentResponseDto> {
    if (record.rootId !== null) {
      const existingRows = await this.facts.existingRowIds(ctx.document, record.rowId === null ? [] : [record.rowId]);
      return toCommentDto(record, ctx.document, await this.comments.reactions([record.id]), existingRows);
    }
    return (await this.withThreads(ctx, [record]))[0] as CommentResponseDto;
  }

  private async withThreads(ctx: DocumentContext, threads: readonly CommentRecord[]): Promise<CommentResponseDto[]> {
    const replies = await this.comments.replies(
      ctx.document.uuid,
      threads.map((thread) => thread.id),
    );
    const all = [...threads, ...replies];
    const reactions = await this.comments.reactions(all.map((item) => item.id));
    const targetRows = all.flatMap((item) => (item.rowId === null ? [] : [item.rowId]));
    const existingRows = await this.facts.existingRowIds(ctx.document, targetRows);
    return threads.map((thread) =>
      toCommentDto(
        thread,
        ctx.document,
        reactions,
        existingRows,
        replies.filter((reply) => reply.rootId === thread.id),
      ),
    );
  }

  /** The target's ids must fit its scope and exist in this document (a row of another document is unknown here). */
  private async checkTarget(ctx: DocumentContext, target: CommentTarget): Promise<CommentTarget> {
    const needsField = target.scope === 'field' || target.scope === 'cell';
    const needsRow = target.scope === 'row' || target.scope === 'cell';
    const details = [];
    if (needsField && !target.fieldId) {
      details.push({ field: 'target.fieldId', reason: `fieldId is required for scope ${target.scope}` });
    } else if (!needsField && (target.fieldId ?? null) !== null) {
      details.push({ field: 'target.fieldId', reason: `fieldId is not allowed for scope ${target.scope}` });
    } else if (needsField && !commentableFieldIds(ctx.document, target.scope).has(target.fieldId as string)) {
      details.push({ field: 'target.fieldId', reason: `unknown ${target.scope === 'cell' ? 'row field' : 'field or property'} ${target.fieldId}` });
    }
    if (needsRow && !target.rowId) {
      details.push({ field: 'target.rowId', reason: `rowId is required for scope ${target.scope}` });
    } else if (!needsRow && (target.rowId ?? null) !== null) {
      details.push({ field: 'target.rowId', reason: `rowId is not allowed for scope ${target.scope}` });
    } else if (needsRow && !(await this.facts.existingRowIds(ctx.document, [target.rowId as string])).has(target.rowId as string)) {
      details.push({ field: 'target.rowId', reason: `unknown row ${target.rowId} in this document` });
    }
    if (details.length > 0) {
      throw AppException.validation(details);
    }
    return normalTarget(target);
  }

  /** Mentioned ids, deduplicated, each a user who can read the document; anyone else is VALIDATION_ERROR. */
  private async readers(document: DocumentRecord, ids: readonly string[]): Promise<UserSummary[]> {
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    const users = await this.users(unique);
    const byId = new Map(users.map((user) => [user.id, user]));
    const result: UserSummary[] = [];
    const refused: string[] = [];
    for (const id of unique) {
      const user = byId.get(id);
      if (user && (await this.access.mayView(document, id))) {
        result.push(user);
      } else {
        refused.push(id);
      }
    }
    if (refused.length > 0) {
      throw AppException.validation(refused.map((id) => ({ field: 'mentions', reason: `user ${id} cannot read this document` })));
    }
    return result;
  }


  /**
   * The mentions of an edit, in the order given: people the comment already mentions are kept unchecked (one who lost
   * access since is not notified again and does not block the edit); anyone newly named must be a reader.
   */
  private async editedMentions(document: DocumentRecord, current: readonly string[], ids: readonly string[]): Promise<UserSummary[]> {
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    const added = new Map((await this.readers(document, unique.filter((id) => !current.includes(id)))).map((user) => [user.id, user]));
    const kept = new Map((await this.users(unique.filter((id) => current.includes(id)))).map((user) => [user.id, user]));
    return unique.flatMap((id) => added.get(id) ?? kept.get(id) ?? []);
  }

  /**
   * Display name and e-mail of users (for mentions), in the order of `ids` — a comment's stored mention order, which
   * its REST `mentions` shows; unknown ids, and ids that are no user id at all, are left out.
   */
  private async users(ids: readonly string[]): Promise<UserSummary[]> {
    const summaries = await this.userDirectory.summaries(ids.filter((id) => UUID.test(id)));
    return [...new Set(ids)].flatMap((id) => {
      const user = summaries.get(id);
      return user ? [{ id: user.id, displayName: user.displayName, email: user.email }] : [];
    });
  }

  private async nameOf(userId: string): Promise<string> {
    return (await this.users([userId]))[0]?.displayName ?? 'Someone';
  }
}

/** The target with only the ids its scope uses; a `null` id counts as absent. */
function normalTarget(target: CommentTarget): CommentTarget {
  return {
    scope: target.scope,
    ...((target.fieldId ?? null) !== null ? { fieldId: target.fieldId } : {}),
    ...((target.rowId ?? null) !== null ? { rowId: target.rowId } : {}),
  };
}

/**
 * The emoji of `POST /reactions`, from the query or the body (spec 4.4). Both given must name the same reaction
 * (`thumbsup` and `:thumbsup:` do): with two different ones neither silently wins (VALIDATION_ERROR), as for the
 * other values a call may give twice (the document context, a properties `version`).
 */
function reactionEmoji(given: { query?: string; body?: string }): string {
  const fromQuery = given.query === undefined ? undefined : parseEmoji(given.query);
  const fromBody = given.body === undefined ? undefined : parseEmoji(given.body);
  if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
    throw AppException.validation([{ field: 'emoji', reason: 'the emoji query parameter and the body name different emoji; give one' }]);
  }
  return fromQuery ?? fromBody ?? parseEmoji(undefined);
}

function parseEmoji(input: string | undefined): string {
  const canonical = canonicalEmoji(input);
  if (canonical === null) {
    throw AppException.validation([{ field: 'emoji', reason: 'emoji must be one emoji (e.g. 👍) or a short name such as :thumbsup: or thumbsup' }]);
  }
  return canonical;
}
