import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import type { RowValuesInput } from '../fields/field-type.registry.js';
import type { FieldDefinition, StoredRowValues } from '../fields/field.types.js';
import { sent } from '../../../database/transaction-host.js';
import { parseRowValues } from '../fields/field-type.registry.js';
import { validationDetailsOf } from '../fields/field-value.utils.js';
import { type BulkTargetValues, parseBulkRequest } from '../domain/bulk-request.js';
import type { ChangeDraft } from '../domain/document.records.js';
import type { BulkResultDto, RowDeleteResponseDto, RowWriteResponseDto, WriteResultDto } from '../dtos/row.dto.js';
import { toRowDto, toWriteResult } from '../mappers/document.mapper.js';
import { buildPropertiesWrite, buildRowCreate, buildRowDelete, buildRowUpdate } from './change-builders.js';
import { ChangeEngineService, type WriteOutcome } from './change-engine.service.js';
import { DocumentAccessService, type DocumentContext } from './document-access.service.js';
import type { UniqueCheckRow } from './draft-scope.js';
import { RelationMergeService } from './merge/relation-merge.service.js';
import { RowQueryService } from './row-query.service.js';
import { ComputedAccessService } from './computed/computed-access.service.js';

export interface WriteParams {
  requestId?: string;
  apply?: boolean;
}

/** Row writes: each validates at once against the draft it joins and goes through the change engine. */
@Injectable()
export class RowsService {
  constructor(
    private readonly engine: ChangeEngineService,
    private readonly rowQueries: RowQueryService,
    private readonly computedAccess: ComputedAccessService,
    private readonly access: DocumentAccessService,
    private readonly relations: RelationMergeService,
  ) {}

  async create(ctx: DocumentContext, body: { id?: string; values?: unknown }, params: WriteParams): Promise<RowWriteResponseDto> {
    let rowId = body.id;
    const outcome = await this.engine.write(ctx, { ...params, title: 'Create row', rowsOnly: true, valuesValidated: true, singleRow: true }, async (scope) => {
      const change = await buildRowCreate(scope, { id: body.id, values: (body.values ?? []) as RowValuesInput });
      rowId = change.targetId;
      return [change];
    });
    return this.rowResult(ctx, rowId as string, outcome);
  }

  async update(ctx: DocumentContext, rowId: string, body: { values: unknown; version?: number; id?: unknown }, params: WriteParams): Promise<RowWriteResponseDto> {
    if (body.values === undefined || body.values === null) {
      throw AppException.validation([{ field: 'values', reason: 'values is required' }]);
    }
    // A row sent back as GET answered it carries its id: ignored when it names this row, refused when it names another.
    if (body.id !== undefined && body.id !== null && body.id !== rowId) {
      throw AppException.validation([{ field: 'id', reason: `id ${JSON.stringify(body.id)} differs from the row of the path (${rowId})` }]);
    }
    const outcome = await this.engine.write(ctx, { ...params, title: `Update row ${rowId}`, rowsOnly: true, valuesValidated: true, singleRow: true }, async (scope) => [
      await buildRowUpdate(scope, rowId, { values: body.values as RowValuesInput, version: body.version }),
    ]);
    return this.rowResult(ctx, rowId, outcome);
  }

  async remove(ctx: DocumentContext, rowId: string, params: WriteParams & { version?: number }): Promise<RowDeleteResponseDto> {
    const outcome = await this.engine.write(ctx, { ...params, title: `Delete row ${rowId}`, rowsOnly: true, singleRow: true }, async (scope) => [await buildRowDelete(scope, rowId, params.version)]);
    return { id: rowId, deleted: outcome.merge !== null, request: toWriteResult(outcome) };
  }

  /**
   * `POST /data/bulk` and `/rows/batch-update`: every target form, at most 1000 rows, all or nothing. Every cell is
   * validated before anything is recorded; one Change per row (sharing a bulk id) plus one for the properties.
   */
  async bulk(ctx: DocumentContext, body: unknown, params: WriteParams): Promise<BulkResultDto> {
    const parsed = parseBulkRequest(body);
    if (parsed.properties !== null && !ctx.principal.scopes.includes('doc:write')) {
      // The route needs data:write only; a property target writes what PATCH /properties guards with doc:write.
      throw AppException.forbidden('missing scope doc:write');
    }
    const bulkId = randomUUID();
    const rowIds = [...parsed.rows.keys()];
    const outcome = await this.engine.write(ctx, { ...params, title: `Bulk update of ${rowIds.length} rows`, rowsOnly: parsed.properties === null, valuesValidated: true }, async (scope) => {
      const metadata = await scope.metadata();
      // The rows are read (and locked) while their values are checked: the check needs only the fields, and on a
      // 1000-row write it takes about as long as PostgreSQL's read (docs/performance.md, "Ninth pass").
      const reading = scope.rows(rowIds);
      reading.catch(() => undefined); // awaited below; a failure must not go unhandled while the values are checked
      await sent();
      const checked = new Map<string, { values: StoredRowValues } | { details: ErrorDetail[] }>();
      for (const [rowId, target] of parsed.rows) {
        const overridden = overriddenProblems(target, metadata.fields, rowId);
        try {
          const values = parseRowValues(target.values, metadata.fields, { partial: true, document: scope.document });
          checked.set(rowId, overridden.length > 0 ? { details: overridden } : { values });
        } catch (error) {
          const details = validationDetailsOf(error);
          if (!details) {
            throw error;
          }
          checked.set(rowId, {
            details: [...overridden, ...details.map((detail) => ({ ...detail, rowId, field: detail.fieldId ? (target.paths[detail.fieldId] ?? target.path) : target.path }))],
          });
        }
      }
      const states = await reading;
      const errors: ErrorDetail[] = [];
      const changes: ChangeDraft[] = [];
      const unique: UniqueCheckRow[] = [];
      for (const [rowId, target] of parsed.rows) {
        const state = states.get(rowId);
        if (!state?.exists) {
          errors.push({ field: `${target.path}.target`, rowId, reason: `row ${rowId} not found` });
          continue;
        }
        const result = checked.get(rowId);
        if (!result || 'details' in result) {
          errors.push(...(result?.details ?? []));
          continue;
        }
        unique.push({ rowId, values: result.values, path: target.path });
        changes.push({ type: 'row-update', operation: 'update', targetId: rowId, data: { values: result.values, baseVersion: state.baseVersion, origin: { bulkId } } });
      }
      if (errors.length > 0) {
        throw AppException.validation(errors);
      }
      await scope.checkUnique(metadata.fields, unique);
      scope.push(...changes);
      if (parsed.properties) {
        const overridden = overriddenProblems(parsed.properties, metadata.properties);
        if (overridden.length > 0) {
          throw AppException.validation(overridden);
        }
        try {
          const before = (await scope.properties()).values;
          const change = await buildPropertiesWrite(scope, parsed.properties.values, 'patch', undefined, { bulkId });
          await this.relations.checkPropertyChange(scope, before, change, ctx.principal.userId);
          changes.push(change);
        } catch (error) {
          const details = validationDetailsOf(error);
          if (!details) {
            throw error;
          }
          const paths = parsed.properties.paths;
          throw AppException.validation(details.map((detail) => ({ ...detail, field: detail.fieldId ? (paths[detail.fieldId] ?? parsed.properties?.path) : parsed.properties?.path })));
        }
      }
      return changes;
    });
    return { ...toWriteResult(outcome), rowsUpdated: rowIds.length, rowIds, propertiesUpdated: parsed.properties !== null };
  }

  /**
   * Row creates, updates and deletes of a batch route (supply-chain `rows/batch-update`) as one write and one bulk:
   * all or nothing, appended to `params.requestId` or merged at once, and once merged one `data_bulk_operation`
   * event, not one per row. A failing operation's error details are prefixed with its `path`.
   */
  async batch(
    ctx: DocumentContext,
    ops: ReadonlyArray<{ operation: 'create' | 'update' | 'delete'; rowId: string; values: unknown; path: string }>,
    params: WriteParams & { title?: string; description?: string | null },
  ): Promise<WriteResultDto> {
    // A POST route: the access guard asks `permissions.delete` of DELETE routes only.
    await this.access.assertMayRecordDeletions(ctx, ops.map((op) => `row-${op.operation}`));
    const origin = { bulkId: randomUUID() };
    const title = params.title ?? `Batch of ${ops.length} rows`;
    const outcome = await this.engine.write(ctx, { ...params, title, description: params.description, rowsOnly: true, valuesValidated: true }, async (scope) => {
      const changes: ChangeDraft[] = [];
      for (const op of ops) {
        try {
          if (op.operation === 'create') {
            changes.push(await buildRowCreate(scope, { id: op.rowId, values: op.values as RowValuesInput }, origin));
          } else if (op.operation === 'update') {
            changes.push(await buildRowUpdate(scope, op.rowId, { values: op.values as RowValuesInput }, origin));
          } else {
            changes.push(await buildRowDelete(scope, op.rowId, undefined, origin));
          }
        } catch (error) {
          throw withPathPrefix(error, op.path);
        }
      }
      return changes;
    });
    return toWriteResult(outcome);
  }

  /** The row as the write left it: the document's row when merged, else the draft's. */
  private async rowResult(ctx: DocumentContext, rowId: string, outcome: WriteOutcome): Promise<RowWriteResponseDto> {
    // A merged write already holds the row as it committed; only a draft needs reading back.
    const merged = outcome.merge ? [...outcome.merge.rows.created, ...outcome.merge.rows.updated].find((row) => row.id === rowId) : undefined;
    if (merged) {
      // As a read would show it to the writer: without lookups over documents they cannot read (docs/formulas.md).
      const fields = await this.computedAccess.visibleFields(ctx, outcome.document.metadata.fields);
      return { ...toRowDto(merged, fields), request: toWriteResult(outcome) };
    }
    // The read's `readOnly` is not part of a write's answer (a write to a read-only document is refused before this).
    const { readOnly: _readOnly, ...row } = await this.rowQueries.get(ctx, rowId, outcome.merge ? undefined : outcome.request?.id);
    return { ...row, request: toWriteResult(outcome) };
  }
}

/** Problems of the values a later item of a bulk call overrode (BulkTargetValues.overridden), each at its own item's path. */
function overriddenProblems(target: BulkTargetValues, fields: FieldDefinition[], rowId?: string): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const item of target.overridden ?? []) {
    try {
      parseRowValues({ [item.fieldId]: item.value }, fields, { partial: true });
    } catch (error) {
      const details = validationDetailsOf(error);
      if (!details) {
        throw error;
      }
      problems.push(...details.map((detail) => ({ ...detail, ...(rowId === undefined ? {} : { rowId }), field: item.path })));
    }
  }
  return problems;
}

/** An AppException whose details' fields are prefixed with `path` (`rows[2].values…`). */
function withPathPrefix(error: unknown, path: string): unknown {
  if (!(error instanceof AppException) || !error.options.details) {
    return error;
  }
  return new AppException(error.code, {
    ...error.options,
    details: error.options.details.map((detail) => ({ ...detail, field: `${path}${detail.field ? `.${detail.field}` : ''}` })),
  });
}
