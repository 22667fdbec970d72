import { Injectable } from '@nestjs/common';
import type { FieldDefinition, StoredRowValues, StoredValue } from '../../fields/field.types.js';
import { handlerFor, parseRowValues } from '../../fields/field-type.registry.js';
import { validationDetailsOf } from '../../fields/field-value.utils.js';
import { canonicalJson } from '../../domain/metadata-diff.js';
import { applySet, type RowEffect } from '../../domain/change-fold.js';
import type { DocumentRecord, RowRecord } from '../../domain/document.records.js';
import type { MergeConflict } from '../../domain/merge.types.js';
import { RowRepository } from '../../repositories/row.repository.js';
import type { NewOperation } from '../../repositories/revision.repository.js';
import { sent } from '../../../../database/transaction-host.js';
import type { OperationWriter } from './operation-writer.js';

export interface RowMergePlan {
  creates: { id: string; values: StoredRowValues; effect: RowEffect }[];
  /** Updates and replaces: the complete new values. */
  updates: { id: string; values: StoredRowValues; old: RowRecord; effect: RowEffect }[];
  deletes: { id: string; old: RowRecord; effect: RowEffect }[];
}

export interface RowMergeResult {
  created: RowRecord[];
  updated: RowRecord[];
  deleted: RowRecord[];
  operations: NewOperation[];
  rowSeq: number;
}

function revalidate(values: StoredRowValues, fields: readonly FieldDefinition[], partial: boolean): StoredRowValues {
  return parseRowValues(values, [...fields], { partial, applyDefaults: false });
}

/**
 * Stored values compared by content: scalars directly, arrays and objects (options, attachments, references) by
 * their JSON with sorted keys — `jsonb` reorders an object's keys, so the value read back (`{url, name}`) and the
 * same value written again (`{name, url}`) differ in key order only, and must not count as a change.
 */
function sameValue(a: StoredValue, b: StoredValue): boolean {
  if (a === b) {
    return true;
  }
  return typeof a === 'object' && typeof b === 'object' && a !== null && b !== null && canonicalJson(a) === canonicalJson(b);
}

/** Changed keys of an update: old and new stored values (null = absent). */
function changedCells(before: StoredRowValues, after: StoredRowValues): { oldValues: StoredRowValues; newValues: StoredRowValues } {
  const oldValues: StoredRowValues = {};
  const newValues: StoredRowValues = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = before[key] ?? null;
    const b = after[key] ?? null;
    if (!sameValue(a, b)) {
      oldValues[key] = a;
      newValues[key] = b;
    }
  }
  return { oldValues, newValues };
}

/**
 * The row part of a merge: conflict detection (row changed or deleted since recorded, created id taken),
 * re-validation against the metadata in force, `unique` under the document lock, then the SQL writes and the
 * ChangeOperations with old and new values.
 */
@Injectable()
export class RowMergeService {
  constructor(private readonly rows: RowRepository) {}

  async plan(
    document: DocumentRecord,
    effects: readonly RowEffect[],
    fields: readonly FieldDefinition[],
    lock: boolean,
    conflicts: MergeConflict[],
    opts: { lockedRows?: ReadonlyMap<string, RowRecord | null>; revalidate: boolean } = { revalidate: true },
  ): Promise<RowMergePlan> {
    const { lockedRows } = opts;
    // Values parsed against these fields earlier in the transaction are not parsed again (see MergeService.merge).
    const valuesOf = (values: StoredRowValues, partial: boolean) => (opts.revalidate ? revalidate(values, fields, partial) : values);
    const plan: RowMergePlan = { creates: [], updates: [], deletes: [] };
    if (effects.length === 0) {
      return plan;
    }
    // Rows this transaction already holds locked cannot have changed: only the others are read (and locked).
    const unread = effects.map((effect) => effect.rowId).filter((id) => !lockedRows?.has(id));
    const current = await this.rows.findMany(document.uuid, unread, lock);
    lockedRows?.forEach((row, id) => {
      if (row) {
        current.set(id, row);
      }
    });
    for (const effect of effects) {
      const row = current.get(effect.rowId);
      if (effect.kind === 'create') {
        if (row) {
          conflicts.push({ type: 'row-exists', targetId: effect.rowId, rowId: effect.rowId, reason: 'a row with this id was created meanwhile' });
          continue;
        }
      } else if (!row) {
        conflicts.push({ type: 'row-deleted', targetId: effect.rowId, rowId: effect.rowId, reason: 'the row was deleted meanwhile' });
        continue;
      } else if (effect.baseVersion !== null && row.version !== effect.baseVersion) {
        conflicts.push({
          type: 'row-changed',
          targetId: effect.rowId,
          rowId: effect.rowId,
          baseVersion: effect.baseVersion,
          currentVersion: row.version,
          // The way out, named where a client meets the conflict (docs/documents.md, "Merge").
          reason: `the row was changed since the change was recorded; append a change of the row with version ${row.version} to re-base it`,
        });
        continue;
      }
      try {
        switch (effect.kind) {
          case 'create':
            plan.creates.push({ id: effect.rowId, values: valuesOf(effect.values, false), effect });
            break;
          case 'replace': {
            const old = row as RowRecord;
            plan.updates.push({ id: effect.rowId, values: { ...computedValues(old.values, fields), ...valuesOf(effect.values, false) }, old, effect });
            break;
          }
          case 'update': {
            const old = row as RowRecord;
            plan.updates.push({ id: effect.rowId, values: applySet(old.values, valuesOf(effect.set, true)), old, effect });
            break;
          }
          case 'delete':
            plan.deletes.push({ id: effect.rowId, old: row as RowRecord, effect });
            break;
        }
      } catch (error) {
        const details = validationDetailsOf(error);
        if (!details) {
          throw error;
        }
        conflicts.push({ type: 'invalid-value', targetId: effect.rowId, rowId: effect.rowId, reason: 'the values no longer fit the metadata', details });
      }
    }
    await this.checkUnique(document, plan, fields, conflicts);
    return plan;
  }

  private async checkUnique(document: DocumentRecord, plan: RowMergePlan, fields: readonly FieldDefinition[], conflicts: MergeConflict[]): Promise<void> {
    const unique = fields.filter((field) => field.unique === true && !handlerFor(field.type).computed);
    for (const field of unique) {
      // Rows whose value of this field goes away (deleted or changed) no longer hold it; new values are candidates.
      const exclude = new Set<string>(plan.deletes.map((item) => item.id));
      const candidates: { fieldId: string; value: StoredValue; rowId: string }[] = [];
      const seen = new Map<string, string>();
      const written: { id: string; values: StoredRowValues; old?: RowRecord }[] = [...plan.creates, ...plan.updates];
      for (const item of written) {
        const value = item.values[field.id] ?? null;
        const old = item.old ? (item.old.values[field.id] ?? null) : null;
        if (sameValue(value, old)) {
          continue;
        }
        exclude.add(item.id);
        if (value === null) {
          continue;
        }
        const key = canonicalJson(value);
        const other = seen.get(key);
        if (other !== undefined) {
          conflicts.push({ type: 'unique-duplicate', targetId: item.id, rowId: item.id, fieldId: field.id, value, reason: `rows ${other} and ${item.id} would share a unique value` });
          continue;
        }
        seen.set(key, item.id);
        candidates.push({ fieldId: field.id, value, rowId: item.id });
      }
      const clashes = await this.rows.findUniqueClashes(document.uuid, candidates, [...exclude]);
      for (const clash of clashes) {
        const owner = candidates.find((item) => canonicalJson(item.value) === canonicalJson(clash.value));
        conflicts.push({
          type: 'unique-taken',
          targetId: owner?.rowId ?? clash.rowId,
          rowId: owner?.rowId,
          fieldId: clash.fieldId,
          value: clash.value,
          reason: `the unique value is taken by row ${clash.rowId}`,
        });
      }
    }
  }

  /**
   * Writes the plan's rows and hands their ChangeOperations to `ops`. The insert, update and delete are sent one
   * after the other without waiting (one connection runs them in order; if one fails, the transaction is rolled
   * back whatever the others did), and the operations are built and serialized while PostgreSQL runs them: they
   * need only the plan, and for a 1000-row write they cost a few milliseconds of the UPDATE's twenty-odd.
   */
  async apply(
    document: DocumentRecord,
    plan: RowMergePlan,
    fields: readonly FieldDefinition[],
    userId: string,
    ops: OperationWriter,
    /** More work of the merge that needs none of these statements' answers, done while they run. */
    whileWriting: () => void = () => undefined,
  ): Promise<RowMergeResult> {
    let rowSeq = document.rowSeq;
    const autoNumbers = fields.filter((field) => field.type === 'auto_number');
    const creates = plan.creates.map((item) => {
      rowSeq += 1;
      const values = { ...item.values };
      for (const field of autoNumbers) {
        values[field.id] = rowSeq;
      }
      return { id: item.id, values };
    });
    const writing = Promise.all([
      this.rows.insertMany(document.uuid, creates, userId),
      this.rows.updateMany(document.uuid, plan.updates, userId),
      this.rows.deleteMany(
        document.uuid,
        plan.deletes.map((item) => item.id),
      ),
    ]);
    // Awaited below; a failure must not go unhandled while the operations are built.
    writing.catch(() => undefined);
    if (creates.length + plan.updates.length + plan.deletes.length >= OVERLAP_MIN_ROWS) {
      await sent();
    }

    const operations: NewOperation[] = [];
    for (const row of creates) {
      // A created row is what was sent, at version 1 (insertMany).
      operations.push({ type: 'row-create', target: { kind: 'row', rowId: row.id }, oldValue: null, newValue: { values: row.values, version: 1 } });
    }
    for (const item of plan.updates) {
      const { oldValues, newValues } = changedCells(item.old.values, item.values);
      operations.push({
        type: 'row-update',
        target: { kind: 'row', rowId: item.id },
        oldValue: { values: oldValues, version: item.old.version },
        newValue: { values: newValues, version: item.old.version + 1 },
      });
    }
    for (const item of plan.deletes) {
      operations.push({
        type: 'row-delete',
        target: { kind: 'row', rowId: item.id },
        oldValue: {
          values: item.old.values,
          version: item.old.version,
          createdAt: item.old.createdAt.toISOString(),
          createdBy: item.old.createdBy,
          // The row as the merge found it, so a merged request's diff shows its last change, not only its creation.
          updatedAt: item.old.updatedAt.toISOString(),
          updatedBy: item.old.updatedBy,
        },
        newValue: null,
      });
    }
    ops.write(operations);
    whileWriting();
    const [created, updated] = await writing;
    return { created, updated, deleted: plan.deletes.map((item) => item.old), operations, rowSeq };
  }
}

/** From this many rows on, a merge lets its row statements leave before it builds their operations (apply). */
const OVERLAP_MIN_ROWS = 50;

/** Values of computed fields (auto numbers) a replaced row keeps. */
function computedValues(values: StoredRowValues, fields: readonly FieldDefinition[]): StoredRowValues {
  const kept: StoredRowValues = {};
  for (const field of fields) {
    const value = values[field.id];
    if (handlerFor(field.type).computed && value !== undefined) {
      kept[field.id] = value;
    }
  }
  return kept;
}
