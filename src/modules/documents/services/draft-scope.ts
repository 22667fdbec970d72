import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition, StoredRowValues, StoredValue } from '../fields/field.types.js';
import { handlerFor } from '../fields/field-type.registry.js';
import { applyPropertiesEffect, applySet, foldChanges, type MetadataEffect } from '../domain/change-fold.js';
import {
  type ChangeDraft,
  type DocumentMetadata,
  type DocumentRecord,
  METADATA_TARGET,
  PROPERTIES_TARGET,
  type RequestRecord,
  type RowRecord,
} from '../domain/document.records.js';
import type { PropertiesRepository } from '../repositories/properties.repository.js';
import type { RequestRepository } from '../repositories/request.repository.js';
import type { RowRepository } from '../repositories/row.repository.js';

/** A row as the request being written to sees it. */
export interface DraftRowState {
  exists: boolean;
  values: StoredRowValues;
  /** The version a reader of the draft sees (what the row will have after the merge). */
  version: number;
  /** The row's version in the document (null when it does not exist there): recorded for conflict detection. */
  baseVersion: number | null;
  /**
   * The row's committed version when the request changes the row on top of an older version (the merge would
   * answer `row-changed` with this `currentVersion`), else null: a change sent with this version re-bases the row
   * (docs/documents.md, "Merge"). Never the draft's `version`, which is this + 1.
   */
  rebaseVersion: number | null;
}

export interface DraftProperties {
  values: StoredRowValues;
  version: number;
  /** The committed version. */
  baseVersion: number;
  /**
   * The committed version while the request's properties are in conflict (it changes them on top of an older
   * version: the merge would answer `properties-changed`), else null: a change sent with it re-bases them.
   */
  rebaseVersion: number | null;
}

export interface UniqueCheckRow {
  rowId: string;
  values: StoredRowValues;
  /** Where the values came from in the request, for error details. */
  path?: string;
}

/**
 * The document as one write sees it: the locked document, plus the changes already recorded on the target request
 * and the changes this write has built so far. Loads only the rows a write names.
 */
export class DraftScope {
  private readonly pending: ChangeDraft[] = [];
  /**
   * Rows read and locked by this scope, null for ids with no row: a merge in this transaction need not read them
   * again (a row created meanwhile under such an id fails the merge's INSERT with ALREADY_EXISTS, as it would anyway
   * between a re-read and the INSERT).
   */
  private readonly locked = new Map<string, RowRecord | null>();

  constructor(
    readonly document: DocumentRecord,
    readonly request: RequestRecord | null,
    private readonly repos: { rows: RowRepository; requests: RequestRepository; properties: PropertiesRepository },
    /**
     * Lock the rows a write names when it reads them (a rows-only write merged without the document lock): the
     * write then validates against the rows as the previous writer committed them, exactly as under the lock.
     */
    private readonly lockRows = false,
    /**
     * With `lockRows`: called with the rows a write is about to lock to delete them, before it locks them — the
     * documents naming them are locked first (MergeService.shareHolderLocks, docs/documents.md "Locking").
     */
    private readonly beforeDeleting?: (rowIds: readonly string[]) => Promise<void>,
  ) {}

  /** Makes later reads of this scope see `changes` (a write that builds several changes). */
  push(...changes: ChangeDraft[]): void {
    this.pending.push(...changes);
  }

  get changes(): readonly ChangeDraft[] {
    return this.pending;
  }

  /** Rows this scope read and locked, as they are in the database (null: no such row), by id; empty without row locks. */
  get lockedRows(): ReadonlyMap<string, RowRecord | null> {
    return this.locked;
  }

  private async recorded(targetIds: readonly string[]): Promise<ChangeDraft[]> {
    const stored = this.request ? await this.repos.requests.changes(this.request.id, { targetIds }) : [];
    // A Set: a bulk write looks up its 1000 rows among its own 1000 pending changes.
    const wanted = new Set(targetIds);
    return [...stored, ...this.pending.filter((change) => wanted.has(change.targetId))];
  }

  async metadata(): Promise<DocumentMetadata> {
    const folded = await this.metadataEffect();
    return folded ? { fields: folded.fields, properties: folded.properties } : this.document.metadata;
  }

  /**
   * The metadata version a writer sees (GET /metadata: the merged one, plus one when the request changes the
   * metadata), and the committed version while the request's metadata is in conflict (it was written against an
   * older one: the merge would answer `metadata-changed`), else null: a change sent with it re-bases the metadata.
   */
  async metadataVersions(): Promise<{ version: number; rebaseVersion: number | null }> {
    const folded = await this.metadataEffect();
    const committed = this.document.metadataVersion;
    return folded
      ? { version: committed + 1, rebaseVersion: folded.baseMetadataVersion !== committed ? committed : null }
      : { version: committed, rebaseVersion: null };
  }

  private async metadataEffect(): Promise<MetadataEffect | null> {
    const changes = (await this.recorded([METADATA_TARGET])).filter((change) => change.type === 'metadata-update');
    return foldChanges(changes).metadata;
  }

  /** `deleting`: the ones among `rowIds` the write reads to delete them (see `beforeDeleting`). */
  async rows(rowIds: readonly string[], opts: { deleting?: readonly string[] } = {}): Promise<Map<string, DraftRowState>> {
    const ids = [...new Set(rowIds)];
    if (opts.deleting && opts.deleting.length > 0 && this.lockRows && this.beforeDeleting) {
      const unlocked = [...new Set(opts.deleting)].filter((id) => !this.locked.has(id));
      if (unlocked.length > 0) {
        await this.beforeDeleting(unlocked);
      }
    }
    const base = await this.repos.rows.findMany(this.document.uuid, ids, this.lockRows);
    if (this.lockRows) {
      ids.forEach((id) => this.locked.set(id, base.get(id) ?? null));
    }
    const changes = (await this.recorded(ids)).filter((change) => change.type.startsWith('row-'));
    const effects = foldChanges(changes).rows;
    const states = new Map<string, DraftRowState>();
    for (const id of ids) {
      const row = base.get(id);
      const baseVersion = row ? row.version : null;
      const effect = effects.get(id);
      if (!effect) {
        states.set(id, { exists: row !== undefined, values: row?.values ?? {}, version: row?.version ?? 0, baseVersion, rebaseVersion: null });
        continue;
      }
      const rebaseVersion = row !== undefined && effect.baseVersion !== null && effect.baseVersion !== row.version ? row.version : null;
      switch (effect.kind) {
        case 'create':
          states.set(id, { exists: true, values: effect.values, version: 1, baseVersion, rebaseVersion });
          break;
        case 'replace':
          states.set(id, { exists: true, values: effect.values, version: (row?.version ?? 0) + 1, baseVersion, rebaseVersion });
          break;
        case 'update':
          states.set(id, {
            exists: row !== undefined,
            values: applySet(row?.values ?? {}, effect.set),
            version: (row?.version ?? 0) + 1,
            baseVersion,
            rebaseVersion,
          });
          break;
        case 'delete':
          states.set(id, { exists: false, values: {}, version: 0, baseVersion, rebaseVersion });
          break;
      }
    }
    return states;
  }

  async properties(): Promise<DraftProperties> {
    const record = await this.repos.properties.find(this.document.uuid);
    const current = record?.properties ?? {};
    const baseVersion = record?.version ?? 0;
    const changes = (await this.recorded([PROPERTIES_TARGET])).filter((change) => change.type.startsWith('property-'));
    const effect = foldChanges(changes).properties;
    return effect
      ? {
          values: applyPropertiesEffect(current, effect),
          version: baseVersion + 1,
          baseVersion,
          rebaseVersion: effect.baseVersion !== baseVersion ? baseVersion : null,
        }
      : { values: current, version: baseVersion, baseVersion, rebaseVersion: null };
  }

  /**
   * Refuses values of `unique` fields that another row of the draft already holds, or that two of the given rows
   * share (VALIDATION_ERROR): the draft is the document plus the request's changes, so a row the request gave the
   * value clashes too, and a committed row the request changes away or deletes does not. The merge repeats the check
   * under the document lock (then CONFLICT).
   */
  async checkUnique(fields: readonly FieldDefinition[], rows: readonly UniqueCheckRow[]): Promise<void> {
    const unique = fields.filter((field) => field.unique === true && !handlerFor(field.type).computed);
    if (unique.length === 0 || rows.length === 0) {
      return;
    }
    const errors: ErrorDetail[] = [];
    const candidates: { fieldId: string; value: StoredValue }[] = [];
    for (const field of unique) {
      const seen = new Map<string, string>();
      for (const row of rows) {
        const value = row.values[field.id];
        if (value === undefined || value === null) {
          continue;
        }
        const key = JSON.stringify(value);
        const other = seen.get(key);
        if (other !== undefined) {
          errors.push({ fieldId: field.id, field: row.path, rowId: row.rowId, reason: `value must be unique (also given for row ${other})` });
          continue;
        }
        seen.set(key, row.rowId);
        candidates.push({ fieldId: field.id, value });
      }
    }
    const written = rows.map((row) => row.rowId);
    const clashes = await this.repos.rows.findUniqueClashes(this.document.uuid, candidates, written);
    const pendingHolders = this.request ? await this.repos.requests.rowsGivingValues(this.request.id, candidates, written) : [];
    // Committed holders and rows the request gave a value, as the draft has them now (its later changes included).
    const drafts = this.request ? await this.rows([...clashes.map((clash) => clash.rowId), ...pendingHolders]) : null;
    const holds = (rowId: string, fieldId: string, key: string): boolean => {
      const state = drafts?.get(rowId);
      return state ? state.exists && JSON.stringify(state.values[fieldId]) === key : true;
    };
    const reported = new Set<string>();
    const report = (fieldId: string, key: string, holder: string): void => {
      if (reported.has(`${fieldId}\u0000${key}`) || !holds(holder, fieldId, key)) {
        return;
      }
      reported.add(`${fieldId}\u0000${key}`);
      const row = rows.find((item) => JSON.stringify(item.values[fieldId]) === key);
      errors.push({ fieldId, field: row?.path, rowId: row?.rowId, reason: `value must be unique (row ${holder} has it)` });
    };
    for (const clash of clashes) {
      report(clash.fieldId, JSON.stringify(clash.value), clash.rowId);
    }
    for (const holder of pendingHolders) {
      for (const candidate of candidates) {
        report(candidate.fieldId, JSON.stringify(candidate.value), holder);
      }
    }
    if (errors.length > 0) {
      throw AppException.validation(errors);
    }
  }
}
