import { randomUUID } from 'node:crypto';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { PassLoop } from '../../../common/jobs/pass-loop.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import { SecretBoxService } from '../../identity/services/secret-box.service.js';
import { UsersService } from '../../identity/services/users.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import {
  type AttemptOutcome,
  type ClaimedDelivery,
  type StreakRow,
  WebhookQueueRepository,
} from '../repositories/webhook-queue.repository.js';
import { WebhookRepository } from '../repositories/webhook.repository.js';
import { WebhookAccessService } from '../services/webhook-access.service.js';
import { readScopeOf, scopesRead } from '../services/webhook-event-scopes.js';
import { retryDelaySeconds } from '../services/webhook-retry-schedule.js';
import { type SendResult, sendWebhook } from '../services/webhook-sender.js';
import { signatureHeaders } from '../services/webhook-signature.js';
import {
  LookupTimeoutError,
  UnsafeDestinationError,
  WebhookUrlGuard,
} from '../services/webhook-url-guard.service.js';

const PRUNE_EVERY_MS = 60_000;

/**
 * Sends queued webhook deliveries, outside any transaction (docs/webhooks.md, "Delivery"):
 * 1. claim — one short transaction leases up to `WEBHOOK_CONCURRENCY` webhooks whose queue head is due
 *    (SKIP LOCKED, so instances never claim the same webhook) and counts the attempt;
 * 2. check — the webhook's credential scopes read the event and its creator may still read it (the document's
 *    view permissions included), the URL still resolves to an allowed address;
 * 3. send — one POST to the checked address with the signature headers, bounded by the webhook's timeout;
 * 4. record — one transaction writes the attempt, the delivery's next state (retry time) and the failure
 *    streak, disables the webhook and notifies its creator when the streak is too long, and ends the lease
 *    (a webhook deleted meanwhile has nothing left to record: logged at debug).
 * Runs after every commit that queued something (kick), at start-up and every WEBHOOK_POLL_INTERVAL_MS.
 */
@Injectable()
export class WebhookDeliveryJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookDeliveryJob.name);
  private readonly leaseToken = randomUUID();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly loop = new PassLoop(
    () => this.claimPass(),
    (error) => this.logger.error({ err: error }, 'webhook claim pass failed'),
  );
  private lastPrune = 0;

  constructor(
    private readonly tx: TransactionHost,
    private readonly queue: WebhookQueueRepository,
    private readonly webhooks: WebhookRepository,
    private readonly access: WebhookAccessService,
    private readonly urlGuard: WebhookUrlGuard,
    private readonly secretBox: SecretBoxService,
    private readonly users: UsersService,
    private readonly notifier: NotifierService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.loop.start(this.config.webhooks.pollIntervalMs);
  }

  /** Stops claiming and lets attempts in flight finish and be recorded (each is bounded by its timeout). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
    await Promise.allSettled([...this.inFlight]);
  }

  /** Asks for a claim pass soon; passes never overlap within one instance. */
  kick(): void {
    this.loop.kick();
  }

  private async claimPass(): Promise<void> {
    await this.pruneNowAndThen();
    const free = this.config.webhooks.concurrency - this.inFlight.size;
    if (free <= 0) {
      return;
    }
    const claimed = await this.tx.run(() => this.queue.claim(free, this.leaseToken));
    for (const delivery of claimed) {
      const attempt: Promise<void> = this.drainWebhook(delivery)
        .catch((error: unknown) =>
          this.logger.error({ err: error, deliveryId: delivery.id }, 'webhook attempt failed to record'),
        )
        .finally(() => {
          this.inFlight.delete(attempt);
          this.kick();
        });
      this.inFlight.add(attempt);
    }
  }

  private async pruneNowAndThen(): Promise<void> {
    if (Date.now() - this.lastPrune < PRUNE_EVERY_MS) {
      return;
    }
    this.lastPrune = Date.now();
    await this.tx.run(() => this.queue.prune(this.config.webhooks.retentionDays));
  }

  /** Attempts the claimed delivery, then the webhook's next due head under the same lease, until none is due. */
  private async drainWebhook(first: ClaimedDelivery): Promise<void> {
    let next: ClaimedDelivery | null = first;
    while (next) {
      next = await this.attempt(next);
    }
  }

  /** One attempt; returns the webhook's next delivery when it was claimed in the same record transaction. */
  private async attempt(delivery: ClaimedDelivery): Promise<ClaimedDelivery | null> {
    const unreadable = delivery.kind === 'event' ? await this.whyUnreadable(delivery) : null;
    if (unreadable) {
      return this.tx.run(async () => {
        await this.queue.skip(delivery, `not sent: ${unreadable}; its body was dropped`);
        return this.loop.stopping ? null : this.queue.claimNextOf(delivery.webhookId, delivery.leaseToken);
      });
    }
    const secrets = [await this.secretBox.open(delivery.secret)];
    if (delivery.previousSecret) {
      secrets.push(await this.secretBox.open(delivery.previousSecret));
    }
    const startedAt = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Quire-Webhooks/1.0',
      'x-webhook-event': delivery.eventType,
      ...signatureHeaders(secrets, delivery.id, startedAt.getTime(), delivery.requestBody),
    };
    const result = await this.send(delivery, headers);
    // A 2xx is success only when the whole exchange completed: a connection that breaks mid-body is a failure.
    const success = result.error === null && result.status !== null && result.status >= 200 && result.status < 300;
    const outcome = this.outcomeOf(delivery, success);
    return this.tx.run(async () => {
      if (!(await this.queue.lockWebhook(delivery.webhookId))) {
        // Deleted while the attempt was in flight, with its queue and history: nothing left to record.
        this.logger.debug(
          { webhookId: delivery.webhookId, deliveryId: delivery.id, status: result.status },
          'webhook deleted during an attempt; outcome not recorded',
        );
        return null;
      }
      await this.queue.insertAttempt({
        deliveryId: delivery.id,
        webhookId: delivery.webhookId,
        attempt: delivery.attempt,
        manual: delivery.manual,
        requestHeaders: headers,
        responseStatus: result.status,
        responseBody: result.bodyExcerpt,
        durationMs: result.durationMs,
        error: result.error ?? (success ? null : `HTTP ${result.status ?? '-'}`),
        success,
        startedAt,
        nextRetryAt: outcome.nextAttemptAt,
      });
      const { owned, streak } = await this.queue.finishAttempt(delivery, outcome, {
        statusCode: result.status,
        error: result.error ?? (success ? null : `HTTP ${result.status ?? '-'}`),
        durationMs: result.durationMs,
      });
      if (streak) {
        await this.disableIfFailingTooLong(delivery, streak);
      }
      return this.loop.stopping || !owned ? null : this.queue.claimNextOf(delivery.webhookId, delivery.leaseToken);
    });
  }

  /**
   * Why an event delivery may not go out any more, or null: a PUT by a narrower credential has narrowed the
   * webhook's scopes since it was queued (it may have pointed the URL elsewhere), or its creator lost read access.
   */
  private async whyUnreadable(delivery: ClaimedDelivery): Promise<string | null> {
    const event = { eventType: delivery.eventType, docType: delivery.docType, docId: delivery.docId };
    if (!scopesRead(delivery.credentialScopes, event)) {
      return `the webhook's credential scopes no longer include ${readScopeOf(event) ?? ''}`;
    }
    // As of its event: a document created since with the same id is not the deleted one the event is of.
    const mayRead = await this.access.creatorMayRead(
      delivery.createdBy,
      {
        organizationId: delivery.organizationId,
        workspaceId: delivery.workspaceId,
        docType: delivery.docType,
        docId: delivery.docId,
      },
      delivery.eventAt,
    );
    return mayRead ? null : "the webhook's creator can no longer read this document";
  }

  private async send(delivery: ClaimedDelivery, headers: Record<string, string>): Promise<SendResult> {
    // `timeout` bounds the whole attempt, the DNS lookup included: the lease lasts timeout + 30 s.
    const timeoutMs = delivery.timeoutSeconds * 1000;
    const started = performance.now();
    try {
      const destination = await this.urlGuard.check(delivery.url, timeoutMs);
      return await sendWebhook(destination, headers, delivery.requestBody, timeoutMs, performance.now() - started);
    } catch (error) {
      const durationMs = Math.round(performance.now() - started);
      if (error instanceof UnsafeDestinationError) {
        return { status: null, bodyExcerpt: null, durationMs, error: `refused: ${error.message}` };
      }
      if (error instanceof LookupTimeoutError) {
        return { status: null, bodyExcerpt: null, durationMs, error: error.message };
      }
      throw error;
    }
  }

  /** Retries follow retryDelaySeconds (exponential from retryInterval, with jitter); tests and redeliveries are not retried. */
  private outcomeOf(delivery: ClaimedDelivery, success: boolean): AttemptOutcome {
    const countsAsFailure = !success && delivery.kind === 'event' && !delivery.manual;
    if (success) {
      return { status: 'succeeded', nextAttemptAt: null, countsAsFailure };
    }
    if (delivery.kind === 'event' && !delivery.manual && delivery.retriesLeft > 0) {
      const delay = retryDelaySeconds(delivery.retryIntervalSeconds, delivery.attempt);
      return { status: 'retrying', nextAttemptAt: new Date(Date.now() + delay * 1000), countsAsFailure };
    }
    return { status: 'failed', nextAttemptAt: null, countsAsFailure };
  }

  /**
   * Auto-disable: WEBHOOK_DISABLE_AFTER_FAILURES failed automatic attempts in a row, or failing without a
   * success for WEBHOOK_DISABLE_AFTER_SECONDS. The queue is kept (delivered on resume); the creator gets an e-mail.
   */
  private async disableIfFailingTooLong(delivery: ClaimedDelivery, streak: StreakRow): Promise<void> {
    const { disableAfterFailures, disableAfterSeconds } = this.config.webhooks;
    const tooMany = streak.consecutiveFailures >= disableAfterFailures;
    const tooLong = streak.failingSeconds !== null && streak.failingSeconds >= disableAfterSeconds;
    if (streak.status !== 'active' || (!tooMany && !tooLong)) {
      return;
    }
    const reason = tooMany
      ? `${streak.consecutiveFailures} consecutive failed deliveries`
      : `failing without a successful delivery for ${Math.round(streak.failingSeconds ?? 0)} seconds`;
    const webhook = await this.webhooks.setStatus(delivery.webhookId, 'disabled', reason);
    const creator = await this.users.findById(webhook.createdBy);
    if (!creator?.email) {
      return;
    }
    await this.notifier.send({
      channel: 'email',
      to: creator.email,
      userId: creator.id,
      kind: 'webhook_disabled',
      subject: `Webhook "${webhook.name}" was disabled`,
      body:
        `Your webhook "${webhook.name}" (${webhook.url}) was disabled after ${reason}.\n` +
        'Events are kept and will be delivered in order once you resume it (POST /webhooks/{webhookId}/resume).',
      data: { webhookId: webhook.id, organizationId: webhook.organizationId, reason, lastError: null },
    });
  }
}
