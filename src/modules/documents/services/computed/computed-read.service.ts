import { Injectable } from '@nestjs/common';
import {
  computedPlan,
  computeRow,
  evaluatePropertyFormulas,
  hiddenPropertyFormulas,
  planPropertyFormulas,
  type ComputedPlan,
} from '../../fields/computed-row.evaluator.js';
import type { FieldDefinition, StoredRowValues, StoredValue } from '../../fields/field.types.js';
import { isPlainObject } from '../../fields/field-value.utils.js';
import type { DocumentMetadata, DocumentRecord, RowRecord } from '../../domain/document.records.js';
import { ComputedValuesRepository } from '../../repositories/computed-values.repository.js';
import { DocumentRepository } from '../../repositories/document.repository.js';
import type { DraftOverlayRow } from '../../repositories/row-query.repository.js';
import { volatileFieldSql } from '../../query/formula-sql.js';
import type { LinkedSource } from './computed-access.service.js';
import type { ValueMask } from './value-mask.js';

/** Passes over a draft's rows linking to each other (a lookup of a lookup of a draft row needs one per step). */
const MAX_DRAFT_PASSES = 8;

/**
 * Computed values that are never stored (docs/formulas.md): property formulas (aggregates of the rows in SQL) and
 * the rows of a draft (`?requestId=`), computed when they are read.
 */
@Injectable()
export class ComputedReadService {
  constructor(
    private readonly values: ComputedValuesRepository,
    private readonly documents: DocumentRepository,
  ) {}

  /**
   * Read-time values of property formulas (docs/formulas.md): aggregates of data rows (SUM({amount}), COUNT(*)) in
   * SQL, other properties (formulas among them, in dependency order) from `values`. Formulas aggregating a row
   * field `mask` hides from the reader are left out, and so is what reads them (hiddenPropertyFormulas).
   */
  async propertyValues(
    document: DocumentRecord,
    metadata: DocumentMetadata,
    values: StoredRowValues,
    mask: ValueMask,
  ): Promise<StoredRowValues> {
    const planned = planPropertyFormulas(metadata);
    if (!planned) {
      return values;
    }
    const aggregates = new Map<string, StoredValue>();
    const computed = volatileFieldSql(metadata.fields, planned.aggregates.map((aggregate) => aggregate.fieldId));
    for (const aggregate of planned.aggregates) {
      if (aggregate.fieldId === '*' || !mask.hides(aggregate.fieldId)) {
        aggregates.set(
          `${aggregate.fn}:${aggregate.fieldId}`,
          await this.values.aggregate(document.uuid, aggregate.fn, aggregate.fieldId, computed.get(aggregate.fieldId)),
        );
      }
    }
    const hidden = hiddenPropertyFormulas(planned, (fieldId) => mask.hides(fieldId));
    return evaluatePropertyFormulas(planned, values, aggregates, new Date(), hidden);
  }

  /**
   * A draft (`?requestId=`) read: the computed values of the rows the request creates or changes, laid into the
   * overlay so the draft filters, sorts and shows them like merged rows. Lookups follow the draft's relation values.
   * Returns the documents they read from, which may be ones no merged lookup has read yet (ComputedAccessService
   * hides what a reader may not see of them).
   */
  async draftOverlay(
    document: DocumentRecord,
    fields: readonly FieldDefinition[],
    overlay: DraftOverlayRow[],
  ): Promise<LinkedSource[]> {
    const plan = computedPlan(fields);
    const live = overlay.filter((item) => item.kind !== 'delete');
    if (plan.materialised.length === 0 || live.length === 0) {
      return [];
    }
    const base = new Map(
      (
        await this.values.rowsByIds(
          document.uuid,
          live.filter((item) => item.kind === 'update').map((item) => item.id),
        )
      ).map((row) => [row.id, row]),
    );
    const rows: RowRecord[] = live.map((item) => {
      const stored = base.get(item.id);
      const values = item.kind === 'update' ? { ...(stored?.values ?? {}), ...item.set } : { ...item.values };
      if (item.kind === 'update') {
        item.unset.forEach((id) => delete values[id]);
      }
      const at = new Date(item.at);
      return {
        id: item.id,
        seq: stored?.seq ?? '0',
        values,
        version: stored?.version ?? 0,
        createdAt: stored?.createdAt ?? at,
        createdBy: stored?.createdBy ?? item.by,
        updatedAt: at,
        updatedBy: item.by,
      };
    });
    // A draft row linking to another row of the draft reads that row as the draft has it (a row the draft deletes
    // as gone), computed values included: passes until nothing changes, as the merge settles its rows.
    const draftRows = new Map(rows.map((row) => [row.id, row]));
    const deleted = new Set(overlay.filter((item) => item.kind === 'delete').map((item) => item.id));
    const { links, sources } = await this.draftLinks(document, plan, rows, draftRows, deleted);
    const now = new Date();
    const computedRows: StoredRowValues[] = rows.map(() => ({}));
    for (let pass = 0; pass < MAX_DRAFT_PASSES; pass++) {
      let changed = false;
      rows.forEach((row, index) => {
        computedRows[index] = computeRow(plan, row, links.get(row.id) ?? new Map(), now);
        for (const [fieldId, value] of Object.entries(computedRows[index])) {
          if (JSON.stringify(row.values[fieldId] ?? null) !== JSON.stringify(value)) {
            changed = true;
            // In place: the links of other draft rows hold this very object.
            if (value === null) {
              delete row.values[fieldId];
            } else {
              row.values[fieldId] = value;
            }
          }
        }
      });
      if (!changed) {
        break;
      }
    }
    rows.forEach((_row, index) => {
      const item = live[index];
      const computed = computedRows[index];
      for (const [fieldId, value] of Object.entries(computed)) {
        if (item.kind === 'update') {
          if (value === null) {
            delete item.set[fieldId];
            item.unset = [...item.unset.filter((id) => id !== fieldId), fieldId];
          } else {
            item.set[fieldId] = value;
            item.unset = item.unset.filter((id) => id !== fieldId);
          }
        } else if (value === null) {
          delete item.values[fieldId];
        } else {
          item.values = { ...item.values, [fieldId]: value };
        }
      }
    });
    return sources;
  }

  /** Links of draft rows, read from their relation values (the draft's edges do not exist yet), and their documents. */
  private async draftLinks(
    document: DocumentRecord,
    plan: ComputedPlan,
    rows: readonly RowRecord[],
    draftRows: ReadonlyMap<string, RowRecord>,
    deleted: ReadonlySet<string>,
  ): Promise<{ links: Map<string, Map<string, StoredRowValues[]>>; sources: LinkedSource[] }> {
    const documents = new Map<string, DocumentRecord | null>();
    const resolve = async (docType: string, docId: string): Promise<DocumentRecord | null> => {
      const key = `${docType}/${docId}`;
      if (!documents.has(key)) {
        const inWorkspace = document.workspaceId
          ? await this.documents.findInWorkspace(document.workspaceId, docType, docId)
          : null;
        documents.set(
          key,
          inWorkspace ??
            (await this.documents.findOrganizationLevel(document.organizationId, docType, docId)),
        );
      }
      return documents.get(key) ?? null;
    };
    const wanted = new Map<string, Set<string>>();
    const refsOf = new Map<string, { fieldId: string; documentUuid: string; rowId: string }[]>();
    for (const row of rows) {
      const refs: { fieldId: string; documentUuid: string; rowId: string }[] = [];
      for (const fieldId of plan.relationFieldIds) {
        for (const ref of Array.isArray(row.values[fieldId]) ? (row.values[fieldId] as StoredValue[]) : []) {
          if (!isPlainObject(ref) || typeof ref.rowId !== 'string') {
            continue;
          }
          const docType = typeof ref.docType === 'string' ? ref.docType : document.docType;
          const docId = typeof ref.docId === 'string' ? ref.docId : document.docId;
          const target =
            docType === document.docType && docId === document.docId
              ? document
              : await resolve(docType, docId);
          if (target === document && deleted.has(ref.rowId)) {
            continue;
          }
          if (target) {
            refs.push({ fieldId, documentUuid: target.uuid, rowId: ref.rowId });
            wanted.set(target.uuid, (wanted.get(target.uuid) ?? new Set()).add(ref.rowId));
          }
        }
      }
      refsOf.set(row.id, refs);
    }
    const sources = new Map<string, LinkedSource>();
    for (const refs of refsOf.values()) {
      for (const ref of refs) {
        sources.set(`${ref.fieldId}|${ref.documentUuid}`, { relationFieldId: ref.fieldId, targetDocumentUuid: ref.documentUuid });
      }
    }
    const found = new Map<string, StoredRowValues>();
    for (const [documentUuid, rowIds] of wanted) {
      for (const target of await this.values.rowsByIds(documentUuid, [...rowIds])) {
        found.set(`${documentUuid}|${target.id}`, target.values);
      }
    }
    const links = new Map<string, Map<string, StoredRowValues[]>>();
    for (const [rowId, refs] of refsOf) {
      const byField = new Map<string, StoredRowValues[]>();
      for (const ref of refs) {
        const values =
          ref.documentUuid === document.uuid && draftRows.has(ref.rowId)
            ? draftRows.get(ref.rowId)?.values
            : found.get(`${ref.documentUuid}|${ref.rowId}`);
        if (values) {
          byField.set(ref.fieldId, [...(byField.get(ref.fieldId) ?? []), values]);
        }
      }
      links.set(rowId, byField);
    }
    return { links, sources: [...sources.values()] };
  }
}
