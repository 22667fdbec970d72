import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { queryRows } from '../../../database/sql-result.js';

export interface StoredLink {
  sourceRowId: string;
  targetRowId: string;
  lastValues: Record<string, unknown>;
  syncedAt: Date;
  /** The binding or connector that wrote the link (read by findLatestAmong). */
  ownerId?: string;
}

/** Which target row each source row maps to, per binding or connector (`owner_id`), and what the sync last wrote. */
@Injectable()
export class RowLinkRepository {
  constructor(private readonly tx: TransactionHost) {}

  async find(ownerId: string, sourceRowIds: readonly string[]): Promise<Map<string, StoredLink>> {
    if (sourceRowIds.length === 0) {
      return new Map();
    }
    const rows = await queryRows<StoredLink>(
      this.tx,
      `SELECT source_row_id AS "sourceRowId", target_row_id AS "targetRowId", last_values AS "lastValues", synced_at AS "syncedAt"
         FROM sync_row_links WHERE owner_id = $1 AND source_row_id = ANY($2::text[])`,
      [ownerId, sourceRowIds],
    );
    return new Map(rows.map((row) => [row.sourceRowId, row]));
  }

  /**
   * For each of `sourceRowIds`, the most recently synced link among the owners `ownerIds` (other bindings of the same
   * order book and catalog), to continue the order-book row they wrote instead of creating a second one.
   */
  async findLatestAmong(
    ownerIds: readonly string[],
    sourceRowIds: readonly string[],
  ): Promise<Map<string, StoredLink>> {
    if (ownerIds.length === 0 || sourceRowIds.length === 0) {
      return new Map();
    }
    const rows = await queryRows<StoredLink>(
      this.tx,
      `SELECT DISTINCT ON (source_row_id) source_row_id AS "sourceRowId", target_row_id AS "targetRowId",
              last_values AS "lastValues", synced_at AS "syncedAt", owner_id AS "ownerId"
         FROM sync_row_links WHERE owner_id = ANY($1::uuid[]) AND source_row_id = ANY($2::text[])
        ORDER BY source_row_id, synced_at DESC`,
      [ownerIds, sourceRowIds],
    );
    return new Map(rows.map((row) => [row.sourceRowId, row]));
  }

  /**
   * One page of the source row ids linked by any of `ownerIds`, in id order after `after` (keyset; '' for the first
   * page): a reconcile walks a binding's links this way, `limit` at a time, never all of them at once.
   */
  sourceIdPage(ownerIds: readonly string[], after: string, limit: number): Promise<string[]> {
    if (ownerIds.length === 0) {
      return Promise.resolve([]);
    }
    return queryRows<{ sourceRowId: string }>(
      this.tx,
      `SELECT DISTINCT source_row_id AS "sourceRowId" FROM sync_row_links
        WHERE owner_id = ANY($1::uuid[]) AND source_row_id > $2
        ORDER BY source_row_id LIMIT $3`,
      [ownerIds, after, limit],
    ).then((rows) => rows.map((row) => row.sourceRowId));
  }

  /** Links whose target is one of `targetRowIds` (the reverse direction of a bidirectional connector). */
  async findByTarget(ownerId: string, targetRowIds: readonly string[]): Promise<StoredLink[]> {
    if (targetRowIds.length === 0) {
      return [];
    }
    return queryRows<StoredLink>(
      this.tx,
      `SELECT source_row_id AS "sourceRowId", target_row_id AS "targetRowId", last_values AS "lastValues", synced_at AS "syncedAt"
         FROM sync_row_links WHERE owner_id = $1 AND target_row_id = ANY($2::text[])`,
      [ownerId, targetRowIds],
    );
  }

  /** Every link of an owner (a scheduled connector run compares them with the source's rows). */
  all(ownerId: string): Promise<StoredLink[]> {
    return queryRows<StoredLink>(
      this.tx,
      `SELECT source_row_id AS "sourceRowId", target_row_id AS "targetRowId", last_values AS "lastValues", synced_at AS "syncedAt"
         FROM sync_row_links WHERE owner_id = $1`,
      [ownerId],
    );
  }

  /** Writes link updates in two statements (upserts, deletes); `null` forgets the link. */
  async apply(
    organizationId: string,
    ownerId: string,
    updates: ReadonlyMap<string, { targetRowId: string; lastValues: Record<string, unknown> } | null>,
  ): Promise<void> {
    const upserts = [...updates].filter(
      (entry): entry is [string, { targetRowId: string; lastValues: Record<string, unknown> }] =>
        entry[1] !== null,
    );
    const deletes = [...updates].filter(([, value]) => value === null).map(([key]) => key);
    if (upserts.length > 0) {
      await this.tx.manager.query(
        `INSERT INTO sync_row_links (organization_id, owner_id, source_row_id, target_row_id, last_values, synced_at)
         SELECT $1, $2, s.source_row_id, s.target_row_id, s.last_values, now()
           FROM jsonb_to_recordset($3::jsonb) AS s(source_row_id text, target_row_id text, last_values jsonb)
         ON CONFLICT (owner_id, source_row_id)
         DO UPDATE SET target_row_id = EXCLUDED.target_row_id, last_values = EXCLUDED.last_values, synced_at = now()`,
        [
          organizationId,
          ownerId,
          JSON.stringify(
            upserts.map(([source, link]) => ({
              source_row_id: source,
              target_row_id: link.targetRowId,
              last_values: link.lastValues,
            })),
          ),
        ],
      );
    }
    if (deletes.length > 0) {
      await this.tx.manager.query(
        `DELETE FROM sync_row_links WHERE owner_id = $1 AND source_row_id = ANY($2::text[])`,
        [ownerId, deletes],
      );
    }
  }
}
