import { Injectable } from '@nestjs/common';
import type { DomainEvent } from '../../events/domain-event.js';
import { OnDomainEvent } from '../../events/on-domain-event.decorator.js';
import { BindingRepository } from '../repositories/binding.repository.js';

/**
 * A deleted (archived) organization takes part in no supply chain any more: its live bindings — as buyer, and those
 * of other organizations to its connections — end `rejected` with a review note, as an order book's do when it is
 * deleted (docs/supply-chain.md, "Bindings"), so no catalog change is applied into its order books after it. Runs
 * in the outbox dispatch transaction of `organization_archived`; ending live bindings again changes nothing, so a
 * replayed event is harmless.
 */
@Injectable()
export class OrganizationArchivedListener {
  constructor(private readonly bindings: BindingRepository) {}

  @OnDomainEvent('organization_archived')
  async onArchived(event: DomainEvent): Promise<void> {
    if (!event.organizationId) {
      return;
    }
    await this.bindings.endForOrganization(event.organizationId, event.triggeredBy);
  }
}
