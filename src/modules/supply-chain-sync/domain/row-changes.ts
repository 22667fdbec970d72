import type { RowChangeKind } from './propagation-events.js';

/** One row a catalog revision touched. */
export interface SourceRowChange {
  rowId: string;
  kind: RowChangeKind;
  /** Fields an update changed (empty for creates and deletes). */
  fieldIds: string[];
  /** The values the row had before a delete (for accept rules on deletions). */
  oldValues?: Record<string, unknown>;
  /**
   * A create folded over a delete of the same row id (a batch window): when the connection propagates deletions but
   * not creations, the row is withdrawn, as the two changes applied one by one would leave the order book.
   */
  recreated?: boolean;
  /**
   * When the catalog made the row's last change (its revision's time). A batch window applies several revisions at
   * once: `latest_wins` compares a local edit with the revision that changed this row, not with the window's last.
   */
  changedAt?: Date;
}

/**
 * Folds the row changes of several revisions (a batch window, applied in version order) into one change per row:
 * created then updated is created; anything then deleted is deleted (a row created and deleted inside the window
 * disappears: `created` then `deleted` gives nothing); deleted then created is created; updates union their fields.
 */
export function foldRowChanges(revisions: readonly (readonly SourceRowChange[])[]): SourceRowChange[] {
  const folded = new Map<string, SourceRowChange & { createdHere: boolean }>();
  for (const changes of revisions) {
    for (const change of changes) {
      const previous = folded.get(change.rowId);
      if (!previous) {
        folded.set(change.rowId, {
          ...change,
          fieldIds: [...change.fieldIds],
          createdHere: change.kind === 'created',
        });
        continue;
      }
      if (change.kind === 'deleted') {
        if (previous.createdHere) {
          folded.delete(change.rowId);
        } else {
          folded.set(change.rowId, { ...change, createdHere: false });
        }
        continue;
      }
      if (change.kind === 'created') {
        // Deleted then created again (same id): the row is new, so it is planned whole as a create (the linked
        // order-book row, when still there, gets every mapped value). Folding it to an update with no changed
        // fields left the old values in place when the connection propagates only field_value_changed.
        folded.set(change.rowId, {
          ...change,
          kind: 'created',
          fieldIds: [],
          ...(previous.kind === 'deleted' ? { recreated: true, oldValues: previous.oldValues } : {}),
          createdHere: previous.createdHere,
        });
        continue;
      }
      if (previous.kind === 'updated') {
        previous.fieldIds = [...new Set([...previous.fieldIds, ...change.fieldIds])];
      }
      if (change.changedAt) {
        previous.changedAt = change.changedAt;
      }
    }
  }
  return [...folded.values()].map(({ createdHere: _createdHere, ...change }) => change);
}
