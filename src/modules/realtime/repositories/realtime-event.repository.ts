import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { type EventPosition, type PositionedEvent, START_POSITION } from '../domain/event-position.js';
import type { StreamEvent } from '../domain/realtime.types.js';

interface DocCoordinates {
  /** The document's row id: bounds its events to this document's lifetime (below). */
  uuid: string;
  organizationId: string | null;
  workspaceId: string | null;
  docType: string;
  docId: string;
}

interface EventRow {
  id: string;
  seq: string;
  /** The writing transaction (xid8), as text. */
  tx: string;
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

function positionOf(row: { tx: string; seq: string }): EventPosition {
  return { tx: BigInt(row.tx), seq: BigInt(row.seq) };
}

const COLUMNS =
  'id, seq, tx_id::text AS tx, event_type, organization_id, workspace_id, doc_type, doc_id, triggered_by, payload, occurred_at';

/**
 * The watermark (an xid8): every transaction of this database below it has ended. An event is final once its
 * transaction is below it: no transaction still running (nor any started later, whose id is higher) can then write an
 * event before it in (tx_id, seq) order. It is the oldest transaction id that a backend connected to this database
 * holds (pg_stat_get_activity's `backend_xid`, 32 bits, widened to the xid8 nearest the snapshot's xmax: a signed
 * distance, since a running transaction may hold an id above xmax — xmax is the last completed id plus one — and
 * subtracting 2^32 for it made the watermark negative, every event final), else the xmax: like
 * the snapshot's xmin, but blind to the other databases of the server, whose transactions never write this outbox
 * and would otherwise hold every stream back while they run. Transactions without an id (read-only ones) never count.
 *
 * It must be read by a statement of its own, before the statement that reads the events: a transaction below it
 * has then ended before that statement's snapshot, so its events are in it (read in one statement, the snapshot
 * comes first, and a transaction ending in between would be counted as ended yet be missing from it). For the same
 * reason it is never read inside a REPEATABLE READ transaction (whose snapshot is its first statement's).
 */
const WATERMARK_SQL = `WITH top AS (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xmax)
SELECT least(top.xmax,
             min(top.xmax + (a.backend_xid::text::bigint - top.xmax % 4294967296 + 6442450944) % 4294967296
                 - 2147483648))::text
       AS watermark
  FROM top
  LEFT JOIN pg_stat_get_activity(NULL) a
    ON a.backend_xid IS NOT NULL AND a.datid = (SELECT oid FROM pg_database WHERE datname = current_database())
 GROUP BY top.xmax`;

/**
 * The stream's order (docs/realtime.md, "Order and resume"); outbox_realtime_pos_idx serves it per document. Qualified:
 * a bare name in ORDER BY would sort by a selected column of that name, as text.
 */
const ORDER = 'outbox.tx_id, outbox.seq';
const ORDER_DESC = 'outbox.tx_id DESC, outbox.seq DESC';

/**
 * Reads a document's events from the outbox, in stream order: by the writing transaction (`tx_id`), then `seq`.
 * A document is its tenant plus (doc_type, doc_id): the same pair exists in other tenants, so every query names
 * organization_id and workspace_id (IS NULL for organization-level documents; written as two forms so
 * outbox_realtime_pos_idx serves both).
 */
@Injectable()
export class RealtimeEventRepository {
  constructor(private readonly tx: TransactionHost) {}

  private where(doc: DocCoordinates, first: number): { sql: string; params: unknown[] } {
    const workspace = doc.workspaceId === null ? 'workspace_id IS NULL' : `workspace_id = $${first + 4}`;
    const params: unknown[] = [doc.organizationId, doc.docType, doc.docId, doc.uuid];
    if (doc.workspaceId !== null) {
      params.push(doc.workspaceId);
    }
    // Only this document's events: the outbox keeps coordinates, not the document's row id, and a deleted
    // document's id may be used again (docs/documents.md). The deleted one's events all committed before its
    // deletion, hence before this document was created: they are not its history, and a stream resumed from one
    // of their ids does not replay them.
    return {
      sql:
        `organization_id = $${first} AND doc_type = $${first + 1} AND doc_id = $${first + 2} AND ${workspace}` +
        ` AND occurred_at >= (SELECT d.created_at FROM documents d WHERE d.id = $${first + 3})`,
      params,
    };
  }

  /**
   * WATERMARK_SQL (first, in a statement of its own; the realtime hub reads outside units of work). The hub also
   * reads it alone, once per tick for all its held documents, to learn which of them can be read again.
   */
  async watermark(): Promise<string> {
    const rows = await this.tx.manager.query<Array<{ watermark: string }>>(WATERMARK_SQL);
    return rows[0].watermark;
  }

  /**
   * The final events after `from` that occurred at or after `since`, in stream order (at most `limit`), and, when
   * committed events after them wait for an older transaction to end, the transaction of the first of them
   * (`heldBack`; null when none waits): they are final once the watermark is above it, and reading the document again
   * before then finds nothing new but events committed since (whose notices say so). One range scan: final events
   * sort before every event that is not final yet, so the final ones are the rows' prefix.
   */
  async after(
    doc: DocCoordinates,
    from: EventPosition,
    since: Date | null,
    limit: number,
  ): Promise<{ events: PositionedEvent[]; heldBack: bigint | null }> {
    const watermark = await this.watermark();
    const where = this.where(doc, 1);
    const n = where.params.length;
    const rows = await this.tx.manager.query<Array<EventRow & { final: boolean }>>(
      `SELECT ${COLUMNS}, tx_id < $${n + 5}::xid8 AS final FROM outbox
        WHERE ${where.sql} AND (tx_id, seq) > ($${n + 1}::xid8, $${n + 2}::bigint)
          AND ($${n + 3}::timestamptz IS NULL OR occurred_at >= $${n + 3})
        ORDER BY ${ORDER} LIMIT $${n + 4}`,
      [...where.params, from.tx.toString(), from.seq.toString(), since, limit, watermark],
    );
    const final = rows.findIndex((row) => !row.final);
    const shown = final === -1 ? rows : rows.slice(0, final);
    return {
      events: shown.map((row) => ({ event: toStreamEvent(row), position: positionOf(row) })),
      heldBack: final === -1 ? null : BigInt(rows[final].tx),
    };
  }

  /** True when an event after `from` is older than `since` (it fell out of the retention window). */
  async missedBefore(doc: DocCoordinates, from: EventPosition, since: Date): Promise<boolean> {
    const where = this.where(doc, 1);
    const n = where.params.length;
    const rows = await this.tx.manager.query<unknown[]>(
      `SELECT 1 FROM outbox
        WHERE ${where.sql} AND (tx_id, seq) > ($${n + 1}::xid8, $${n + 2}::bigint) AND occurred_at < $${n + 3}
        LIMIT 1`,
      [...where.params, from.tx.toString(), from.seq.toString(), since],
    );
    return rows.length > 0;
  }

  /**
   * Where a client that last received event id `lastEventId` stands: that event's position when it is one of the
   * document's; otherwise (an id this stream never sent, or whose event is gone) the latest final position among
   * the document's events numbered up to it, which is the newest final position for an id beyond them all; the start
   * when there is none. Null `lastEventId`: the newest final position (a new client starts after it).
   */
  async positionAt(doc: DocCoordinates, lastEventId: bigint | null): Promise<EventPosition> {
    const where = this.where(doc, 1);
    const n = where.params.length;
    if (lastEventId !== null) {
      const exact = await this.tx.manager.query<Array<{ tx: string; seq: string }>>(
        `SELECT tx_id::text AS tx, seq::text AS seq FROM outbox WHERE seq = $${n + 1} AND ${where.sql}`,
        [...where.params, lastEventId.toString()],
      );
      if (exact[0]) {
        return positionOf(exact[0]);
      }
    }
    const watermark = await this.watermark();
    const rows = await this.tx.manager.query<Array<{ tx: string; seq: string }>>(
      `SELECT tx_id::text AS tx, seq::text AS seq FROM outbox
        WHERE ${where.sql} AND tx_id < $${n + 2}::xid8 AND ($${n + 1}::bigint IS NULL OR seq <= $${n + 1})
        ORDER BY ${ORDER_DESC} LIMIT 1`,
      [...where.params, lastEventId?.toString() ?? null, watermark],
    );
    return rows[0] ? positionOf(rows[0]) : START_POSITION;
  }

  /**
   * Ids of the document's events after `from` that have committed but are not final yet (they wait for an older
   * transaction): a client starting at the newest final event had them before it connected (at most `limit`).
   */
  async committedAfter(doc: DocCoordinates, from: EventPosition, limit: number): Promise<string[]> {
    const where = this.where(doc, 1);
    const n = where.params.length;
    const rows = await this.tx.manager.query<Array<{ seq: string }>>(
      `SELECT seq::text AS seq FROM outbox
        WHERE ${where.sql} AND (tx_id, seq) > ($${n + 1}::xid8, $${n + 2}::bigint)
        ORDER BY ${ORDER} LIMIT $${n + 3}`,
      [...where.params, from.tx.toString(), from.seq.toString(), limit],
    );
    return rows.map((row) => row.seq);
  }

  /** One page of the history, newest first (the stream's order, reversed). */
  async page(
    doc: DocCoordinates,
    offset: number,
    limit: number,
  ): Promise<{ items: StreamEvent[]; total: number }> {
    const where = this.where(doc, 1);
    const n = where.params.length;
    // Sequential: inside a transaction both would share one connection.
    const rows = await this.tx.manager.query<EventRow[]>(
      `SELECT ${COLUMNS} FROM outbox WHERE ${where.sql} ORDER BY ${ORDER_DESC} OFFSET $${n + 1} LIMIT $${n + 2}`,
      [...where.params, offset, limit],
    );
    const count = await this.tx.manager.query<Array<{ total: string }>>(
      `SELECT count(*)::text AS total FROM outbox WHERE ${where.sql}`,
      where.params,
    );
    return { items: rows.map(toStreamEvent), total: Number(count[0]?.total ?? 0) };
  }
}
