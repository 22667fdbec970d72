import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import { TransactionHost } from '../../../database/transaction-host.js';
import type { RowValuesInput } from '../fields/field-type.registry.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { applyPropertiesEffect, applySet, foldChanges } from '../domain/change-fold.js';
import { type AnyChangeType, assertScopesForChanges, operationsOfChange, targetKindOf } from '../domain/change-kinds.js';
import type { ChangeDraft, RequestStatus } from '../domain/document.records.js';
import { diffFields } from '../domain/metadata-diff.js';
import { parseRowChangeInput } from '../domain/row-change-input.js';
import { type ChangeInputDto, type ConflictsResponseDto, type CreateRequestDto, DEFAULT_REQUEST_TITLE, type MergeResponseDto, type RequestDiffDto, type RequestResponseDto } from '../dtos/request.dto.js';
import { INLINE_CHANGES, renderValue, toRequestDto, toRevisionDto, toRowDto } from '../mappers/document.mapper.js';
import { DocumentRepository } from '../repositories/document.repository.js';
import { PropertiesRepository } from '../repositories/properties.repository.js';
import { RequestRepository } from '../repositories/request.repository.js';
import { RevisionHistoryRepository } from '../repositories/revision-history.repository.js';
import { RevisionRepository } from '../repositories/revision.repository.js';
import { RowRepository } from '../repositories/row.repository.js';
import {
  buildMetadataUpdate,
  buildPropertiesDelete,
  buildPropertiesWrite,
  buildRowCreate,
  buildRowDelete,
  buildRowUpdate,
  buildSettingsUpdate,
  assertMetadataVersion,
  parseSettings,
} from './change-builders.js';
import { assertOpen, ChangeEngineService } from './change-engine.service.js';
import { ComputedMetadataService } from './computed/computed-metadata.service.js';
import { ComputedReadService } from './computed/computed-read.service.js';
import { ComputedAccessService } from './computed/computed-access.service.js';
import type { DraftOverlayRow } from '../repositories/row-query.repository.js';
import { assertMayChangeStructure, DocumentAccessService, docNotFound, type DocumentContext } from './document-access.service.js';
import { DocumentEventsService } from './document-events.service.js';
import type { DraftScope } from './draft-scope.js';
import { MergeService } from './merge/merge.service.js';
import { RelationMergeService } from './merge/relation-merge.service.js';
import { mergedRequestDiff } from './merged-request-diff.js';
import { RequestHooks } from './request-hooks.js';

/** Operations of a merged request's revision its diff reads at most (a request diff is not paged). */
const MAX_DIFF_OPERATIONS = 100_000;

/** Change requests: create with changes, list, read, diff, conflicts, merge, close, reopen (spec section 3). */
/**
 * The field list after one `field-create`, `field-update` or `field-delete` change of a request body (spec 2.9),
 * on the list the request builds on. The result is validated as any metadata update.
 */
function fieldListAfter(
  fields: readonly FieldDefinition[],
  type: 'field-create' | 'field-update' | 'field-delete',
  fieldId: string | undefined,
  newValue: unknown,
): unknown[] {
  const given = typeof newValue === 'object' && newValue !== null && !Array.isArray(newValue) ? (newValue as Record<string, unknown>) : null;
  if (type === 'field-create') {
    if (!given) {
      throw AppException.validation([{ field: 'newValue', reason: 'a Field {id, name, type, …} is required' }]);
    }
    const id = given.id ?? fieldId;
    if (fieldId !== undefined && given.id !== undefined && given.id !== fieldId) {
      throw AppException.validation([{ field: 'newValue.id', reason: 'must equal target.fieldId' }]);
    }
    if (fields.some((field) => field.id === id)) {
      throw AppException.validation([{ field: 'target.fieldId', reason: `field ${String(id)} already exists` }]);
    }
    return [...fields, { ...given, id }];
  }
  if (!fieldId) {
    throw AppException.validation([{ field: 'target.fieldId', reason: 'fieldId is required' }]);
  }
  const existing = fields.find((field) => field.id === fieldId);
  if (!existing) {
    throw AppException.validation([{ field: 'target.fieldId', reason: `no field ${fieldId}` }]);
  }
  if (type === 'field-delete') {
    return fields.filter((field) => field.id !== fieldId);
  }
  if (!given) {
    throw AppException.validation([{ field: 'newValue', reason: 'the Field, or the keys of it to change, is required' }]);
  }
  if (given.id !== undefined && given.id !== fieldId) {
    throw AppException.validation([{ field: 'newValue.id', reason: 'must equal target.fieldId' }]);
  }
  return fields.map((field) => (field.id === fieldId ? { ...field, ...given, id: fieldId } : field));
}

/**
 * Failures of one change of a `POST /requests` body whose details name what was wrong (a value, an unknown row, a
 * row id taken): their details name it by its path in the body (docs/documents.md, "Requests with changes").
 * Other failures (FORBIDDEN, VERSION_CONFLICT with its payload, …) pass unchanged.
 */
const DETAILED_FAILURES: ReadonlySet<string> = new Set([ErrorCode.VALIDATION_ERROR, ErrorCode.NOT_FOUND, ErrorCode.ALREADY_EXISTS]);

function withDetailPaths(error: unknown, map: (detail: ErrorDetail) => ErrorDetail): unknown {
  if (!(error instanceof AppException) || !DETAILED_FAILURES.has(error.code) || !error.options.details) {
    return error;
  }
  return new AppException(error.code, { ...error.options, details: error.options.details.map(map) });
}

/** `error` of `changes[index]`, its details' fields prefixed with `changes[index]`. */
function atChange(error: unknown, index: number): unknown {
  return withDetailPaths(error, (detail) => ({ ...detail, field: `changes[${index}]${detail.field ? `.${detail.field}` : ''}` }));
}

@Injectable()
export class RequestsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly engine: ChangeEngineService,
    private readonly merger: MergeService,
    private readonly documents: DocumentRepository,
    private readonly requests: RequestRepository,
    private readonly rows: RowRepository,
    private readonly properties: PropertiesRepository,
    private readonly events: DocumentEventsService,
    private readonly hooks: RequestHooks,
    private readonly computed: ComputedMetadataService,
    private readonly revisions: RevisionRepository,
    private readonly computedReads: ComputedReadService,
    private readonly access: DocumentAccessService,
    private readonly history: RevisionHistoryRepository,
    private readonly relationMerge: RelationMergeService,
    private readonly computedAccess: ComputedAccessService,
  ) {}

  async list(ctx: DocumentContext, query: { status?: RequestStatus; page: number; pageSize: number }): Promise<Page<RequestResponseDto>> {
    const { items, total } = await this.requests.list(ctx.document.uuid, query.status, {
      limit: query.pageSize,
      offset: (query.page - 1) * query.pageSize,
    });
    const changes = await this.requests.firstChangesOf(items.map((request) => request.id), INLINE_CHANGES.listed);
    return pageOf(
      items.map((request) => toRequestDto(request, ctx.document, changes.get(request.id) ?? [])),
      total,
      query,
    );
  }

  /**
   * `options.bulkId`: the request's row changes are one bulk write (batch routes of other modules): once merged
   * they raise one `data_bulk_operation` event instead of one event per row.
   * `options.enforceScopes`: the caller's credential must also carry, for each change, the scope of the direct
   * route writing the same thing (spec 5.8; docs/documents.md, "Requests and scopes"). The HTTP routes ask for it;
   * server-side work acting for an organization (supply-chain propagation) has been allowed by its caller.
   */
  async create(ctx: DocumentContext, dto: CreateRequestDto, options: { bulkId?: string; enforceScopes?: boolean } = {}): Promise<RequestResponseDto> {
    const changes = dto.changes ?? [];
    for (const [index, change] of changes.entries()) {
      // The DTO admits each type and each kind; that they belong together is checked here.
      const kind = targetKindOf(change.type as AnyChangeType);
      if (change.target.kind !== kind) {
        throw AppException.validation([{ field: `changes[${index}].target.kind`, reason: `must be ${kind} for a ${change.type} change` }]);
      }
      const operations = operationsOfChange(change.type as AnyChangeType);
      if (change.operation !== undefined && !(operations as readonly string[]).includes(change.operation)) {
        throw AppException.validation([{ field: `changes[${index}].operation`, reason: `must be ${operations.join(' or ')} for a ${change.type} change` }]);
      }
    }
    if (options.enforceScopes) {
      assertScopesForChanges(ctx.principal, changes.map((change) => change.type as AnyChangeType));
    }
    assertMayChangeStructure(ctx, changes.map((change) => change.type));
    await this.access.assertMayRecordDeletions(ctx, changes.map((change) => change.type));
    const reviewers = await this.checkReviewers(ctx, dto.reviewers ?? []);
    const outcome = await this.engine.write(
      ctx,
      { title: dto.title ?? DEFAULT_REQUEST_TITLE, newRequest: { title: dto.title ?? DEFAULT_REQUEST_TITLE, description: dto.description ?? null, reviewers } },
      async (scope) => {
        const drafts: ChangeDraft[] = [];
        for (const [index, change] of (dto.changes ?? []).entries()) {
          try {
            const before = change.type === 'property-update' ? (await scope.properties()).values : {};
            const built = await this.buildChange(scope, change);
            if (built) {
              await this.relationMerge.checkPropertyChange(scope, before, built, ctx.principal.userId);
              if (options.bulkId && (built.type === 'row-create' || built.type === 'row-update' || built.type === 'row-delete')) {
                built.data.origin = { bulkId: options.bulkId };
              }
              drafts.push(built);
            }
          } catch (error) {
            throw atChange(error, index);
          }
        }
        return drafts;
      },
    );
    if (!outcome.request) {
      throw new Error('request was not created');
    }
    return toRequestDto(outcome.request, outcome.document, outcome.changes.slice(0, INLINE_CHANGES.single));
  }

  /**
   * Reviewers are users who can read the document, as approvers of `submit-approval` are (docs/approvals.md);
   * anything else is VALIDATION_ERROR naming `reviewers[i]`. A user named twice is kept once.
   */
  private async checkReviewers(ctx: DocumentContext, reviewers: readonly string[]): Promise<string[]> {
    const problems: { field: string; reason: string }[] = [];
    for (const [index, id] of reviewers.entries()) {
      if (!isUUID(id) || !(await this.access.mayView(ctx.document, id))) {
        problems.push({ field: `reviewers[${index}]`, reason: 'not a user who can read the document' });
      }
    }
    if (problems.length > 0) {
      throw AppException.validation(problems);
    }
    return [...new Set(reviewers.map((id) => id.toLowerCase()))];
  }

  private async buildChange(scope: DraftScope, change: ChangeInputDto): Promise<ChangeDraft | null> {
    const { rowId, fieldId } = change.target;
    const values = (fieldId ? { [fieldId]: change.newValue } : (change.newValue ?? [])) as RowValuesInput;
    const needRow = (): string => {
      if (!rowId) {
        throw AppException.validation([{ field: 'target.rowId', reason: 'rowId is required' }]);
      }
      return rowId;
    };
    switch (change.type) {
      case 'row-create':
      case 'row-update':
        return this.buildRowChange(scope, change.type, change);
      case 'row-delete':
        return buildRowDelete(scope, needRow()).catch((error: unknown) => {
          throw withDetailPaths(error, (detail) => (detail.field === 'rowId' ? { ...detail, field: 'target.rowId' } : detail));
        });
      case 'property-update':
        if (fieldId && change.newValue === undefined) {
          // Left out, it would clear the property: a clear is an explicit null.
          throw AppException.validation([{ field: 'newValue', reason: 'newValue is required with target.fieldId (null clears the property)' }]);
        }
        return buildPropertiesWrite(scope, values, 'patch');
      case 'property-delete':
        // Naming one property (as a row-delete names its row) clears only that one: the change a PATCH with null
        // records. Without target.fieldId every property is cleared, as DELETE /properties does.
        return fieldId ? buildPropertiesWrite(scope, { [fieldId]: null } as RowValuesInput, 'patch') : buildPropertiesDelete(scope);
      case 'metadata-update':
        return this.buildMetadataChange(
          scope,
          (change.newValue ?? {}) as { fields?: unknown; properties?: unknown },
          await assertMetadataVersion(scope, (change.newValue as { version?: unknown } | null)?.version),
        );
      case 'field-create':
      case 'field-update':
      case 'field-delete': {
        const current = await scope.metadata();
        const fields = fieldListAfter(current.fields, change.type, change.target.fieldId, change.newValue);
        return this.buildMetadataChange(scope, { fields, properties: current.properties });
      }
      case 'settings-update': {
        const settings = parseSettings(change.newValue);
        await this.access.assertApproversMayView(scope.document, settings);
        return buildSettingsUpdate(scope, settings);
      }
      default:
        throw AppException.validation([{ field: 'type', reason: `unknown change type ${change.type}` }]);
    }
  }

  /** A new metadata for the draft, by the rules of PUT /metadata (also readers in other documents, docs/formulas.md). */
  private async buildMetadataChange(scope: DraftScope, input: { fields?: unknown; properties?: unknown }, rebase = false): Promise<ChangeDraft | null> {
    const draft = await buildMetadataUpdate(scope, input, async (id) => (await this.rows.duplicateValues(scope.document.uuid, id)).length > 0, '', rebase);
    if (draft) {
      await this.computed.checkMetadataChange(scope.document, (draft.data as { fields: FieldDefinition[] }).fields);
    }
    return draft;
  }

  /** A row-create or row-update in any `newValue` form (docs/documents.md, "The change engine"); details name paths of the change. */
  private async buildRowChange(scope: DraftScope, type: 'row-create' | 'row-update', change: ChangeInputDto): Promise<ChangeDraft> {
    const fieldIds = new Set((await scope.metadata()).fields.map((field) => field.id));
    const input = parseRowChangeInput(type, change.target, change.newValue, fieldIds);
    try {
      if (type === 'row-create') {
        return await buildRowCreate(scope, { id: input.rowId, values: input.values });
      }
      if (input.rowId === undefined) {
        throw AppException.validation([{ field: 'target.rowId', reason: 'rowId is required' }]);
      }
      return await buildRowUpdate(scope, input.rowId, { values: input.values, version: input.version });
    } catch (error) {
      throw withDetailPaths(error, input.pathOf);
    }
  }

  async get(ctx: DocumentContext, requestId: string): Promise<RequestResponseDto> {
    const request = await this.engine.findRequest(ctx.document, requestId);
    const changes = await this.requests.changes(request.id, { limit: INLINE_CHANGES.single });
    return toRequestDto(request, ctx.document, changes);
  }

  /** What merging would change: added rows, updated cells (old and new value), deleted rows, properties, fields. */
  async diff(ctx: DocumentContext, requestId: string): Promise<RequestDiffDto> {
    const request = await this.engine.findRequest(ctx.document, requestId);
    if (request.status === 'merged' && request.generatedRevisionId) {
      // What it changed at its merge, not what merging it again would change in today's document.
      const ops = await this.history.allOperations(request.generatedRevisionId, MAX_DIFF_OPERATIONS);
      const mask = await this.computedAccess.historyMask(ctx);
      return mergedRequestDiff(request, ops.map((op) => mask.operation(op)), ctx.document.metadata);
    }
    const folded = foldChanges(await this.requests.changes(request.id));
    const before = ctx.document.metadata;
    const after = folded.metadata ? { fields: folded.metadata.fields, properties: folded.metadata.properties } : before;
    const current = await this.rows.findMany(ctx.document.uuid, [...folded.rows.keys()]);
    const diff: RequestDiffDto = { addedRows: [], updatedCells: [], deletedRows: [], changedProperties: [], fields: null, settingsChanged: folded.settings !== null };
    const field = (list: typeof before.fields, id: string) => list.find((item) => item.id === id);
    // Rows as they are and as the draft computes them: read through the caller's mask (docs/formulas.md, "Access"),
    // with the documents the draft's relation values reach.
    const added: DraftOverlayRow[] = [];
    const deleted: typeof diff.deletedRows = [];
    for (const effect of folded.rows.values()) {
      const row = current.get(effect.rowId);
      if (effect.kind === 'create' || (effect.kind === 'replace' && !row)) {
        const at = request.updatedAt.toISOString();
        added.push({ id: effect.rowId, kind: 'create', set: {}, unset: [], values: effect.values, ord: added.length + 1, by: request.author, at });
        continue;
      }
      if (!row) {
        continue;
      }
      if (effect.kind === 'delete') {
        deleted.push(toRowDto(row, before.fields));
        continue;
      }
      const next = effect.kind === 'update' ? applySet(row.values, effect.set) : effect.values;
      for (const key of new Set([...Object.keys(row.values), ...Object.keys(next)])) {
        if (JSON.stringify(row.values[key] ?? null) !== JSON.stringify(next[key] ?? null)) {
          diff.updatedCells.push({
            rowId: row.id,
            fieldId: key,
            oldValue: renderValue(row.values[key], field(before.fields, key)),
            newValue: renderValue(next[key], field(after.fields, key)),
          });
        }
      }
    }
    // Added rows with their formulas, lookups and rollups, as a draft read (`?requestId=`) shows them.
    const linked = await this.computedReads.draftOverlay(ctx.document, after.fields, added);
    const mask = await this.computedAccess.maskFor(ctx.document, ctx.principal.userId, { history: true, linked, fields: [...before.fields, ...after.fields] });
    diff.deletedRows = deleted.map((row) => ({ ...row, values: mask.entries(row.values) }));
    diff.updatedCells = mask.entries(diff.updatedCells);
    const at = request.updatedAt;
    diff.addedRows = added.map((item) =>
      toRowDto({ id: item.id, seq: '0', values: item.values, version: 1, createdAt: at, createdBy: request.author, updatedAt: at, updatedBy: request.author }, mask.fields(after.fields)),
    );
    if (folded.properties) {
      const currentProperties = (await this.properties.find(ctx.document.uuid))?.properties ?? {};
      const next = applyPropertiesEffect(currentProperties, folded.properties);
      for (const key of new Set([...Object.keys(currentProperties), ...Object.keys(next)])) {
        if (JSON.stringify(currentProperties[key] ?? null) !== JSON.stringify(next[key] ?? null)) {
          diff.changedProperties.push({
            fieldId: key,
            oldValue: renderValue(currentProperties[key], field(before.properties, key)),
            newValue: renderValue(next[key], field(after.properties, key)),
          });
        }
      }
    }
    if (folded.metadata) {
      const fields = diffFields(before.fields, after.fields);
      const props = diffFields(before.properties, after.properties);
      diff.fields = {
        created: [...fields.created, ...props.created].map((item) => item.id),
        updated: [...fields.updated, ...props.updated].map((item) => item.after.id),
        deleted: [...fields.deleted, ...props.deleted].map((item) => item.id),
      };
    }
    return diff;
  }

  async conflicts(ctx: DocumentContext, requestId: string): Promise<ConflictsResponseDto> {
    const request = await this.engine.findRequest(ctx.document, requestId);
    if (request.status !== 'open') {
      return { mergeable: false, conflicts: [] };
    }
    const conflicts = await this.merger.conflicts(ctx.document, await this.requests.changes(request.id));
    return { mergeable: conflicts.length === 0, conflicts };
  }

  /**
   * Merges in one transaction after locking the document row (`SELECT … FOR UPDATE`): concurrent merges of one
   * document run one after the other, and the second sees the first's changes when it checks for conflicts.
   * When the workflow requires approval, the merge gate decides (approvals module: an approved instance is needed).
   * `options.enforceScopes`: the caller's credential must carry the scopes of the request's changes (see create).
   */
  async merge(ctx: DocumentContext, requestId: string, options: { enforceScopes?: boolean } = {}): Promise<MergeResponseDto> {
    const userId = ctx.principal.userId;
    return this.tx.run(async () => {
      const document = await this.documents.lock(ctx.document.uuid);
      if (!document) {
        throw docNotFound();
      }
      const request = await this.engine.findRequest(document, requestId, true);
      assertOpen(request);
      const workflow = document.settings.workflow;
      if (workflow?.requiresApproval === true) {
        if (this.hooks.hasMergeGate) {
          // The approvals module: only a request with an approved instance merges (APPROVAL_REQUIRED otherwise).
          await this.hooks.checkMerge(document, request, userId);
        } else if (!ctx.access.canManage && !(workflow.approvers ?? []).includes(userId)) {
          throw AppException.forbidden('the workflow requires approval: only approvers and workspace managers may merge');
        }
      }
      const changes = await this.requests.changes(request.id);
      if (options.enforceScopes) {
        // A caller's own merge: the scopes of the changes' direct routes, and manage rights for metadata and
        // settings changes, as creating such a request and reverting one need (a system merge acts for its owner).
        assertScopesForChanges(ctx.principal, changes.map((change) => change.type));
        assertMayChangeStructure(ctx, changes.map((change) => change.type));
      }
      // A merge writes what it applies: another user's exclusive lock on a target refuses it (RESOURCE_LOCKED).
      await this.engine.guardMerge(document, changes, userId);
      const result = await this.merger.merge(document, request, changes, userId);
      const merged = (await this.documents.lock(document.uuid)) ?? document;
      // The revision's row values as the merger may see them (docs/formulas.md, "Access").
      const mask = await this.computedAccess.maskFor(merged, userId, { history: true });
      const operations = await this.revisions.operations(result.revision.id, { limit: INLINE_CHANGES.single, offset: 0 });
      return {
        ...toRequestDto(result.request, merged, changes.slice(0, INLINE_CHANGES.single)),
        revision: toRevisionDto(result.revision, merged.metadata, operations.map((op) => mask.operation(op))),
        conversions: result.conversions,
      };
    });
  }

  async close(ctx: DocumentContext, requestId: string): Promise<RequestResponseDto> {
    return this.transition(ctx, requestId, 'open', 'closed');
  }

  async reopen(ctx: DocumentContext, requestId: string): Promise<RequestResponseDto> {
    return this.transition(ctx, requestId, 'closed', 'open');
  }

  private async transition(ctx: DocumentContext, requestId: string, from: RequestStatus, to: 'open' | 'closed'): Promise<RequestResponseDto> {
    return this.tx.run(async () => {
      const request = await this.engine.findRequest(ctx.document, requestId, true);
      if (request.status !== from) {
        throw new AppException(ErrorCode.INVALID_STATE, {
          details: [{ field: 'status', reason: `request is ${request.status}; only ${from} requests can be ${to === 'closed' ? 'closed' : 'reopened'}` }],
          payload: { requestId: request.id, status: request.status },
        });
      }
      const updated = await this.requests.setStatus(request.id, to, ctx.principal.userId);
      await this.events.request(ctx.document, to === 'closed' ? 'request_closed' : 'request_reopened', updated, ctx.principal.userId);
      if (to === 'closed') {
        await this.hooks.notifyClosed({ document: ctx.document, request: updated, userId: ctx.principal.userId });
      }
      return toRequestDto(updated, ctx.document, await this.requests.changes(updated.id, { limit: INLINE_CHANGES.single }));
    });
  }
}
