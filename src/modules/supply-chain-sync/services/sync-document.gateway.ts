import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SCOPES, type Principal } from '../../../common/auth/principal.js';
import type { ChangeDraft } from '../../documents/domain/document.records.js';
import type { FieldDefinition, StoredRowValues } from '../../documents/fields/field.types.js';
import { handlerFor, parseRowValues } from '../../documents/fields/field-type.registry.js';
import { validateFieldDefinitions } from '../../documents/fields/field-definition.validator.js';
import { buildMetadataUpdate } from '../../documents/services/change-builders.js';
import { ChangeEngineService, type WriteOutcome } from '../../documents/services/change-engine.service.js';
import {
  type DocumentContext,
  DocumentAccessService,
} from '../../documents/services/document-access.service.js';
import { alignGeneratedFields, type GeneratedSource } from '../domain/generated-fields.js';

export interface RowWrite {
  kind: 'create' | 'update' | 'delete';
  rowId: string;
  /** Plain values by field id (select labels are matched to options). */
  values: Record<string, unknown>;
}

/** Marks a write's request: the sync writes with this title prefix so people see where a request came from. */
export const SYNC_TITLE_PREFIX = '[sync]';

/**
 * What the sync does to documents, through the documents module's exported services: opening catalogs, order books
 * and connector targets as server-side work for their organization, and writing them through the change engine: rows
 * (a request merged at once, or an open request) and generated field definitions. Reading them is
 * SyncDocumentReadGateway's (sync-document-read.gateway.ts).
 */
@Injectable()
export class SyncDocumentGateway {
  constructor(
    private readonly access: DocumentAccessService,
    private readonly engine: ChangeEngineService,
  ) {}

  principalOf(userId: string): Principal {
    return { userId, kind: 'session', scopes: [...SCOPES] };
  }

  open(
    organizationId: string,
    docType: string,
    docId: string,
    actingUserId: string,
  ): Promise<DocumentContext | null> {
    return this.access.openOrganizationDocumentAsSystem(
      this.principalOf(actingUserId),
      organizationId,
      docType,
      docId,
    );
  }

  /**
   * Stored values of `values` for the document's fields: select labels are matched to option ids, computed and unknown
   * fields are left out. Throws a validation error (AppException with details) when a value does not fit.
   */
  toStored(
    fields: readonly FieldDefinition[],
    values: Record<string, unknown>,
    partial = true,
  ): StoredRowValues {
    const byId = new Map(fields.map((field) => [field.id, field]));
    const input: Record<string, unknown> = {};
    for (const [fieldId, value] of Object.entries(values)) {
      const field = byId.get(fieldId);
      if (!field || handlerFor(field.type).computed) {
        continue;
      }
      input[fieldId] = optionIdsOf(field, value);
    }
    return parseRowValues(input as never, [...fields], { partial });
  }

  /**
   * Brings an order book's generated fields in step with its catalog's fields (domain/generated-fields.ts: new select
   * options, renamed labels) as one metadata change merged at once, titled like the propagation's row writes. Nothing
   * when already in step, or when the order book's workflow requires approval (its metadata stays the buyer's to
   * change; values that do not fit are left out, binding-plan). Definitions that would not validate are not written
   * (null); the caller records where the merged revision came from.
   */
  async alignGeneratedFields(
    ctx: DocumentContext,
    catalogFields: readonly FieldDefinition[],
    generated: readonly GeneratedSource[],
    title: string,
  ): Promise<WriteOutcome | null> {
    if (ctx.document.settings.workflow?.requiresApproval === true) {
      return null;
    }
    const planned = alignGeneratedFields(ctx.document.metadata.fields, catalogFields, generated);
    if (!planned) {
      return null;
    }
    try {
      validateFieldDefinitions(planned);
    } catch {
      return null;
    }
    const outcome = await this.engine.write(ctx, { title }, async (scope) => {
      // The metadata as the locked document has it now: another change may have come first.
      const fields = alignGeneratedFields((await scope.metadata()).fields, catalogFields, generated);
      const change = fields
        ? await buildMetadataUpdate(scope, { fields }, () => Promise.resolve(false))
        : null;
      return change ? [change] : [];
    });
    return outcome.merge ? outcome : null;
  }

  /**
   * Writes rows. `pending` false: one request merged at once (unless the document's workflow requires approval);
   * true: an open request for the buyer to accept. Creates of rows that exist become updates, updates and deletes of
   * rows that are gone are dropped (the caller logged the decision already) — except a pending delete, which the
   * caller plans for a row not there yet only when its create waits in a pending request.
   */
  async write(
    ctx: DocumentContext,
    writes: readonly RowWrite[],
    opts: { title: string; description: string; pending: boolean },
  ): Promise<WriteOutcome | null> {
    if (writes.length === 0) {
      return null;
    }
    const fields = ctx.document.metadata.fields;
    const bulkId = randomUUID();
    const outcome = await this.engine.write(
      ctx,
      opts.pending
        ? {
            title: opts.title,
            newRequest: { title: opts.title, description: opts.description, reviewers: [] },
          }
        : { title: opts.title, rowsOnly: true },
      async (scope) => {
        const states = await scope.rows(
          writes.map((write) => write.rowId),
          { deleting: writes.filter((write) => write.kind === 'delete').map((write) => write.rowId) },
        );
        const drafts: ChangeDraft[] = [];
        // One bulk id: the merge reports one data_bulk_operation, not one event per row.
        const origin = { bulkId };
        for (const write of writes) {
          const state = states.get(write.rowId);
          if (write.kind === 'delete') {
            if (state?.exists) {
              drafts.push({
                type: 'row-delete',
                operation: 'delete',
                targetId: write.rowId,
                data: { baseVersion: state.baseVersion, origin },
              });
            } else if (opts.pending) {
              // A proposed deletion of a row whose create still waits in another pending request (binding-plan.types:
              // PENDING_CREATE): without a base version, it deletes the row once the buyer accepted the create.
              drafts.push({
                type: 'row-delete',
                operation: 'delete',
                targetId: write.rowId,
                data: { baseVersion: null, origin },
              });
            }
            continue;
          }
          if (write.kind === 'create' && !state?.exists) {
            drafts.push({
              type: 'row-create',
              operation: 'create',
              targetId: write.rowId,
              data: { values: this.toStored(fields, write.values, false), origin },
            });
            continue;
          }
          if (state?.exists) {
            drafts.push({
              type: 'row-update',
              operation: 'update',
              targetId: write.rowId,
              data: {
                values: this.toStored(fields, write.values, true),
                baseVersion: state.baseVersion,
                origin,
              },
            });
          }
        }
        scope.push(...drafts);
        return drafts;
      },
    );
    return outcome;
  }
}

/** A select option given by label (or id) → its id; other fields unchanged. */
export function optionIdsOf(field: FieldDefinition, value: unknown): unknown {
  if (
    (field.type !== 'single_select' && field.type !== 'multi_select') ||
    value === null ||
    value === undefined
  ) {
    return value;
  }
  const options = field.selectOptions ?? [];
  const find = (item: unknown): unknown => {
    const text = String(item);
    const byId = options.find((option) => option.id === text);
    if (byId) {
      return byId.id;
    }
    const lower = text.trim().toLowerCase();
    const byLabel = options.find(
      (option) =>
        option.label?.toLowerCase() === lower ||
        Object.values(option.name ?? {}).some((name) => name.toLowerCase() === lower),
    );
    return byLabel?.id ?? item;
  };
  if (field.type === 'multi_select') {
    return (Array.isArray(value) ? value : [value]).map(find);
  }
  return find(Array.isArray(value) ? value[0] : value);
}
