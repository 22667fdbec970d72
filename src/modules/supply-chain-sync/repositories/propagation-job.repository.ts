import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { queryFirst, queryRows } from '../../../database/sql-result.js';

export type JobStatus = 'pending' | 'applied' | 'skipped' | 'failed';

export interface PropagationJob {
  id: string;
  organizationId: string;
  bindingId: string;
  orderBookId: string;
  catalogDocumentId: string;
  catalogRevisionId: string;
  catalogRevisionVersion: number;
  revisionCreatedAt: Date;
  status: JobStatus;
  dueAt: Date;
  attempts: number;
  lastError: string | null;
  result: Record<string, unknown> | null;
  appliedAt: Date | null;
  createdAt: Date;
  /** '' for revision and initial-sync jobs; the change that queued a reconcile job (see NewJob.triggerKey). */
  triggerKey: string;
}

export interface NewJob {
  organizationId: string;
  bindingId: string;
  orderBookId: string;
  catalogDocumentId: string;
  catalogRevisionId: string;
  catalogRevisionVersion: number;
  revisionCreatedAt: Date;
  /**
   * A reconcile instead of the revision's changes: the binding is brought in line with the catalog as it is
   * (PropagationService; docs/supply-chain.md, "Initial sync and reconcile"). `initial_sync`: the binding just became
   * active; `reconcile`: what the connection shares changed (`reason`). Kept in `result` until the job is applied
   * (no column of its own).
   */
  kind?: ReconcileKind;
  reason?: string;
  /**
   * Only for `reconcile`: names the change that queued it (one per change, e.g. `share_scope:<uuid>`), so it is a
   * job of its own next to the binding's job at the same revision; the unique (binding, revision, trigger) key
   * still makes the one change queue it once.
   */
  triggerKey?: string;
}

export type ReconcileKind = 'initial_sync' | 'reconcile';

/** The marker an initial-sync job carries in `result` while pending (see NewJob.kind). */
export const INITIAL_SYNC = 'initial_sync';
const RECONCILE = 'reconcile';

/** The job re-reads the whole catalog (an initial sync or a reconcile), rather than applying its revision's changes. */
export function reconcileKindOf(job: PropagationJob): ReconcileKind | null {
  const kind = job.result?.kind;
  return kind === INITIAL_SYNC || kind === RECONCILE ? kind : null;
}

const COLUMNS = `j.id, j.organization_id AS "organizationId", j.binding_id AS "bindingId", j.orderbook_id AS "orderBookId",
  j.catalog_document_id AS "catalogDocumentId", j.catalog_revision_id AS "catalogRevisionId",
  j.catalog_revision_version::int AS "catalogRevisionVersion", j.revision_created_at AS "revisionCreatedAt", j.status,
  j.due_at AS "dueAt", j.attempts, j.last_error AS "lastError", j.result, j.applied_at AS "appliedAt", j.created_at AS "createdAt",
  j.trigger_key AS "triggerKey"`;

/**
 * The propagation ledger: one row per (binding, catalog revision), unique, so a replayed event enqueues nothing
 * twice (a reconcile job is keyed by the change that queued it too: NewJob.triggerKey); a job is claimed with `FOR UPDATE SKIP LOCKED` and marked applied in the transaction that writes the order
 * book, so it is applied exactly once across crashes and instances.
 */
@Injectable()
export class PropagationJobRepository {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Enqueues a job. `windowSeconds` > 0 (batchMerge): the job joins the binding's open window (the due time of a
   * pending job of the binding still in the future) or opens one ending `windowSeconds` from `now`.
   */
  async enqueue(job: NewJob, now: Date, windowSeconds: number): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO sync_propagation_jobs (organization_id, binding_id, orderbook_id, catalog_document_id, catalog_revision_id,
              catalog_revision_version, revision_created_at, due_at, result, trigger_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7,
               CASE WHEN $9::int > 0 THEN COALESCE(
                 (SELECT max(p.due_at) FROM sync_propagation_jobs p WHERE p.binding_id = $2 AND p.status = 'pending' AND p.due_at > $8),
                 $8::timestamptz + make_interval(secs => $9::int))
               ELSE $8::timestamptz END, $10::jsonb, $11)
       ON CONFLICT ON CONSTRAINT sync_propagation_jobs_once DO NOTHING`,
      [
        job.organizationId,
        job.bindingId,
        job.orderBookId,
        job.catalogDocumentId,
        job.catalogRevisionId,
        job.catalogRevisionVersion,
        job.revisionCreatedAt,
        now,
        windowSeconds,
        job.kind ? JSON.stringify({ kind: job.kind, ...(job.reason ? { reason: job.reason } : {}) }) : null,
        job.kind === RECONCILE ? (job.triggerKey ?? '') : '',
      ],
    );
  }

  /**
   * Claims every due job of one binding, oldest due binding first. The binding is taken first, with a
   * transaction-level advisory lock, then its due jobs with `FOR UPDATE SKIP LOCKED`: one transaction at a time
   * works on a binding (its revisions apply in version order, never split across workers), and several workers
   * take different bindings. Answers 'busy' when every due binding is held by another worker.
   */
  async claimDueBinding(now: Date): Promise<PropagationJob[] | 'busy'> {
    const candidates = await queryRows<{ bindingId: string }>(
      this.tx,
      `SELECT j.binding_id AS "bindingId" FROM sync_propagation_jobs j
        WHERE j.status = 'pending' AND j.due_at <= $1
        GROUP BY j.binding_id ORDER BY min(j.due_at) LIMIT 20`,
      [now],
    );
    if (candidates.length === 0) {
      return [];
    }
    for (const { bindingId } of candidates) {
      const lock = await queryFirst<{ locked: boolean }>(
        this.tx,
        `SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`,
        [bindingId],
      );
      if (!lock?.locked) {
        continue;
      }
      const jobs = await queryRows<PropagationJob>(
        this.tx,
        `SELECT ${COLUMNS} FROM sync_propagation_jobs j
          WHERE j.binding_id = $1 AND j.status = 'pending' AND j.due_at <= $2
          ORDER BY j.catalog_revision_version
          FOR UPDATE SKIP LOCKED`,
        [bindingId, now],
      );
      if (jobs.length > 0) {
        return jobs;
      }
    }
    return 'busy';
  }

  async finish(
    ids: readonly string[],
    status: JobStatus,
    result: Record<string, unknown> | null,
    error: string | null = null,
  ): Promise<void> {
    await this.tx.manager.query(
      `UPDATE sync_propagation_jobs SET status = $2, result = $3, last_error = $4, applied_at = now(), attempts = attempts + 1 WHERE id = ANY($1::uuid[])`,
      [ids, status, result === null ? null : JSON.stringify(result), error],
    );
  }

  /** A failed attempt: retried later (back-off) until `maxAttempts`, then marked failed. */
  async retryLater(ids: readonly string[], error: string, now: Date, maxAttempts: number): Promise<void> {
    await this.tx.manager.query(
      `UPDATE sync_propagation_jobs
          SET attempts = attempts + 1, last_error = $2,
              status = CASE WHEN attempts + 1 >= $4 THEN 'failed' ELSE status END,
              due_at = $3::timestamptz + make_interval(secs => LEAST(3600, power(2, attempts + 1)::int))
        WHERE id = ANY($1::uuid[])`,
      [ids, error.slice(0, 2000), now, maxAttempts],
    );
  }

  async listForBinding(
    organizationId: string,
    bindingId: string,
    paging: { limit: number; offset: number },
  ): Promise<{ items: PropagationJob[]; total: number }> {
    const where = `FROM sync_propagation_jobs j WHERE j.organization_id = $1 AND j.binding_id = $2`;
    const [items, count] = await Promise.all([
      queryRows<PropagationJob>(
        this.tx,
        `SELECT ${COLUMNS} ${where} ORDER BY j.created_at DESC, j.id LIMIT $3 OFFSET $4`,
        [organizationId, bindingId, paging.limit, paging.offset],
      ),
      queryFirst<{ count: string }>(this.tx, `SELECT count(*) ${where}`, [organizationId, bindingId]),
    ]);
    return { items, total: Number(count?.count ?? 0) };
  }

  /** Whether the binding has any job in the ledger (its initial sync, or a change it received). */
  /** Which of these bindings never had a job (one query, whatever their number). */
  async withoutJobs(bindingIds: readonly string[]): Promise<Set<string>> {
    if (bindingIds.length === 0) {
      return new Set();
    }
    const rows = await this.tx.manager.query<{ id: string }[]>(
      `SELECT b.id FROM unnest($1::uuid[]) AS b(id)
        WHERE NOT EXISTS (SELECT 1 FROM sync_propagation_jobs j WHERE j.binding_id = b.id)`,
      [bindingIds],
    );
    return new Set(rows.map((row) => row.id));
  }

  async pendingCount(): Promise<number> {
    const row = await queryFirst<{ count: string }>(
      this.tx,
      `SELECT count(*) FROM sync_propagation_jobs WHERE status = 'pending'`,
    );
    return Number(row?.count ?? 0);
  }
}
