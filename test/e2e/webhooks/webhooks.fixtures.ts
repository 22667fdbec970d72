import { createHmac, timingSafeEqual } from 'node:crypto';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { TransactionHost } from '../../../src/database/transaction-host.js';
import type { NewDomainEvent } from '../../../src/modules/events/domain-event.js';
import { OutboxService } from '../../../src/modules/events/outbox.service.js';
import { bearer, type TestUser } from '../../factories/users.factory.js';
import type { TestApp } from '../../utils/test-app.js';
import type { ReceivedRequest } from './webhook-receiver.js';

export const API = '/api/v1';

/** Environment of the webhook tests: receivers run on 127.0.0.1, so private destinations are allowed. */
export const WEBHOOK_TEST_ENV = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '100',
  OUTBOX_POLL_INTERVAL_MS: '100',
  ...(process.env.WEBHOOK_TEST_LOG ? { LOG_LEVEL: process.env.WEBHOOK_TEST_LOG } : {}),
};

export interface CreatedWebhook {
  id: string;
  secret: string;
  organizationId: string;
  [key: string]: unknown;
}

export async function createWebhook(
  t: TestApp,
  user: TestUser,
  body: Record<string, unknown>,
): Promise<CreatedWebhook> {
  const res = await request(t.http)
    .post(`${API}/webhooks`)
    .set(bearer(user))
    .send({ name: 'hook', events: ['*'], ...body });
  if (res.status !== 201) {
    throw new Error(`create webhook failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.payload as CreatedWebhook;
}

/**
 * An organization-level document (no workspace) of `user`'s default organization: events recorded in a test must
 * name a document that exists, or no webhook is offered them (docs/webhooks.md, "What a webhook may see").
 */
export async function createOrganizationDocument(
  t: TestApp,
  user: TestUser,
  docType: string,
  docId: string,
): Promise<void> {
  await request(t.http)
    .post(`${API}/doc/${docType}`)
    .set(bearer(user))
    .send({
      id: docId,
      organizationId: user.defaultOrganizationId,
      workspaceId: null,
      metadata: { fields: [{ id: 'name', name: 'Name', type: 'text' }] },
    })
    .expect(201);
}

/**
 * Records events through the outbox exactly as a module does (inside a unit of work). Used for the event
 * groups whose modules are not built yet: the webhook path is generic over the catalogue.
 */
export async function recordEvents(t: TestApp, ...events: NewDomainEvent[]): Promise<string[]> {
  const tx = t.app.get(TransactionHost);
  const outbox = t.app.get(OutboxService);
  return tx.run(() => outbox.record(...events));
}

export interface DeliveryView {
  deliveryId: string;
  event: string;
  status: string;
  docType: string | null;
  docId: string | null;
  attempts: number;
  nextRetryAt: string | null;
  responseStatus: number | null;
  error: string | null;
}

export async function deliveriesOf(
  t: TestApp,
  user: TestUser,
  webhookId: string,
  query = '',
): Promise<DeliveryView[]> {
  const res = await request(t.http)
    .get(`${API}/webhooks/${webhookId}/deliveries?pageSize=100${query}`)
    .set(bearer(user))
    .expect(200);
  return res.body.payload.items as DeliveryView[];
}

export async function notificationsOf(
  dataSource: DataSource,
  email: string,
  kind: string,
): Promise<Array<{ subject: string; data: Record<string, unknown> }>> {
  return dataSource.query(
    `SELECT subject, data FROM notifications WHERE recipient = $1 AND kind = $2 ORDER BY created_at`,
    [email, kind],
  );
}

/**
 * What a receiver written from spec 6.1 does: compare X-Webhook-Signature, as a whole, with `sha256=` + the hex HMAC
 * of `timestamp.body` under its secret; one that has not switched secrets after a rotation checks
 * X-Webhook-Signature-Previous instead (`header`).
 */
export function quireSignatureValid(
  secret: string,
  received: ReceivedRequest,
  header: 'x-webhook-signature' | 'x-webhook-signature-previous' = 'x-webhook-signature',
): boolean {
  const timestamp = String(received.headers['x-webhook-timestamp']);
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', secret).update(`${timestamp}.${received.rawBody}`).digest('hex')}`,
  );
  const candidate = Buffer.from(String(received.headers[header] ?? ''));
  return candidate.length === expected.length && timingSafeEqual(candidate, expected);
}

export function standardHeaders(received: ReceivedRequest): Record<string, string> {
  return {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  };
}
