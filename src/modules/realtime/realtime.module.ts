import { Module, type OnModuleInit } from '@nestjs/common';
import { DocumentsModule } from '../documents/documents.module.js';
import { ChangeEngineService } from '../documents/services/change-engine.service.js';
import { TenancyModule } from '../tenancy/tenancy.module.js';
import { RealtimeController } from './controllers/realtime.controller.js';
import { RealtimeGateway } from './gateways/realtime.gateway.js';
import { DomainEventRelayListener } from './listeners/domain-event-relay.listener.js';
import { LockRepository } from './repositories/lock.repository.js';
import { PresenceRepository } from './repositories/presence.repository.js';
import { RealtimeEventRepository } from './repositories/realtime-event.repository.js';
import { YjsStateRepository } from './repositories/yjs-state.repository.js';
import { AwarenessService } from './services/awareness.service.js';
import { EventStreamService } from './services/event-stream.service.js';
import { PresenceService } from './services/presence.service.js';
import { RealtimeAuthService } from './services/realtime-auth.service.js';
import { RealtimeBus } from './services/realtime-bus.service.js';
import { RealtimeHub } from './services/realtime-hub.service.js';
import { RealtimeLockService } from './services/realtime-lock.service.js';
import { RealtimeMessagesService } from './services/realtime-messages.service.js';
import { RealtimeSessionService } from './services/realtime-session.service.js';
import { RealtimeService } from './services/realtime.service.js';
import { YjsStateService } from './services/yjs-state.service.js';

/**
 * Realtime (docs/realtime.md): the per-document event stream (SSE), WebSocket sessions with Yjs state,
 * awareness, presence and locks, fanned out across instances through PostgreSQL LISTEN/NOTIFY or Redis.
 * Registers the lock check as the change engine's write guard, so a write to someone else's locked target is
 * refused inside the write's transaction.
 */
@Module({
  // Tenancy: whether a lock's holder may still write the document (RealtimeAuthService.mayWrite).
  imports: [DocumentsModule, TenancyModule],
  controllers: [RealtimeController],
  providers: [
    RealtimeBus,
    RealtimeHub,
    RealtimeAuthService,
    RealtimeService,
    AwarenessService,
    EventStreamService,
    PresenceService,
    RealtimeLockService,
    RealtimeMessagesService,
    RealtimeSessionService,
    YjsStateService,
    RealtimeGateway,
    DomainEventRelayListener,
    RealtimeEventRepository,
    PresenceRepository,
    LockRepository,
    YjsStateRepository,
  ],
  exports: [RealtimeLockService],
})
export class RealtimeModule implements OnModuleInit {
  constructor(
    private readonly changeEngine: ChangeEngineService,
    private readonly locks: RealtimeLockService,
  ) {}

  onModuleInit(): void {
    this.changeEngine.useWriteGuard((document, drafts, userId) =>
      this.locks.assertWritable(document, drafts, userId),
    );
  }
}
