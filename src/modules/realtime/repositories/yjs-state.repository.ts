import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocRef } from '../domain/realtime.types.js';

export interface SnapshotRecord {
  id: string;
  name: string;
  state: Uint8Array;
  createdBy: string;
  createdAt: Date;
  sizeBytes: number;
}

interface SnapshotRow {
  id: string;
  name: string;
  state?: Buffer;
  created_by: string;
  created_at: Date;
  size_bytes: number;
}

function toSnapshot(row: SnapshotRow): SnapshotRecord {
  return {
    id: row.id,
    name: row.name,
    state: row.state ? new Uint8Array(row.state) : new Uint8Array(),
    createdBy: row.created_by,
    createdAt: row.created_at,
    sizeBytes: Number(row.size_bytes),
  };
}

/**
 * The persisted Yjs state of documents: the compacted state (`realtime_yjs_states`) plus the updates that came
 * after it (`realtime_yjs_updates`), and named snapshots. Every query names the document's organization.
 */
@Injectable()
export class YjsStateRepository {
  constructor(private readonly tx: TransactionHost) {}

  async appendUpdate(doc: DocRef, update: Uint8Array, userId: string): Promise<string> {
    const rows = await this.tx.manager.query<Array<{ id: string }>>(
      `INSERT INTO realtime_yjs_updates (organization_id, workspace_id, document_uuid, "update", created_by)
       VALUES ($1, $2, $3, $4, $5) RETURNING id::text AS id`,
      [doc.organizationId, doc.workspaceId, doc.uuid, Buffer.from(update), userId],
    );
    return rows[0].id;
  }

  async updateById(doc: DocRef, id: string): Promise<Uint8Array | null> {
    const rows = await this.tx.manager.query<Array<{ update: Buffer }>>(
      `SELECT "update" FROM realtime_yjs_updates WHERE organization_id = $1 AND document_uuid = $2 AND id = $3`,
      [doc.organizationId, doc.uuid, id],
    );
    return rows[0] ? new Uint8Array(rows[0].update) : null;
  }

  /**
   * The compacted state and the updates after it, in order. One statement, so one snapshot: read as two, a
   * compaction committing in between would leave the old state and only the updates after the new one, losing the
   * updates it folded in (from a sync answer, and for good from a snapshot taken of it).
   */
  async load(
    doc: DocRef,
  ): Promise<{ state: Uint8Array | null; updates: Array<{ id: string; update: Uint8Array }> }> {
    const rows = await this.tx.manager.query<Array<{ id: string | null; data: Buffer }>>(
      `SELECT NULL::text AS id, state AS data, 0 AS part, 0::bigint AS seq
         FROM realtime_yjs_states WHERE organization_id = $1 AND document_uuid = $2
       UNION ALL
       SELECT id::text, "update", 1, id
         FROM realtime_yjs_updates WHERE organization_id = $1 AND document_uuid = $2
       ORDER BY part, seq`,
      [doc.organizationId, doc.uuid],
    );
    const state = rows.find((row) => row.id === null);
    return {
      state: state ? new Uint8Array(state.data) : null,
      updates: rows
        .filter((row): row is { id: string; data: Buffer } => row.id !== null)
        .map((row) => ({ id: row.id, update: new Uint8Array(row.data) })),
    };
  }

  async pendingCount(doc: DocRef): Promise<number> {
    const rows = await this.tx.manager.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM realtime_yjs_updates WHERE organization_id = $1 AND document_uuid = $2`,
      [doc.organizationId, doc.uuid],
    );
    return rows[0]?.n ?? 0;
  }

  /** Serializes compaction of one document across instances (held until the transaction ends). */
  async lockDocument(doc: DocRef): Promise<void> {
    await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('realtime-yjs:' || $1, 0))`, [
      doc.uuid,
    ]);
  }

  /** Replaces the compacted state and drops the updates it now contains (ids up to `throughId`). */
  async saveCompacted(doc: DocRef, state: Uint8Array, throughId: string): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO realtime_yjs_states (document_uuid, organization_id, workspace_id, state, last_update_id, updated_at)
       VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (document_uuid) DO UPDATE SET state = EXCLUDED.state, last_update_id = EXCLUDED.last_update_id, updated_at = now()`,
      [doc.uuid, doc.organizationId, doc.workspaceId, Buffer.from(state), throughId],
    );
    await this.tx.manager.query(
      `DELETE FROM realtime_yjs_updates WHERE organization_id = $1 AND document_uuid = $2 AND id <= $3`,
      [doc.organizationId, doc.uuid, throughId],
    );
  }

  async createSnapshot(
    doc: DocRef,
    name: string,
    state: Uint8Array,
    userId: string,
  ): Promise<SnapshotRecord> {
    const rows = await this.tx.manager.query<SnapshotRow[]>(
      `INSERT INTO realtime_snapshots (organization_id, workspace_id, document_uuid, name, state, created_by)
       VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING id, name, state, created_by, created_at, octet_length(state) AS size_bytes`,
      [doc.organizationId, doc.workspaceId, doc.uuid, name, Buffer.from(state), userId],
    );
    return toSnapshot(rows[0]);
  }

  /** By id, or the newest with that name. */
  async findSnapshot(doc: DocRef, by: { id?: string; name?: string }): Promise<SnapshotRecord | null> {
    const rows = await this.tx.manager.query<SnapshotRow[]>(
      `SELECT id, name, state, created_by, created_at, octet_length(state) AS size_bytes FROM realtime_snapshots
        WHERE organization_id = $1 AND document_uuid = $2 AND ($3::uuid IS NULL OR id = $3) AND ($4::text IS NULL OR name = $4)
        ORDER BY created_at DESC LIMIT 1`,
      [doc.organizationId, doc.uuid, by.id ?? null, by.name ?? null],
    );
    return rows[0] ? toSnapshot(rows[0]) : null;
  }

  async listSnapshots(
    doc: DocRef,
    offset: number,
    limit: number,
  ): Promise<{ items: SnapshotRecord[]; total: number }> {
    // Sequential: inside a transaction both would share one connection.
    const rows = await this.tx.manager.query<SnapshotRow[]>(
      `SELECT id, name, created_by, created_at, octet_length(state) AS size_bytes FROM realtime_snapshots
          WHERE organization_id = $1 AND document_uuid = $2 ORDER BY created_at DESC, id OFFSET $3 LIMIT $4`,
      [doc.organizationId, doc.uuid, offset, limit],
    );
    const count = await this.tx.manager.query<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM realtime_snapshots WHERE organization_id = $1 AND document_uuid = $2`,
      [doc.organizationId, doc.uuid],
    );
    return { items: rows.map(toSnapshot), total: count[0]?.n ?? 0 };
  }
}
