import { Injectable } from '@nestjs/common';
import type { DocumentRecord } from '../../documents/domain/document.records.js';
import { DocumentAccessService } from '../../documents/services/document-access.service.js';
import { OutboxService } from '../../events/outbox.service.js';
import { documentEvent, type NewDomainEvent } from '../../events/domain-event.js';
import { UsersService } from '../../identity/services/users.service.js';
import { NotifierService } from '../../notifications/notifier.service.js';
import { assertNever } from '../../../common/assert-never.js';
import { currentNode, nodesAllowedToDecide } from '../domain/approval-flow.js';
import type { ApprovalDecision, ApprovalInstanceRecord, ApprovalNodeRecord } from '../domain/approval.records.js';

type ApprovalEvent = 'approval_started' | 'approval_node_completed' | 'approval_approved' | 'approval_rejected' | 'approval_canceled';

/** Why an instance was canceled: `reason` of its `approval_canceled`. */
export type CancelReason = 'request-closed' | 'request-merged';

interface Decision {
  approver: string;
  decision: ApprovalDecision;
  comment: string | null;
}

/**
 * The approval events of spec 6.2 — payload `{instanceId, requestId, status, currentNode, approver, decision,
 * comment, completedAt}` — recorded through the outbox, and the e-mails to whoever has to act next, recorded through
 * the notifier: both in the transaction of the change, so a rolled-back decision announces and sends nothing.
 */
@Injectable()
export class ApprovalEventsService {
  constructor(
    private readonly outbox: OutboxService,
    private readonly notifier: NotifierService,
    private readonly users: UsersService,
    private readonly access: DocumentAccessService,
  ) {}

  /** Started (or restarted by new changes: `reset: true`): every approver allowed to decide is asked. */
  async started(document: DocumentRecord, instance: ApprovalInstanceRecord, by: string, reset = false): Promise<void> {
    await this.outbox.record(this.event(document, 'approval_started', instance, by, null, reset ? { reset: true } : {}));
    await this.ask(document, instance, nodesAllowedToDecide(instance));
  }

  async decided(document: DocumentRecord, instance: ApprovalInstanceRecord, decision: Decision, next: ApprovalNodeRecord | null): Promise<void> {
    const events = [this.event(document, 'approval_node_completed', instance, decision.approver, decision)];
    switch (instance.status) {
      case 'pending':
        break;
      case 'approved':
        events.push(this.event(document, 'approval_approved', instance, decision.approver, decision));
        break;
      case 'rejected':
      case 'changes_requested':
        // `request_changes` ends the instance like a rejection; the payload's status and decision tell them apart.
        events.push(this.event(document, 'approval_rejected', instance, decision.approver, decision));
        break;
      case 'canceled':
        break;
      default:
        assertNever(instance.status);
    }
    for (const event of events) {
      await this.outbox.record(event);
    }
    if (instance.strategy === 'sequential' && next) {
      await this.ask(document, instance, [next]);
    }
    if (instance.status !== 'pending') {
      await this.tell(document, instance.createdBy, instance, `Approval ${instance.status.replace('_', ' ')}`);
    }
  }

  async canceled(document: DocumentRecord, instance: ApprovalInstanceRecord, by: string, reason: CancelReason): Promise<void> {
    await this.outbox.record(this.event(document, 'approval_canceled', instance, by, null, { reason }));
  }

  private event(
    document: DocumentRecord,
    event: ApprovalEvent,
    instance: ApprovalInstanceRecord,
    by: string,
    decision: Decision | null,
    extra: Record<string, unknown> = {},
  ): NewDomainEvent {
    return documentEvent(document, event, by, {
      instanceId: instance.id,
      requestId: instance.requestId,
      status: instance.status,
      currentNode: currentNode(instance)?.ordinal ?? null,
      approver: decision?.approver ?? null,
      decision: decision?.decision ?? null,
      comment: decision?.comment ?? null,
      completedAt: instance.completedAt ? new Date(instance.completedAt).toISOString() : null,
      ...extra,
    });
  }

  private async ask(document: DocumentRecord, instance: ApprovalInstanceRecord, nodes: readonly ApprovalNodeRecord[]): Promise<void> {
    for (const node of nodes) {
      await this.tell(document, node.approver, instance, 'Your approval is requested');
    }
  }

  /**
   * The rule of every document notification (docs/settings.md, "Participants"): nothing to a user who may no longer
   * read the document when it is sent — an approver removed from the workspace or shut out by `permissions.view`
   * after the submission is not told about it. The instance keeps waiting for them (docs/approvals.md).
   */
  private async tell(document: DocumentRecord, userId: string, instance: ApprovalInstanceRecord, subject: string): Promise<void> {
    if (!(await this.access.mayView(document, userId))) {
      return;
    }
    const user = (await this.users.summaries([userId])).get(userId);
    if (!user?.email) {
      return;
    }
    const name = `${document.docType}/${document.docId}`;
    await this.notifier.send({
      channel: 'email',
      to: user.email,
      kind: instance.status === 'pending' ? 'approval_requested' : 'approval_completed',
      subject: `${subject}: ${name}`,
      body: `${subject} on a change request of ${name} (approval ${instance.id}, status ${instance.status}).`,
      data: { instanceId: instance.id, requestId: instance.requestId, docType: document.docType, docId: document.docId, status: instance.status },
      userId,
    });
  }
}
