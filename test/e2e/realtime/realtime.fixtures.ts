import { EventSource } from 'eventsource';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { type ClientOptions, WebSocket } from 'ws';
import { TransactionHost } from '../../../src/database/transaction-host.js';
import { DOMAIN_EVENT_TYPES } from '../../../src/modules/events/event-catalogue.js';
import { OutboxService } from '../../../src/modules/events/outbox.service.js';
import type { TestUser } from '../../factories/users.factory.js';
import type { TestApp } from '../../utils/test-app.js';
import type { DocHandle } from '../documents/documents.fixtures.js';

/** Fast timers so access loss, heartbeats and reconnects happen within a test's patience. */
export const REALTIME_TEST_ENV = {
  REALTIME_ACCESS_RECHECK_MS: '250',
  REALTIME_HEARTBEAT_MS: '300',
  REALTIME_SSE_RETRY_MS: '200',
  REALTIME_AUTH_TIMEOUT_MS: '600',
  AUTH_CACHE_TTL_MS: '0',
};

export async function listen(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  const address = t.app.getHttpServer().address();
  if (!address || typeof address === 'string') {
    throw new Error('no address');
  }
  return `http://127.0.0.1:${address.port}`;
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `/realtime/doc/{docType}/{docId}` with the workspace context of `user`. */
export function realtimePath(doc: DocHandle, suffix: string): string {
  return `/realtime/doc/${doc.docType}/${doc.docId}/${suffix}`;
}

export async function connectInfo(
  http: App,
  user: { token: string },
  doc: DocHandle,
  workspaceId: string,
): Promise<{ token: string; sseUrl: string; wsUrl: string; wsPath: string; port: number }> {
  const res = await request(http)
    .get(realtimePath(doc, 'connect'))
    .query({ workspaceId })
    .set('Authorization', `Bearer ${user.token}`);
  if (res.status !== 200) {
    throw new Error(`connect failed: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.payload;
}

export interface Received {
  type: string;
  id: string;
  data: Record<string, unknown>;
}

/** An EventSource (the `eventsource` npm client, unchanged) recording every event it gets, with optional bearer header. */
export function openStream(
  url: string,
  bearerToken?: string,
): {
  es: EventSource;
  events: Received[];
  errors: Array<{ code?: number; message?: string }>;
  opened: () => number;
} {
  const events: Received[] = [];
  const errors: Array<{ code?: number; message?: string }> = [];
  let opens = 0;
  const es = new EventSource(
    url,
    bearerToken
      ? {
          fetch: (input, init) =>
            fetch(input, { ...init, headers: { ...init?.headers, Authorization: `Bearer ${bearerToken}` } }),
        }
      : undefined,
  );
  for (const type of [...DOMAIN_EVENT_TYPES, 'resync_required', 'stream_end']) {
    es.addEventListener(type, (event) =>
      events.push({ type, id: event.lastEventId, data: JSON.parse(event.data) as Record<string, unknown> }),
    );
  }
  es.addEventListener('open', () => {
    opens += 1;
  });
  es.addEventListener('error', (event) => errors.push({ code: event.code, message: event.message }));
  return { es, events, errors, opened: () => opens };
}

/** Records events on the document's outbox exactly as a module would (in a unit of work). */
export async function recordEvents(
  t: TestApp,
  doc: { organizationId: string; workspaceId: string | null; docType: string; docId: string },
  types: readonly string[],
  triggeredBy = 'test',
): Promise<void> {
  const tx = t.app.get(TransactionHost);
  const outbox = t.app.get(OutboxService);
  await tx.run(() =>
    outbox.record(
      ...types.map((event, index) => ({
        event,
        organizationId: doc.organizationId,
        workspaceId: doc.workspaceId,
        docType: doc.docType,
        docId: doc.docId,
        triggeredBy,
        payload: { n: index, marker: event },
      })),
    ),
  );
}

export function coordinates(
  user: TestUser,
  doc: DocHandle,
  workspaceId = user.defaultWorkspaceId,
): { organizationId: string; workspaceId: string; docType: string; docId: string } {
  return { organizationId: user.defaultOrganizationId, workspaceId, docType: doc.docType, docId: doc.docId };
}

/** A JSON socket client: `send(kind, payload)` returns the reply with the same seq. */
export class TestSocket {
  readonly messages: Array<{ kind: string; seq?: number | null; payload: Record<string, unknown> }> = [];
  readonly binary: Uint8Array[] = [];
  closeCode?: number;
  private seq = 0;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        this.binary.push(new Uint8Array(data as Buffer));
        return;
      }
      this.messages.push(
        JSON.parse(String(data)) as { kind: string; seq?: number | null; payload: Record<string, unknown> },
      );
    });
    ws.on('close', (code) => {
      this.closeCode = code;
    });
  }

  static async open(url: string, options?: ClientOptions): Promise<TestSocket> {
    const ws = new WebSocket(url, options);
    const socket = new TestSocket(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return socket;
  }

  /** Opens and authenticates; throws when the server refuses. */
  static async connect(url: string, token: string, options?: ClientOptions): Promise<TestSocket> {
    const socket = await TestSocket.open(url, options);
    const reply = await socket.send('auth', { token });
    if (reply.kind !== 'ack') {
      throw new Error(`auth refused: ${JSON.stringify(reply)}`);
    }
    return socket;
  }

  async send(
    kind: string,
    payload: Record<string, unknown> = {},
  ): Promise<{ kind: string; seq?: number | null; payload: Record<string, unknown> }> {
    this.seq += 1;
    const seq = this.seq;
    this.ws.send(JSON.stringify({ kind, seq, payload }));
    await waitFor(() => this.messages.some((message) => message.seq === seq), 15_000, `reply to ${kind}`);
    return this.messages.find((message) => message.seq === seq) as {
      kind: string;
      seq?: number | null;
      payload: Record<string, unknown>;
    };
  }

  pushed(kind: string): Array<Record<string, unknown>> {
    return this.messages
      .filter((message) => message.kind === kind && message.seq === undefined)
      .map((message) => message.payload);
  }

  async closed(): Promise<number> {
    await waitFor(() => this.closeCode !== undefined, 15_000, 'socket close');
    return this.closeCode as number;
  }

  close(): void {
    this.ws.close();
  }
}
