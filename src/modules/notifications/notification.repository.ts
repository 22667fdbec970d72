import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TransactionHost } from '../../database/transaction-host.js';
import type { NotificationChannel } from './notification.entity.js';

/** A message about to be recorded. */
export interface NewNotification {
  channel: NotificationChannel;
  recipient: string;
  kind: string;
  subject: string;
  body: string;
  data: Record<string, unknown>;
  userId: string | null;
  /** Queue it for delivery now (e-mail with SMTP configured); otherwise it is only recorded. */
  deliver: boolean;
}

/** An e-mail claimed for one sending attempt. `attempts` includes this attempt. */
export interface ClaimedMail {
  id: string;
  recipient: string;
  subject: string;
  body: string;
  attempts: number;
}

/**
 * SQL for `notifications`. Recording joins the caller's unit of work, so a rolled-back action leaves no
 * message. The delivery statements run on the pool, outside any unit of work: a claim must be committed
 * before the SMTP call starts, so that no transaction stays open across the network.
 */
@Injectable()
export class NotificationRepository {
  constructor(
    private readonly tx: TransactionHost,
    private readonly dataSource: DataSource,
  ) {}

  async insert(message: NewNotification): Promise<string> {
    const rows = await this.tx.manager.query<Array<{ id: string }>>(
      `INSERT INTO notifications (channel, recipient, kind, subject, body, data, user_id, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8::boolean THEN now() END)
       RETURNING id`,
      [
        message.channel,
        message.recipient,
        message.kind,
        message.subject,
        message.body,
        JSON.stringify(message.data),
        message.userId,
        message.deliver,
      ],
    );
    return rows[0].id;
  }

  /**
   * Claims the e-mail that has been due longest for one attempt: counts the attempt and moves
   * `next_attempt_at` past the lease, in one committed statement. SKIP LOCKED keeps instances from waiting
   * on each other's claims; the lease keeps them off the message while it is being sent, and hands it to
   * another instance if this one dies mid-send.
   */
  async claimDue(leaseMs: number): Promise<ClaimedMail | undefined> {
    // TypeORM answers an UPDATE on PostgreSQL with [returned rows, affected count].
    const [rows] = await this.dataSource.query<[ClaimedMail[], number]>(
      `UPDATE notifications n
          SET attempts = n.attempts + 1,
              next_attempt_at = now() + make_interval(secs => $1::double precision / 1000)
        WHERE n.id = (SELECT id FROM notifications
                       WHERE next_attempt_at <= now() AND channel = 'email'
                       ORDER BY next_attempt_at
                       LIMIT 1
                       FOR UPDATE SKIP LOCKED)
        RETURNING n.id, n.recipient, n.subject, n.body, n.attempts`,
      [leaseMs],
    );
    return rows[0];
  }

  /** Records the delivery; `last_error` stays, so the record shows what the earlier attempts met. */
  async markSent(mail: ClaimedMail): Promise<void> {
    // The attempt number guards against a claim whose lease ran out and was taken over meanwhile.
    await this.dataSource.query(
      `UPDATE notifications SET sent_at = now(), next_attempt_at = NULL WHERE id = $1 AND attempts = $2`,
      [mail.id, mail.attempts],
    );
  }

  /** Records a failed attempt: due again after `retryInMs`, or given up when that is null. */
  async markFailed(mail: ClaimedMail, error: string, retryInMs: number | null): Promise<void> {
    await this.dataSource.query(
      `UPDATE notifications
          SET last_error = $3,
              next_attempt_at = CASE WHEN $4::double precision IS NULL THEN NULL
                                     ELSE now() + make_interval(secs => $4::double precision / 1000) END,
              failed_at = CASE WHEN $4::double precision IS NULL THEN now() END
        WHERE id = $1 AND attempts = $2`,
      [mail.id, mail.attempts, error, retryInMs],
    );
  }
}
