import { type NewOperation, type OperationItem, operationItems, type RevisionRepository } from '../../repositories/revision.repository.js';

/**
 * Collects a revision's ChangeOperations in order, numbering them. Plain operations are held until the revision is
 * committed and written by the same statement (RevisionRepository.commit: one round trip less per merge); an
 * operation that snapshots a field's values is written at once, because the snapshot must be taken before the
 * merge changes those values. Held operations are turned into the statement's JSON as they come: a row merge
 * writes its operations while PostgreSQL still runs its UPDATE (RowMergeService.apply), so that work overlaps it.
 */
export class OperationWriter {
  private ordinal = 0;
  /** The held operations as JSON, one array's elements (without brackets) per `write`. */
  private readonly held: string[] = [];

  constructor(
    private readonly revisions: RevisionRepository,
    readonly revisionId: string,
    private readonly documentUuid: string,
    private readonly operator: string,
  ) {}

  get count(): number {
    return this.ordinal;
  }

  /** The operations not written yet, as RevisionRepository.commit takes them: a JSON array of OperationItems. */
  get pendingJson(): string {
    return `[${this.held.join(',')}]`;
  }

  write(ops: readonly NewOperation[]): void {
    if (ops.length === 0) {
      return;
    }
    const items: OperationItem[] = operationItems(ops, this.ordinal + 1);
    const json = JSON.stringify(items);
    this.held.push(json.slice(1, -1));
    this.ordinal += ops.length;
  }

  /** An operation whose old value carries the snapshot of a field's values taken in this transaction. */
  async writeSnapshot(op: NewOperation & { snapshotFieldId: string }): Promise<void> {
    this.ordinal += 1;
    await this.revisions.insertSnapshotOperation(
      this.revisionId,
      this.documentUuid,
      this.operator,
      this.ordinal,
      op,
    );
  }
}
