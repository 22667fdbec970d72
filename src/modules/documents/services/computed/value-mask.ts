import type { StoredRowValues, StoredValue } from '../../fields/field.types.js';
import { isPlainObject } from '../../fields/field-value.utils.js';
import type { OperationTarget } from '../../domain/document.records.js';

/** The parts of a ChangeOperation (record or DTO) that carry values. */
interface OperationLike {
  target: OperationTarget;
  oldValue: unknown;
  newValue: unknown;
}

/**
 * The row fields one reader may not see in one document: lookups and rollups that read a document the reader cannot
 * read, and what is computed from them (ComputedAccessService.maskFor, docs/formulas.md "Access"). Every way row
 * values leave the service for that reader goes through it: reads, write answers, revisions, diffs, the
 * point-in-time export and events. Applying an empty mask returns its input unchanged (the same object).
 */
export class ValueMask {
  static readonly NONE = new ValueMask(new Set());

  constructor(readonly hidden: ReadonlySet<string>) {}

  get empty(): boolean {
    return this.hidden.size === 0;
  }

  hides(fieldId: string): boolean {
    return this.hidden.has(fieldId);
  }

  /** Field definitions without the hidden ones. */
  fields<T extends { id: string }>(fields: T[]): T[] {
    return this.empty ? fields : fields.filter((field) => !this.hidden.has(field.id));
  }

  /** Stored values (by field id) without the hidden fields' values. */
  values<T extends StoredRowValues>(values: T): T {
    if (this.empty || !Object.keys(values).some((key) => this.hidden.has(key))) {
      return values;
    }
    const kept: StoredRowValues = {};
    for (const [key, value] of Object.entries(values)) {
      if (!this.hidden.has(key)) {
        kept[key] = value;
      }
    }
    return kept as T;
  }

  /** ValueEntry-like items (`{fieldId, …}`) without the hidden fields' entries. */
  entries<T extends { fieldId: string }>(entries: T[]): T[] {
    return this.empty || !entries.some((entry) => this.hidden.has(entry.fieldId))
      ? entries
      : entries.filter((entry) => !this.hidden.has(entry.fieldId));
  }

  /**
   * A ChangeOperation without hidden values: the `values` of a row operation (row-create, row-update, row-delete)
   * lose the hidden fields, and the value snapshot of a hidden field's definition change (`values` of a
   * field-delete or converting field-update, by row id) goes.
   */
  operation<T extends OperationLike>(op: T): T {
    if (this.empty) {
      return op;
    }
    if (op.target.kind === 'row') {
      const oldValue = this.rowSide(op.oldValue);
      const newValue = this.rowSide(op.newValue);
      return oldValue === op.oldValue && newValue === op.newValue ? op : { ...op, oldValue, newValue };
    }
    if (op.target.kind === 'field' && op.target.fieldId !== undefined && this.hidden.has(op.target.fieldId)) {
      return { ...op, oldValue: withoutSnapshot(op.oldValue), newValue: withoutSnapshot(op.newValue) };
    }
    return op;
  }

  /**
   * A domain event without hidden values: the `values` entries of its payload (data_row_created/updated) and of each
   * of its `rows` (data_bulk_operation).
   */
  event<T extends { payload: Record<string, unknown> }>(event: T): T {
    if (this.empty) {
      return event;
    }
    const { values, rows } = event.payload;
    if (Array.isArray(values)) {
      const kept = this.eventEntries(values);
      return kept === values ? event : { ...event, payload: { ...event.payload, values: kept } };
    }
    if (Array.isArray(rows)) {
      const keptRows = rows.map((row: unknown) => {
        if (!isPlainObject(row) || !Array.isArray(row.values)) {
          return row;
        }
        const kept = this.eventEntries(row.values);
        return kept === row.values ? row : { ...row, values: kept };
      });
      return keptRows.every((row, i) => row === rows[i]) ? event : { ...event, payload: { ...event.payload, rows: keptRows } };
    }
    return event;
  }

  /** Untyped ValueEntry items of an event without the hidden fields' (the same array when none is hidden). */
  private eventEntries(values: unknown[]): unknown[] {
    const kept = values.filter(
      (entry) => !(isPlainObject(entry) && typeof entry.fieldId === 'string' && this.hidden.has(entry.fieldId)),
    );
    return kept.length === values.length ? values : kept;
  }

  private rowSide(side: unknown): unknown {
    if (!isPlainObject(side) || !isPlainObject(side.values)) {
      return side;
    }
    const values = side.values as StoredRowValues;
    const kept = this.values(values);
    return kept === values ? side : { ...side, values: kept };
  }
}

function withoutSnapshot(side: unknown): unknown {
  if (!isPlainObject(side) || !('values' in side)) {
    return side;
  }
  const { values: _values, ...rest } = side as { [key: string]: StoredValue };
  return rest;
}
