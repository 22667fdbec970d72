import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { queryFirst, queryRows } from '../../../database/sql-result.js';

export type RunTrigger = 'realtime' | 'scheduled' | 'manual';
export type RunDirection = 'forward' | 'reverse';
export type RunStatus = 'pending' | 'succeeded' | 'failed' | 'skipped';

export interface ConnectorRun {
  id: string;
  organizationId: string;
  connectorId: string;
  trigger: RunTrigger;
  direction: RunDirection;
  status: RunStatus;
  sourceRevisionId: string | null;
  targetRevisionId: string | null;
  scheduledFor: Date | null;
  rowsCreated: number;
  rowsUpdated: number;
  rowsDeleted: number;
  rowsSkipped: number;
  attempts: number;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface RunResult {
  status: 'succeeded' | 'failed' | 'skipped';
  targetRevisionId: string | null;
  rowsCreated: number;
  rowsUpdated: number;
  rowsDeleted: number;
  rowsSkipped: number;
  error: string | null;
}

const COLUMNS = `r.id, r.organization_id AS "organizationId", r.connector_id AS "connectorId", r.trigger, r.direction, r.status,
  r.source_revision_id AS "sourceRevisionId", r.target_revision_id AS "targetRevisionId", r.scheduled_for AS "scheduledFor",
  r.rows_created AS "rowsCreated", r.rows_updated AS "rowsUpdated", r.rows_deleted AS "rowsDeleted", r.rows_skipped AS "rowsSkipped",
  r.attempts, r.error, r.created_at AS "createdAt", r.started_at AS "startedAt", r.finished_at AS "finishedAt"`;

/** Connector runs (each one logged) and the schedule of scheduled connectors. */
@Injectable()
export class ConnectorRunRepository {
  constructor(private readonly tx: TransactionHost) {}

  /** A realtime run for a source revision; once per (connector, revision, direction). True when enqueued now. */
  async enqueueRealtime(
    organizationId: string,
    connectorId: string,
    direction: RunDirection,
    revisionId: string,
  ): Promise<boolean> {
    const rows = await queryRows<{ id: string }>(
      this.tx,
      `INSERT INTO connector_runs (organization_id, connector_id, trigger, direction, status, source_revision_id)
       VALUES ($1, $2, 'realtime', $3, 'pending', $4)
       ON CONFLICT (connector_id, source_revision_id, direction) WHERE trigger = 'realtime' DO NOTHING RETURNING id`,
      [organizationId, connectorId, direction, revisionId],
    );
    return rows.length > 0;
  }

  /** A scheduled or manual run, pending; null when the scheduled slot already has its run. */
  async enqueue(
    organizationId: string,
    connectorId: string,
    trigger: 'scheduled' | 'manual',
    scheduledFor: Date | null,
  ): Promise<ConnectorRun | null> {
    return queryFirst<ConnectorRun>(
      this.tx,
      `INSERT INTO connector_runs AS r (organization_id, connector_id, trigger, direction, status, scheduled_for)
       VALUES ($1, $2, $3, 'forward', 'pending', $4)
       ON CONFLICT DO NOTHING RETURNING ${COLUMNS}`,
      [organizationId, connectorId, trigger, scheduledFor],
    );
  }

  /** The oldest pending run, locked until the transaction ends (several instances each take another). */
  claimPending(): Promise<ConnectorRun | null> {
    return queryFirst<ConnectorRun>(
      this.tx,
      `SELECT ${COLUMNS} FROM connector_runs r WHERE r.status = 'pending' ORDER BY r.created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
    );
  }

  async finish(id: string, result: RunResult, startedAt: Date): Promise<void> {
    await this.tx.manager.query(
      `UPDATE connector_runs SET status = $2, target_revision_id = $3, rows_created = $4, rows_updated = $5, rows_deleted = $6,
              rows_skipped = $7, error = $8, attempts = attempts + 1, started_at = $9, finished_at = now()
        WHERE id = $1`,
      [
        id,
        result.status,
        result.targetRevisionId,
        result.rowsCreated,
        result.rowsUpdated,
        result.rowsDeleted,
        result.rowsSkipped,
        result.error,
        startedAt,
      ],
    );
  }

  async list(
    organizationId: string,
    connectorId: string,
    paging: { limit: number; offset: number },
  ): Promise<{ items: ConnectorRun[]; total: number }> {
    const items = await queryRows<ConnectorRun>(
      this.tx,
      `SELECT ${COLUMNS} FROM connector_runs r WHERE r.organization_id = $1 AND r.connector_id = $2 ORDER BY r.created_at DESC, r.id LIMIT $3 OFFSET $4`,
      [organizationId, connectorId, paging.limit, paging.offset],
    );
    const count = await queryFirst<{ count: string }>(
      this.tx,
      `SELECT count(*) FROM connector_runs WHERE organization_id = $1 AND connector_id = $2`,
      [organizationId, connectorId],
    );
    return { items, total: Number(count?.count ?? 0) };
  }

  /** Schedules: the connectors due at `now`, locked; those without a row yet get none here (see ensureSchedule). */
  claimDueSchedule(
    now: Date,
  ): Promise<{ connectorId: string; organizationId: string; nextRunAt: Date } | null> {
    return queryFirst(
      this.tx,
      `SELECT connector_id AS "connectorId", organization_id AS "organizationId", next_run_at AS "nextRunAt"
         FROM connector_schedules WHERE next_run_at <= $1 ORDER BY next_run_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [now],
    );
  }

  async scheduleOf(connectorId: string): Promise<{ nextRunAt: Date; lastRunAt: Date | null } | null> {
    return queryFirst(
      this.tx,
      `SELECT next_run_at AS "nextRunAt", last_run_at AS "lastRunAt" FROM connector_schedules WHERE connector_id = $1`,
      [connectorId],
    );
  }

  async ensureSchedule(organizationId: string, connectorId: string, nextRunAt: Date): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO connector_schedules (connector_id, organization_id, next_run_at) VALUES ($1, $2, $3) ON CONFLICT (connector_id) DO NOTHING`,
      [connectorId, organizationId, nextRunAt],
    );
  }

  async advanceSchedule(connectorId: string, ranAt: Date, nextRunAt: Date): Promise<void> {
    await this.tx.manager.query(
      `UPDATE connector_schedules SET last_run_at = $2, next_run_at = $3 WHERE connector_id = $1`,
      [connectorId, ranAt, nextRunAt],
    );
  }

  async dropSchedule(connectorId: string): Promise<void> {
    await this.tx.manager.query(`DELETE FROM connector_schedules WHERE connector_id = $1`, [connectorId]);
  }

  async scheduledIds(): Promise<Set<string>> {
    const rows = await queryRows<{ id: string }>(this.tx, `SELECT connector_id AS id FROM connector_schedules`);
    return new Set(rows.map((row) => row.id));
  }
}
