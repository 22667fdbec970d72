import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const NOTIFICATION_CHANNELS = ['email', 'sms'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

/**
 * Every message the service sends (codes, invitation links, review outcomes). Always recorded here; when
 * SMTP_URL is configured e-mail is also queued here and delivered by MailDeliveryJob with retries.
 * Tests read codes and links from this table.
 */
@Entity({ name: 'notifications' })
export class NotificationEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') channel: NotificationChannel;
  @Column('text') recipient: string;
  @Column('text') kind: string;
  @Column('text') subject: string;
  @Column('text') body: string;
  @Column('jsonb', { default: {} }) data: Record<string, unknown>;
  @Column('uuid', { nullable: true }) userId: string | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @Column('timestamptz', { nullable: true }) sentAt: Date | null;
  /** The error of the latest failed attempt; kept after a later attempt succeeds. */
  @Column('text', { nullable: true }) lastError: string | null;
  /** Sending attempts started so far. */
  @Column('int', { default: 0 }) attempts: number;
  /** When the message is due (or its current attempt's lease ends); NULL when nothing is left to send. */
  @Column('timestamptz', { nullable: true }) nextAttemptAt: Date | null;
  /** Set when delivery was given up after MAIL_MAX_ATTEMPTS attempts. */
  @Column('timestamptz', { nullable: true }) failedAt: Date | null;
}
