import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A domain event, written in the same transaction as the change that raised it. `seq` orders events for
 * readers that tail the log (the SSE stream); `dispatchedAt` is set once in-process subscribers have run.
 */
@Entity({ name: 'outbox' })
@Index('outbox_pending_idx', ['seq'], { where: 'dispatched_at IS NULL' })
@Index('outbox_doc_idx', ['docType', 'docId', 'seq'])
@Index('outbox_org_idx', ['organizationId', 'seq'])
// The realtime stream's catch-up and history (migration 1732240700000-realtime).
@Index('outbox_realtime_doc_idx', ['organizationId', 'workspaceId', 'docType', 'docId', 'seq'])
export class OutboxEventEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ type: 'bigint', generated: 'increment', unique: true })
  seq: string;

  @Column('text')
  eventType: string;

  @Column('uuid', { nullable: true })
  organizationId: string | null;

  @Column('uuid', { nullable: true })
  workspaceId: string | null;

  @Column('text', { nullable: true })
  docType: string | null;

  @Column('text', { nullable: true })
  docId: string | null;

  @Column('text', { nullable: true })
  triggeredBy: string | null;

  @Column('jsonb', { default: {} })
  payload: Record<string, unknown>;

  @CreateDateColumn({ type: 'timestamptz' })
  occurredAt: Date;

  @Column('timestamptz', { nullable: true })
  dispatchedAt: Date | null;

  @Column('int', { default: 0 })
  attempts: number;

  @Column('timestamptz', { nullable: true })
  nextAttemptAt: Date | null;

  @Column('text', { nullable: true })
  lastError: string | null;
}
