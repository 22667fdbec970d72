import { OnEvent } from '@nestjs/event-emitter';
import { DOMAIN_EVENT_ANY, domainEventName } from './domain-event.js';

/**
 * Subscribes a method to a domain event of spec 6.2 (`'request_merged'`), or to every domain event with
 * `'*'`. The method receives the DomainEvent and runs inside the dispatch transaction (use
 * TransactionHost.manager to write). Unlike a bare @OnEvent, errors are not swallowed: a throwing
 * subscriber rolls the dispatch back and the event is retried with back-off, so subscribers must be
 * idempotent by event id.
 */
export function OnDomainEvent(event: string): MethodDecorator {
  return OnEvent(event === '*' ? DOMAIN_EVENT_ANY : domainEventName(event), { suppressErrors: false });
}
