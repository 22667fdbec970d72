import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { prepared } from '../../database/prepared-statements.js';
import { TransactionHost } from '../../database/transaction-host.js';
import type { NewDomainEvent } from './domain-event.js';
import { OutboxDispatcher } from './outbox.dispatcher.js';

/** Where a statement that records events itself takes their stamped values from (SQL expressions). */
export interface StampSources {
  /** A relation the statement already has, joined into the insert (one row). */
  from: string;
  revisionVersion: string;
  committedAt: string;
}

/**
 * The outbox insert, as one statement or one data-modifying CTE of a larger statement: the events are the JSON
 * parameter `param` (OutboxService.statementEvents); `seq` follows the order they were raised in. With `stamps`,
 * each event's `commitStamps` keys are set from the statement's own values (NewDomainEvent.commitStamps).
 */
export function outboxInsertSql(param: string, stamps?: StampSources): string {
  const payload = `COALESCE(e.payload, '{}'::jsonb)`;
  const stamped = stamps
    ? `${payload} || COALESCE((SELECT jsonb_object_agg(s.key, CASE s.value
                              WHEN 'revisionVersion' THEN to_jsonb(${stamps.revisionVersion})
                              ELSE to_jsonb(to_char(${stamps.committedAt} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) END)
                         FROM jsonb_each_text(e.stamps) s), '{}'::jsonb)`
    : payload;
  return `INSERT INTO outbox (id, event_type, organization_id, workspace_id, doc_type, doc_id, triggered_by, payload)
       SELECT e.id, e.event_type, e.organization_id, e.workspace_id, e.doc_type, e.doc_id, e.triggered_by, ${stamped}
         FROM ${stamps ? `${stamps.from}, ` : ''}jsonb_to_recordset(${param}::jsonb) AS e(id uuid, event_type text, organization_id uuid,
              workspace_id uuid, doc_type text, doc_id text, triggered_by text, payload jsonb, stamps jsonb, ord integer)
        ORDER BY e.ord`;
}

const INSERT_SQL = outboxInsertSql('$1');

/** Records domain events. Must be called inside a unit of work so the event commits with its change. */
@Injectable()
export class OutboxService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly dispatcher: OutboxDispatcher,
  ) {}

  async record(...events: NewDomainEvent[]): Promise<string[]> {
    if (events.some((event) => event.commitStamps)) {
      throw new Error('events with commit stamps are recorded by the statement that knows their values');
    }
    if (events.length === 0) {
      this.assertInTransaction();
      return [];
    }
    const { json, ids } = this.statementEvents(events);
    // One statement whatever the number of events.
    await this.tx.manager.query(prepared(INSERT_SQL), [json]);
    return ids;
  }

  /**
   * Events another statement of this transaction inserts (outboxInsertSql), as its JSON parameter, with their
   * ids. They are dispatched after the commit like recorded ones.
   */
  statementEvents(events: readonly NewDomainEvent[]): { json: string; ids: string[] } {
    this.assertInTransaction();
    const rows = events.map((event, ord) => ({
      id: randomUUID(),
      event_type: event.event,
      organization_id: event.organizationId ?? null,
      workspace_id: event.workspaceId ?? null,
      doc_type: event.docType ?? null,
      doc_id: event.docId ?? null,
      triggered_by: event.triggeredBy ?? null,
      payload: event.payload,
      stamps: event.commitStamps ?? null,
      ord,
    }));
    if (rows.length > 0) {
      this.tx.afterCommit(() => this.dispatcher.kick());
    }
    return { json: JSON.stringify(rows), ids: rows.map((row) => row.id) };
  }

  private assertInTransaction(): void {
    if (!this.tx.inTransaction) {
      throw new Error('OutboxService must record inside TransactionHost.run');
    }
  }
}
