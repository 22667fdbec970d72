import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { CommentFilters, CommentRecord, CommentScope, ReactionGroup } from '../domain/comment.records.js';

interface CommentRow extends Omit<CommentRecord, 'mentions'> {
  mentions: string[] | null;
}

const COLUMNS = `c.id, c.organization_id AS "organizationId", c.workspace_id AS "workspaceId", c.document_id AS "documentUuid",
  c.root_id AS "rootId", c.parent_id AS "parentId", c.scope, c.field_id AS "fieldId", c.row_id AS "rowId", c.content, c.mentions,
  c.pinned_at AS "pinnedAt", c.pinned_by AS "pinnedBy", c.resolved_at AS "resolvedAt", c.resolved_by AS "resolvedBy",
  c.created_at AS "createdAt", c.created_by AS "createdBy", c.updated_at AS "updatedAt", c.updated_by AS "updatedBy"`;
const FROM = `comments c`;

function toRecord(row: CommentRow): CommentRecord {
  return { ...row, mentions: row.mentions ?? [] };
}

export interface NewComment {
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
  createdBy: string;
}

/** SQL for `comments` and `comment_reactions`; every query names the document (and so its tenant). */
@Injectable()
export class CommentRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(input: NewComment): Promise<string> {
    const rows = await this.tx.manager.query<{ id: string }[]>(
      `INSERT INTO comments (organization_id, workspace_id, document_id, root_id, parent_id, scope, field_id, row_id, content, mentions, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text[], $11, $11) RETURNING id`,
      [
        input.organizationId,
        input.workspaceId,
        input.documentUuid,
        input.rootId,
        input.parentId,
        input.scope,
        input.fieldId,
        input.rowId,
        input.content,
        input.mentions,
        input.createdBy,
      ],
    );
    return (rows[0] as { id: string }).id;
  }

  async find(documentUuid: string, id: string, lock = false): Promise<CommentRecord | null> {
    const rows = await this.tx.manager.query<CommentRow[]>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE c.document_id = $1 AND c.id = $2${lock ? ' FOR UPDATE OF c' : ''}`,
      [documentUuid, id],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Top-level comments (threads), newest first, with the filters applied to them. */
  async listThreads(documentUuid: string, filters: CommentFilters, paging: { limit: number; offset: number }): Promise<{ items: CommentRecord[]; total: number }> {
    const where = ['c.document_id = $1', 'c.root_id IS NULL'];
    const params: unknown[] = [documentUuid];
    const add = (sql: (n: string) => string, value: unknown): void => {
      params.push(value);
      where.push(sql(`$${params.length}`));
    };
    if (filters.scope !== undefined) {
      add((n) => `c.scope = ${n}`, filters.scope);
    }
    if (filters.fieldId !== undefined) {
      add((n) => `c.field_id = ${n}`, filters.fieldId);
    }
    if (filters.rowId !== undefined) {
      add((n) => `c.row_id = ${n}`, filters.rowId);
    }
    if (filters.resolved !== undefined) {
      where.push(filters.resolved ? 'c.resolved_at IS NOT NULL' : 'c.resolved_at IS NULL');
    }
    const condition = where.join(' AND ');
    const [count] = await this.tx.manager.query<{ total: string }[]>(`SELECT count(*) AS total FROM comments c WHERE ${condition}`, params);
    if (paging.limit === 0) {
      return { items: [], total: Number(count?.total ?? 0) };
    }
    const rows = await this.tx.manager.query<CommentRow[]>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE ${condition} ORDER BY c.created_at DESC, c.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, paging.limit, paging.offset],
    );
    return { items: rows.map(toRecord), total: Number(count?.total ?? 0) };
  }

  /** Replies of the given threads, oldest first. */
  async replies(documentUuid: string, rootIds: readonly string[]): Promise<CommentRecord[]> {
    if (rootIds.length === 0) {
      return [];
    }
    const rows = await this.tx.manager.query<CommentRow[]>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE c.document_id = $1 AND c.root_id = ANY($2::uuid[]) ORDER BY c.created_at, c.id`,
      [documentUuid, rootIds],
    );
    return rows.map(toRecord);
  }

  /** Reactions by comment: one group per emoji (first reaction first), users in the order they reacted. */
  async reactions(commentIds: readonly string[]): Promise<Map<string, ReactionGroup[]>> {
    const result = new Map<string, ReactionGroup[]>();
    if (commentIds.length === 0) {
      return result;
    }
    const rows = await this.tx.manager.query<{ commentId: string; emoji: string; users: string[] }[]>(
      `SELECT comment_id AS "commentId", emoji, array_agg(user_id::text ORDER BY created_at, user_id) AS users
         FROM comment_reactions WHERE comment_id = ANY($1::uuid[])
        GROUP BY comment_id, emoji ORDER BY comment_id, min(created_at), emoji`,
      [commentIds],
    );
    for (const row of rows) {
      const groups = result.get(row.commentId) ?? [];
      groups.push({ emoji: row.emoji, users: row.users });
      result.set(row.commentId, groups);
    }
    return result;
  }

  async updateContent(id: string, content: string, mentions: string[], userId: string): Promise<void> {
    await this.tx.manager.query(`UPDATE comments SET content = $2, mentions = $3::text[], updated_at = now(), updated_by = $4 WHERE id = $1`, [id, content, mentions, userId]);
  }

  /** Pins (by `userId`) or unpins (`null`); pinning a pinned comment keeps who pinned it first. */
  async setPinned(id: string, userId: string | null): Promise<void> {
    await this.tx.manager.query(
      userId
        ? `UPDATE comments SET pinned_at = coalesce(pinned_at, now()), pinned_by = coalesce(pinned_by, $2::uuid) WHERE id = $1`
        : `UPDATE comments SET pinned_at = NULL, pinned_by = NULL WHERE id = $1`,
      userId ? [id, userId] : [id],
    );
  }

  /**
   * Resolves (by `userId`) or unresolves (`null`); answers who and when as stored (the database's clock, which the
   * comment's REST answer shows), so the event can carry the same values.
   */
  async setResolved(id: string, userId: string | null): Promise<{ resolvedAt: Date | null; resolvedBy: string | null }> {
    // UPDATE … RETURNING answers [rows, count] through TypeORM's pg driver.
    const [rows] = await this.tx.manager.query<[{ resolvedAt: Date | null; resolvedBy: string | null }[], number]>(
      userId
        ? `UPDATE comments SET resolved_at = coalesce(resolved_at, now()), resolved_by = coalesce(resolved_by, $2::uuid) WHERE id = $1
           RETURNING resolved_at AS "resolvedAt", resolved_by AS "resolvedBy"`
        : `UPDATE comments SET resolved_at = NULL, resolved_by = NULL WHERE id = $1 RETURNING resolved_at AS "resolvedAt", resolved_by AS "resolvedBy"`,
      userId ? [id, userId] : [id],
    );
    return rows[0] ?? { resolvedAt: null, resolvedBy: null };
  }

  /**
   * Deletes a comment and, named explicitly, the replies of its thread that the caller counted and recorded events
   * for (`replyIds`; empty for a reply). The schema's cascades are never what removes a comment.
   */
  async delete(documentUuid: string, id: string, replyIds: readonly string[] = []): Promise<void> {
    await this.tx.manager.query(`DELETE FROM comments WHERE document_id = $1 AND id = ANY($2::uuid[])`, [documentUuid, [id, ...replyIds]]);
  }

  /**
   * The direct answers to comment `fromId` now answer `toId` (a reply being deleted hands its answers to its own
   * parent); the answers as they are after the change, oldest first.
   */
  async reparentChildren(documentUuid: string, fromId: string, toId: string): Promise<CommentRecord[]> {
    const rows = await this.tx.manager.query<CommentRow[]>(
      `WITH c AS (UPDATE comments SET parent_id = $3 WHERE document_id = $1 AND parent_id = $2 RETURNING *)
       SELECT ${COLUMNS} FROM c ORDER BY c.created_at, c.id`,
      [documentUuid, fromId, toId],
    );
    return rows.map(toRecord);
  }

  /** True when the reaction was new. */
  async addReaction(commentId: string, emoji: string, userId: string): Promise<boolean> {
    const rows = await this.tx.manager.query<unknown[]>(
      `INSERT INTO comment_reactions (comment_id, emoji, user_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING comment_id`,
      [commentId, emoji, userId],
    );
    return rows.length > 0;
  }

  async removeReaction(commentId: string, emoji: string, userId: string): Promise<boolean> {
    // Wrapped in a CTE: TypeORM returns [rows, count] for a bare DELETE.
    const rows = await this.tx.manager.query<{ n: string }[]>(
      `WITH d AS (DELETE FROM comment_reactions WHERE comment_id = $1 AND emoji = $2 AND user_id = $3 RETURNING 1) SELECT count(*) AS n FROM d`,
      [commentId, emoji, userId],
    );
    return Number(rows[0]?.n ?? 0) > 0;
  }
}
