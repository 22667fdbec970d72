import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { LockTarget, LockTargetType } from '../domain/lock-targets.js';
import type { DocRef } from '../domain/realtime.types.js';
import { prepared } from '../../../database/prepared-statements.js';

export interface LockRecord {
  id: string;
  target: LockTarget;
  exclusive: boolean;
  userId: string;
  sessionId: string | null;
  expiresAt: Date;
  createdAt: Date;
}

interface LockRow {
  id: string;
  target_type: LockTargetType;
  row_id: string | null;
  field_id: string | null;
  exclusive: boolean;
  user_id: string;
  session_id: string | null;
  expires_at: Date;
  created_at: Date;
}

function toLock(row: LockRow): LockRecord {
  return {
    id: row.id,
    target: { type: row.target_type, rowId: row.row_id, fieldId: row.field_id },
    exclusive: row.exclusive,
    userId: row.user_id,
    sessionId: row.session_id,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  };
}

const COLUMNS = 'id, target_type, row_id, field_id, exclusive, user_id, session_id, expires_at, created_at';

/** Locks of a document; an expired lock is never returned (and swept later). */
@Injectable()
export class LockRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** Serializes lock decisions on one document across instances (until the transaction ends). */
  async lockDocument(documentUuid: string): Promise<void> {
    await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('realtime-lock:' || $1, 0))`, [
      documentUuid,
    ]);
  }

  async live(organizationId: string, documentUuid: string): Promise<LockRecord[]> {
    // A group of writes of one document (one transaction, no lock taken in it) reads the locks once for all.
    const rows = await this.tx.groupMemo(this, `${organizationId}|${documentUuid}`, () =>
      this.tx.manager.query<LockRow[]>(
        prepared(`SELECT ${COLUMNS} FROM realtime_locks
          WHERE organization_id = $1 AND document_uuid = $2 AND expires_at > now()
          ORDER BY created_at, id`),
        [organizationId, documentUuid],
      ),
    );
    return rows.map(toLock);
  }

  async insert(
    doc: DocRef,
    lock: {
      target: LockTarget;
      exclusive: boolean;
      userId: string;
      sessionId: string | null;
      ttlSeconds: number;
    },
  ): Promise<LockRecord> {
    const rows = await this.tx.manager.query<LockRow[]>(
      `INSERT INTO realtime_locks (organization_id, workspace_id, document_uuid, target_type, row_id, field_id, exclusive, user_id, session_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10))
       RETURNING ${COLUMNS}`,
      [
        doc.organizationId,
        doc.workspaceId,
        doc.uuid,
        lock.target.type,
        lock.target.rowId,
        lock.target.fieldId,
        lock.exclusive,
        lock.userId,
        lock.sessionId,
        lock.ttlSeconds,
      ],
    );
    return toLock(rows[0]);
  }

  async find(doc: DocRef, lockId: string): Promise<LockRecord | null> {
    const rows = await this.tx.manager.query<LockRow[]>(
      `SELECT ${COLUMNS} FROM realtime_locks WHERE organization_id = $1 AND document_uuid = $2 AND id = $3 AND expires_at > now()`,
      [doc.organizationId, doc.uuid, lockId],
    );
    return rows[0] ? toLock(rows[0]) : null;
  }

  /** Deletes the lock; false when it was already gone (of two releases at once, only one deletes it). */
  async delete(doc: Pick<DocRef, 'organizationId' | 'uuid'>, lockId: string): Promise<boolean> {
    // TypeORM answers a DELETE with [rows, rowCount].
    const [, count] = await this.tx.manager.query<[unknown[], number]>(
      `DELETE FROM realtime_locks WHERE organization_id = $1 AND document_uuid = $2 AND id = $3`,
      [doc.organizationId, doc.uuid, lockId],
    );
    return count > 0;
  }

  /** Deletes a session's locks and returns them (they die with the session). */
  async deleteOfSession(doc: DocRef, sessionId: string): Promise<LockRecord[]> {
    // TypeORM answers a DELETE with [rows, rowCount].
    const [rows] = await this.tx.manager.query<[LockRow[], number]>(
      `DELETE FROM realtime_locks WHERE organization_id = $1 AND session_id = $2 RETURNING ${COLUMNS}`,
      [doc.organizationId, sessionId],
    );
    return rows.map(toLock);
  }
}
