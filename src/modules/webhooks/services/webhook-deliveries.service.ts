import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { offsetOf, type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import {
  type DeliveryDetailResponseDto,
  type DeliveryQueryDto,
  type DeliveryResponseDto,
  isHiddenSkip,
  toDeliveryDetail,
  toDeliveryResponse,
  toStatsResponse,
  type WebhookStatsResponseDto,
} from '../dtos/webhook-delivery.dto.js';
import { WebhookDeliveryJob } from '../jobs/webhook-delivery.job.js';
import { type DeliveryRow, WebhookDeliveryRepository } from '../repositories/webhook-delivery.repository.js';
import type { WebhookRow } from '../repositories/webhook.repository.js';
import { WebhookAccessService } from './webhook-access.service.js';
import { scopesRead } from './webhook-event-scopes.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Delivery history, redelivery and statistics of one webhook (same access rule as the webhook itself). */
@Injectable()
export class WebhookDeliveriesService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly access: WebhookAccessService,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly job: WebhookDeliveryJob,
  ) {}

  async list(
    principal: Principal,
    webhookId: string,
    query: DeliveryQueryDto,
  ): Promise<Page<DeliveryResponseDto>> {
    await this.access.manageable(principal, webhookId);
    const { rows, total } = await this.deliveries.list(
      webhookId,
      { status: query.status, event: query.event },
      query.pageSize,
      offsetOf(query),
    );
    return pageOf(rows.map(toDeliveryResponse), total, query);
  }

  async get(principal: Principal, webhookId: string, deliveryId: string): Promise<DeliveryDetailResponseDto> {
    const webhook = await this.access.manageable(principal, webhookId);
    const row = UUID.test(deliveryId) ? await this.deliveries.find(webhookId, deliveryId) : null;
    if (!row) {
      throw AppException.notFound('delivery');
    }
    return toDeliveryDetail(
      row,
      await this.deliveries.attempts(deliveryId),
      await this.bodyReadable(principal, webhook, row),
    );
  }

  /**
   * Sends the same delivery (same deliveryId and body) again as a new attempt; the creator's read access is
   * checked again before it is sent. A skipped delivery has no body any more: INVALID_STATE.
   */
  async redeliver(
    principal: Principal,
    webhookId: string,
    deliveryId: string,
  ): Promise<DeliveryDetailResponseDto> {
    const result = await this.tx.run(async () => {
      const webhook = await this.access.manageable(principal, webhookId);
      const row = UUID.test(deliveryId) ? await this.deliveries.find(webhookId, deliveryId, true) : null;
      if (!row) {
        throw AppException.notFound('delivery');
      }
      if (isHiddenSkip(row)) {
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [
            {
              reason:
                "a skipped delivery cannot be redelivered: its event may not be read (by the webhook's creator, or with its credential scopes), and its body was dropped",
            },
          ],
        });
      }
      await this.deliveries.requeue(deliveryId);
      const updated = (await this.deliveries.find(webhookId, deliveryId)) ?? row;
      return toDeliveryDetail(
        updated,
        await this.deliveries.attempts(deliveryId),
        await this.bodyReadable(principal, webhook, updated),
      );
    });
    this.job.kick();
    return result;
  }

  async stats(principal: Principal, webhookId: string): Promise<WebhookStatsResponseDto> {
    const webhook = await this.access.manageable(principal, webhookId);
    return toStatsResponse(webhook, await this.deliveries.stats(webhookId));
  }

  /**
   * An event delivery's body is shown only while the deliveries rule admits it — the webhook's credential scopes
   * read the event and its creator may read it (access taken away hides it even before the delivery is skipped) —
   * and the calling credential itself holds the scope that reads it through the API (a `webhooks:manage`-only key
   * sees no row values). Tests carry the caller's payload.
   */
  private async bodyReadable(principal: Principal, webhook: WebhookRow, row: DeliveryRow): Promise<boolean> {
    if (row.kind === 'test') {
      return true;
    }
    const event = { eventType: row.eventType, docType: row.docType, docId: row.docId };
    if (!scopesRead(principal.scopes, event) || !scopesRead(webhook.credentialScopes, event)) {
      return false;
    }
    // As of its event, like every attempt (WebhookDeliveryJob): not the body of a deleted document whose id a later
    // document uses.
    return this.access.creatorMayRead(
      webhook.createdBy,
      {
        organizationId: row.organizationId,
        workspaceId: row.workspaceId,
        docType: row.docType,
        docId: row.docId,
      },
      row.eventAt,
    );
  }
}
