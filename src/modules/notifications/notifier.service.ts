import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../database/transaction-host.js';
import { MailDeliveryJob } from './mail-delivery.job.js';
import type { NotificationChannel } from './notification.entity.js';
import { NotificationRepository } from './notification.repository.js';

export interface OutgoingMessage {
  channel: NotificationChannel;
  /** E-mail address or phone number. */
  to: string;
  /** What the message is for, e.g. `login_code`, `invitation`, `join_request_approved`. */
  kind: string;
  subject: string;
  body: string;
  /** Structured content (codes, tokens, links) for templates and for tests. */
  data?: Record<string, unknown>;
  userId?: string | null;
}

/**
 * Sends messages to people. The message is recorded in the current transaction, so a rolled-back action
 * sends nothing. With SMTP_URL set, e-mail is queued in the same row and MailDeliveryJob delivers it after
 * commit, retrying until the SMTP server accepts it: an outage or a restart delays a message but does not
 * lose it. SMS has no gateway configured yet: it is recorded only. No network is needed to run or test
 * the service.
 */
@Injectable()
export class NotifierService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly notifications: NotificationRepository,
    private readonly delivery: MailDeliveryJob,
  ) {}

  async send(message: OutgoingMessage): Promise<string> {
    const deliver = message.channel === 'email' && this.delivery.enabled;
    const id = await this.notifications.insert({
      channel: message.channel,
      recipient: message.to,
      kind: message.kind,
      subject: message.subject,
      body: message.body,
      data: message.data ?? {},
      userId: message.userId ?? null,
      deliver,
    });
    if (deliver) {
      this.tx.afterCommit(() => this.delivery.kick());
    }
    return id;
  }
}
