import type { RowChangeKind } from './propagation-events.js';

/** One row a catalog revision touched. */
export interface SourceRowChange {
  rowId: string;
  kind: RowChangeKind;
  /** Fields an update changed (empty for creates and deletes). */
  fieldIds: string[];
  /** The values the row had before a delete (for accept rules on deletions). */
  oldValues?: Record<string, unknown>;
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
        folded.set(change.rowId, {
          ...change,
          kind: previous.kind === 'deleted' ? 'updated' : 'created',
          fieldIds: [],
          createdHere: previous.createdHere,
        });
        continue;
      }
      if (previous.kind === 'updated') {
        previous.fieldIds = [...new Set([...previous.fieldIds, ...change.fieldIds])];
      }
    }
  }
  return [...folded.values()].map(({ createdHere: _createdHere, ...change }) => change);
}
