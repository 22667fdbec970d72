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
  /**
   * Per catalog field an update changed, when (its revision's time; the last one in a batch window). `latest_wins`
   * compares a local edit of a field with the catalog's last change of the fields it is mapped from, not of the row: a
   * later change of another field of the row must not beat the buyer's edit of this one.
   */
  fieldChangedAt?: Record<string, Date>;
  /** For a create: when the row was (last) created; its fields not in `fieldChangedAt` were written then. */
  createdAt?: Date;
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
          ...timesOf(change),
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
          ...timesOf(change),
          createdHere: previous.createdHere,
        });
        continue;
      }
      if (previous.kind === 'updated') {
        previous.fieldIds = [...new Set([...previous.fieldIds, ...change.fieldIds])];
      }
      if (change.changedAt) {
        previous.changedAt = change.changedAt;
        const at = change.changedAt;
        previous.fieldChangedAt = {
          ...(previous.fieldChangedAt ?? {}),
          ...Object.fromEntries(change.fieldIds.map((id) => [id, at])),
        };
      }
    }
  }
  return [...folded.values()].map(({ createdHere: _createdHere, ...change }) => change);
}

/** The per-field times of one revision's change (none without its time: a reconcile, a connector run). */
function timesOf(change: SourceRowChange): Pick<SourceRowChange, 'fieldChangedAt' | 'createdAt'> {
  const at = change.changedAt;
  if (!at) {
    return {};
  }
  return change.kind === 'created'
    ? { fieldChangedAt: {}, createdAt: at }
    : { fieldChangedAt: Object.fromEntries(change.fieldIds.map((id) => [id, at])) };
}
