import type { DocumentRecord } from '../../documents/domain/document.records.js';
import { currentNode } from '../domain/approval-flow.js';
import type { ApprovalInstanceRecord } from '../domain/approval.records.js';
import type { ApprovalInstanceDto } from '../dtos/approval.dto.js';

export function toInstanceDto(instance: ApprovalInstanceRecord, document: Pick<DocumentRecord, 'docType' | 'docId'>): ApprovalInstanceDto {
  return {
    id: instance.id,
    requestId: instance.requestId,
    docType: document.docType,
    docId: document.docId,
    flowId: instance.flowId,
    strategy: instance.strategy,
    status: instance.status,
    currentNode: currentNode(instance)?.ordinal ?? null,
    nodes: instance.nodes.map((node) => ({
      id: node.id,
      ordinal: node.ordinal,
      approver: node.approver,
      status: node.status,
      decidedAt: node.decidedAt ? node.decidedAt.toISOString() : null,
      comment: node.comment,
      signature: node.signature,
    })),
    createdBy: instance.createdBy,
    createdAt: new Date(instance.createdAt).toISOString(),
    updatedAt: new Date(instance.updatedAt).toISOString(),
    completedAt: instance.completedAt ? new Date(instance.completedAt).toISOString() : null,
    resetCount: instance.resetCount,
  };
}
