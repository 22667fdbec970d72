import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { prepared } from '../../database/prepared-statements.js';
import { TransactionHost } from '../../database/transaction-host.js';
import type { NewDomainEvent } from './domain-event.js';
import { OutboxDispatcher } from './outbox.dispatcher.js';

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
    const rows = events.map((event, ord) => ({
      id: randomUUID(),
      event_type: event.event,
      organization_id: event.organizationId ?? null,
      workspace_id: event.workspaceId ?? null,
      doc_type: event.docType ?? null,
      doc_id: event.docId ?? null,
      triggered_by: event.triggeredBy ?? null,
      payload: event.payload,
      ord,
    }));
    // One statement whatever the number of events; `seq` follows the order they were raised in.
    await this.tx.manager.query(
      prepared(`INSERT INTO outbox (id, event_type, organization_id, workspace_id, doc_type, doc_id, triggered_by, payload)
       SELECT e.id, e.event_type, e.organization_id, e.workspace_id, e.doc_type, e.doc_id, e.triggered_by, COALESCE(e.payload, '{}'::jsonb)
         FROM jsonb_to_recordset($1::jsonb) AS e(id uuid, event_type text, organization_id uuid, workspace_id uuid, doc_type text,
                                                 doc_id text, triggered_by text, payload jsonb, ord integer)
        ORDER BY e.ord`),
      [JSON.stringify(rows)],
    );
    this.tx.afterCommit(() => this.dispatcher.kick());
    return rows.map((row) => row.id);
  }
}
