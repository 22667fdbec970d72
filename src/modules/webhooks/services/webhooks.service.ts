import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { offsetOf, type Page, pageOf } from '../../../common/http/pagination.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { SecretBoxService } from '../../identity/services/secret-box.service.js';
import { DeliveryDetailResponseDto, toDeliveryDetail } from '../dtos/webhook-delivery.dto.js';
import {
  type CreateWebhookDto,
  TEST_EVENT,
  type TestWebhookDto,
  toWebhookResponse,
  type UpdateWebhookDto,
  WEBHOOK_LIMITS,
  type WebhookListQueryDto,
  type WebhookResponseDto,
  type WebhookWithSecretResponseDto,
} from '../dtos/webhook.dto.js';
import { WebhookDeliveryJob } from '../jobs/webhook-delivery.job.js';
import { WebhookDeliveryRepository } from '../repositories/webhook-delivery.repository.js';
import {
  type WebhookChanges,
  WebhookRepository,
  type WebhookRow,
} from '../repositories/webhook.repository.js';
import { WebhookAccessService } from './webhook-access.service.js';
import { narrowedScopes, normalizedScopes } from './webhook-event-scopes.js';
import { filtersProblems, type WebhookFilters } from './webhook-filter.js';
import { generateWebhookSecret } from './webhook-signature.js';
import { UnsafeDestinationError, WebhookUrlGuard } from './webhook-url-guard.service.js';

/** An organization's own webhooks (not all-organizations ones), whoever created them (docs/webhooks.md, "Limits"). */
export const MAX_WEBHOOKS_PER_ORGANIZATION = 25;
/** A user's all-organizations webhooks: each carries the events of every organization the user is in. */
export const MAX_ALL_ORGANIZATIONS_WEBHOOKS_PER_USER = 10;

/** Webhook management (spec 4.6): create, read, update, delete, pause, resume, test, regenerate-secret. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly webhooks: WebhookRepository,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly access: WebhookAccessService,
    private readonly urlGuard: WebhookUrlGuard,
    private readonly secretBox: SecretBoxService,
    private readonly job: WebhookDeliveryJob,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(
    principal: Principal,
    dto: CreateWebhookDto,
    organizationHeader: string | undefined,
  ): Promise<WebhookWithSecretResponseDto> {
    const filters = this.checkFilters(dto.filters);
    const url = dto.url.trim();
    // DNS is resolved before the transaction opens: no network wait while holding a connection.
    await this.checkUrl(url);
    const secret = generateWebhookSecret();
    const sealed = await this.secretBox.seal(secret);
    return this.tx.run(async () => {
      const { organizationId } = await this.access.organizationFor(
        principal,
        dto.organizationId,
        organizationHeader,
      );
      await this.access.requireCreator(principal, organizationId);
      await this.requireRoomFor(principal.userId, organizationId, dto.allOrganizations === true);
      const row = await this.webhooks.insert({
        organizationId,
        // Opt-in (docs/webhooks.md): by default a webhook carries its own organization's events only (issue 12).
        allOrganizations: dto.allOrganizations === true,
        createdBy: principal.userId,
        name: dto.name,
        description: dto.description ?? null,
        url,
        events: unique(dto.events),
        filters,
        timeoutSeconds: dto.timeout ?? WEBHOOK_LIMITS.timeout.default,
        maxRetries: dto.maxRetries ?? WEBHOOK_LIMITS.maxRetries.default,
        retryIntervalSeconds: dto.retryInterval ?? WEBHOOK_LIMITS.retryInterval.default,
        // It delivers only what this credential could read through the API (a session carries every scope).
        credentialScopes: normalizedScopes(principal.scopes),
        secret: sealed,
      });
      return { ...toWebhookResponse(row), secret };
    });
  }

  /**
   * The organization's webhooks — owners and admins see all of them, other members their own — and the caller's own
   * all-organizations webhooks, wherever they were created (no one else sees those). With no organization named and
   * no default organization, only the latter.
   */
  async list(
    principal: Principal,
    query: WebhookListQueryDto,
    organizationHeader: string | undefined,
  ): Promise<Page<WebhookResponseDto>> {
    const listed = await this.access.listedOrganization(principal, query.organizationId, organizationHeader);
    const { rows, total } = await this.webhooks.list(
      {
        organizationId: listed?.organizationId ?? null,
        createdBy: listed?.isManager ? null : principal.userId,
      },
      principal.userId,
      query.pageSize,
      offsetOf(query),
    );
    return pageOf(rows.map(toWebhookResponse), total, query);
  }

  async get(principal: Principal, webhookId: string): Promise<WebhookResponseDto> {
    return toWebhookResponse(await this.access.manageable(principal, webhookId));
  }

  /**
   * The fields given replace the stored ones. A webhook as read is accepted: its `id` must be this one, the other
   * read-only keys are ignored (UpdateWebhookDto). The webhook's credential scopes become those it had that the
   * calling credential also holds: a narrower credential could otherwise point it at its own URL and receive what it
   * cannot read; a PUT never widens them.
   */
  async update(principal: Principal, webhookId: string, dto: UpdateWebhookDto): Promise<WebhookResponseDto> {
    if (dto.id !== undefined && dto.id.toLowerCase() !== webhookId.toLowerCase()) {
      throw AppException.validation([
        {
          field: 'id',
          reason: "the id in the body must be the webhook's id in the path (it cannot be changed)",
        },
      ]);
    }
    const filters = dto.filters === undefined ? undefined : this.checkFilters(dto.filters);
    const url = dto.url?.trim();
    if (url !== undefined) {
      await this.checkUrl(url);
    }
    return this.tx.run(async () => {
      const webhook = await this.access.manageable(principal, webhookId, true);
      const changes: WebhookChanges = {
        name: dto.name,
        description: dto.description,
        url,
        events: dto.events ? unique(dto.events) : undefined,
        filters,
        timeoutSeconds: dto.timeout,
        maxRetries: dto.maxRetries,
        retryIntervalSeconds: dto.retryInterval,
        credentialScopes: narrowedScopes(webhook.credentialScopes, principal.scopes),
      };
      if (dto.maxRetries !== undefined && dto.maxRetries !== webhook.maxRetries) {
        // Deliveries already queued follow the new budget too (docs/webhooks.md, "Success, retries, back-off").
        await this.deliveries.shiftRetriesLeft(webhookId, dto.maxRetries - webhook.maxRetries);
      }
      return toWebhookResponse(await this.webhooks.update(webhookId, changes));
    });
  }

  /** Deletes the webhook with its queue and history. */
  async remove(principal: Principal, webhookId: string): Promise<null> {
    return this.tx.run(async () => {
      await this.access.manageable(principal, webhookId, true);
      await this.webhooks.delete(webhookId);
      return null;
    });
  }

  /** Stops sending; new events keep queueing and go out, in order, on resume. */
  async pause(principal: Principal, webhookId: string): Promise<WebhookResponseDto> {
    return this.tx.run(async () => {
      const webhook = await this.access.manageable(principal, webhookId, true);
      // Pausing a paused webhook changes nothing (not even `updatedAt`), as a repeated transition should.
      if (webhook.status === 'paused') {
        return toWebhookResponse(webhook);
      }
      return toWebhookResponse(await this.webhooks.setStatus(webhookId, 'paused'));
    });
  }

  /** Re-enables a paused or disabled webhook; its queue (and a waiting retry) is due at once. */
  async resume(principal: Principal, webhookId: string): Promise<WebhookResponseDto> {
    const { row, resumed } = await this.tx.run(async () => {
      const webhook = await this.access.manageable(principal, webhookId, true);
      // An active webhook has nothing to resume: clearing its failure streak would postpone the auto-disable,
      // and making its waiting retry due would break the retryInterval spacing (spec 6.1).
      if (webhook.status === 'active') {
        return { row: webhook, resumed: false };
      }
      await this.deliveries.makeQueueDue(webhookId);
      return { row: await this.webhooks.setStatus(webhookId, 'active'), resumed: true };
    });
    if (resumed) {
      this.job.kick();
    }
    return toWebhookResponse(row);
  }

  async regenerateSecret(principal: Principal, webhookId: string): Promise<WebhookWithSecretResponseDto> {
    const secret = generateWebhookSecret();
    const sealed = await this.secretBox.seal(secret);
    return this.tx.run(async () => {
      await this.access.manageable(principal, webhookId, true);
      const row = await this.webhooks.rotateSecret(
        webhookId,
        sealed,
        this.config.webhooks.secretGraceSeconds,
      );
      return { ...toWebhookResponse(row), secret };
    });
  }

  /**
   * Queues a test delivery at the front of the webhook's queue (sent even while paused or disabled, never
   * retried, not counted in the failure streak) and returns it; its outcome shows in the delivery history.
   */
  async test(
    principal: Principal,
    webhookId: string,
    dto: TestWebhookDto,
  ): Promise<DeliveryDetailResponseDto> {
    const result = await this.tx.run(async () => {
      const webhook = await this.access.manageable(principal, webhookId);
      const deliveryId = randomUUID();
      const event = dto.event ?? TEST_EVENT;
      const payload =
        dto.payload ?? (event === TEST_EVENT ? { message: 'This is a test delivery from Quire.' } : {});
      const body = JSON.stringify(testEnvelope(webhook, deliveryId, event, principal.userId, payload));
      await this.deliveries.enqueue([
        {
          id: deliveryId,
          webhookId,
          organizationId: webhook.organizationId,
          workspaceId: null,
          eventId: null,
          eventSeq: null,
          eventType: event,
          docType: null,
          docId: null,
          triggeredBy: principal.userId,
          kind: 'test',
          requestBody: body,
          retriesLeft: 0,
        },
      ]);
      const row = await this.deliveries.find(webhookId, deliveryId);
      if (!row) {
        throw new Error('test delivery vanished');
      }
      return toDeliveryDetail(row, [], true);
    });
    this.job.kick();
    return result;
  }

  /**
   * Every webhook's filters run for every event of its organization in the outbox dispatch, so how many there are is
   * bounded (docs/webhooks.md, "Limits"): an organization's own webhooks, and each user's all-organizations ones.
   */
  private async requireRoomFor(userId: string, organizationId: string, allOrganizations: boolean): Promise<void> {
    const [count, limit, reason] = allOrganizations
      ? [
          await this.webhooks.countForLimit({ allOrganizationsOf: userId }),
          MAX_ALL_ORGANIZATIONS_WEBHOOKS_PER_USER,
          `a user may have at most ${MAX_ALL_ORGANIZATIONS_WEBHOOKS_PER_USER} all-organizations webhooks; delete one first`,
        ]
      : [
          await this.webhooks.countForLimit({ organizationId }),
          MAX_WEBHOOKS_PER_ORGANIZATION,
          `an organization may have at most ${MAX_WEBHOOKS_PER_ORGANIZATION} webhooks; delete one first`,
        ];
    if (count >= limit) {
      throw new AppException(ErrorCode.INVALID_STATE, { details: [{ reason }], payload: { limit } });
    }
  }

  /** Absent or null: no filters (`{}`). User ids are kept lower-case, as the service writes every id (`triggeredBy`). */
  private checkFilters(filters: WebhookFilters | null | undefined): WebhookFilters {
    const problems = filtersProblems(filters);
    if (problems.length > 0) {
      throw AppException.validation(problems);
    }
    if (!filters) {
      return {};
    }
    return filters.userIds ? { ...filters, userIds: filters.userIds.map((id) => id.toLowerCase()) } : filters;
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await this.urlGuard.check(url);
    } catch (error) {
      if (error instanceof UnsafeDestinationError) {
        throw AppException.validation([{ field: 'url', reason: error.message }]);
      }
      throw error;
    }
  }
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function testEnvelope(
  webhook: WebhookRow,
  deliveryId: string,
  event: string,
  userId: string,
  payload: Record<string, unknown>,
): Record<string, unknown> {
  return {
    event,
    timestamp: new Date().toISOString(),
    webhookId: webhook.id,
    deliveryId,
    organizationId: webhook.organizationId,
    workspaceId: null,
    // Spec 6.1 types docType and docId as strings in every delivery: a test names no document, so both are empty
    // (not null), and a receiver that checks the envelope as the spec writes it accepts its test deliveries.
    docType: '',
    docId: '',
    triggeredBy: userId,
    payload,
  };
}
