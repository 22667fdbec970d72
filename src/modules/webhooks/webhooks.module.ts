import { Module } from '@nestjs/common';
import { DocumentsModule } from '../documents/documents.module.js';
import { TenancyModule } from '../tenancy/tenancy.module.js';
import { WebhookDeliveriesController } from './controllers/webhook-deliveries.controller.js';
import { WebhooksController } from './controllers/webhooks.controller.js';
import { WebhookDeliveryJob } from './jobs/webhook-delivery.job.js';
import { WebhookEnqueueListener } from './listeners/webhook-enqueue.listener.js';
import { WebhookDeliveryRepository } from './repositories/webhook-delivery.repository.js';
import { WebhookQueueRepository } from './repositories/webhook-queue.repository.js';
import { WebhookRepository } from './repositories/webhook.repository.js';
import { WebhookAccessService } from './services/webhook-access.service.js';
import { WebhookDeliveriesService } from './services/webhook-deliveries.service.js';
import { WebhooksService } from './services/webhooks.service.js';
import { WebhookUrlGuard } from './services/webhook-url-guard.service.js';

/**
 * Outgoing webhooks (spec 2.13, 4.6, 6.1; docs/webhooks.md): management routes, the outbox subscriber
 * that queues deliveries, and the worker that signs, sends, retries and records them.
 */
@Module({
  // Documents: whether a webhook's creator may view an event's document (DocumentAccessService.mayView).
  imports: [TenancyModule, DocumentsModule],
  controllers: [WebhooksController, WebhookDeliveriesController],
  providers: [
    WebhookRepository,
    WebhookDeliveryRepository,
    WebhookQueueRepository,
    WebhookAccessService,
    WebhookUrlGuard,
    WebhooksService,
    WebhookDeliveriesService,
    WebhookDeliveryJob,
    WebhookEnqueueListener,
  ],
})
export class WebhooksModule {}
