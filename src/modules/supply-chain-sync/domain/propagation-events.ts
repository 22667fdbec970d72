/** Connection propagation event types (spec 2.14 `propagationEvents.eventTypes`, spec 6.2). */
export const PROPAGATION_EVENT_TYPES = [
  'row_created',
  'row_updated',
  'row_deleted',
  'field_value_changed',
] as const;
export type PropagationEventType = (typeof PROPAGATION_EVENT_TYPES)[number];

export type RowChangeKind = 'created' | 'updated' | 'deleted';

export type EventScope = 'skip' | 'row' | 'changed_fields';

/**
 * What a connection's `eventTypes` let through for one changed catalog row. No list (or an empty one) lets everything
 * through. An update passes whole with `row_updated`; with only `field_value_changed` it passes as the changed fields.
 */
export function eventScope(
  kind: RowChangeKind,
  eventTypes: readonly string[] | null | undefined,
): EventScope {
  const types = eventTypes && eventTypes.length > 0 ? eventTypes : PROPAGATION_EVENT_TYPES;
  switch (kind) {
    case 'created':
      return types.includes('row_created') ? 'row' : 'skip';
    case 'deleted':
      return types.includes('row_deleted') ? 'row' : 'skip';
    case 'updated':
      return types.includes('row_updated')
        ? 'row'
        : types.includes('field_value_changed')
          ? 'changed_fields'
          : 'skip';
    default: {
      const unknown: never = kind;
      throw new Error(`unknown change kind ${String(unknown)}`);
    }
  }
}
