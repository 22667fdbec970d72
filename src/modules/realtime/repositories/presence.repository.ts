import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocRef } from '../domain/realtime.types.js';

export interface PresenceRecord {
  sessionId: string;
  userId: string;
  transport: string;
  awarenessClientId: number | null;
  awarenessClock: number | null;
  state: Record<string, unknown> | null;
  connectedAt: Date;
  lastSeenAt: Date;
}

interface PresenceRow {
  session_id: string;
  user_id: string;
  transport: string;
  awareness_client_id: string | null;
  awareness_clock: string | null;
  state: Record<string, unknown> | null;
  connected_at: Date;
  last_seen_at: Date;
}

/**
 * Who is connected to which document, shared by all instances. Each instance refreshes its own rows on every
 * heartbeat; rows of an instance that died expire (`expires_at`) and are swept by any instance.
 */
@Injectable()
export class PresenceRepository {
  constructor(private readonly tx: TransactionHost) {}

  async join(
    doc: DocRef,
    entry: { sessionId: string; userId: string; instanceId: string; transport: string; ttlMs: number },
  ): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO realtime_presence (session_id, organization_id, workspace_id, document_uuid, user_id, instance_id, transport, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8::float / 1000))
       ON CONFLICT (session_id) DO UPDATE SET last_seen_at = now(), expires_at = EXCLUDED.expires_at`,
      [
        entry.sessionId,
        doc.organizationId,
        doc.workspaceId,
        doc.uuid,
        entry.userId,
        entry.instanceId,
        entry.transport,
        entry.ttlMs,
      ],
    );
  }

  async setAwareness(
    doc: DocRef,
    sessionId: string,
    clientId: number,
    clock: number,
    state: Record<string, unknown> | null,
  ): Promise<void> {
    await this.tx.manager.query(
      `UPDATE realtime_presence SET awareness_client_id = $3, awareness_clock = $4, state = $5, last_seen_at = now()
        WHERE organization_id = $1 AND session_id = $2`,
      [doc.organizationId, sessionId, clientId, clock, state === null ? null : JSON.stringify(state)],
    );
  }

  /** The users of the live sessions other than `sessionId` whose awareness client on the document is `clientId`. */
  async holdersOf(doc: DocRef, clientId: number, sessionId: string): Promise<string[]> {
    const rows = await this.tx.manager.query<Array<{ user_id: string }>>(
      `SELECT DISTINCT user_id FROM realtime_presence
        WHERE organization_id = $1 AND document_uuid = $2 AND awareness_client_id = $3 AND session_id <> $4
          AND expires_at > now()`,
      [doc.organizationId, doc.uuid, clientId, sessionId],
    );
    return rows.map((row) => row.user_id);
  }

  async leave(doc: DocRef, sessionId: string): Promise<void> {
    await this.tx.manager.query(
      `DELETE FROM realtime_presence WHERE organization_id = $1 AND session_id = $2`,
      [doc.organizationId, sessionId],
    );
  }

  async list(doc: DocRef): Promise<PresenceRecord[]> {
    const rows = await this.tx.manager.query<PresenceRow[]>(
      `SELECT session_id, user_id, transport, awareness_client_id, awareness_clock, state, connected_at, last_seen_at
         FROM realtime_presence
        WHERE organization_id = $1 AND document_uuid = $2 AND expires_at > now()
        ORDER BY connected_at, session_id`,
      [doc.organizationId, doc.uuid],
    );
    return rows.map((row) => ({
      sessionId: row.session_id,
      userId: row.user_id,
      transport: row.transport,
      awarenessClientId: row.awareness_client_id === null ? null : Number(row.awareness_client_id),
      awarenessClock: row.awareness_clock === null ? null : Number(row.awareness_clock),
      state: row.state,
      connectedAt: row.connected_at,
      lastSeenAt: row.last_seen_at,
    }));
  }

  /** One statement per heartbeat for all of this instance's sessions. */
  async refreshInstance(instanceId: string, ttlMs: number): Promise<void> {
    await this.tx.manager.query(
      `UPDATE realtime_presence SET last_seen_at = now(), expires_at = now() + make_interval(secs => $2::float / 1000) WHERE instance_id = $1`,
      [instanceId, ttlMs],
    );
  }

  /** Removes expired presence (a crashed instance's sessions), and the locks that died with those sessions. */
  async sweep(): Promise<void> {
    await this.tx.manager.query(`DELETE FROM realtime_presence WHERE expires_at < now()`);
    await this.tx.manager.query(
      `DELETE FROM realtime_locks l WHERE l.expires_at < now()
          OR (l.session_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM realtime_presence p WHERE p.session_id = l.session_id))`,
    );
  }

  async removeInstance(instanceId: string): Promise<void> {
    await this.tx.manager.query(
      `DELETE FROM realtime_locks WHERE session_id IN (SELECT session_id FROM realtime_presence WHERE instance_id = $1)`,
      [instanceId],
    );
    await this.tx.manager.query(`DELETE FROM realtime_presence WHERE instance_id = $1`, [instanceId]);
  }
}
