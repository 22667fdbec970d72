import { TransactionHost } from '../../../database/transaction-host.js';
import { Injectable } from '@nestjs/common';
import type { DomainEvent } from '../../events/domain-event.js';
import { OnDomainEvent } from '../../events/on-domain-event.decorator.js';
import { UsersService } from '../../identity/services/users.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import { type NotificationKey, notificationOn } from '../domain/document-settings.js';
import type { DocumentRecord } from '../domain/document.records.js';
import { ParticipantsRepository } from '../repositories/participants.repository.js';
import { ComputedAccessService } from '../services/computed/computed-access.service.js';
import { DocumentAccessService } from '../services/document-access.service.js';

interface Notice {
  key: NotificationKey;
  kind: string;
  subject: (doc: string) => string;
}

const ON_MERGE: Notice = { key: 'onMerge', kind: 'document_request_merged', subject: (doc) => `A request was merged into ${doc}` };
const ON_DATA_CHANGE: Notice = { key: 'onDataChange', kind: 'document_data_changed', subject: (doc) => `Rows changed in ${doc}` };
const ON_COMMENT_ADD: Notice = { key: 'onCommentAdd', kind: 'document_comment_added', subject: (doc) => `New comment on ${doc}` };
const EMAIL_ON_CHANGE: Notice = { key: 'emailOnChange', kind: 'document_changed', subject: (doc) => `${doc} changed` };

/**
 * Sends the notifications a document's settings switch on (docs/settings.md) to its participants who may read the
 * document when the event is dispatched, by e-mail through the notifier, after the event: it runs in the outbox
 * dispatch transaction, so the messages are recorded together with the event being marked dispatched (and not at all
 * if that rolls back). Idempotent by event id.
 */
@Injectable()
export class DocumentNotificationsListener {
  constructor(
    private readonly tx: TransactionHost,
    private readonly participants: ParticipantsRepository,
    private readonly access: DocumentAccessService,
    private readonly users: UsersService,
    private readonly notifier: NotifierService,
    private readonly computedAccess: ComputedAccessService,
  ) {}

  @OnDomainEvent('request_merged')
  async requestMerged(event: DomainEvent): Promise<void> {
    await this.notify(event, ON_MERGE);
  }

  @OnDomainEvent('data_row_created')
  async rowCreated(event: DomainEvent): Promise<void> {
    await this.notify(event, ON_DATA_CHANGE);
  }

  @OnDomainEvent('data_row_updated')
  async rowUpdated(event: DomainEvent): Promise<void> {
    await this.notify(event, ON_DATA_CHANGE);
  }

  @OnDomainEvent('data_row_deleted')
  async rowDeleted(event: DomainEvent): Promise<void> {
    await this.notify(event, ON_DATA_CHANGE);
  }

  @OnDomainEvent('data_bulk_operation')
  async bulk(event: DomainEvent): Promise<void> {
    await this.notify(event, ON_DATA_CHANGE);
  }

  @OnDomainEvent('comment_created')
  async commentCreated(event: DomainEvent): Promise<void> {
    await this.notify(event, ON_COMMENT_ADD);
  }

  @OnDomainEvent('revision_created')
  async revisionCreated(event: DomainEvent): Promise<void> {
    await this.notify(event, EMAIL_ON_CHANGE);
  }

  private async notify(event: DomainEvent, notice: Notice): Promise<void> {
    if (!event.organizationId || !event.docType || !event.docId) {
      return;
    }
    const { organizationId, workspaceId, docType, docId } = event;
    // A dispatched batch often holds several events of one document (a merge raises three): read it once per batch.
    const document = await this.tx.memo(this, `${organizationId}/${workspaceId ?? ''}/${docType}/${docId}`, () =>
      this.access.findEventDocument({ organizationId, workspaceId, docType, docId }),
    );
    if (!document || !notificationOn(document.settings, notice.key) || (await this.participants.alreadyNotified(event.id))) {
      return;
    }
    const requestId = typeof event.payload.requestId === 'string' ? event.payload.requestId : null;
    const recipients = await this.readers(document, await this.participants.of(document, requestId, event.triggeredBy));
    const users = await this.users.summaries(recipients);
    const name = `${event.docType}/${event.docId}${document.title ? ` (${document.title})` : ''}`;
    for (const userId of recipients) {
      const user = users.get(userId);
      if (!user) {
        continue;
      }
      // The record holds the event's row values: without the lookups and rollups this reader may not see, as
      // realtime and webhooks deliver them (docs/formulas.md, "Access").
      const { payload } = (await this.computedAccess.maskFor(document, userId, { history: true })).event(event);
      await this.notifier.send({
        channel: 'email',
        to: user.email,
        kind: notice.kind,
        subject: notice.subject(name),
        body: `${notice.subject(name)} (${event.event} by ${event.triggeredBy ?? 'the service'} at ${event.timestamp}).`,
        data: { eventId: event.id, event: event.event, docType: event.docType, docId: event.docId, workspaceId: event.workspaceId, payload },
        userId,
      });
    }
  }

  /**
   * The participants who may read the document now (DocumentAccessService.mayView, the rule mentions and approvers
   * follow): the record sent to each holds the event's payload — row values, comment text — so nobody who lost
   * access (removed, suspended, shut out by `permissions.view`) is sent one.
   */
  private async readers(document: DocumentRecord, participants: readonly string[]): Promise<string[]> {
    const readers: string[] = [];
    for (const userId of participants) {
      if (await this.access.mayView(document, userId)) {
        readers.push(userId);
      }
    }
    return readers;
  }
}
