import type { IncomingMessage } from 'node:http';
import { type OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import type { WebSocket } from 'ws';
import { WS_PATH } from '../domain/realtime-protocol.js';
import { RealtimeSessionService } from '../services/realtime-session.service.js';

/** Hard cap on a frame the ws library accepts at all (larger ones close the socket with 1009); the configurable bound is below it. */
const MAX_FRAME_BYTES = 1024 * 1024 + 1024;

/**
 * The realtime WebSocket endpoint (ws adapter, on the HTTP server's port). Authentication is the first message,
 * not the upgrade request, so browsers need no headers; everything after the upgrade is RealtimeSessionService's.
 */
@WebSocketGateway({ path: WS_PATH, maxPayload: MAX_FRAME_BYTES })
export class RealtimeGateway implements OnGatewayConnection {
  constructor(private readonly sessions: RealtimeSessionService) {}

  handleConnection(client: WebSocket, request: IncomingMessage): void {
    this.sessions.accept(client, request);
  }
}
