import { Injectable } from '@nestjs/common';
import type { DocumentRecord } from '../../documents/domain/document.records.js';
import { OutboxService } from '../../events/outbox.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import { type CommentRecord, targetOf, type UserSummary } from '../domain/comment.records.js';
import { documentEvent } from '../../events/domain-event.js';

export type CommentEventType = 'comment_created' | 'comment_updated' | 'comment_deleted' | 'comment_resolved' | 'comment_mentioned';

const EXCERPT_LENGTH = 280;

/**
 * The comment events of spec 6.2 and the mention e-mails, recorded inside the transaction of the change (outbox and
 * notifier both write to the database; nothing leaves before commit). Payload: `commentId, target, content,
 * mentions [{id, displayName}], createdBy, createdAt` plus `parentId` and, where it applies, `change`
 * (pin/unpin/unresolve/reaction changes ride on comment_updated), `resolvedBy`/`resolvedAt`, `deletedBy`.
 */
@Injectable()
export class CommentEventsService {
  constructor(
    private readonly outbox: OutboxService,
    private readonly notifier: NotifierService,
  ) {}

  async record(
    document: DocumentRecord,
    event: CommentEventType,
    comment: CommentRecord,
    mentions: readonly UserSummary[],
    by: string,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    await this.recordMany(document, event, [{ comment, mentions, extra }], by);
  }

  /** One event per comment, recorded by one insert (a thread deleted with its replies). */
  async recordMany(
    document: DocumentRecord,
    event: CommentEventType,
    items: readonly { comment: CommentRecord; mentions: readonly UserSummary[]; extra?: Record<string, unknown> }[],
    by: string,
  ): Promise<void> {
    await this.outbox.record(
      ...items.map(({ comment, mentions, extra }) =>
        documentEvent(document, event, by, {
          commentId: comment.id,
          target: targetOf(comment),
          content: comment.content,
          mentions: mentions.map((user) => ({ id: user.id, displayName: user.displayName })),
          createdBy: comment.createdBy,
          createdAt: comment.createdAt.toISOString(),
          parentId: comment.parentId,
          ...extra,
        }),
      ),
    );
  }

  /** `comment_mentioned` naming the people newly mentioned, and one e-mail to each (not to the writer). */
  async mentioned(document: DocumentRecord, comment: CommentRecord, people: readonly UserSummary[], by: string, byName: string): Promise<void> {
    if (people.length === 0) {
      return;
    }
    await this.record(document, 'comment_mentioned', comment, people, by);
    const excerpt = comment.content.length > EXCERPT_LENGTH ? `${comment.content.slice(0, EXCERPT_LENGTH)}…` : comment.content;
    for (const person of people) {
      if (person.id === by) {
        continue;
      }
      await this.notifier.send({
        channel: 'email',
        to: person.email,
        kind: 'comment_mentioned',
        subject: `${byName} mentioned you in ${document.docType}/${document.docId}`,
        body: `${byName} mentioned you in a comment on ${document.docType}/${document.docId}:\n\n${excerpt}`,
        data: {
          commentId: comment.id,
          docType: document.docType,
          docId: document.docId,
          organizationId: document.organizationId,
          workspaceId: document.workspaceId,
          mentionedBy: by,
        },
        userId: person.id,
      });
    }
  }
}
