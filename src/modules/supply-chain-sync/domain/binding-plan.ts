import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { describeError } from './describe-error.js';
import { type FieldReader, evaluateFilterGroup, type FilterGroup } from './filter-group.js';
import {
  applyFieldMapping,
  convertForTarget,
  type FieldMapping,
  type MappingContext,
  type MappingResult,
} from './field-mapping.js';
import { eventScope } from './propagation-events.js';
import type { SourceRowChange } from './row-changes.js';
import {
  type AcceptDecision,
  type ConflictResolution,
  decideAccept,
  dedupKey,
  type ReceiverFilter,
  resolveFieldConflict,
  sameValue,
} from './sync-rules.js';

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
  /** When the buyer last changed an order-book row (only asked for rows with a field conflict). */
  localChangedAt: (targetRowId: string) => Date | null;
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

/** Catalog field types an update always changes (the row's updated_at / updated_by columns). */
const STAMPED_ON_UPDATE = new Set(['updated_time', 'updated_by']);

const EVENT_OF = { created: 'row_created', updated: 'row_updated', deleted: 'row_deleted' } as const;

/**
 * Spec 3 rules 2–6 for one binding over the folded row changes of its due catalog revisions: share scope, event
 * types, receiver filter, mapping, deduplication, accept mode, conflict resolution. Pure: the caller reads and
 * writes. Every row gets one log entry; a row whose mapping fails is `error` and the others go on.
 */
export function planBinding(input: PlanInput): Plan {
  const plan: Plan = { changes: [], logs: [], links: new Map() };
  const dedupClaims = new Map<string, { targetRowId: string; sourceRowId: string }>();
  for (const change of input.changes) {
    const eventType =
      change.kind === 'updated' && input.eventTypes.length > 0 && !input.eventTypes.includes('row_updated')
        ? 'field_value_changed'
        : EVENT_OF[change.kind];
    const log = (
      outcome: RowOutcome,
      reason: string | null,
      targetRowId: string | null = null,
      details?: Record<string, unknown>,
    ): void => {
      plan.logs.push({
        sourceRowId: change.rowId,
        targetRowId,
        eventType,
        outcome,
        reason,
        ...(details ? { details } : {}),
      });
    };
    const scope = eventScope(change.kind, input.eventTypes);
    if (scope === 'skip') {
      log('filtered', `event type ${eventType} is not propagated by this connection`);
      continue;
    }
    const link = input.links.get(change.rowId);
    const source = input.sourceRows.get(change.rowId);
    if (change.kind === 'deleted' || !source) {
      if (!link) {
        log('skipped', 'the row was never propagated to this order book');
        continue;
      }
      // Accept rules see the row as it was before the delete.
      planWithdrawal(input, plan, log, change.rowId, link, input.reader(change.oldValues ?? {}));
      continue;
    }
    const read = input.reader(source);
    if (
      input.shareScope &&
      input.shareScope.type === 'filter' &&
      !evaluateFilterGroup(input.shareScope.filterGroup, read)
    ) {
      // A propagated row the supplier no longer shares is withdrawn like a deleted one (when deletions propagate).
      if (link && eventScope('deleted', input.eventTypes) !== 'skip') {
        planWithdrawal(input, plan, log, change.rowId, link, read, 'left the connection share scope');
      } else {
        log('filtered', 'outside the connection share scope');
      }
      continue;
    }
    if (!evaluateFilterGroup(input.receiverFilter?.filterGroup, read)) {
      log('filtered', 'does not match the receiver filter');
      continue;
    }
    const mapped = applyFieldMapping(input.fieldMapping, input.sharedFieldIds, {
      ...input.mapping,
      read,
      readStored: read.stored,
    });
    const values: Record<string, unknown> = {};
    const modes = new Map<string, string>();
    for (const [targetId, item] of mapped.values) {
      values[targetId] = item.value;
      modes.set(targetId, item.mode);
    }
    if ((input.fieldMapping?.unmappedFields ?? 'ignore') === 'create') {
      for (const sourceId of mapped.unmapped) {
        const targetId = input.unmappedTarget(sourceId);
        if (targetId && !(targetId in values)) {
          values[targetId] = read(sourceId) ?? null;
          mapped.sources.set(targetId, sourceId);
        }
      }
    }
    if (mapped.errors.length > 0 && Object.keys(values).length === 0) {
      log('error', mapped.errors.map((error) => `${error.targetFieldId}: ${error.reason}`).join('; '));
      continue;
    }
    const fitted = fitToOrderBook(input, values, mapped.sources, read);
    if (fitted.rowError !== null) {
      log('error', `the mapped values do not fit the order book: ${fitted.rowError}`);
      continue;
    }
    const stored = fitted.stored;
    const leftOut = [...mapped.errors, ...fitted.errors];
    const mappingErrors = leftOut.length > 0 ? { mappingErrors: leftOut } : undefined;

    // Which order-book row: the linked one, else a dedup match, else a new one.
    let targetRowId = link && input.targetRows.get(link.targetRowId)?.exists ? link.targetRowId : null;
    let matchedBy: string | null = null;
    const key = targetRowId ? null : dedupKey(input.receiverFilter, values);
    if (key) {
      const claimed = dedupClaims.get(key);
      if (claimed) {
        plan.links.set(change.rowId, { targetRowId: claimed.targetRowId, lastValues: stored });
        log(
          'skipped',
          `duplicate of catalog row ${claimed.sourceRowId} in the same change (${input.receiverFilter?.deduplicationStrategy ?? 'dedup'})`,
          claimed.targetRowId,
        );
        continue;
      }
      const matched = input.dedupIndex.get(key);
      if (matched && input.targetRows.get(matched)?.exists) {
        targetRowId = matched;
        matchedBy = input.receiverFilter?.deduplicationStrategy ?? null;
      }
    }
    const decision = decideAccept(input.receiverFilter, read);
    if (!targetRowId) {
      const id = link?.targetRowId ?? input.newRowId();
      if (key) {
        dedupClaims.set(key, { targetRowId: id, sourceRowId: change.rowId });
      }
      recordDecision(
        plan,
        log,
        { kind: 'create', sourceRowId: change.rowId, targetRowId: id, values, decision },
        mappingErrors,
      );
      if (decision !== 'reject') {
        // A proposed row is marked, so that deleting the catalog row before the buyer decides is proposed too.
        plan.links.set(change.rowId, {
          targetRowId: id,
          lastValues:
            decision === 'pending' ? { ...stored, [PENDING_ALTERNATES]: { [PENDING_CREATE]: true } } : stored,
        });
      }
      continue;
    }

    // Update of an existing order-book row: oneway fields only on create; changed fields only with field_value_changed.
    const target = input.targetRows.get(targetRowId) ?? { exists: true, values: {} };
    const lastValues = link?.targetRowId === targetRowId ? link.lastValues : undefined;
    const update: Record<string, unknown> = {};
    const kept: { fieldId: string; strategy: string }[] = [];
    const nextLast: Record<string, unknown> = { ...(lastValues ?? {}) };
    // Values proposed in a pending request are kept next to the previous ones until the next run: the buyer may
    // still accept (the row then holds the proposal) or reject (it keeps the previous value) — neither is a local edit.
    const alternates = { ...((lastValues?.[PENDING_ALTERNATES] ?? {}) as Record<string, unknown>) };
    delete nextLast[PENDING_ALTERNATES];
    const nextAlternates: Record<string, unknown> = {};
    const changedTargets =
      scope === 'changed_fields'
        ? targetsOfChangedFields(input.fieldMapping, [...change.fieldIds, ...stampedOnUpdate(input, read)])
        : null;
    for (const [fieldId, value] of Object.entries(values)) {
      if (changedTargets && !changedTargets.has(fieldId)) {
        continue;
      }
      const storedValue = stored[fieldId];
      const local = target.values[fieldId];
      const previous =
        lastValues && fieldId in alternates && sameValue(local, alternates[fieldId])
          ? local
          : lastValues?.[fieldId];
      if (sameValue(local, storedValue)) {
        nextLast[fieldId] = storedValue;
        continue;
      }
      // `sync` fields mirror the catalog: a local edit is overwritten whatever the conflict strategy.
      const resolution =
        modes.get(fieldId) === 'sync'
          ? { defaultStrategy: 'keep_upstream' as const }
          : input.conflictResolution;
      const outcome = resolveFieldConflict(resolution, {
        fieldId,
        local,
        lastPropagated: lastValues && fieldId in lastValues ? previous : undefined,
        localChangedAt:
          lastValues && fieldId in lastValues && !sameValue(local, previous)
            ? input.localChangedAt(targetRowId)
            : null,
        upstreamChangedAt: input.upstreamChangedAt,
      });
      if (outcome.conflict && outcome.winner === 'local') {
        kept.push({ fieldId, strategy: outcome.strategy });
        nextLast[fieldId] = storedValue;
        continue;
      }
      update[fieldId] = value;
      nextLast[fieldId] = storedValue;
      if (decision === 'pending') {
        nextAlternates[fieldId] = local ?? null;
      }
    }
    if (Object.keys(nextAlternates).length > 0) {
      nextLast[PENDING_ALTERNATES] = nextAlternates;
    }
    if (Object.keys(update).length === 0) {
      plan.links.set(change.rowId, { targetRowId, lastValues: nextLast });
      if (kept.length > 0) {
        log('conflict', withLeftOut(keptReason(kept), mappingErrors?.mappingErrors), targetRowId, {
          kept,
          ...(mappingErrors ?? {}),
        });
      } else {
        log(
          'skipped',
          withLeftOut(
            matchedBy ? `matched order-book row by ${matchedBy}; nothing to change` : 'nothing to change',
            mappingErrors?.mappingErrors,
          ),
          targetRowId,
          mappingErrors,
        );
      }
      continue;
    }
    const details = {
      ...(mappingErrors ?? {}),
      ...(kept.length > 0 ? { kept } : {}),
      ...(matchedBy ? { matchedBy } : {}),
    };
    recordDecision(
      plan,
      log,
      { kind: 'update', sourceRowId: change.rowId, targetRowId, values: update, decision },
      Object.keys(details).length > 0 ? details : undefined,
      kept.length > 0,
    );
    if (decision !== 'reject') {
      plan.links.set(change.rowId, { targetRowId, lastValues: nextLast });
    }
  }
  return plan;
}

/**
 * Removes the order-book row a catalog row was propagated to (the catalog row was deleted, or left the share scope):
 * through the accept mode like any change, the link forgotten once accepted.
 */
function planWithdrawal(
  input: PlanInput,
  plan: Plan,
  log: (outcome: RowOutcome, reason: string | null, targetRowId?: string | null) => void,
  sourceRowId: string,
  link: RowLink,
  read: FieldReader,
  reason?: string,
): void {
  const exists = input.targetRows.get(link.targetRowId)?.exists === true;
  // Not there but marked: its create still waits in a pending request (once accepted, the row exists).
  const proposed = !exists && isProposedRow(link);
  if (!exists && !proposed) {
    plan.links.set(sourceRowId, null);
    log('skipped', 'the order-book row no longer exists', link.targetRowId);
    return;
  }
  // A row only proposed (its create waits in a pending request) cannot be deleted yet: the deletion is proposed too,
  // for the buyer to accept after the create (or to reject both), even where the accept rules would accept it.
  const ruled = decideAccept(input.receiverFilter, read);
  const decision = proposed && ruled === 'accept' ? 'pending' : ruled;
  recordDecision(
    plan,
    log,
    { kind: 'delete', sourceRowId, targetRowId: link.targetRowId, values: {}, decision },
    undefined,
    false,
    proposed ? [reason, 'its create still waits in a pending request'].filter(Boolean).join('; ') : reason,
  );
  if (decision !== 'reject') {
    plan.links.set(
      sourceRowId,
      decision === 'accept' ? null : { targetRowId: link.targetRowId, lastValues: link.lastValues },
    );
  }
}

function recordDecision(
  plan: Plan,
  log: (
    outcome: RowOutcome,
    reason: string | null,
    targetRowId?: string | null,
    details?: Record<string, unknown>,
  ) => void,
  change: PlannedChange,
  details?: Record<string, unknown>,
  conflict = false,
  /** Why the change was planned, when its kind does not say it (a row withdrawn from the share scope). */
  because?: string,
): void {
  if (change.decision === 'reject') {
    log('rejected', 'rejected by the autoRejectIf rule', change.targetRowId, details);
    return;
  }
  plan.changes.push(change);
  const verb = change.kind === 'create' ? 'created' : change.kind === 'update' ? 'updated' : 'deleted';
  if (conflict) {
    log(
      'conflict',
      withLeftOut(
        `${verb}; ${keptReason((details?.kept ?? []) as { fieldId: string; strategy: string }[])}`,
        mappingErrorsOf(details),
      ),
      change.targetRowId,
      details,
    );
    return;
  }
  const reason = change.decision === 'accept' ? verb : `${verb} in a pending request`;
  log(
    change.decision === 'accept' ? 'accepted' : 'pending',
    withLeftOut(because ? `${reason}: ${because}` : reason, mappingErrorsOf(details)),
    change.targetRowId,
    details,
  );
}

function mappingErrorsOf(details: Record<string, unknown> | undefined): MappingResult['errors'] | undefined {
  return details?.mappingErrors as MappingResult['errors'] | undefined;
}

/** A row written without some of its fields says which, and why (also in `details.mappingErrors`). */
function withLeftOut(reason: string, errors: MappingResult['errors'] | undefined): string {
  return errors && errors.length > 0
    ? `${reason}; left out: ${errors.map((error) => `${error.targetFieldId} (${error.reason})`).join(', ')}`
    : reason;
}

/** Whether the link's order-book row is only proposed: created in a request the buyer has not decided yet. */
function isProposedRow(link: RowLink): boolean {
  const alternates = link.lastValues[PENDING_ALTERNATES];
  return (
    typeof alternates === 'object' &&
    alternates !== null &&
    (alternates as Record<string, unknown>)[PENDING_CREATE] === true
  );
}

/** The catalog fields every update changes (updated time and by): with `field_value_changed` they go too. */
function stampedOnUpdate(input: PlanInput, read: ReturnType<PlanInput['reader']>): string[] {
  return input.sharedFieldIds.filter((id) => STAMPED_ON_UPDATE.has(read.field?.(id)?.type ?? ''));
}

/**
 * The stored form of the mapped values (the order book's field types). A value that does not fit its field is tried
 * again converted: a select copied from a catalog select by its option id (the generated field keeps the catalog's
 * option ids, so a renamed label still matches), else converted from its catalog field's type as a type change
 * converts (convertForTarget). A value that fits in no form is left out of `values` and reported in `errors`; the
 * other fields still go. `rowError` (nothing fits) makes the row an error.
 */
function fitToOrderBook(
  input: PlanInput,
  values: Record<string, unknown>,
  sources: ReadonlyMap<string, string>,
  read: ReturnType<PlanInput['reader']>,
): { stored: Record<string, unknown>; errors: MappingResult['errors']; rowError: string | null } {
  let whole: unknown;
  try {
    return { stored: input.toStored(values), errors: [], rowError: null };
  } catch (error) {
    whole = error;
  }
  const stored: Record<string, unknown> = {};
  const errors: MappingResult['errors'] = [];
  const storedOf = (fieldId: string, value: unknown): Record<string, unknown> | Error => {
    try {
      return input.toStored({ [fieldId]: value });
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  };
  for (const [fieldId, value] of Object.entries(values)) {
    let result = storedOf(fieldId, value);
    const failure = result instanceof Error ? result : null;
    const alternatives = failure ? alternativesOf(input, fieldId, value, sources.get(fieldId), read) : [];
    for (const candidate of alternatives) {
      const attempt = storedOf(fieldId, candidate);
      if (!(attempt instanceof Error)) {
        values[fieldId] = candidate;
        result = attempt;
        break;
      }
    }
    if (result instanceof Error) {
      delete values[fieldId];
      const reason = describeError(failure ?? result);
      errors.push({
        targetFieldId: fieldId,
        reason: reason.startsWith(`${fieldId}: `) ? reason.slice(fieldId.length + 2) : reason,
      });
      continue;
    }
    Object.assign(stored, result);
  }
  if (Object.keys(values).length === 0) {
    return { stored, errors, rowError: describeError(whole) };
  }
  return { stored, errors, rowError: null };
}

/** Other forms of a value that did not fit its target field, most faithful first. */
function alternativesOf(
  input: PlanInput,
  fieldId: string,
  value: unknown,
  sourceId: string | undefined,
  read: ReturnType<PlanInput['reader']>,
): unknown[] {
  const candidates: unknown[] = [];
  const targetType = input.mapping.targetType(fieldId);
  const sourceField = sourceId !== undefined ? read.field?.(sourceId) : undefined;
  const sourceStored = sourceId !== undefined ? read.stored?.(sourceId) : undefined;
  if (
    sourceField &&
    (sourceField.type === 'single_select' || sourceField.type === 'multi_select') &&
    (targetType === 'single_select' || targetType === 'multi_select') &&
    sourceStored !== null &&
    sourceStored !== undefined
  ) {
    candidates.push(sourceStored);
  }
  const converted = convertForTarget(
    value,
    targetType,
    sourceField ? { field: sourceField, stored: sourceStored } : undefined,
  );
  if (converted) {
    candidates.push(converted.value);
  }
  return candidates;
}

function keptReason(kept: readonly { fieldId: string; strategy: string }[]): string {
  return `kept the order book's local values (${kept.map((item) => `${item.fieldId}: ${item.strategy}`).join(', ')})`;
}

function targetsOfChangedFields(mapping: FieldMapping | null, changed: readonly string[]): Set<string> {
  const set = new Set<string>(changed);
  for (const rule of mapping?.rules ?? []) {
    const sources = [
      ...(rule.sourceFieldIds ?? []),
      ...(rule.mergeConfig?.sourceFieldIds ?? []),
      ...(rule.sourceFieldId ? [rule.sourceFieldId] : []),
    ];
    if (rule.transformType === 'formula' || sources.some((id) => changed.includes(id))) {
      set.add(rule.targetFieldId);
      (rule.targetFieldIds ?? []).forEach((id) => set.add(id));
    }
  }
  return set;
}
