import { Injectable } from '@nestjs/common';
import { TransactionHost } from '../../../database/transaction-host.js';
import { queryFirst } from '../../../database/sql-result.js';

export interface RevisionOrigin {
  revisionId: string;
  organizationId: string;
  documentId: string;
  originKind: 'binding' | 'connector';
  originId: string;
  sourceDocumentId: string | null;
  sourceRevisionId: string | null;
}

/** Revisions written by a binding or a connector (loop prevention: a change is not sent back where it came from). */
@Injectable()
export class RevisionOriginRepository {
  constructor(private readonly tx: TransactionHost) {}

  async record(origin: RevisionOrigin): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO sync_revision_origins (revision_id, organization_id, document_id, origin_kind, origin_id, source_document_id, source_revision_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (revision_id) DO NOTHING`,
      [
        origin.revisionId,
        origin.organizationId,
        origin.documentId,
        origin.originKind,
        origin.originId,
        origin.sourceDocumentId,
        origin.sourceRevisionId,
      ],
    );
  }

  /** A revision a binding wrote into its order book (propagated rows or generated fields kept in step). */
  recordBindingWrite(
    revisionId: string,
    binding: { id: string; organizationId: string },
    orderBookDocumentId: string,
    catalog: { documentId: string; revisionId: string | null },
  ): Promise<void> {
    return this.record({
      revisionId,
      organizationId: binding.organizationId,
      documentId: orderBookDocumentId,
      originKind: 'binding',
      originId: binding.id,
      sourceDocumentId: catalog.documentId,
      sourceRevisionId: catalog.revisionId,
    });
  }

  find(revisionId: string): Promise<RevisionOrigin | null> {
    return queryFirst<RevisionOrigin>(
      this.tx,
      `SELECT revision_id AS "revisionId", organization_id AS "organizationId", document_id AS "documentId", origin_kind AS "originKind",
              origin_id AS "originId", source_document_id AS "sourceDocumentId", source_revision_id AS "sourceRevisionId"
         FROM sync_revision_origins WHERE revision_id = $1`,
      [revisionId],
    );
  }
}
