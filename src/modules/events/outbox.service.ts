import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../database/transaction-host.js';
import type { NewDomainEvent } from './domain-event.js';
import { OutboxDispatcher } from './outbox.dispatcher.js';
import { OutboxEventEntity } from './outbox-event.entity.js';

/** Events per INSERT statement. */
const OUTBOX_INSERT_CHUNK = 1000;

/** Records domain events. Must be called inside a unit of work so the event commits with its change. */
@Injectable()
export class OutboxService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly dispatcher: OutboxDispatcher,
  ) {}

  async record(...events: NewDomainEvent[]): Promise<string[]> {
    if (!this.tx.inTransaction) {
      throw new Error('OutboxService.record must run inside TransactionHost.run');
    }
    if (events.length === 0) {
      return [];
    }
    const rows = events.map((event) => ({
      id: randomUUID(),
      eventType: event.event,
      organizationId: event.organizationId ?? null,
      workspaceId: event.workspaceId ?? null,
      docType: event.docType ?? null,
      docId: event.docId ?? null,
      triggeredBy: event.triggeredBy ?? null,
      payload: event.payload as OutboxEventEntity['payload'],
    }));
    // TypeORM's deep-partial type cannot express arbitrary JSON; the rows match the entity.

    // Chunked: one INSERT binds 8 parameters per event, and PostgreSQL takes at most 65,535 per statement.
    for (let start = 0; start < rows.length; start += OUTBOX_INSERT_CHUNK) {
      await this.tx.manager.insert(OutboxEventEntity, rows.slice(start, start + OUTBOX_INSERT_CHUNK) as never);
    }
    this.tx.afterCommit(() => this.dispatcher.kick());
    return rows.map((row) => row.id);
  }
}
