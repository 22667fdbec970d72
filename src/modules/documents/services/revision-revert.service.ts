import { Injectable, type OnModuleInit } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { OutboxService } from '../../events/outbox.service.js';
import { assertScopesForChanges } from '../domain/change-kinds.js';
import { inverseOf, type InverseResult } from '../domain/revision-inverse.js';
import type { OperationRecord, RequestRecord } from '../domain/document.records.js';
import type { RevertResponseDto } from '../dtos/revision-history.dto.js';
import type { MergeResponseDto } from '../dtos/request.dto.js';
import { INLINE_CHANGES, toRequestDto } from '../mappers/document.mapper.js';
import { DocumentRepository } from '../repositories/document.repository.js';
import { PropertiesRepository } from '../repositories/properties.repository.js';
import { RevisionHistoryRepository } from '../repositories/revision-history.repository.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ChangeEngineService, type WriteOutcome } from './change-engine.service.js';
import { assertMayChangeStructure, DocumentAccessService, type DocumentContext } from './document-access.service.js';
import { RequestHooks, type RequestMerged } from './request-hooks.js';
import { RequestsService } from './requests.service.js';
import { RevisionHistoryService } from './revision-history.service.js';
import { documentEvent } from '../../events/domain-event.js';

/** What the revert's unit of work leaves: its request, merged (`merged`), refused by the merge (`refused`) or waiting for approval. */
interface RevertOutcome {
  written: WriteOutcome;
  request: RequestRecord;
  merged?: MergeResponseDto;
  refused?: AppException;
}

/** Operations a revert inverts at most: the inverse is built in Node and recorded as one request's changes. */
export const MAX_REVERT_OPERATIONS = 100_000;

/**
 * `POST /revisions/{revId}/revert` (spec section 3): opens a request holding the inverse of the revision's
 * operations (docs/documents.md, "Revision diff, history, revert") and merges it at once through the ordinary
 * merge — unless the workflow requires approval, then it waits like any request. A merge that meets conflicts
 * answers CONFLICT with the revert request's id; the request stays open. Merging a revert request (now or later)
 * raises `revision_reverted` in the merge's transaction.
 */
@Injectable()
export class RevisionRevertService implements OnModuleInit {
  constructor(
    private readonly tx: TransactionHost,
    private readonly engine: ChangeEngineService,
    private readonly requestsService: RequestsService,
    private readonly history: RevisionHistoryRepository,
    private readonly revisionsService: RevisionHistoryService,
    private readonly properties: PropertiesRepository,
    private readonly hooks: RequestHooks,
    private readonly outbox: OutboxService,
    private readonly access: DocumentAccessService,
    private readonly documents: DocumentRepository,
  ) {}

  onModuleInit(): void {
    this.hooks.onMerged((merged) => this.onMerged(merged));
  }

  async revert(ctx: DocumentContext, revisionId: string): Promise<RevertResponseDto> {
    const revision = await this.revisionsService.find(ctx, revisionId);
    if (revision.operationCount > MAX_REVERT_OPERATIONS) {
      throw AppException.validation([{ field: 'revId', reason: `a revision of more than ${MAX_REVERT_OPERATIONS} operations cannot be reverted through the API` }]);
    }
    let inverse: InverseResult = { drafts: [], skipped: [] };
    const title = `Revert revision ${revision.version}`;
    const outcome = await this.tx.run(async (): Promise<RevertOutcome> => {
      // The merge below locks the document row; taking that lock first keeps concurrent reverts of one document
      // from deadlocking (each one's request insert holds the row FOR KEY SHARE, which the other's lock waits for).
      await this.documents.lock(ctx.document.uuid);
      const written = await this.engine.write(
        ctx,
        { title, newRequest: { title, description: revision.title ? `Reverts "${revision.title}"` : null, reviewers: [] } },
        async (scope) => {
          const ops = await this.history.allOperations(revision.id, MAX_REVERT_OPERATIONS);
          const document = scope.document;
          inverse = inverseOf(ops, {
            documentUuid: document.uuid,
            metadata: document.metadata,
            metadataVersion: document.metadataVersion,
            propertiesVersion: (await this.properties.find(document.uuid))?.version ?? 0,
            settings: document.settings,
            existingRowIds: await this.history.existingRowIds(document.uuid, snapshotRowIds(ops)),
          });
          // Undoing a change is one of its kind: it needs the scope of the direct route for it (a token with
          // requests:manage alone reverts nothing), for metadata or settings manage rights, and for deleting rows
          // (undoing their creation) what `permissions.delete` asks of a deletion. Nothing is written otherwise.
          const types = inverse.drafts.map((draft) => draft.type);
          assertScopesForChanges(ctx.principal, types);
          assertMayChangeStructure(ctx, types);
          await this.access.assertMayRecordDeletions(ctx, types);
          return inverse.drafts;
        },
      );
      if (!written.request) {
        throw new Error('revert request was not created');
      }
      await this.history.recordRevert({
        requestId: written.request.id,
        revisionId: revision.id,
        documentUuid: ctx.document.uuid,
        organizationId: ctx.document.organizationId,
        workspaceId: ctx.document.workspaceId,
      });
      if (written.document.settings.workflow?.requiresApproval === true) {
        return { written, request: written.request };
      }
      // The merge runs in the same unit of work, behind a savepoint: a merge the rules refuse (CONFLICT with
      // {requestId, conflicts}, RESOURCE_LOCKED, …) is undone alone and the revert request commits open, to be fixed
      // and merged later like any other; any other failure rolls the whole revert back, so an error answer never
      // leaves a revert request (and its request_created event) behind that the caller was not told about.
      const request = written.request;
      try {
        return { written, request, merged: await this.tx.savepoint(() => this.requestsService.merge(ctx, request.id)) };
      } catch (error) {
        // A refusal (4xx); a failure (5xx: the database unreachable, …) rolls the whole revert back like any other.
        if (!(error instanceof AppException) || error.status >= 500) {
          throw error;
        }
        return { written, request, refused: error };
      }
    });
    if (outcome.refused) {
      throw outcome.refused;
    }
    if (!outcome.merged) {
      const { written, request } = outcome;
      return { request: toRequestDto(request, written.document, written.changes.slice(0, INLINE_CHANGES.single)), revision: null, merged: false, pendingApproval: true, skipped: inverse.skipped };
    }
    const { revision: produced, conversions: _conversions, ...requestDto } = outcome.merged;
    return { request: requestDto, revision: produced, merged: true, pendingApproval: false, skipped: inverse.skipped };
  }

  /** `revision_reverted` when a revert request merges: in the merge's transaction, through the outbox. */
  private async onMerged(merged: RequestMerged): Promise<void> {
    const reverted = await this.history.revertedBy(merged.request.id);
    if (!reverted) {
      return;
    }
    const { document, revision } = merged;
    await this.outbox.record(
      documentEvent(document, 'revision_reverted', merged.mergedBy, {
        revisionId: revision.id,
        version: revision.version,
        requestId: merged.request.id,
        revertedRevisionId: reverted.revisionId,
        revertedVersion: reverted.version,
        mergedBy: merged.mergedBy,
        stats: revision.stats,
        createdAt: revision.createdAt.toISOString(),
      }),
    );
  }
}

/** Row ids named by the value snapshots of deleted or converted fields (their values are restored where the row still exists). */
function snapshotRowIds(ops: readonly OperationRecord[]): string[] {
  const ids = new Set<string>();
  for (const op of ops) {
    if ((op.type === 'field-delete' || op.type === 'field-update') && op.target.kind === 'field') {
      const values = (op.oldValue as { values?: Record<string, unknown> } | null)?.values;
      for (const id of Object.keys(values ?? {})) {
        ids.add(id);
      }
    }
  }
  return [...ids];
}
