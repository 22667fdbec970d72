import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { PassLoop } from '../../common/jobs/pass-loop.js';
import { APP_CONFIG, type AppConfig } from '../../config/app.config.js';
import { TransactionHost } from '../../database/transaction-host.js';
import { type DomainEvent, domainEventName } from './domain-event.js';
import { OutboxEventEntity } from './outbox-event.entity.js';
import { prepared } from '../../database/prepared-statements.js';
import { queryRows } from '../../database/sql-result.js';

export function toDomainEvent(row: OutboxEventEntity): DomainEvent {
  return {
    id: row.id,
    seq: String(row.seq),
    event: row.eventType,
    timestamp: new Date(row.occurredAt).toISOString(),
    organizationId: row.organizationId,
    workspaceId: row.workspaceId,
    docType: row.docType,
    docId: row.docId,
    triggeredBy: row.triggeredBy,
    payload: row.payload,
  };
}

/** Events one dispatch transaction claims together. */
const BATCH_SIZE = 50;

/**
 * Claims up to $1 due events and marks them dispatched in one statement; the mark only lasts if the dispatch
 * transaction commits (a failing subscriber rolls it back). `attempts` is the count before this dispatch. The events
 * come back in `seq` order, the order subscribers see them in.
 */
const CLAIM_SQL = `WITH claimed AS (
 UPDATE outbox o SET dispatched_at = now(), attempts = o.attempts + 1
   FROM (SELECT id, attempts FROM outbox
          WHERE dispatched_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= now())
          ORDER BY seq
          LIMIT $1
            FOR UPDATE SKIP LOCKED) c
  WHERE o.id = c.id
 RETURNING o.id, o.seq, o.event_type AS "eventType", o.organization_id AS "organizationId",
           o.workspace_id AS "workspaceId", o.doc_type AS "docType", o.doc_id AS "docId",
           o.triggered_by AS "triggeredBy", o.payload, o.occurred_at AS "occurredAt", c.attempts
)
SELECT * FROM claimed ORDER BY seq`;

/**
 * Hands committed events to in-process subscribers, in batches (see drain()):
 * `SELECT … FOR UPDATE SKIP LOCKED` claims a pending event so that several instances on one database never
 * dispatch the same event twice, and the same statement marks it dispatched; subscribers run inside that
 * transaction. A subscriber failure rolls back and the event is retried with back-off, up to `maxAttempts`.
 * Runs right after a commit that recorded events (kick), at start-up and every `pollIntervalMs`
 * (recovering events left behind by a crash).
 */
@Injectable()
export class OutboxDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxDispatcher.name);
  // A full batch means more may be waiting: go again rather than wait for the next poll.
  private readonly loop = new PassLoop(
    () => this.drain(this.config.outbox.batchSize),
    (error) => this.logger.error({ err: error }, 'outbox dispatch pass failed'),
    (dispatched) => dispatched >= this.config.outbox.batchSize,
  );

  constructor(
    private readonly tx: TransactionHost,
    private readonly emitter: EventEmitter2,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.loop.start(this.config.outbox.pollIntervalMs);
  }

  /**
   * Stops before any module closes its resources (the pool closes in onApplicationShutdown). Events that
   * requests still draining record after this point stay pending and are picked up by the poll of another
   * instance or of the next start.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  /** Asks for a dispatch pass soon; passes never overlap within one instance. */
  kick(): void {
    this.loop.kick();
  }

  /**
   * Dispatches until nothing is pending (or `limit` events); returns how many were dispatched. Events go in
   * batches of up to BATCH_SIZE per transaction (one statement claims and marks them). When a subscriber fails, the
   * batch rolls back, the failing event alone is charged the attempt (and backs off), and the others go in the next
   * batch.
   */
  async drain(limit = this.config.outbox.batchSize): Promise<number> {
    let dispatched = 0;
    while (dispatched < limit && !this.loop.stopping) {
      const size = Math.min(BATCH_SIZE, limit - dispatched);
      const batch = await this.dispatchBatch(size);
      if (batch === 'failed') {
        continue;
      }
      dispatched += batch;
      if (batch < size) {
        // The claim found less than it asked for: nothing else was pending. Events committed since then kick a
        // new pass themselves (or the poll finds them), so asking again now would only find nothing.
        break;
      }
    }
    return dispatched;
  }

  private async dispatchBatch(size: number): Promise<number | 'failed'> {
    let current: OutboxEventEntity | undefined;
    try {
      return await this.tx.run(async () => {
        const rows = await queryRows<OutboxEventEntity>(this.tx, prepared(CLAIM_SQL), [size]);
        for (const row of rows) {
          current = row;
          await this.deliver(toDomainEvent(row));
        }
        current = undefined;
        return rows.length;
      });
    } catch (error) {
      if (!current) {
        throw error;
      }
      await this.recordFailure(current, error);
      return 'failed';
    }
  }

  /**
   * Runs the event's subscribers one after the other: they share the dispatch transaction's one connection,
   * which takes one statement at a time (emitAsync would start them all at once).
   */
  private async deliver(event: DomainEvent): Promise<void> {
    for (const listener of this.emitter.listeners(domainEventName(event.event))) {
      await listener.call(this.emitter, event);
    }
  }

  private async recordFailure(row: OutboxEventEntity, error: unknown): Promise<void> {
    const attempts = Number(row.attempts) + 1;
    const giveUp = attempts >= this.config.outbox.maxAttempts;
    const delaySeconds = Math.min(3600, 2 ** attempts);
    this.logger.error({ err: error, eventId: row.id, attempts, giveUp }, 'outbox subscriber failed');
    await this.tx.manager.query(
      `UPDATE outbox
          SET attempts = $2, last_error = $3,
              next_attempt_at = now() + make_interval(secs => $4),
              dispatched_at = CASE WHEN $5 THEN now() ELSE NULL END
        WHERE id = $1`,
      [
        row.id,
        attempts,
        String(error instanceof Error ? error.message : error).slice(0, 2000),
        delaySeconds,
        giveUp,
      ],
    );
  }
}
