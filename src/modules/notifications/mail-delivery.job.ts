import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import nodemailer, { type Transporter } from 'nodemailer';
import { PassLoop } from '../../common/jobs/pass-loop.js';
import { APP_CONFIG, type AppConfig } from '../../config/app.config.js';
import { mailRetryDelayMs } from './mail-retry-schedule.js';
import { type ClaimedMail, NotificationRepository } from './notification.repository.js';

/**
 * How long a claimed e-mail is reserved for the instance sending it. Longer than one SMTP attempt can
 * take with SMTP_TIMEOUTS_MS below, so a message is only taken over when its sender died mid-send.
 */
export const MAIL_LEASE_MS = 10 * 60_000;

/** Messages one pass sends before it yields; a full pass schedules another at once. */
const MAIL_BATCH_SIZE = 100;

/**
 * nodemailer waits up to two minutes to connect and ten minutes on a silent socket by default; shorter
 * limits turn a hung server into a failed attempt well inside the lease. A query parameter of the same
 * name in SMTP_URL overrides them.
 */
const SMTP_TIMEOUTS_MS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

function transportUrl(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  for (const [name, value] of Object.entries(SMTP_TIMEOUTS_MS)) {
    if (!url.searchParams.has(name)) {
      url.searchParams.set(name, String(value));
    }
  }
  return url.toString();
}

/** The error as stored in `last_error`: nodemailer's message carries the SMTP reply or the socket error. */
function describe(error: unknown): string {
  return String(error instanceof Error ? error.message : error).slice(0, 2000);
}

/**
 * Sends the e-mail queued in `notifications` by SMTP (when SMTP_URL is set), one message at a time:
 * claim (a committed lease, SKIP LOCKED), send, record the outcome. A failed attempt is retried after
 * MAIL_RETRY_BASE_MS, doubling up to an hour, and given up after MAIL_MAX_ATTEMPTS. Runs right after a
 * commit that queued e-mail (kick), at start-up and every MAIL_POLL_INTERVAL_MS, so messages queued
 * before a restart or by another instance go out too.
 */
@Injectable()
export class MailDeliveryJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MailDeliveryJob.name);
  private readonly transport?: Transporter;
  // A full pass means more may be due: go again rather than wait for the next poll.
  private readonly loop = new PassLoop(
    () => this.drain(),
    (error) => this.logger.error({ err: error }, 'mail delivery pass failed'),
    (handled) => handled >= MAIL_BATCH_SIZE,
  );

  constructor(
    private readonly notifications: NotificationRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.transport = config.smtpUrl ? nodemailer.createTransport(transportUrl(config.smtpUrl)) : undefined;
  }

  /** Whether e-mail is delivered at all; without SMTP_URL it is only recorded. */
  get enabled(): boolean {
    return this.transport !== undefined;
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) {
      return;
    }
    this.loop.start(this.config.mailDelivery.pollIntervalMs);
  }

  /**
   * Stops before the pool closes and waits for the attempt in progress, so its outcome is recorded
   * rather than left to the lease (which would send the message a second time).
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
    this.transport?.close();
  }

  /** Asks for a delivery pass soon; passes never overlap within one instance. */
  kick(): void {
    if (this.enabled) {
      this.loop.kick();
    }
  }

  /** Attempts due messages until none is due (or a batch is done); returns how many were attempted. */
  private async drain(): Promise<number> {
    let handled = 0;
    while (handled < MAIL_BATCH_SIZE && !this.loop.stopping) {
      const mail = await this.notifications.claimDue(MAIL_LEASE_MS);
      if (!mail) {
        break;
      }
      await this.attempt(mail);
      handled += 1;
    }
    return handled;
  }

  private async attempt(mail: ClaimedMail): Promise<void> {
    try {
      await this.transport?.sendMail({
        from: this.config.mailFrom,
        to: mail.recipient,
        subject: mail.subject,
        text: mail.body,
      });
    } catch (error) {
      const { maxAttempts, retryBaseMs } = this.config.mailDelivery;
      const giveUp = mail.attempts >= maxAttempts;
      const retryInMs = giveUp ? null : mailRetryDelayMs(mail.attempts, retryBaseMs);
      this.logger.warn(
        { err: error, notificationId: mail.id, attempts: mail.attempts, retryInMs, giveUp },
        giveUp ? 'e-mail delivery failed; giving up' : 'e-mail delivery failed; will retry',
      );
      await this.notifications.markFailed(mail, describe(error), retryInMs);
      return;
    }
    await this.notifications.markSent(mail);
  }
}
