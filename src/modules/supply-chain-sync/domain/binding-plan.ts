import {
  PENDING_ALTERNATES,
  PENDING_CREATE,
  type Plan,
  type PlanInput,
  type PlannedChange,
  type RowLink,
  type RowOutcome,
} from './binding-plan.types.js';
import { type FieldReader, evaluateFilterGroup } from './filter-group.js';
import { applyFieldMapping, type FieldMapping, type MappingResult, ruleSourceFields } from './field-mapping.js';
import { eventScope } from './propagation-events.js';
import type { SourceRowChange } from './row-changes.js';
import { decideAccept, dedupKey, resolveFieldConflict, sameValue } from './sync-rules.js';
import { fitToOrderBook } from './value-fitting.js';

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
  const deletedTargets = acceptedDeletions(input);
  for (const change of input.changes) {
    // A row deleted and created again inside a batch window, on a connection that propagates the delete but not the
    // create: applied one by one the delete removes the order-book row and the create is filtered, so it is withdrawn.
    const withdrawRecreated =
      change.recreated === true &&
      eventScope('created', input.eventTypes) === 'skip' &&
      eventScope('deleted', input.eventTypes) !== 'skip';
    const eventType = withdrawRecreated
      ? EVENT_OF.deleted
      : change.kind === 'updated' && input.eventTypes.length > 0 && !input.eventTypes.includes('row_updated')
        ? 'field_value_changed'
        : EVENT_OF[change.kind];
    const link = input.links.get(change.rowId);
    const source = input.sourceRows.get(change.rowId);
    // A row outside the share scope (as it is now, or was before its delete) is the supplier's alone: its entries are
    // marked `unshared` so the buyer's logs never show it (docs/supply-chain.md, "Isolation"), unless the change
    // withdraws a row the buyer holds (then `withdrawing` is set before logging).
    const outOfScope = !inShareScope(input, source ?? change.oldValues);
    let withdrawing = false;
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
        ...(outOfScope && !withdrawing ? { unshared: true } : {}),
      });
    };
    if (withdrawRecreated) {
      if (!link) {
        log('skipped', 'the row was never propagated to this order book');
        continue;
      }
      withdrawing = true;
      planWithdrawal(input, plan, log, change.rowId, link, input.reader(change.oldValues ?? {}));
      continue;
    }
    const scope = eventScope(change.kind, input.eventTypes);
    if (scope === 'skip') {
      log('filtered', `event type ${eventType} is not propagated by this connection`);
      continue;
    }
    if (change.kind === 'deleted' || !source) {
      if (!link) {
        log('skipped', 'the row was never propagated to this order book');
        continue;
      }
      // Accept rules see the row as it was before the delete.
      withdrawing = true;
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
        withdrawing = true;
        planWithdrawal(input, plan, log, change.rowId, link, read, 'left the connection share scope');
      } else {
        log('filtered', 'outside the connection share scope');
      }
      continue;
    }
    // A row deleted and created again (a batch window): applied one by one, the delete withdraws the linked order-book
    // row when deletions propagate (through the accept rules, on the old values), then the create is planned afresh.
    const recreatedOver =
      change.recreated === true && link !== undefined && eventScope('deleted', input.eventTypes) !== 'skip';
    if (!evaluateFilterGroup(input.receiverFilter?.filterGroup, read)) {
      if (recreatedOver && link) {
        withdrawing = true;
        planWithdrawal(
          input,
          plan,
          log,
          change.rowId,
          link,
          input.reader(change.oldValues ?? {}),
          'created again outside the receiver filter',
        );
        continue;
      }
      log('filtered', 'does not match the receiver filter');
      continue;
    }
    // ... and once its delete was accepted, the old row's local edits went with it: nothing is left to keep.
    const freshRow =
      recreatedOver && decideAccept(input.receiverFilter, input.reader(change.oldValues ?? {})) === 'accept';
    const mapped = applyFieldMapping(input.fieldMapping, input.sharedFieldIds, {
      ...input.mapping,
      read,
      readStored: read.stored,
    });
    leaveOutDroppedSources(input, read, mapped);
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
      if (matched && input.targetRows.get(matched)?.exists && !deletedTargets.has(matched)) {
        targetRowId = matched;
        matchedBy = input.receiverFilter?.deduplicationStrategy ?? null;
      }
    }
    // An update of a row the order book lacks would create it: only a connection propagating row_created creates rows.
    if (!targetRowId && change.kind === 'updated' && eventScope('created', input.eventTypes) === 'skip') {
      log(
        'filtered',
        'event type row_created is not propagated by this connection: the row is not in the order book',
      );
      continue;
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
    const lastValues = !freshRow && link?.targetRowId === targetRowId ? link.lastValues : undefined;
    const update: Record<string, unknown> = {};
    const kept: { fieldId: string; strategy: string }[] = [];
    // Local edits the catalog's value replaces (keep_upstream, latest_wins lost, a sync field): traced in the log.
    const overwritten: { fieldId: string; strategy: string }[] = [];
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
            ? input.localChangedAt(targetRowId, fieldId)
            : null,
        upstreamChangedAt: upstreamChangedAtOf(
          input,
          change,
          sourcesOfTarget(input.fieldMapping, mapped, fieldId),
          (id) => STAMPED_ON_UPDATE.has(read.field?.(id)?.type ?? ''),
        ),
      });
      if (outcome.conflict && outcome.winner === 'local') {
        kept.push({ fieldId, strategy: outcome.strategy });
        nextLast[fieldId] = storedValue;
        continue;
      }
      if (outcome.conflict) {
        overwritten.push({ fieldId, strategy: outcome.strategy });
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
      ...(overwritten.length > 0 ? { overwritten } : {}),
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
 * Order-book rows this change deletes outright: linked rows of deleted catalog rows whose deletion the accept rules
 * accept. Deduplication never matches them — applied one by one, the delete comes first, so a catalog row of the same
 * change carrying the deleted one's key (a product replaced under a new row id) finds no row and is created; matched,
 * it was written as an update of the row the same request deleted, and the product vanished from the order book.
 */
function acceptedDeletions(input: PlanInput): Set<string> {
  const deleted = new Set<string>();
  if (eventScope('deleted', input.eventTypes) === 'skip') {
    return deleted;
  }
  for (const change of input.changes) {
    const link = input.links.get(change.rowId);
    if (
      change.kind === 'deleted' &&
      link &&
      decideAccept(input.receiverFilter, input.reader(change.oldValues ?? {})) === 'accept'
    ) {
      deleted.add(link.targetRowId);
    }
  }
  return deleted;
}

/**
 * The catalog fields an order-book field is mapped from: the sources of the last enabled rule writing it (the one whose
 * value it gets), or the field `unmappedFields: create` copied into it; null when a formula computes it (its inputs
 * are not tracked: the whole row counts).
 */
function sourcesOfTarget(mapping: FieldMapping | null, mapped: MappingResult, targetId: string): string[] | null {
  const rule = (mapping?.rules ?? [])
    .filter(
      (item) =>
        item.enabled !== false && (item.targetFieldId === targetId || (item.targetFieldIds ?? []).includes(targetId)),
    )
    .pop();
  if (!rule) {
    const copied = mapped.sources.get(targetId);
    return copied ? [copied] : null;
  }
  if (rule.transformType === 'formula') {
    return null;
  }
  const sources = ruleSourceFields(rule);
  return sources.length > 0 ? sources : null;
}

/**
 * When the catalog last changed what an order-book field is mapped from, for `latest_wins`: per source field within a
 * batch window (a later change of another field of the row does not count), the row's create for a field it wrote;
 * null when these revisions did not change it (the local edit is then the latest). Without per-field times (a
 * reconcile) or known sources (a formula), the row's last change.
 */
function upstreamChangedAtOf(
  input: PlanInput,
  change: SourceRowChange,
  sources: string[] | null,
  /** A catalog field every update changes (updated time and by): it changed with the row's last change. */
  stamped: (sourceFieldId: string) => boolean,
): Date | null {
  const rowAt = change.changedAt ?? input.upstreamChangedAt;
  if (!sources || !change.fieldChangedAt) {
    return rowAt;
  }
  const times = sources
    .map(
      (id) =>
        change.fieldChangedAt?.[id] ??
        (change.kind === 'created' ? (change.createdAt ?? rowAt) : stamped(id) ? rowAt : undefined),
    )
    .filter((at): at is Date => at !== undefined)
    .map((at) => at.getTime());
  return times.length > 0 ? new Date(Math.max(...times)) : null;
}

/**
 * Whether a catalog row (stored values; undefined when unknown, e.g. a delete without its old values) is inside the
 * share scope. Unknown values under a filter scope count as outside: nothing is told about a row that may not be
 * shared.
 */
function inShareScope(input: PlanInput, values: Record<string, unknown> | undefined): boolean {
  if (!input.shareScope || input.shareScope.type !== 'filter') {
    return true;
  }
  return values !== undefined && evaluateFilterGroup(input.shareScope.filterGroup, input.reader(values));
}

/**
 * A rule reading a catalog field the supplier has since deleted fails like one whose target the buyer deleted: its
 * target is left out with the reason, so the buyer's value stays (it used to read as empty and clear the field).
 * Formula and merge rules are left alone: a formula names its fields in its text, a merge skips empty parts.
 */
function leaveOutDroppedSources(
  input: PlanInput,
  read: ReturnType<PlanInput['reader']>,
  mapped: MappingResult,
): void {
  // The reader knows the catalog's fields by id or (configurations stored before ids were checked) by name.
  const known = (ref: string): boolean => (read.field ? read.field(ref) !== undefined : true);
  for (const rule of input.fieldMapping?.rules ?? []) {
    const transform = rule.transformType ?? 'direct';
    if (
      rule.enabled === false ||
      transform === 'formula' ||
      transform === 'merge' ||
      rule.sourceFieldId === undefined ||
      known(rule.sourceFieldId)
    ) {
      continue;
    }
    const targets =
      transform === 'split' && rule.targetFieldIds?.length ? rule.targetFieldIds : [rule.targetFieldId];
    for (const targetFieldId of targets) {
      if (mapped.values.delete(targetFieldId)) {
        mapped.sources.delete(targetFieldId);
        mapped.errors.push({ targetFieldId, reason: `the catalog has no field "${rule.sourceFieldId}"` });
      }
    }
  }
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
  const replaced = overwrittenReason(details, change.decision === 'pending');
  if (conflict) {
    log(
      'conflict',
      withLeftOut(
        `${verb}; ${keptReason((details?.kept ?? []) as { fieldId: string; strategy: string }[])}${replaced}`,
        mappingErrorsOf(details),
      ),
      change.targetRowId,
      details,
    );
    return;
  }
  const reason = `${change.decision === 'accept' ? verb : `${verb} in a pending request`}${replaced}`;
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

function keptReason(kept: readonly { fieldId: string; strategy: string }[]): string {
  return `kept the order book's local values (${kept.map((item) => `${item.fieldId}: ${item.strategy}`).join(', ')})`;
}

/** `; replaced the order book's local values (price: keep_upstream)` when the change overwrites local edits. */
function overwrittenReason(details: Record<string, unknown> | undefined, proposed: boolean): string {
  const overwritten = (details?.overwritten ?? []) as { fieldId: string; strategy: string }[];
  const fields = overwritten.map((item) => `${item.fieldId}: ${item.strategy}`).join(', ');
  return overwritten.length === 0
    ? ''
    : `; ${proposed ? 'would replace' : 'replaced'} the order book's local values (${fields})`;
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
