import { Injectable } from '@nestjs/common';
import type { FieldDefinition, StoredRowValues, StoredValue } from '../../fields/field.types.js';
import { convertValue, handlerFor } from '../../fields/field-type.registry.js';
import type { MetadataEffect } from '../../domain/change-fold.js';
import type { DocumentMetadata, DocumentRecord } from '../../domain/document.records.js';
import type { ConversionReport, MergeConflict } from '../../domain/merge.types.js';
import { diffFields, type FieldDiff, isEmptyDiff } from '../../domain/metadata-diff.js';
import { FieldValuesRepository } from '../../repositories/field-values.repository.js';
import { RowRepository } from '../../repositories/row.repository.js';
import { ComputedMetadataService } from '../computed/computed-metadata.service.js';
import type { OperationWriter } from './operation-writer.js';

export interface MetadataPlan {
  metadata: DocumentMetadata;
  fields: FieldDiff;
  properties: FieldDiff;
  /** The order or whole list changed although no field definition did. */
  reordered: boolean;
}

export interface MetadataApplyResult {
  conversions: ConversionReport[];
  rowSeq: number;
  /** Property values after converting or dropping values of changed property definitions. */
  properties: StoredRowValues | null;
}

const CONVERSION_BATCH = 2000;
const REPORTED_FAILURES = 50;

export function fieldSummary(field: FieldDefinition): Record<string, StoredValue> {
  return { id: field.id, name: field.name, type: field.type, required: field.required === true, defaultValue: (field.defaultValue ?? null) as StoredValue };
}

/**
 * The metadata part of a merge: the new definitions are diffed against the current ones into field-create,
 * field-update and field-delete operations. A type change (or removed select options) converts the stored values
 * in keyset batches; values that cannot be converted are removed and reported. Deleted and converted fields keep
 * their previous values in the operation's `oldValue.values` (keyed by row id) so a revert can restore them.
 */
@Injectable()
export class MetadataMergeService {
  constructor(
    private readonly fieldValues: FieldValuesRepository,
    private readonly rows: RowRepository,
    private readonly computed: ComputedMetadataService,
  ) {}

  async plan(document: DocumentRecord, effect: MetadataEffect, conflicts: MergeConflict[]): Promise<MetadataPlan> {
    if (document.metadataVersion !== effect.baseMetadataVersion) {
      conflicts.push({
        type: 'metadata-changed',
        targetId: 'metadata',
        baseVersion: effect.baseMetadataVersion,
        currentVersion: document.metadataVersion,
        reason: `the metadata was changed since the change was recorded; append a metadata change with version ${document.metadataVersion} to re-base it`,
      });
    }
    const fields = diffFields(document.metadata.fields, effect.fields);
    const properties = diffFields(document.metadata.properties, effect.properties);
    for (const update of fields.updated) {
      if (update.becameUnique && !update.convert) {
        const duplicates = await this.rows.duplicateValues(document.uuid, update.after.id);
        if (duplicates.length > 0) {
          conflicts.push({
            type: 'existing-duplicates',
            targetId: update.after.id,
            fieldId: update.after.id,
            value: duplicates[0],
            reason: 'existing rows share values of a field being made unique',
          });
        }
      }
    }
    // Lookups of other documents may have started reading a field after a request recorded deleting or retyping it.
    for (const reader of await this.computed.readersOfRemoved(document, document.metadata.fields, effect.fields)) {
      conflicts.push({
        type: 'field-read-elsewhere',
        targetId: reader.fieldId,
        fieldId: reader.fieldId,
        reason: reader.reason,
        details: [{ field: 'fields', fieldId: reader.fieldId, dependents: reader.dependents, reason: reader.reason }],
      });
    }
    const order = (list: readonly FieldDefinition[]): string => list.map((field) => field.id).join('\u0000');
    const reordered =
      isEmptyDiff(fields) &&
      isEmptyDiff(properties) &&
      (order(document.metadata.fields) !== order(effect.fields) || order(document.metadata.properties) !== order(effect.properties));
    return { metadata: { fields: effect.fields, properties: effect.properties }, fields, properties, reordered };
  }

  async apply(
    document: DocumentRecord,
    plan: MetadataPlan,
    currentProperties: StoredRowValues,
    ops: OperationWriter,
  ): Promise<MetadataApplyResult> {
    const conversions: ConversionReport[] = [];
    let rowSeq = document.rowSeq;

    for (const field of plan.fields.created) {
      ops.write([{ type: 'field-create', target: { kind: 'field', fieldId: field.id }, oldValue: null, newValue: { field: fieldSummaryFull(field) } }]);
      if (field.type === 'auto_number') {
        const numbered = await this.fieldValues.backfillAutoNumber(document.uuid, field.id, 0);
        rowSeq = Math.max(rowSeq, numbered);
      }
    }
    for (const update of plan.fields.updated) {
      const oldValue = { field: fieldSummaryFull(update.before) };
      const newValue = { field: fieldSummaryFull(update.after) };
      if (!update.convert) {
        ops.write([{ type: 'field-update', target: { kind: 'field', fieldId: update.after.id }, oldValue, newValue }]);
        continue;
      }
      await this.fieldValues.snapshot(document.uuid, update.before.id);
      const report = await this.convertRows(document, update.before, update.after);
      conversions.push(report);
      await ops.writeSnapshot({
        type: 'field-update',
        target: { kind: 'field', fieldId: update.after.id },
        oldValue: oldValue.field,
        newValue,
        note: JSON.stringify({ conversion: report }),
        snapshotFieldId: update.before.id,
      });
    }
    for (const field of plan.fields.deleted) {
      await this.fieldValues.snapshot(document.uuid, field.id);
      await ops.writeSnapshot({
        type: 'field-delete',
        target: { kind: 'field', fieldId: field.id },
        oldValue: fieldSummaryFull(field),
        newValue: null,
        snapshotFieldId: field.id,
      });
      await this.fieldValues.remove(document.uuid, field.id);
    }

    const properties = await this.applyPropertyDefinitions(plan.properties, currentProperties, ops, conversions);
    if (plan.reordered) {
      ops.write([
        {
          type: 'metadata-update',
          target: { kind: 'metadata' },
          oldValue: { fields: document.metadata.fields.map((f) => f.id), properties: document.metadata.properties.map((f) => f.id) },
          newValue: { fields: plan.metadata.fields.map((f) => f.id), properties: plan.metadata.properties.map((f) => f.id) },
        },
      ]);
    }
    return { conversions, rowSeq, properties };
  }

  private async convertRows(document: DocumentRecord, before: FieldDefinition, after: FieldDefinition): Promise<ConversionReport> {
    const report: ConversionReport = { fieldId: after.id, scope: 'fields', fromType: before.type, toType: after.type, converted: 0, failed: 0, failedRowIds: [] };
    const dropAll = handlerFor(after.type).computed;
    let lastSeq = '0';
    for (;;) {
      const batch = await this.fieldValues.batch(document.uuid, before.id, lastSeq, CONVERSION_BATCH);
      if (batch.length === 0) {
        break;
      }
      lastSeq = batch[batch.length - 1]?.seq ?? lastSeq;
      const writes = batch.map((item) => {
        const result = dropAll ? { ok: true as const, value: null } : convertValue(item.value, before, after);
        if (result.ok) {
          report.converted += result.value === null ? 0 : 1;
          return { id: item.id, value: result.value };
        }
        report.failed += 1;
        if (report.failedRowIds.length < REPORTED_FAILURES) {
          report.failedRowIds.push(item.id);
        }
        return { id: item.id, value: null };
      });
      await this.fieldValues.writeValues(document.uuid, after.id, writes);
      if (batch.length < CONVERSION_BATCH) {
        break;
      }
    }
    return report;
  }

  private async applyPropertyDefinitions(
    diff: FieldDiff,
    current: StoredRowValues,
    ops: OperationWriter,
    conversions: ConversionReport[],
  ): Promise<StoredRowValues | null> {
    if (isEmptyDiff(diff)) {
      return null;
    }
    const values = { ...current };
    for (const field of diff.created) {
      ops.write([{ type: 'field-create', target: { kind: 'property', fieldId: field.id }, oldValue: null, newValue: { field: fieldSummaryFull(field) } }]);
    }
    for (const update of diff.updated) {
      const old = values[update.before.id];
      let note: string | null = null;
      if (update.convert && old !== undefined) {
        const result = handlerFor(update.after.type).computed ? { ok: true as const, value: null } : convertValue(old, update.before, update.after);
        const report: ConversionReport = {
          fieldId: update.after.id,
          scope: 'properties',
          fromType: update.before.type,
          toType: update.after.type,
          converted: result.ok && result.value !== null ? 1 : 0,
          failed: result.ok ? 0 : 1,
          failedRowIds: [],
        };
        conversions.push(report);
        note = JSON.stringify({ conversion: report });
        if (result.ok && result.value !== null) {
          values[update.after.id] = result.value;
        } else {
          delete values[update.after.id];
        }
      }
      ops.write([
        {
          type: 'field-update',
          target: { kind: 'property', fieldId: update.after.id },
          oldValue: { field: fieldSummaryFull(update.before), value: old ?? null },
          newValue: { field: fieldSummaryFull(update.after), value: values[update.after.id] ?? null },
          note,
        },
      ]);
    }
    for (const field of diff.deleted) {
      ops.write([
        { type: 'field-delete', target: { kind: 'property', fieldId: field.id }, oldValue: { field: fieldSummaryFull(field), value: values[field.id] ?? null }, newValue: null },
      ]);
      delete values[field.id];
    }
    return values;
  }
}

/** The whole definition as JSON (for history). */
export function fieldSummaryFull(field: FieldDefinition): StoredValue {
  return JSON.parse(JSON.stringify(field)) as StoredValue;
}
