import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { mapPgError } from '../../../common/errors/pg-error.mapper.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { DocumentRecord, RequestRecord } from '../../documents/domain/document.records.js';
import { assertOpen, ChangeEngineService } from '../../documents/services/change-engine.service.js';
import { DocumentAccessService, type DocumentContext, READ_ONLY_REASON } from '../../documents/services/document-access.service.js';
import { RequestHooks, type RequestMerged, type RequestTouched } from '../../documents/services/request-hooks.js';
import { RequestsService } from '../../documents/services/requests.service.js';
import { decide, gateRefusal } from '../domain/approval-flow.js';
import type { ApprovalDecision, ApprovalInstanceRecord, ApprovalStrategy } from '../domain/approval.records.js';
import type { ApprovalConfigDto, ApprovalFlowDto, ApprovalInstanceDto, DecisionResponseDto } from '../dtos/approval.dto.js';
import { ApprovalRepository } from '../repositories/approval.repository.js';
import { ApprovalEventsService, type CancelReason } from './approval-events.service.js';
import { toInstanceDto } from './approval.mapper.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Flow ids GET /approval offers from the document's `workflow.approvers`. */
const SETTINGS_FLOWS: { id: string; name: string; strategy: ApprovalStrategy }[] = [
  { id: 'settings-sequential', name: 'Document approvers, in order', strategy: 'sequential' },
  { id: 'settings-parallel', name: 'Document approvers, in any order', strategy: 'parallel' },
];

/**
 * The document settings' `workflow.approvers`, each user once (its first place), with its index in the settings
 * list: a duplicate would otherwise meet the one-node-per-approver constraint of an instance.
 */
function settingsApprovers(document: DocumentRecord): { id: string; index: number }[] {
  const listed: unknown = document.settings.workflow?.approvers;
  const seen = new Set<string>();
  const approvers: { id: string; index: number }[] = [];
  for (const [index, id] of (Array.isArray(listed) ? listed : []).entries()) {
    const key = typeof id === 'string' ? id.toLowerCase() : String(id);
    if (!seen.has(key)) {
      seen.add(key);
      approvers.push({ id: typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : String(id), index });
    }
  }
  return approvers;
}

function instanceNotFound(): AppException {
  return new AppException(ErrorCode.NOT_FOUND, { details: [{ field: 'instanceId', reason: 'approval instance not found' }] });
}

/**
 * Approval instances (docs/approvals.md): submitted for an open request with an ordered list of approvers, decided
 * node by node, and the gate a merge passes when the document's workflow requires approval. Every change and its
 * events (and the notification of the next approver) are written in one transaction.
 */
@Injectable()
export class ApprovalsService implements OnModuleInit {
  private readonly logger = new Logger(ApprovalsService.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly approvals: ApprovalRepository,
    private readonly engine: ChangeEngineService,
    private readonly requests: RequestsService,
    private readonly hooks: RequestHooks,
    private readonly events: ApprovalEventsService,
    private readonly access: DocumentAccessService,
  ) {}

  onModuleInit(): void {
    this.hooks.useMergeGate((document, request) => this.gate(document, request));
    this.hooks.onAppended((event) => this.changesAppended(event));
    this.hooks.onClosed((event) => this.requestClosed(event));
    this.hooks.onMerged((event) => this.requestMerged(event));
  }

  config(ctx: DocumentContext): ApprovalConfigDto {
    const workflow = ctx.document.settings.workflow ?? {};
    const approvers = settingsApprovers(ctx.document).map((item) => item.id);
    const flows: ApprovalFlowDto[] = approvers.length > 0 ? SETTINGS_FLOWS.map((flow) => ({ ...flow, approvers })) : [];
    return { requiresApproval: workflow.requiresApproval === true, autoMerge: workflow.autoMerge === true, flows };
  }

  async submit(ctx: DocumentContext, requestId: string, body: { approvers: string[]; strategy?: ApprovalStrategy }): Promise<ApprovalInstanceDto> {
    return this.open(ctx, requestId, 'submitted', body.approvers, body.strategy ?? 'sequential', (index) => `approvers[${index}]`);
  }

  /**
   * A flow of GET /approval: its approvers are the document settings' `workflow.approvers` (a user listed twice
   * counts once); one who cannot read the document is VALIDATION_ERROR naming `workflow.approvers[i]`, the entry
   * of the settings to correct.
   */
  async start(ctx: DocumentContext, body: { requestId: string; flowId: string }): Promise<ApprovalInstanceDto> {
    const flow = this.config(ctx).flows.find((item) => item.id === body.flowId);
    if (!flow) {
      throw new AppException(ErrorCode.NOT_FOUND, { details: [{ field: 'flowId', reason: 'no such approval flow for this document (GET /approval)' }] });
    }
    const listed = settingsApprovers(ctx.document);
    const fieldOf = (index: number): string => `workflow.approvers[${listed[index]?.index ?? index}]`;
    return this.open(ctx, body.requestId, flow.id, flow.approvers, flow.strategy as ApprovalStrategy, fieldOf);
  }

  async get(ctx: DocumentContext, instanceId: string): Promise<ApprovalInstanceDto> {
    return toInstanceDto(await this.find(ctx.document, instanceId), ctx.document);
  }

  /**
   * A decision by the approver whose turn it is, on an open request only. The approval that completes an instance of
   * a document with `workflow.autoMerge` merges the request right after (its own transaction: a merge refused for any
   * reason leaves the decision recorded and the request open, and is reported in `merge`, never as the call's error).
   */
  async decide(ctx: DocumentContext, instanceId: string, decision: ApprovalDecision, comment: string | null, signature: string | null): Promise<DecisionResponseDto> {
    const userId = ctx.principal.userId;
    // A decision is a write, although approvers need only read rights: refused where every write is (the errors
    // of a merge there), in an archived workspace and through a data-source reference serving the type read-only.
    if (ctx.readOnly) {
      throw AppException.forbidden(READ_ONLY_REASON);
    }
    if (ctx.access.archived) {
      throw AppException.forbidden('workspace is archived');
    }
    const instance = await this.tx.run(async () => {
      // The document row first, as a merge takes it: the decision updates the instance twice, and the second update
      // checks the instance's foreign key to the document (PostgreSQL checks it for a row version of this
      // transaction), which waits for a merge holding the document row while that merge waits for the request
      // locked here — a deadlock, answered 409 CONFLICT to one of a decision and a merge sent at once.
      await this.approvals.lockDocument(ctx.document.uuid);
      // The request is locked before the instance, in the order of merge, close and appended changes.
      const { requestId } = await this.find(ctx.document, instanceId);
      const request = await this.engine.findRequest(ctx.document, requestId, true);
      const current = await this.find(ctx.document, instanceId, true);
      const outcome = decide(current, userId, decision);
      if (!outcome.ok) {
        if (outcome.reason === 'not-pending') {
          throw new AppException(ErrorCode.INVALID_STATE, {
            details: [{ field: 'instanceId', reason: `the approval is ${current.status}` }],
            payload: { instanceId: current.id, status: current.status },
          });
        }
        throw AppException.forbidden(outcome.reason === 'not-your-turn' ? 'it is not your turn to decide' : 'you are not a pending approver of this approval');
      }
      // A merged or closed request cancels its pending instance; one left pending by an earlier version is refused too.
      assertOpen(request);
      // Checked again at decision time: a contributor who joined after the submission, or settings changed since,
      // must not let the gate be satisfied by the request's own writers or by someone the owner no longer lists.
      const refusal = ctx.access.canManage ? null : gateRefusal({ workflow: ctx.document.settings.workflow, request }, userId);
      if (refusal) {
        throw AppException.forbidden(
          refusal === 'own-request'
            ? 'you wrote changes of this request (author or contributor): its approval must come from someone else'
            : "you are not one of the document's workflow.approvers",
        );
      }
      await this.approvals.decideNode(outcome.node.id, outcome.nodeStatus, comment, signature);
      if (outcome.completed) {
        await this.approvals.setStatus(current.id, outcome.instanceStatus);
      }
      const updated = (await this.find(ctx.document, instanceId)) as ApprovalInstanceRecord;
      await this.events.decided(ctx.document, updated, { approver: userId, decision, comment }, outcome.next);
      return updated;
    });
    const dto: DecisionResponseDto = { ...toInstanceDto(instance, ctx.document), merge: null };
    if (instance.status === 'approved' && ctx.document.settings.workflow?.autoMerge === true) {
      dto.merge = await this.autoMerge(ctx, instance.requestId);
    }
    return dto;
  }

  /**
   * The decision has committed: whatever refuses the merge (CONFLICT; INVALID_STATE or APPROVAL_REQUIRED when the
   * request was merged, closed or changed in between; an unexpected failure) is reported, not thrown.
   */
  private async autoMerge(ctx: DocumentContext, requestId: string): Promise<DecisionResponseDto['merge']> {
    try {
      await this.assertMayMerge(ctx);
      const merged = await this.requests.merge(ctx, requestId, { enforceScopes: true });
      return { merged: true, revisionId: merged.revision.id, conflicts: [], error: null };
    } catch (error) {
      const refusal = error instanceof AppException ? error : mapPgError(error);
      if (!refusal) {
        this.logger.error({ err: error, requestId }, 'auto-merge failed');
      }
      const code = refusal?.code ?? ErrorCode.INTERNAL_ERROR;
      const payload = refusal?.options.payload as { conflicts?: unknown[] } | undefined;
      const conflicts = code === ErrorCode.CONFLICT ? (payload?.conflicts ?? []) : [];
      return { merged: false, revisionId: null, conflicts, error: { code, details: refusal?.options.details ?? [] } };
    }
  }

  /**
   * The auto-merge acts for the decider, who needs what `POST /requests/{id}/merge` needs: the requests:manage
   * scope (and those of the request's changes, checked by the merge) and write rights. An approver who is a
   * viewer, or decides with an approvals-only key, records the decision; the merge is left to someone allowed.
   */
  private async assertMayMerge(ctx: DocumentContext): Promise<void> {
    if (!ctx.principal.scopes.includes('requests:manage')) {
      throw AppException.forbidden('missing scope requests:manage: the approved request is left for someone allowed to merge');
    }
    this.access.check(ctx.access, 'write', ctx.readOnly);
    await this.access.narrowBySettings(ctx, 'write');
  }

  private async open(
    ctx: DocumentContext,
    requestId: string,
    flowId: string,
    approvers: string[],
    strategy: ApprovalStrategy,
    approverField: (index: number) => string,
  ): Promise<ApprovalInstanceDto> {
    const document = ctx.document;
    // Ids that are no user id (settings hold free strings) are outsiders, never sent to the uuid query.
    const readers = await this.approvals.readers(document.organizationId, document.workspaceId, approvers.filter((id) => UUID.test(id)));
    const outsiders = approvers.map((id, index) => ({ id, index })).filter((item) => !readers.has(item.id));
    // A member the document's permissions settings do not let view it could never decide: refused like an outsider.
    for (const [index, id] of approvers.entries()) {
      if (readers.has(id) && !(await this.access.mayView(document, id))) {
        outsiders.push({ id, index });
      }
    }
    if (outsiders.length > 0) {
      outsiders.sort((a, b) => a.index - b.index);
      throw AppException.validation(outsiders.map((item) => ({ field: approverField(item.index), reason: 'not a user who can read the document' })));
    }
    return this.tx.run(async () => {
      // The document row first, as a decision does: the instance's foreign key to the document would otherwise wait
      // for a merge holding that row while the merge waits for the request locked here (a deadlock, 409 CONFLICT).
      await this.approvals.lockDocument(document.uuid);
      const request = await this.engine.findRequest(document, requestId, true);
      assertOpen(request);
      // While the document requires approval, the request's own writers cannot be its approvers and the owner's
      // workflow.approvers bound who may be (docs/decisions/approvals-gate.md); the request is locked, so its
      // contributors cannot change before the instance exists. A manager of the document is not bound: they could
      // switch the gate off or list themselves.
      const refused: { index: number; refusal: 'own-request' | 'not-listed' }[] = [];
      for (const [index, id] of approvers.entries()) {
        const refusal = gateRefusal({ workflow: document.settings.workflow, request }, id);
        if (refusal && !(await this.access.mayManage(document, id))) {
          refused.push({ index, refusal });
        }
      }
      if (refused.length > 0) {
        throw AppException.validation(
          refused.map((item) => ({
            field: approverField(item.index),
            reason: item.refusal === 'own-request' ? 'wrote changes of the request (author or contributor): may not approve it' : "not one of the document's workflow.approvers",
          })),
        );
      }
      const live = await this.approvals.live(document.uuid, request.id, true);
      if (live) {
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [{ field: 'requestId', reason: `the request already has an approval that is ${live.status}` }],
          payload: { requestId: request.id, instanceId: live.id, status: live.status },
        });
      }
      const instance = await this.approvals.create({
        organizationId: document.organizationId,
        workspaceId: document.workspaceId,
        documentUuid: document.uuid,
        requestId: request.id,
        flowId,
        strategy,
        createdBy: ctx.principal.userId,
        approvers,
      });
      await this.events.started(document, instance, ctx.principal.userId);
      return toInstanceDto(instance, document);
    });
  }

  private async find(document: DocumentRecord, instanceId: string, lock = false): Promise<ApprovalInstanceRecord> {
    const instance = UUID.test(instanceId) ? await this.approvals.find(document.uuid, instanceId, lock) : null;
    if (!instance) {
      throw instanceNotFound();
    }
    return instance;
  }

  /** The merge gate: a request of a document requiring approval merges only with an approved instance. */
  private async gate(document: DocumentRecord, request: RequestRecord): Promise<void> {
    const live = await this.approvals.live(document.uuid, request.id);
    if (live?.status === 'approved') {
      return;
    }
    const latest = live ?? (await this.approvals.latest(document.uuid, request.id));
    throw new AppException(ErrorCode.APPROVAL_REQUIRED, {
      details: [{ field: 'requestId', reason: latest ? `the approval is ${latest.status}` : 'the request has not been submitted for approval' }],
      payload: { requestId: request.id, instanceId: latest?.id ?? null, status: latest?.status ?? null },
    });
  }

  /** New changes on a request under approval withdraw the approvals given: a reviewer approved what they saw. */
  private async changesAppended(event: RequestTouched): Promise<void> {
    const live = await this.approvals.live(event.document.uuid, event.request.id, true);
    if (!live || !live.nodes.some((node) => node.status !== 'pending')) {
      return;
    }
    await this.approvals.reset(live.id);
    const reset = (await this.approvals.find(event.document.uuid, live.id)) as ApprovalInstanceRecord;
    await this.events.started(event.document, reset, event.userId, true);
  }

  /** Closing the request cancels its live instance. */
  private async requestClosed(event: RequestTouched): Promise<void> {
    const live = await this.approvals.live(event.document.uuid, event.request.id, true);
    if (live) {
      await this.cancel(event.document, live, event.userId, 'request-closed');
    }
  }

  /**
   * Merging the request cancels a pending instance: nobody is left asked to decide a request that is no longer open.
   * An approved one stays approved (the approval the merge went through, or given before a merge that needed none).
   */
  private async requestMerged(event: RequestMerged): Promise<void> {
    const live = await this.approvals.live(event.document.uuid, event.request.id, true);
    if (live?.status === 'pending') {
      await this.cancel(event.document, live, event.mergedBy, 'request-merged');
    }
  }

  private async cancel(document: DocumentRecord, live: ApprovalInstanceRecord, by: string, reason: CancelReason): Promise<void> {
    await this.approvals.setStatus(live.id, 'canceled');
    const canceled = (await this.approvals.find(document.uuid, live.id)) as ApprovalInstanceRecord;
    await this.events.canceled(document, canceled, by, reason);
  }
}
