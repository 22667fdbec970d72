import type { NewOperation, RevisionRepository } from '../../repositories/revision.repository.js';

/** Appends a revision's ChangeOperations in order, numbering them. */
export class OperationWriter {
  private ordinal = 0;

  constructor(
    private readonly revisions: RevisionRepository,
    readonly revisionId: string,
    private readonly documentUuid: string,
    private readonly operator: string,
  ) {}

  get count(): number {
    return this.ordinal;
  }

  async write(ops: readonly NewOperation[]): Promise<void> {
    if (ops.length === 0) {
      return;
    }
    const first = this.ordinal + 1;
    this.ordinal += ops.length;
    await this.revisions.insertOperations(this.revisionId, this.documentUuid, this.operator, first, ops);
  }

  /** An operation whose old value carries the snapshot of a field's values taken in this transaction. */
  async writeSnapshot(op: NewOperation & { snapshotFieldId: string }): Promise<void> {
    this.ordinal += 1;
    await this.revisions.insertSnapshotOperation(this.revisionId, this.documentUuid, this.operator, this.ordinal, op);
  }
}
