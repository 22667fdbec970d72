import { Injectable } from '@nestjs/common';
import type { DocumentRecord } from '../domain/document.records.js';
import type { FieldDefinition } from '../fields/field.types.js';
import { DocumentRepository } from '../repositories/document.repository.js';
import { RowRepository } from '../repositories/row.repository.js';

/**
 * Small reads other modules need about a document they have opened (through DocumentAccessService), so that
 * they never query the documents module's tables themselves: which rows exist, and its fields held steady
 * against a concurrent merge for the rest of a transaction.
 */
@Injectable()
export class DocumentFacts {
  constructor(
    private readonly documents: DocumentRepository,
    private readonly rows: RowRepository,
  ) {}

  /** The ids among `rowIds` that are rows of the document now (one indexed read, whatever the count). */
  async existingRowIds(document: DocumentRecord, rowIds: readonly string[]): Promise<Set<string>> {
    const wanted = [...new Set(rowIds)];
    return wanted.length === 0 ? new Set() : this.rows.existingIds(document.uuid, wanted);
  }

  /**
   * The document's current field definitions, share-locking the document until the transaction ends: what is
   * validated against them cannot interleave with a merge that changes fields (merges lock the document row FOR
   * UPDATE). Null when the document has been deleted meanwhile.
   */
  async lockFields(document: DocumentRecord): Promise<FieldDefinition[] | null> {
    return this.documents.lockFields(document.uuid);
  }
}
