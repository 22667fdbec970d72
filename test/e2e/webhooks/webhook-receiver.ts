import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown> & { event: string; deliveryId: string; payload: Record<string, unknown> };
  receivedAt: number;
}

export interface Reply {
  status: number;
  body?: string;
  delayMs?: number;
  headers?: Record<string, string>;
}

/**
 * A real HTTP receiver on loopback. `replies` is consumed first (one per request); then `fallback` answers.
 */
export class WebhookReceiver {
  readonly received: ReceivedRequest[] = [];
  replies: Reply[] = [];
  fallback: Reply = { status: 200, body: 'ok' };
  private server?: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        this.received.push({
          headers: req.headers,
          rawBody,
          body: JSON.parse(rawBody) as ReceivedRequest['body'],
          receivedAt: Date.now(),
        });
        const reply = this.replies.shift() ?? this.fallback;
        const answer = (): void => {
          res.writeHead(reply.status, { 'content-type': 'text/plain', ...(reply.headers ?? {}) });
          res.end(reply.body ?? '');
        };
        if (reply.delayMs) {
          setTimeout(answer, reply.delayMs);
        } else {
          answer();
        }
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}/hook`;
  }

  of(event: string): ReceivedRequest[] {
    return this.received.filter((request) => request.body.event === event);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'the condition',
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
