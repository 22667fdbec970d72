import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, signatureHeaders } from './webhook-signature.js';

describe('webhook signatures', () => {
  const body = JSON.stringify({ event: 'webhook_test', payload: { n: 1 } });

  it('signs timestamp.body with the secret as shown (X-Webhook-Signature)', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = signatureHeaders([secret], 'd-1', 1_700_000_000_123, body);
    const expected = createHmac('sha256', secret).update(`1700000000123.${body}`).digest('hex');
    expect(headers['x-webhook-signature']).toBe(`sha256=${expected}`);
    expect(headers['x-webhook-timestamp']).toBe('1700000000123');
  });

  it('produces Standard Webhooks headers the standardwebhooks library verifies, with either secret during rotation', () => {
    const oldSecret = generateWebhookSecret();
    const newSecret = generateWebhookSecret();
    const headers = signatureHeaders([newSecret, oldSecret], 'd-2', Date.now(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    // The spec's header stays one `sha256=<hex>`, by the newest secret; the previous secret's goes alongside.
    const hex = (secret: string) =>
      `sha256=${createHmac('sha256', secret).update(`${headers['x-webhook-timestamp']}.${body}`).digest('hex')}`;
    expect(headers['x-webhook-signature']).toBe(hex(newSecret));
    expect(headers['x-webhook-signature-previous']).toBe(hex(oldSecret));
    expect(signatureHeaders([newSecret], 'd-3', Date.now(), body)).not.toHaveProperty(
      'x-webhook-signature-previous',
    );
    expect(new Webhook(newSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(oldSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });
});
