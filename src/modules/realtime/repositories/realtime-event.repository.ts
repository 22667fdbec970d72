import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { StreamEvent } from '../domain/realtime.types.js';

interface DocCoordinates {
  organizationId: string | null;
  workspaceId: string | null;
  docType: string;
  docId: string;
}

interface EventRow {
  id: string;
  seq: string;
  event_type: string;
  organization_id: string | null;
  workspace_id: string | null;
  doc_type: string | null;
  doc_id: string | null;
  triggered_by: string | null;
  payload: Record<string, unknown>;
  occurred_at: Date;
}

function toStreamEvent(row: EventRow): StreamEvent {
  return {
    id: String(row.seq),
    eventId: row.id,
    event: row.event_type,
    timestamp: new Date(row.occurred_at).toISOString(),
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    docType: row.doc_type,
    docId: row.doc_id,
    triggeredBy: row.triggered_by,
    payload: row.payload,
  };
}

const COLUMNS =
  'id, seq, event_type, organization_id, workspace_id, doc_type, doc_id, triggered_by, payload, occurred_at';

/**
 * Reads a document's events from the outbox. A document is its tenant plus (doc_type, doc_id): the same pair
 * exists in other tenants, so every query names organization_id and workspace_id (IS NULL for
 * organization-level documents; written as two forms so outbox_realtime_doc_idx serves both).
 */
@Injectable()
export class RealtimeEventRepository {
  constructor(private readonly tx: TransactionHost) {}

  private where(doc: DocCoordinates, first: number): { sql: string; params: unknown[] } {
    const workspace = doc.workspaceId === null ? 'workspace_id IS NULL' : `workspace_id = $${first + 3}`;
    const params: unknown[] = [doc.organizationId, doc.docType, doc.docId];
    if (doc.workspaceId !== null) {
      params.push(doc.workspaceId);
    }
    return {
      sql: `organization_id = $${first} AND doc_type = $${first + 1} AND doc_id = $${first + 2} AND ${workspace}`,
      params,
    };
  }

  /** Events after `afterSeq` that occurred at or after `since`, oldest first. */
  async after(
    doc: DocCoordinates,
    afterSeq: bigint,
    since: Date | null,
    limit: number,
  ): Promise<StreamEvent[]> {
    const where = this.where(doc, 1);
    const n = where.params.length;
    const rows = await this.tx.manager.query<EventRow[]>(
      `SELECT ${COLUMNS} FROM outbox
        WHERE ${where.sql} AND seq > $${n + 1} AND ($${n + 2}::timestamptz IS NULL OR occurred_at >= $${n + 2})
        ORDER BY seq LIMIT $${n + 3}`,
      [...where.params, afterSeq.toString(), since, limit],
    );
    return rows.map(toStreamEvent);
  }

  /** True when an event after `afterSeq` is older than `since` (it fell out of the retention window). */
  async missedBefore(doc: DocCoordinates, afterSeq: bigint, since: Date): Promise<boolean> {
    const where = this.where(doc, 1);
    const n = where.params.length;
    const rows = await this.tx.manager.query<unknown[]>(
      `SELECT 1 FROM outbox WHERE ${where.sql} AND seq > $${n + 1} AND occurred_at < $${n + 2} LIMIT 1`,
      [...where.params, afterSeq.toString(), since],
    );
    return rows.length > 0;
  }

  /** The document's newest event id, or 0. */
  async lastSeq(doc: DocCoordinates): Promise<bigint> {
    const where = this.where(doc, 1);
    const rows = await this.tx.manager.query<Array<{ seq: string | null }>>(
      `SELECT max(seq)::text AS seq FROM outbox WHERE ${where.sql}`,
      where.params,
    );
    return BigInt(rows[0]?.seq ?? '0');
  }

  /** One page of the history, newest first. */
  async page(
    doc: DocCoordinates,
    offset: number,
    limit: number,
  ): Promise<{ items: StreamEvent[]; total: number }> {
    const where = this.where(doc, 1);
    const n = where.params.length;
    // Sequential: inside a transaction both would share one connection.
    const rows = await this.tx.manager.query<EventRow[]>(
      `SELECT ${COLUMNS} FROM outbox WHERE ${where.sql} ORDER BY seq DESC OFFSET $${n + 1} LIMIT $${n + 2}`,
      [...where.params, offset, limit],
    );
    const count = await this.tx.manager.query<Array<{ total: string }>>(
      `SELECT count(*)::text AS total FROM outbox WHERE ${where.sql}`,
      where.params,
    );
    return { items: rows.map(toStreamEvent), total: Number(count[0]?.total ?? 0) };
  }
}
