import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OutboxDispatcher } from './outbox.dispatcher.js';
import { OutboxEventEntity } from './outbox-event.entity.js';
import { OutboxService } from './outbox.service.js';

/** The event outbox: recording events with their change, and dispatching them after commit. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([OutboxEventEntity])],
  providers: [OutboxService, OutboxDispatcher],
  exports: [OutboxService, OutboxDispatcher],
})
export class EventsModule {}
