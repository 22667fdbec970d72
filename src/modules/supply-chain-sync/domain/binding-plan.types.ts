import type { FieldDefinition } from '../../documents/fields/field.types.js';
import type { FieldReader, FilterGroup } from './filter-group.js';
import type { FieldMapping, MappingContext } from './field-mapping.js';
import type { SourceRowChange } from './row-changes.js';
import type { AcceptDecision, ConflictResolution, ReceiverFilter } from './sync-rules.js';

/**
 * What planBinding (binding-plan.ts) takes and gives: the row changes and everything the caller read around them,
 * the planned order-book changes, their sync-log entries and the row links to store, with the markers a link's
 * `lastValues` carries for a still-pending proposal. Kept apart from the planning so that the services building the
 * input and reading the plan, and the value fitting (value-fitting.ts), share them without the planner.
 */

/** The sync-log outcomes (orderbook_sync_logs.outcome). */
export type RowOutcome = 'accepted' | 'pending' | 'rejected' | 'filtered' | 'conflict' | 'error' | 'skipped';

export interface RowLink {
  targetRowId: string;
  /** Stored values the sync last wrote, by target field id. */
  lastValues: Record<string, unknown>;
  syncedAt: Date;
}

export interface TargetRowState {
  exists: boolean;
  values: Record<string, unknown>;
}

export interface PlannedChange {
  kind: 'create' | 'update' | 'delete';
  sourceRowId: string;
  targetRowId: string;
  /** Target field id → value to write (input form) for create/update. */
  values: Record<string, unknown>;
  decision: AcceptDecision;
}

export interface PlannedLog {
  sourceRowId: string;
  targetRowId: string | null;
  eventType: string;
  outcome: RowOutcome;
  reason: string | null;
  details?: Record<string, unknown>;
  /**
   * The row is outside the connection's share scope and the change leaves the buyer's order book alone: the entry is
   * for the planner's own counts (connector runs), never recorded in the buyer's sync logs or propagation ledger.
   */
  unshared?: true;
}

export interface PlanInput {
  changes: readonly SourceRowChange[];
  /** Current catalog rows (stored values) of the changed rows; absent = gone. */
  sourceRows: ReadonlyMap<string, Record<string, unknown>>;
  /**
   * Plain reader over a stored catalog row (select ids → labels, names → ids); `stored` reads option ids, `field`
   * gives a field's definition (a value that does not fit its target is converted from it).
   */
  reader: (row: Record<string, unknown>) => FieldReader & {
    stored?: FieldReader;
    field?: (ref: string) => FieldDefinition | undefined;
  };
  /** Catalog field ids the connection shares. */
  sharedFieldIds: readonly string[];
  shareScope: { type: 'all' } | { type: 'filter'; filterGroup: FilterGroup } | null;
  eventTypes: readonly string[];
  fieldMapping: FieldMapping | null;
  receiverFilter: ReceiverFilter | null;
  conflictResolution: ConflictResolution | null;
  links: ReadonlyMap<string, RowLink>;
  /** Order-book rows by id (for linked and dedup-matched rows). */
  targetRows: ReadonlyMap<string, TargetRowState>;
  /** Dedup key → order-book row id, over the order book's current rows. */
  dedupIndex: ReadonlyMap<string, string>;
  /** For unmappedFields `create`: the order-book field receiving an unmapped catalog field, if any. */
  unmappedTarget: (sourceFieldId: string) => string | null;
  /** The mapping's surroundings minus `read` (set per row). */
  mapping: Omit<MappingContext, 'read'>;
  /** Converts mapped values to their stored form (the order book's field types); throws a validation error. */
  toStored: (values: Record<string, unknown>) => Record<string, unknown>;
  /**
   * When the buyer last changed a field of an order-book row (only asked for fields with a conflict): the field's own
   * last change, so that a later edit of another field does not make an older edit of this one the latest.
   */
  localChangedAt: (targetRowId: string, fieldId: string) => Date | null;
  upstreamChangedAt: Date;
  newRowId: () => string;
}

export interface Plan {
  changes: PlannedChange[];
  logs: PlannedLog[];
  /** Link updates: source row → target row and the stored values written (null: forget the link). */
  links: Map<string, { targetRowId: string; lastValues: Record<string, unknown> } | null>;
}

/** Key of `lastValues` holding, per field, the value a row had before a still-pending proposal (not a field id). */
export const PENDING_ALTERNATES = '$pending';
/**
 * Key inside PENDING_ALTERNATES marking a link whose order-book row is only proposed: its create waits in a pending
 * request (field ids never contain `$`). A deletion of such a row is proposed too, not skipped.
 */
export const PENDING_CREATE = '$create';
