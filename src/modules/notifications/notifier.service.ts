import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import nodemailer, { type Transporter } from 'nodemailer';
import { APP_CONFIG, type AppConfig } from '../../config/app.config.js';
import { TransactionHost } from '../../database/transaction-host.js';
import { type NotificationChannel, NotificationEntity } from './notification.entity.js';

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
 * Sends messages to people. The message is recorded in the current transaction (so a rolled-back action
 * sends nothing); e-mail goes out by SMTP after commit when SMTP_URL is set. SMS has no gateway configured
 * yet: it is recorded only. No network is needed to run or test the service.
 */
@Injectable()
export class NotifierService implements OnModuleDestroy {
  private readonly logger = new Logger(NotifierService.name);
  private readonly transport?: Transporter;

  constructor(
    private readonly tx: TransactionHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.transport = config.smtpUrl ? nodemailer.createTransport(config.smtpUrl) : undefined;
  }

  async send(message: OutgoingMessage): Promise<string> {
    const record = this.tx.manager.create(NotificationEntity, {
      channel: message.channel,
      recipient: message.to,
      kind: message.kind,
      subject: message.subject,
      body: message.body,
      data: message.data ?? {},
      userId: message.userId ?? null,
    });
    await this.tx.manager.save(record);
    if (message.channel === 'email' && this.transport) {
      this.tx.afterCommit(() => void this.deliver(record));
    }
    return record.id;
  }

  onModuleDestroy(): void {
    this.transport?.close();
  }

  private async deliver(record: NotificationEntity): Promise<void> {
    try {
      await this.transport?.sendMail({ from: this.config.mailFrom, to: record.recipient, subject: record.subject, text: record.body });
      await this.tx.manager.update(NotificationEntity, { id: record.id }, { sentAt: new Date() });
    } catch (error) {
      this.logger.warn({ err: error, notificationId: record.id }, 'e-mail delivery failed');
      await this.tx.manager.update(NotificationEntity, { id: record.id }, { lastError: String(error).slice(0, 2000) });
    }
  }
}
