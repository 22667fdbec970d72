import { Injectable } from '@nestjs/common';
import type { RelationRef, StoredRowValues } from '../fields/field.types.js';
import { type FoldedChanges, foldChanges, withoutNulls } from '../domain/change-fold.js';
import {
  type ChangeRecord,
  type DocumentMetadata,
  type DocumentRecord,
  type DocumentSettings,
  METADATA_TARGET,
  type RequestRecord,
  SETTINGS_TARGET,
} from '../domain/document.records.js';
import { applySettingsRevert } from '../domain/settings-revert.js';
import type { DraftOverlayRow } from '../repositories/row-query.repository.js';
import { ComputedValuesRepository } from '../repositories/computed-values.repository.js';
import { RequestRepository } from '../repositories/request.repository.js';
import { ChangeEngineService } from './change-engine.service.js';
import { ComputedReadService } from './computed/computed-read.service.js';
import type { LinkedSource } from './computed/computed-access.service.js';

/** How far a single-row draft read follows relation links for the draft rows its lookups read (as the ripple). */
const LINK_DEPTH = 8;

/**
 * Row ids of the document that a stored relation value links to: a reference's missing docType or docId is the
 * document's own, as the draft's lookups read it (ComputedReadService.draftLinks).
 */
function sameDocumentLinks(document: DocumentRecord, value: unknown): string[] {
  if (!Array.isArray(value)) {
    return [];
  }
  return value.flatMap((ref: unknown) => {
    if (typeof ref !== 'object' || ref === null || typeof (ref as RelationRef).rowId !== 'string') {
      return [];
    }
    const { docType, docId, rowId } = ref as RelationRef;
    const own =
      (typeof docType === 'string' ? docType : document.docType) === document.docType &&
      (typeof docId === 'string' ? docId : document.docId) === document.docId;
    return own ? [rowId] : [];
  });
}

/** What a reader of `?requestId=` sees: the request's folded changes over the document. */
export interface DraftView {
  request: RequestRecord | null;
  metadata: DocumentMetadata;
  /** Row changes to lay over the document's rows in SQL; null when there are none. */
  overlay: DraftOverlayRow[] | null;
  folded: FoldedChanges | null;
  changes: ChangeRecord[];
  /** Documents the draft's lookups read through its relation values (ComputedReadService.draftOverlay). */
  linked?: LinkedSource[];
}

/**
 * Reading a draft: the request's changes are folded in Node (a request is small next to its document) and the
 * resulting row changes are passed to SQL as one JSON parameter, so filtering, sorting, counting and paging of the
 * draft still happen in PostgreSQL over the whole document. Merged and closed requests show the document as it is.
 */
@Injectable()
export class DraftReadService {
  constructor(
    private readonly engine: ChangeEngineService,
    private readonly requests: RequestRepository,
    private readonly computed: ComputedReadService,
    private readonly values: ComputedValuesRepository,
  ) {}

  /**
   * `rowIds`: read the draft of these rows only (with the request's metadata changes) — what a write's answer
   * needs, at a cost that does not grow with the request's other changes; with the rows they link to when the
   * document has lookups or rollups (they may read those rows as the draft has them).
   */
  async load(document: DocumentRecord, requestId: string | undefined, rowIds?: readonly string[]): Promise<DraftView> {
    // An empty `?requestId=` is a malformed id (NOT_FOUND), as it is for writes: never the committed document.
    if (requestId === undefined) {
      return { request: null, metadata: document.metadata, overlay: null, folded: null, changes: [] };
    }
    const request = await this.engine.findRequest(document, requestId);
    if (request.status !== 'open') {
      return { request, metadata: document.metadata, overlay: null, folded: null, changes: [] };
    }
    let changes = await this.requests.changes(request.id, rowIds ? { targetIds: [...rowIds, METADATA_TARGET] } : {});
    let folded = foldChanges(changes);
    const fields = folded.metadata?.fields ?? document.metadata.fields;
    if (rowIds && fields.some((field) => field.type === 'lookup' || field.type === 'rollup')) {
      // The rows' lookups may read other rows of the draft, as the draft has them (ComputedReadService.draftOverlay):
      // one row read alone showed the merged values of the rows it links to, where a list of the draft showed these.
      // The changes of the rows they link to (as far as lookups chain) are loaded too, not the whole request: a
      // write into a request answers through this read, and its cost would otherwise grow with the request.
      const relationFields = fields.filter((field) => field.type === 'relation').map((field) => field.id);
      const loaded = new Set(rowIds);
      let frontier = [...rowIds];
      for (let depth = 0; depth < LINK_DEPTH && frontier.length > 0 && relationFields.length > 0; depth++) {
        const linked = new Set<string>();
        const collect = (values: StoredRowValues | undefined): void => {
          for (const fieldId of relationFields) {
            for (const rowId of sameDocumentLinks(document, values?.[fieldId])) {
              linked.add(rowId);
            }
          }
        };
        (await this.values.rowsByIds(document.uuid, frontier)).forEach((row) => collect(row.values));
        for (const rowId of frontier) {
          const effect = folded.rows.get(rowId);
          collect(effect === undefined || effect.kind === 'delete' ? undefined : effect.kind === 'update' ? effect.set : effect.values);
        }
        frontier = [...linked].filter((rowId) => !loaded.has(rowId));
        if (frontier.length > 0) {
          frontier.forEach((rowId) => loaded.add(rowId));
          changes = await this.requests.changes(request.id, { targetIds: [...loaded, METADATA_TARGET] });
          folded = foldChanges(changes);
        }
      }
    }
    const metadata = folded.metadata ? { fields: folded.metadata.fields, properties: folded.metadata.properties } : document.metadata;
    const changedAt = new Map<string, ChangeRecord>();
    for (const change of changes) {
      changedAt.set(change.targetId, change);
    }
    const overlay: DraftOverlayRow[] = [];
    let ord = 0;
    for (const effect of folded.rows.values()) {
      const last = changedAt.get(effect.rowId);
      const base = { id: effect.rowId, ord: (ord += 1), by: last?.changedBy ?? request.author, at: new Date(last?.changedAt ?? request.updatedAt).toISOString() };
      switch (effect.kind) {
        case 'create':
        case 'replace':
          overlay.push({ ...base, kind: effect.kind, set: {}, unset: [], values: effect.values });
          break;
        case 'update': {
          const unset = Object.keys(effect.set).filter((key) => effect.set[key] === null);
          overlay.push({ ...base, kind: 'update', set: withoutNulls(effect.set), unset, values: {} as StoredRowValues });
          break;
        }
        case 'delete':
          overlay.push({ ...base, kind: 'delete', set: {}, unset: [], values: {} });
          break;
      }
    }
    // Formulas, lookups and rollups of the draft's rows, so the draft shows and queries them (docs/formulas.md).
    const linked = overlay.length > 0 ? await this.computed.draftOverlay(document, metadata.fields, overlay) : [];
    return { request, metadata, overlay: overlay.length > 0 ? overlay : null, folded, changes, linked };
  }

  /** The settings a reader of `?requestId=` sees: the open request's settings change, else the document's. */
  async settings(document: DocumentRecord, requestId: string): Promise<DocumentSettings> {
    const request = await this.engine.findRequest(document, requestId);
    if (request.status !== 'open') {
      return document.settings;
    }
    return draftSettings(document, foldChanges(await this.requests.changes(request.id, { targetIds: [SETTINGS_TARGET] })));
  }
}

/** The settings of a draft (`folded`: its request's changes folded; null for the document as it is). */
export function draftSettings(document: DocumentRecord, folded: FoldedChanges | null): DocumentSettings {
  if (!folded) {
    return document.settings;
  }
  // A revert's entries on the settings as they are now, as its merge applies them.
  return folded.settingsRevert ? applySettingsRevert(document.settings, folded.settingsRevert) : (folded.settings ?? document.settings);
}
