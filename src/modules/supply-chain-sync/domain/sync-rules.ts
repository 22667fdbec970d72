import { isDeepStrictEqual } from 'node:util';
import { evaluateFilterGroup, type FieldReader, type FilterGroup, hasConditions } from './filter-group.js';

/** Spec 2.14 receiver filter. */
export const ACCEPT_MODES = ['auto', 'selective', 'manual'] as const;
export type AcceptMode = (typeof ACCEPT_MODES)[number];
export const DEDUP_STRATEGIES = ['by_field', 'by_fields'] as const;
export type DedupStrategy = (typeof DEDUP_STRATEGIES)[number];
export const CONFLICT_STRATEGIES = ['keep_upstream', 'keep_local', 'latest_wins'] as const;
export type ConflictStrategy = (typeof CONFLICT_STRATEGIES)[number];

export interface ManualAcceptRules {
  autoAcceptIf?: FilterGroup;
  requireApprovalIf?: FilterGroup;
  autoRejectIf?: FilterGroup;
  defaultAction?: 'manual' | 'accept';
}

export interface ReceiverFilter {
  filterGroup?: FilterGroup;
  acceptMode?: AcceptMode;
  manualAcceptRules?: ManualAcceptRules;
  deduplicationStrategy?: DedupStrategy;
  deduplicationFieldIds?: string[];
}

export interface ConflictResolution {
  defaultStrategy?: ConflictStrategy;
  fieldStrategies?: Record<string, { strategy?: ConflictStrategy }>;
}

export type AcceptDecision = 'accept' | 'pending' | 'reject';

/**
 * Spec 3 rules 4–6: `auto` accepts, `manual` leaves a pending request, `selective` checks `autoAcceptIf` (accept), then
 * `requireApprovalIf` (pending), then `autoRejectIf` (reject), else `defaultAction` (`manual` → pending, the spec's
 * default; `accept` → accept). A rule group without conditions never matches (it would otherwise match everything).
 */
export function decideAccept(filter: ReceiverFilter | null | undefined, read: FieldReader): AcceptDecision {
  const mode = filter?.acceptMode ?? 'auto';
  switch (mode) {
    case 'auto':
      return 'accept';
    case 'manual':
      return 'pending';
    case 'selective': {
      const rules = filter?.manualAcceptRules ?? {};
      const matches = (group: FilterGroup | undefined): boolean =>
        hasConditions(group) && evaluateFilterGroup(group, read);
      if (matches(rules.autoAcceptIf)) {
        return 'accept';
      }
      if (matches(rules.requireApprovalIf)) {
        return 'pending';
      }
      if (matches(rules.autoRejectIf)) {
        return 'reject';
      }
      return rules.defaultAction === 'accept' ? 'accept' : 'pending';
    }
    default: {
      const unknown: never = mode;
      throw new Error(`unknown acceptMode ${String(unknown)}`);
    }
  }
}

/** The key dedup matches on: the mapped values of the dedup fields (target field ids); null when one is empty. */
export function dedupKey(
  filter: ReceiverFilter | null | undefined,
  values: ReadonlyMap<string, unknown> | Record<string, unknown>,
): string | null {
  const strategy = filter?.deduplicationStrategy;
  const ids = filter?.deduplicationFieldIds ?? [];
  if (!strategy || ids.length === 0) {
    return null;
  }
  const used = strategy === 'by_field' ? ids.slice(0, 1) : ids;
  const get = (id: string): unknown =>
    values instanceof Map ? values.get(id) : (values as Record<string, unknown>)[id];
  const parts = used.map(get);
  if (parts.some((part) => part === null || part === undefined || part === '')) {
    return null;
  }
  return JSON.stringify(parts.map((part) => (typeof part === 'string' ? part.trim().toLowerCase() : part)));
}

/** The fields a dedup strategy compares. */
export function dedupFieldIds(filter: ReceiverFilter | null | undefined): string[] {
  const ids = filter?.deduplicationFieldIds ?? [];
  return filter?.deduplicationStrategy === 'by_field'
    ? ids.slice(0, 1)
    : filter?.deduplicationStrategy
      ? ids
      : [];
}

export function strategyFor(
  resolution: ConflictResolution | null | undefined,
  fieldId: string,
): ConflictStrategy {
  return resolution?.fieldStrategies?.[fieldId]?.strategy ?? resolution?.defaultStrategy ?? 'keep_upstream';
}

export interface FieldConflictInput {
  fieldId: string;
  /** The order book's current value. */
  local: unknown;
  /** What propagation last wrote into this field (undefined: never written, so no local change can be told). */
  lastPropagated: unknown;
  /** When the buyer last changed this field of the order-book row. */
  localChangedAt: Date | null;
  /**
   * When the catalog changed what this field is mapped from (the catalog revision's time); null when the change being
   * applied did not touch it (the local edit is then the latest).
   */
  upstreamChangedAt: Date | null;
}

export type ConflictOutcome =
  { conflict: false } | { conflict: true; strategy: ConflictStrategy; winner: 'upstream' | 'local' };

/**
 * Whether the buyer changed a propagated field locally (its value differs from what propagation last wrote), and
 * if so who wins: `keep_upstream` the catalog, `keep_local` the order book, `latest_wins` the later change
 * (the local edit's time against the catalog revision's; a tie goes upstream).
 */
export function resolveFieldConflict(
  resolution: ConflictResolution | null | undefined,
  input: FieldConflictInput,
): ConflictOutcome {
  if (input.lastPropagated === undefined || sameValue(input.local, input.lastPropagated)) {
    return { conflict: false };
  }
  const strategy = strategyFor(resolution, input.fieldId);
  switch (strategy) {
    case 'keep_upstream':
      return { conflict: true, strategy, winner: 'upstream' };
    case 'keep_local':
      return { conflict: true, strategy, winner: 'local' };
    case 'latest_wins': {
      const local = input.localChangedAt?.getTime() ?? 0;
      return {
        conflict: true,
        strategy,
        winner:
          input.upstreamChangedAt === null || local > input.upstreamChangedAt.getTime() ? 'local' : 'upstream',
      };
    }
    default: {
      const unknown: never = strategy;
      throw new Error(`unknown conflict strategy ${String(unknown)}`);
    }
  }
}

export function sameValue(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a ?? null, b ?? null);
}
