import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const NOTIFICATION_CHANNELS = ['email', 'sms'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

/**
 * Every message the service sends (codes, invitation links, review outcomes). Always recorded here; also
 * sent by SMTP when SMTP_URL is configured. Tests read codes and links from this table.
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
  @Column('text', { nullable: true }) lastError: string | null;
}
