import { Injectable } from '@nestjs/common';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import type { FieldDefinition, StoredValue } from '../fields/field.types.js';
import type { RevisionRecord } from '../domain/document.records.js';
import type { HistoryEntryDto, RevisionDiffDto } from '../dtos/revision-history.dto.js';
import type { ValueEntryDto } from '../dtos/row.dto.js';
import { renderValue, renderValues, toOperationDto } from '../mappers/document.mapper.js';
import { RevisionHistoryRepository } from '../repositories/revision-history.repository.js';
import { RevisionRepository } from '../repositories/revision.repository.js';
import { ComputedAccessService } from './computed/computed-access.service.js';
import type { DocumentContext } from './document-access.service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function revisionNotFound(field = 'revId'): AppException {
  return new AppException(ErrorCode.NOT_FOUND, { details: [{ field, reason: 'revision not found' }] });
}

/** Field definition a value is rendered with: the current one, else the one the history recorded. */
function definitionOf(fields: readonly FieldDefinition[], id: string, recorded?: StoredValue | null): FieldDefinition | undefined {
  const current = fields.find((field) => field.id === id);
  if (current) {
    return current;
  }
  const field = recorded && typeof recorded === 'object' && !Array.isArray(recorded) ? (recorded as { field?: unknown }).field : undefined;
  return field && typeof field === 'object' ? (field as FieldDefinition) : undefined;
}

function entriesOf(values: Record<string, StoredValue>, fields: readonly FieldDefinition[]): ValueEntryDto[] {
  return renderValues(values, fields).filter((entry): entry is ValueEntryDto => entry.value !== null);
}

/** Differences between revisions and the history of one target, computed in SQL from the stored operations. */
@Injectable()
export class RevisionHistoryService {
  constructor(
    private readonly revisions: RevisionRepository,
    private readonly history: RevisionHistoryRepository,
    private readonly computedAccess: ComputedAccessService,
  ) {}

  async find(ctx: DocumentContext, revisionId: string, field = 'revId'): Promise<RevisionRecord> {
    const revision = UUID.test(revisionId) ? await this.revisions.find(ctx.document.uuid, revisionId) : null;
    if (!revision) {
      throw revisionNotFound(field);
    }
    return revision;
  }

  /**
   * What the revisions after `base` up to `revId` changed (default base: the previous revision). Rows are paged by
   * row id; properties, fields and settings come whole (a document has few).
   */
  async diff(ctx: DocumentContext, revisionId: string, query: { base?: string; page: number; pageSize: number }): Promise<RevisionDiffDto> {
    const revision = await this.find(ctx, revisionId);
    let base: { id: string | null; version: number };
    if (query.base) {
      const found = await this.find(ctx, query.base, 'base');
      if (found.version >= revision.version) {
        throw AppException.validation([{ field: 'base', reason: 'base must be an older revision than the one compared' }]);
      }
      base = { id: found.id, version: found.version };
    } else {
      base = { id: revision.previousRevisionId, version: revision.version - 1 };
    }
    const { fields, properties } = ctx.document.metadata;
    const paging = { limit: query.pageSize, offset: (query.page - 1) * query.pageSize };
    const [rows, targets] = await Promise.all([
      this.history.diffRows(ctx.document.uuid, base.version, revision.version, paging),
      this.history.diffTargets(ctx.document.uuid, base.version, revision.version),
    ]);
    const mask = await this.computedAccess.historyMask(ctx);
    const diff: RevisionDiffDto = {
      revisionId: revision.id,
      version: revision.version,
      baseRevisionId: base.id,
      baseVersion: base.version,
      addedRows: [],
      updatedCells: [],
      deletedRows: [],
      changedProperties: [],
      fields: { created: [], updated: [], deleted: [] },
      settingsChanged: targets.settingsChanged,
      rowsTotal: rows.total,
      page: query.page,
      pageSize: query.pageSize,
    };
    for (const row of rows.items) {
      if (row.kind === 'updated') {
        for (const cell of mask.entries(row.cells ?? [])) {
          const field = definitionOf(fields, cell.fieldId);
          diff.updatedCells.push({ rowId: row.rowId, fieldId: cell.fieldId, oldValue: renderValue(cell.oldValue, field), newValue: renderValue(cell.newValue, field) });
        }
        continue;
      }
      (row.kind === 'added' ? diff.addedRows : diff.deletedRows).push({ id: row.rowId, values: entriesOf(mask.values(row.values ?? {}), fields) });
    }
    for (const target of targets.targets) {
      if (target.kind === 'field') {
        // First and last operation on the field within the range: created then deleted is no change.
        const created = target.firstType === 'field-create';
        const deleted = target.lastType === 'field-delete';
        if (created && !deleted) {
          diff.fields.created.push(target.fieldId);
        } else if (!created && deleted) {
          diff.fields.deleted.push(target.fieldId);
        } else if (!created) {
          diff.fields.updated.push(target.fieldId);
        }
        continue;
      }
      if (target.firstType === 'field-create' || target.firstType === 'field-update' || target.firstType === 'field-delete') {
        const created = target.firstType === 'field-create';
        const deleted = target.lastType === 'field-delete';
        (created ? diff.fields.created : deleted ? diff.fields.deleted : diff.fields.updated).push(target.fieldId);
        continue;
      }
      if (target.firstType === 'property-delete') {
        const old = (target.oldValue as { values?: Record<string, StoredValue> } | null)?.values ?? {};
        for (const [fieldId, value] of Object.entries(old)) {
          diff.changedProperties.push({ fieldId, oldValue: renderValue(value, definitionOf(properties, fieldId)), newValue: null });
        }
        continue;
      }
      const field = definitionOf(properties, target.fieldId);
      const oldValue = (target.oldValue as { value?: StoredValue } | null)?.value ?? null;
      const newValue = (target.newValue as { value?: StoredValue } | null)?.value ?? null;
      if (JSON.stringify(oldValue) !== JSON.stringify(newValue)) {
        diff.changedProperties.push({ fieldId: target.fieldId, oldValue: renderValue(oldValue, field), newValue: renderValue(newValue, field) });
      }
    }
    return diff;
  }

  /** The operations on one target, newest first, each with its revision id and version. */
  async targetHistory(
    ctx: DocumentContext,
    query: { targetKind?: string; rowId?: string; fieldId?: string; page: number; pageSize: number },
  ): Promise<Page<HistoryEntryDto>> {
    // A row names itself: `?rowId=` alone is that row's history. Without either there is no target to follow.
    const kind = query.targetKind ?? (query.rowId !== undefined ? 'row' : null);
    if (!kind) {
      throw AppException.validation([{ field: 'targetKind', reason: 'targetKind (or rowId, for a row) is required' }]);
    }
    const { items, total } = await this.history.history(
      ctx.document.uuid,
      { kind, rowId: query.rowId, fieldId: query.fieldId },
      { limit: query.pageSize, offset: (query.page - 1) * query.pageSize },
    );
    const mask = await this.computedAccess.historyMask(ctx);
    return pageOf(
      items.map((op) => ({ ...toOperationDto(mask.operation(op), ctx.document.metadata), revisionId: op.revisionId, revisionVersion: op.revisionVersion })),
      total,
      query,
    );
  }
}
