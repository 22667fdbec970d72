import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A domain event, written in the same transaction as the change that raised it; `dispatchedAt` is set once in-process
 * subscribers have run. `seq` numbers events when they are recorded, which is not the order they commit in: readers
 * that tail the log (the SSE stream) also use the column `tx_id` (xid8, default `pg_current_xact_id()`, migration
 * 1732242030000-outbox-commit-order), read in SQL only — TypeORM has no xid8 type — and so is its index
 * `outbox_realtime_pos_idx` (organization_id, workspace_id, doc_type, doc_id, tx_id, seq). See
 * RealtimeEventRepository.
 */
@Entity({ name: 'outbox' })
@Index('outbox_pending_idx', ['seq'], { where: 'dispatched_at IS NULL' })
@Index('outbox_doc_idx', ['docType', 'docId', 'seq'])
@Index('outbox_org_idx', ['organizationId', 'seq'])
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
