import { type NewOperation, type OperationItem, operationItems, type RevisionRepository } from '../../repositories/revision.repository.js';

/**
 * Collects a revision's ChangeOperations in order, numbering them. Plain operations are held until the revision is
 * committed and written by the same statement (RevisionRepository.commit: one round trip less per merge); an
 * operation that snapshots a field's values is written at once, because the snapshot must be taken before the
 * merge changes those values.
 */
export class OperationWriter {
  private ordinal = 0;
  private readonly held: OperationItem[] = [];

  constructor(
    private readonly revisions: RevisionRepository,
    readonly revisionId: string,
    private readonly documentUuid: string,
    private readonly operator: string,
  ) {}

  get count(): number {
    return this.ordinal;
  }

  /** The operations not written yet, for RevisionRepository.commit. */
  get pending(): readonly OperationItem[] {
    return this.held;
  }

  write(ops: readonly NewOperation[]): void {
    this.held.push(...operationItems(ops, this.ordinal + 1));
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
