import { Injectable } from '@nestjs/common';
import { TtlCache } from '../../../common/cache/ttl-cache.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { ChangeDraft, ChangeRecord, DocumentRecord, RequestRecord } from '../domain/document.records.js';
import { DocumentRepository } from '../repositories/document.repository.js';
import { PropertiesRepository } from '../repositories/properties.repository.js';
import { changeRecord, RequestRepository } from '../repositories/request.repository.js';
import { RelationRepository } from '../repositories/relation.repository.js';
import { RowRepository } from '../repositories/row.repository.js';
import { type DocumentContext, docNotFound } from './document-access.service.js';
import { OutboxService } from '../../events/outbox.service.js';
import { DocumentEventsService } from './document-events.service.js';
import { DraftScope } from './draft-scope.js';
import { RequestHooks } from './request-hooks.js';
import { type MergeResult, MergeService } from './merge/merge.service.js';
import { ComputedFieldsService } from './computed/computed-fields.service.js';
import { handlerFor } from '../fields/field-type.registry.js';
import { GroupExit, type GroupMember, WriteBatcher } from './write-batcher.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface WriteOptions {
  /** Append to this open request instead of merging at once. */
  requestId?: string;
  /**
   * The deprecated `?apply=` of a direct write (spec 9.5): refused with `requestId`, otherwise the same as a write
   * without it. It does not pass the approval the workflow requires (docs/approvals.md): that gate binds every writer.
   */
  apply?: boolean;
  /** The document's own creation: its first metadata merges at once, whatever the settings it was created with. */
  creation?: boolean;
  /** Open a new (explicit) request for the changes; never merged at once. */
  newRequest?: { title: string; description: string | null; reviewers: string[] };
  /** Title of the request a write without `requestId` is wrapped in. */
  title: string;
  /** Description of that request (e.g. a supply-chain sync request's message); none by default. */
  description?: string | null;
  /** The write changes rows only (no metadata, settings or properties): it may run without the document lock. */
  rowsOnly?: boolean;
  /**
   * `build` parsed every row value against the document's fields (change-builders, RowsService): merged at once,
   * the values are not parsed a second time.
   */
  valuesValidated?: boolean;
  /** The write changes one row (row create, update, delete): it may commit in a group with others (WriteBatcher). */
  singleRow?: boolean;
}

/**
 * Whether a rows-only write merged at once must still hold the document lock from its start: `unique` values are
 * checked across rows and auto numbers are counted per document, so those writes serialize per document.
 */
function needsDocumentLock(document: DocumentRecord): boolean {
  return document.metadata.fields.some((field) => field.unique === true || field.type === 'auto_number');
}

/**
 * Whether a write may commit in a group with other writes of its document (WriteBatcher): a single-row write
 * without `requestId`, merged at once, of a document whose rows no other row's value depends on (no relation,
 * formula, lookup, rollup or auto-number field, no `unique` value). Such writes touch only their own row, so writes
 * of different rows commute. Bulk writes keep a transaction of their own: a group answers when its slowest write
 * is done.
 */
function groupable(document: DocumentRecord, opts: WriteOptions): boolean {
  return (
    opts.singleRow === true &&
    opts.rowsOnly === true &&
    opts.requestId === undefined &&
    !opts.newRequest &&
    document.settings.workflow?.requiresApproval !== true &&
    document.metadata.fields.every((field) => field.type !== 'relation' && field.unique !== true && !handlerFor(field.type).computed)
  );
}

/** How long the engine stops grouping writes of a document that lookups read (a hint: groups check again). */
const READ_DOCUMENT_MEMORY_MS = 10_000;

/** A check another module adds to every write (realtime locks); it throws to refuse the write. */
export type WriteGuard = (document: DocumentRecord, drafts: ChangeDraft[], userId: string) => Promise<void>;

export interface WriteOutcome {
  document: DocumentRecord;
  request: RequestRecord | null;
  changes: ChangeRecord[];
  merge: MergeResult | null;
  /** The write was wrapped in a request of its own that waits for approval. */
  pendingApproval: boolean;
}

/** Whether a request can still take changes or be merged. */
export function assertOpen(request: RequestRecord): void {
  if (request.status !== 'open') {
    throw new AppException(ErrorCode.INVALID_STATE, {
      details: [{ field: 'requestId', reason: `request is ${request.status}` }],
      payload: { requestId: request.id, status: request.status },
    });
  }
}

export function requestNotFound(): AppException {
  return new AppException(ErrorCode.NOT_FOUND, { details: [{ field: 'requestId', reason: 'request not found' }] });
}

/**
 * The change engine: every write to a document (rows, bulk, properties, metadata, settings, explicit requests)
 * goes through `write()`. It locks the document, lets the caller validate against the draft the write will join
 * and build its Changes, records them on the target request (the writer becomes a contributor), and — for a write
 * without `requestId` — wraps them in a request of its own that is merged at once, unless the document's workflow
 * requires approval. Merging is MergeService's, in the same transaction.
 */
@Injectable()
export class ChangeEngineService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly documents: DocumentRepository,
    private readonly requests: RequestRepository,
    private readonly rows: RowRepository,
    private readonly properties: PropertiesRepository,
    private readonly merger: MergeService,
    private readonly events: DocumentEventsService,
    private readonly outbox: OutboxService,
    private readonly hooks: RequestHooks,
    private readonly batcher: WriteBatcher,
    private readonly computed: ComputedFieldsService,
    private readonly relations: RelationRepository,
  ) {}

  private writeGuard?: WriteGuard;
  /** Documents a group found read by lookups: their writes run alone for a while. */
  private readonly readDocuments = new TtlCache<string, true>(READ_DOCUMENT_MEMORY_MS, 1000);

  /** Registered at start-up by a module that may refuse writes (realtime locks: RESOURCE_LOCKED). */
  useWriteGuard(guard: WriteGuard): void {
    this.writeGuard = guard;
  }

  /**
   * The write guard for changes recorded earlier and applied now by `userId` (a merge): a change staged before
   * someone locked its target must not overwrite it when merged, as a direct write would be refused.
   */
  async guardMerge(document: DocumentRecord, changes: ChangeDraft[], userId: string): Promise<void> {
    await this.writeGuard?.(document, changes, userId);
  }

  /** A scope to validate against without writing (read-only preview of a draft). */
  scope(document: DocumentRecord, request: RequestRecord | null, lockRows = false): DraftScope {
    return new DraftScope(document, request, { rows: this.rows, requests: this.requests, properties: this.properties }, lockRows, (rowIds) =>
      this.merger.shareHolderLocks(document.uuid, rowIds),
    );
  }

  async findRequest(document: DocumentRecord, requestId: string, lock = false): Promise<RequestRecord> {
    if (!UUID.test(requestId)) {
      throw requestNotFound();
    }
    const request = await this.requests.find(document.uuid, requestId, lock);
    if (!request) {
      throw requestNotFound();
    }
    return request;
  }

  /**
   * The document as a write starts from (docs/performance.md, "Writers"). Appending to a request or opening one
   * never changes the document: the request row is locked instead (findRequest). A rows-only write merged at once
   * takes the document's write lock shared, then locks only its rows, and the document row briefly when the merge
   * allocates the revision number, which also checks that the metadata it validated against is still current.
   * Everything else locks the document first (the write lock exclusively, then the row).
   */
  private async openForWrite(document: DocumentRecord, opts: WriteOptions): Promise<DocumentRecord | null> {
    if (opts.requestId !== undefined || opts.newRequest) {
      return this.documents.findByUuid(document.uuid);
    }
    if (opts.rowsOnly && !needsDocumentLock(document)) {
      // The document's write lock, shared, before any row: a writer holding the document row while it locks rows
      // (metadata, properties, merges) takes it exclusively before that row, so the two never wait for each other in
      // opposite orders (DocumentRepository.lock). Other rows-only writes share it.
      await this.documents.shareWriteLock(document.uuid);
      // The document as the caller opened it, not read again: the merge numbers the revision only if its
      // metadata_version is still the one validated against and it is not deleted (allocateRevision), so a
      // metadata change or deletion in between ends as a CONFLICT to retry, never as a write on stale fields.
      return document;
    }
    return this.documents.lock(document.uuid);
  }

  async write(ctx: DocumentContext, opts: WriteOptions, build: (scope: DraftScope) => Promise<ChangeDraft[]>): Promise<WriteOutcome> {
    if (opts.apply && opts.requestId !== undefined) {
      throw AppException.validation([{ field: 'apply', reason: 'apply cannot be combined with requestId' }]);
    }
    if (!this.tx.inTransaction && groupable(ctx.document, opts) && this.readDocuments.get(ctx.document.uuid) === undefined) {
      return this.batcher.submit(ctx.document.uuid, (member) => this.writeOnce(ctx, opts, build, member));
    }
    return this.writeOnce(ctx, opts, build, null);
  }

  /** One write, in the current transaction or a new one; `member`: it runs in a group (WriteBatcher). */
  private writeOnce(
    ctx: DocumentContext,
    opts: WriteOptions,
    build: (scope: DraftScope) => Promise<ChangeDraft[]>,
    member: GroupMember | null,
  ): Promise<WriteOutcome> {
    const userId = ctx.principal.userId;
    return this.tx.run(async () => {
      // Lookups reading this document recompute rows other writes of a group may hold: such writes run alone.
      if (member && (await this.computed.isRead(ctx.document))) {
        // Not worth grouping for a while: each group would only find out again (the check stays in the group).
        this.readDocuments.set(ctx.document.uuid, true);
        throw new GroupExit(true);
      }
      const document = await this.openForWrite(ctx.document, opts);
      if (!document) {
        throw docNotFound();
      }
      let request: RequestRecord | null = null;
      // A named request, even an empty or malformed id (NOT_FOUND), never a write merged as if none was named.
      if (opts.requestId !== undefined) {
        request = await this.findRequest(document, opts.requestId, true);
        assertOpen(request);
      }
      // Without requestId a rows-only write locks the rows it reads (the document itself is not locked yet).
      const scope = this.scope(document, request, opts.requestId === undefined && !opts.newRequest && opts.rowsOnly === true);
      const drafts = await build(scope);
      // Deleting a row named by relation fields of other documents changes their rows too (MergeService records it
      // there), rows another write of the group may change as well: such a write runs alone.
      if (member) {
        const deleted = drafts.filter((draft) => draft.type === 'row-delete').map((draft) => draft.targetId);
        if (await this.relations.referencedElsewhere(document.uuid, deleted)) {
          throw new GroupExit(true);
        }
      }
      await this.writeGuard?.(document, drafts, userId);
      if (drafts.length === 0 && !opts.newRequest) {
        return { document, request, changes: [], merge: null, pendingApproval: false };
      }
      // In a group, the rows this write read and changes are its own until the group commits.
      member?.claimRows([...scope.lockedRows.keys(), ...drafts.map((draft) => draft.targetId)]);

      const requiresApproval = document.settings.workflow?.requiresApproval === true;
      // A write without requestId wraps its changes in a request of its own, merged at once unless approval is due.
      const mergesAtOnce = !request && !opts.newRequest && (opts.creation === true || !requiresApproval);
      if (mergesAtOnce) {
        // The request is drawn here and written, already merged, by the statement that numbers its revision: one
        // round trip less per write. The writer is its author and only contributor.
        const draft = this.requests.mergedAtOnceDraft(
          { documentUuid: document.uuid, organizationId: document.organizationId, workspaceId: document.workspaceId, title: opts.title, description: opts.description ?? null, author: userId },
          drafts,
        );
        const createdEvent = this.events.requestEvent(document, 'request_created', draft.request, userId);
        member?.startWriting();
        const merge = await this.merger.merge(document, draft.request, draft.changes, userId, [createdEvent], {
          lockedRows: scope.lockedRows,
          valuesValidated: opts.valuesValidated,
          openedRequest: draft.insert,
        });
        // The changes were recorded at the request's creation, a time the insert gave.
        const changedAt = merge.request.createdAt;
        const changes = draft.changes.map((change) => changeRecord(change, change.id, change.seq, changedAt, change.changedBy));
        return { document, request: merge.request, changes, merge, pendingApproval: false };
      }
      let created = false;
      let changes: ChangeRecord[];
      if (request) {
        changes = await this.requests.appendChanges(request.id, drafts, userId);
        request = { ...request, changeCount: request.changeCount + changes.length };
        if (!request.contributors.includes(userId)) {
          request.contributors = [...request.contributors, userId];
        }
        // Appending to an existing request: modules following it (approvals) react in this transaction.
        await this.hooks.notifyAppended({ document, request, userId });
      } else {
        // A new request that stays open, and its first changes, in one statement; the writer is its author and
        // first contributor.
        const explicit = opts.newRequest;
        const opened = await this.requests.createWithChanges(
          {
            documentUuid: document.uuid,
            organizationId: document.organizationId,
            workspaceId: document.workspaceId,
            title: explicit?.title ?? opts.title,
            description: explicit ? explicit.description : (opts.description ?? null),
            author: userId,
            reviewers: explicit?.reviewers ?? [],
            implicit: !explicit,
          },
          drafts,
        );
        if (!opened) {
          // The document was deleted since the caller opened it.
          throw docNotFound();
        }
        ({ request, changes } = opened);
        created = true;
      }
      if (created) {
        await this.outbox.record(this.events.requestEvent(document, 'request_created', request, userId));
      }
      return { document, request, changes, merge: null, pendingApproval: created && !opts.newRequest };
    });
  }
}
