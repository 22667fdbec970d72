import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { returnedRows } from '../../../database/sql-result.js';
import type { WebhookFilters } from '../services/webhook-filter.js';
import { prepared } from '../../../database/prepared-statements.js';

export const WEBHOOK_STATUSES = ['active', 'paused', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export interface WebhookRow {
  id: string;
  organizationId: string;
  /** Created without an organization: also receives the events of every other organization its creator is in. */
  allOrganizations: boolean;
  createdBy: string;
  name: string;
  description: string | null;
  url: string;
  events: string[];
  filters: WebhookFilters;
  timeoutSeconds: number;
  maxRetries: number;
  retryIntervalSeconds: number;
  /**
   * Scopes of the credential that created it, narrowed by later PUTs: it delivers only events these read
   * (webhook-event-scopes.ts). Null for webhooks created before they were recorded: unrestricted.
   */
  credentialScopes: string[] | null;
  status: WebhookStatus;
  /** Sealed (SecretBoxService); never leaves the service layer. */
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  secretRotatedAt: Date | null;
  consecutiveFailures: number;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewWebhook {
  organizationId: string;
  allOrganizations: boolean;
  createdBy: string;
  name: string;
  description: string | null;
  url: string;
  events: string[];
  filters: WebhookFilters;
  timeoutSeconds: number;
  maxRetries: number;
  retryIntervalSeconds: number;
  credentialScopes: string[];
  secret: string;
}

export type WebhookChanges = Partial<
  Pick<
    NewWebhook,
    | 'name'
    | 'description'
    | 'url'
    | 'events'
    | 'filters'
    | 'timeoutSeconds'
    | 'maxRetries'
    | 'retryIntervalSeconds'
    | 'credentialScopes'
  >
>;

export const WEBHOOK_COLUMNS = `w.id, w.organization_id AS "organizationId", w.all_organizations AS "allOrganizations", w.created_by AS "createdBy", w.name, w.description, w.url,
  w.events, w.filters, w.timeout_seconds AS "timeoutSeconds", w.max_retries AS "maxRetries",
  w.retry_interval_seconds AS "retryIntervalSeconds", w.credential_scopes AS "credentialScopes", w.status, w.secret, w.previous_secret AS "previousSecret",
  w.previous_secret_expires_at AS "previousSecretExpiresAt", w.secret_rotated_at AS "secretRotatedAt",
  w.consecutive_failures AS "consecutiveFailures", w.failing_since AS "failingSince", w.disabled_at AS "disabledAt",
  w.disabled_reason AS "disabledReason", w.created_at AS "createdAt", w.updated_at AS "updatedAt"`;

const CHANGE_COLUMNS: Record<keyof WebhookChanges, string> = {
  name: 'name',
  description: 'description',
  url: 'url',
  events: 'events',
  filters: 'filters',
  timeoutSeconds: 'timeout_seconds',
  maxRetries: 'max_retries',
  retryIntervalSeconds: 'retry_interval_seconds',
  credentialScopes: 'credential_scopes',
};

/** Webhooks. Every lookup by id also names the organizations the caller may see, so other tenants' ids find nothing. */
@Injectable()
export class WebhookRepository {
  constructor(private readonly tx: TransactionHost) {}

  async insert(webhook: NewWebhook): Promise<WebhookRow> {
    const rows = await this.tx.manager.query<WebhookRow[]>(
      `INSERT INTO webhooks AS w (organization_id, created_by, name, description, url, events, filters, timeout_seconds,
                                  max_retries, retry_interval_seconds, secret, all_organizations, credential_scopes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       RETURNING ${WEBHOOK_COLUMNS}`,
      [
        webhook.organizationId,
        webhook.createdBy,
        webhook.name,
        webhook.description,
        webhook.url,
        webhook.events,
        JSON.stringify(webhook.filters),
        webhook.timeoutSeconds,
        webhook.maxRetries,
        webhook.retryIntervalSeconds,
        webhook.secret,
        webhook.allOrganizations,
        webhook.credentialScopes,
      ],
    );
    return rows[0];
  }

  /**
   * How many webhooks count against the limit a new one would join (docs/webhooks.md, "Limits"): the organization's
   * own webhooks, or the creator's all-organizations webhooks. Takes a transaction-scoped advisory lock on that
   * scope first, so concurrent creations are counted one after the other and cannot pass the limit together.
   */
  async countForLimit(scope: { organizationId: string } | { allOrganizationsOf: string }): Promise<number> {
    const [key, sql, parameter] =
      'organizationId' in scope
        ? [
            `quire.webhooks.organization:${scope.organizationId}`,
            `SELECT count(*) AS total FROM webhooks WHERE organization_id = $1 AND NOT all_organizations`,
            scope.organizationId,
          ]
        : [
            `quire.webhooks.all-organizations:${scope.allOrganizationsOf}`,
            `SELECT count(*) AS total FROM webhooks WHERE created_by = $1 AND all_organizations`,
            scope.allOrganizationsOf,
          ];
    await this.tx.manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [key]);
    const rows = await this.tx.manager.query<Array<{ total: string }>>(sql, [parameter]);
    return Number(rows[0].total);
  }

  /**
   * The webhook if `userId` may reach it: a webhook of one of `organizationIds` (the caller's active organizations),
   * or an all-organizations webhook `userId` created — those belong to their creator, not to the organization they
   * were created in, so no one else finds them and their creator finds them wherever they are a member.
   * `lock` serializes concurrent changes to it.
   */
  async findReachable(
    id: string,
    userId: string,
    organizationIds: string[],
    lock = false,
  ): Promise<WebhookRow | null> {
    const rows = await this.tx.manager.query<WebhookRow[]>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks w
        WHERE w.id = $1
          AND CASE WHEN w.all_organizations THEN w.created_by = $2 ELSE w.organization_id = ANY($3::uuid[]) END
        ${lock ? 'FOR UPDATE' : ''}`,
      [id, userId, organizationIds],
    );
    return rows[0] ?? null;
  }

  /**
   * A page of webhooks, newest first: those of `scope.organizationId` (all-organizations ones excluded: they are
   * their creators'), limited to `scope.createdBy`'s when given, plus `ownerId`'s own all-organizations webhooks.
   * A null organization lists only the latter.
   */
  async list(
    scope: { organizationId: string | null; createdBy: string | null },
    ownerId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: WebhookRow[]; total: number }> {
    const where = `(NOT w.all_organizations AND w.organization_id = $1 AND ($2::uuid IS NULL OR w.created_by = $2))
                   OR (w.all_organizations AND w.created_by = $3)`;
    const params = [scope.organizationId, scope.createdBy, ownerId];
    const rows = await this.tx.manager.query<Array<WebhookRow & { total: string }>>(
      `SELECT ${WEBHOOK_COLUMNS}, count(*) OVER () AS total FROM webhooks w
        WHERE ${where}
        ORDER BY w.created_at DESC, w.id
        LIMIT $4 OFFSET $5`,
      [...params, limit, offset],
    );
    const total = rows.length > 0 ? Number(rows[0].total) : 0;
    if (rows.length === 0 && offset > 0) {
      const counted = await this.tx.manager.query<Array<{ total: string }>>(
        `SELECT count(*) AS total FROM webhooks w WHERE ${where}`,
        params,
      );
      return { rows: [], total: Number(counted[0].total) };
    }
    return { rows, total };
  }

  async update(id: string, changes: WebhookChanges): Promise<WebhookRow> {
    const sets: string[] = [];
    const params: unknown[] = [id];
    for (const [key, column] of Object.entries(CHANGE_COLUMNS) as Array<[keyof WebhookChanges, string]>) {
      const value = changes[key];
      if (value !== undefined) {
        params.push(key === 'filters' ? JSON.stringify(value) : value);
        sets.push(`${column} = $${params.length}`);
      }
    }
    const rows = returnedRows<WebhookRow>(
      await this.tx.manager.query(
        `UPDATE webhooks w SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE w.id = $1 RETURNING ${WEBHOOK_COLUMNS}`,
        params,
      ),
    );
    return rows[0];
  }

  async delete(id: string): Promise<void> {
    await this.tx.manager.query(`DELETE FROM webhooks WHERE id = $1`, [id]);
  }

  /** pause / resume / disable. Resume also clears the failure streak, so a new one starts from zero. */
  async setStatus(id: string, status: WebhookStatus, reason: string | null = null): Promise<WebhookRow> {
    const rows = returnedRows<WebhookRow>(
      await this.tx.manager.query(
        `UPDATE webhooks w
          SET status = $2::text, updated_at = now(),
              disabled_at = CASE WHEN $2::text = 'disabled' THEN now() ELSE NULL END,
              disabled_reason = CASE WHEN $2::text = 'disabled' THEN $3::text ELSE NULL END,
              consecutive_failures = CASE WHEN $2::text = 'active' THEN 0 ELSE consecutive_failures END,
              failing_since = CASE WHEN $2::text = 'active' THEN NULL ELSE failing_since END
        WHERE w.id = $1
        RETURNING ${WEBHOOK_COLUMNS}`,
        [id, status, reason],
      ),
    );
    return rows[0];
  }

  /** The new secret signs from now on; the current one keeps signing until `graceSeconds` have passed. */
  async rotateSecret(id: string, sealedSecret: string, graceSeconds: number): Promise<WebhookRow> {
    const rows = returnedRows<WebhookRow>(
      await this.tx.manager.query(
        `UPDATE webhooks w
          SET previous_secret = CASE WHEN $3::int > 0 THEN secret ELSE NULL END,
              previous_secret_expires_at = CASE WHEN $3::int > 0 THEN now() + make_interval(secs => $3::int) ELSE NULL END,
              secret = $2, secret_rotated_at = now(), updated_at = now()
        WHERE w.id = $1
        RETURNING ${WEBHOOK_COLUMNS}`,
        [id, sealedSecret, graceSeconds],
      ),
    );
    return rows[0];
  }

  /**
   * Whether any webhook may want the organization's events: one of its own, or an all-organizations webhook of one of
   * its active members (deleted ones are gone; paused and disabled ones keep their events).
   */
  async anyInOrganization(organizationId: string): Promise<boolean> {
    const rows = await this.tx.manager.query<unknown[]>(
      prepared(
        `SELECT 1 WHERE EXISTS (SELECT 1 FROM webhooks WHERE organization_id = $1 AND NOT all_organizations)
            OR EXISTS (SELECT 1 FROM organization_members m JOIN webhooks w ON w.created_by = m.user_id AND w.all_organizations
                        WHERE m.organization_id = $1 AND m.status = 'active')`,
      ),
      [organizationId],
    );
    return rows.length > 0;
  }

  /**
   * The webhooks an event is queued for (spec 6.1): the organization's own, and the all-organizations webhooks of
   * its active members (whichever organization they were created in; one whose creator has left or been removed
   * gets nothing more of it) subscribed to its type and created no later than it occurred. The listener then checks
   * each creator may read the event. Paused and disabled webhooks are included: issue 12 keeps their events (queued,
   * not sent) until resume, and the retention job bounds how long.
   */
  async subscribedTo(organizationId: string, eventType: string, eventId: string): Promise<WebhookRow[]> {
    // The outbox row's own occurred_at: the envelope's ISO timestamp has lost the microseconds.
    return this.tx.manager.query<WebhookRow[]>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhooks w
        WHERE ((NOT w.all_organizations AND w.organization_id = $1)
               OR (w.all_organizations AND EXISTS (SELECT 1 FROM organization_members m
                                                    WHERE m.organization_id = $1 AND m.user_id = w.created_by AND m.status = 'active')))
          AND (w.events @> ARRAY[$2]::text[] OR w.events @> ARRAY['*']::text[])
          AND w.created_at <= (SELECT o.occurred_at FROM outbox o WHERE o.id = $3)`,
      [organizationId, eventType, eventId],
    );
  }
}
