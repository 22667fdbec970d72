import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import type { WebSocket } from 'ws';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { messageOf } from '../../../common/i18n/error-messages.js';
import { WS_PATH, WS_PROTOCOLS } from '../domain/realtime-protocol.js';
import { RealtimeSessionService } from '../services/realtime-session.service.js';

/** Hard cap on a frame the ws library accepts at all (larger ones close the socket with 1009); the configurable bound is below it. */
const MAX_FRAME_BYTES = 1024 * 1024 + 1024;

/**
 * RFC 6455 4.2.2: the server selects one of the sub-protocols the client offered, or none. Only ours is selected;
 * a client that offered only others gets none, and a compliant client (every browser, `ws`) then fails the
 * connection itself. A client that offers none is served without one.
 */
export function selectProtocol(offered: Set<string>): string | false {
  return WS_PROTOCOLS.find((protocol) => offered.has(protocol)) ?? false;
}

/** The 404 answer to an upgrade request for a path with no socket behind it (the adapter would just drop it). */
function notFoundResponse(): string {
  const body = JSON.stringify({
    success: false,
    code: ErrorCode.NOT_FOUND,
    message: messageOf(ErrorCode.NOT_FOUND),
    payload: null,
    details: { reason: `no WebSocket endpoint at this path; the realtime socket is ${WS_PATH}` },
  });
  return (
    'HTTP/1.1 404 Not Found\r\nContent-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** The path of an upgrade request, read as the ws adapter reads it (so both agree on which requests are ours). */
function pathOf(request: IncomingMessage): string | null {
  try {
    return new URL(request.url ?? '/', 'ws://localhost/').pathname;
  } catch {
    return null;
  }
}

/**
 * The realtime WebSocket endpoint (ws adapter, on the HTTP server's port). Authentication is the first message,
 * not the upgrade request, so browsers need no headers; everything after the upgrade is RealtimeSessionService's.
 * Upgrade requests for any other path are answered `404 Not Found` here before the adapter drops them.
 */
@WebSocketGateway({ path: WS_PATH, maxPayload: MAX_FRAME_BYTES, handleProtocols: selectProtocol })
export class RealtimeGateway implements OnGatewayConnection, OnApplicationBootstrap, OnApplicationShutdown {
  private server?: Server;

  constructor(
    private readonly sessions: RealtimeSessionService,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  handleConnection(client: WebSocket, request: IncomingMessage): void {
    this.sessions.accept(client, request);
  }

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    // First in line: the adapter's own listener destroys the socket of an unknown path without a word.
    this.server?.prependListener('upgrade', this.answerUnknownPath);
  }

  onApplicationShutdown(): void {
    this.server?.off('upgrade', this.answerUnknownPath);
  }

  private readonly answerUnknownPath = (request: IncomingMessage, socket: Duplex): void => {
    if (pathOf(request) === WS_PATH) {
      return;
    }
    // The HTTP server no longer watches an upgraded socket, and the adapter ends it again after us.
    socket.on('error', () => undefined);
    socket.end(notFoundResponse());
  };
}
