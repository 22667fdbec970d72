import { Injectable } from '@nestjs/common';
import { documentEvent } from '../../../events/domain-event.js';
import { OutboxService } from '../../../events/outbox.service.js';
import type { DocumentRecord, RowRecord } from '../../domain/document.records.js';
import { rowToValueEntries } from '../../fields/field-type.registry.js';

/** Who caused a recomputation (`triggeredBy` of its events) and the document whose write or deletion caused it. */
export interface Cause {
  by: string;
  documentUuid: string;
}

/** Above this many recomputed rows in one dependent document, one data_bulk_operation instead of row events. */
const EVENTS_PER_ROW_MAX = 100;

/** The events of rows whose computed values a merge (or a document deletion) changed (ComputedFieldsService). */
@Injectable()
export class ComputedEventsRecorder {
  constructor(private readonly outbox: OutboxService) {}

  /**
   * Webhooks and the realtime stream of the dependent document see the new values: `data_row_updated` per row
   * (`computed: true`, no request or revision), or one `data_bulk_operation` when many rows changed. Recorded long
   * before the merge commits, without a lock on the document's row: the stream serves events in commit order
   * (docs/realtime.md, "Order and resume").
   */
  async record(document: DocumentRecord, rows: readonly RowRecord[], cause: Cause): Promise<void> {
    if (rows.length === 0) {
      return;
    }
    const by = cause.by;
    const common = { requestId: null, revisionId: null, computed: true };
    if (rows.length > EVENTS_PER_ROW_MAX) {
      await this.outbox.record(
        documentEvent(document, 'data_bulk_operation', by, {
          ...common,
          bulkId: null,
          rowsCreated: 0,
          rowsUpdated: rows.length,
          rowsDeleted: 0,
          rowIds: rows.slice(0, 1000).map((row) => row.id),
        }),
      );
      return;
    }
    await this.outbox.record(
      ...rows.map((row) =>
        documentEvent(document, 'data_row_updated', by, {
          ...common,
          rowId: row.id,
          version: row.version,
          values: rowToValueEntries(row.values, document.metadata.fields, row),
        }),
      ),
    );
  }
}
