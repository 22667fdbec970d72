import type { FieldDefinition, StoredRowValues } from '../fields/field.types.js';
import type { ChangeDraft, DocumentSettings, RelationCreateData, SettingsRevertEntry } from './document.records.js';

/**
 * What a request does to one row once all its changes are folded together (pure logic, unit-tested):
 * - `create`: a new row with `values`;
 * - `update`: `set` the named fields (`null` clears) on an existing row;
 * - `replace`: the row was deleted and created again: its values become `values`;
 * - `delete`: the row goes.
 * `baseVersion` is the row version the first change of the request saw (null for rows the request created), or the
 * version a later re-basing change named (`rebase`: it was sent with the row's committed version, docs/documents.md
 * "Merge"): the merge refuses the row when its version is no longer this one.
 */
export type RowEffect =
  | { kind: 'create'; rowId: string; values: StoredRowValues; baseVersion: null; origins: string[] }
  | { kind: 'update'; rowId: string; set: StoredRowValues; baseVersion: number | null; origins: string[] }
  | { kind: 'replace'; rowId: string; values: StoredRowValues; baseVersion: number | null; origins: string[] }
  | { kind: 'delete'; rowId: string; baseVersion: number | null; origins: string[] };

export interface PropertiesEffect {
  /** Values to set (`null` clears). */
  set: StoredRowValues;
  /** Clear every property not in `set`. */
  replace: boolean;
  /** The properties were deleted (required properties are not enforced on what follows). */
  cleared?: boolean;
  baseVersion: number;
  /** Bulk write the last property change came from, if any. */
  bulkId?: string;
  /** A revert's expectations per property still standing (PropertyUpdateData.expected). */
  expected?: StoredRowValues;
}

export interface MetadataEffect {
  fields: FieldDefinition[];
  properties: FieldDefinition[];
  baseMetadataVersion: number;
}

export interface FoldedChanges {
  /** In order of first appearance. */
  rows: Map<string, RowEffect>;
  properties: PropertiesEffect | null;
  metadata: MetadataEffect | null;
  settings: DocumentSettings | null;
  /** When the last settings change is a revert's: the entries it undoes (SettingsUpdateData.revert). */
  settingsRevert?: SettingsRevertEntry[];
  /** Free-standing relation edges to create (`relation-create`), in order; the change id is the edge id. */
  relations: { id: string; data: RelationCreateData }[];
  /** Free-standing relation edges to remove (`relation-delete`, a revert's), by edge id. */
  relationDeletes: string[];
}

/** Origin tag of a change: its bulk id, or `single` for a one-row write. */
function originOf(change: ChangeDraft): string {
  const data = change.data as { origin?: { bulkId?: string } };
  return data.origin?.bulkId ?? 'single';
}

function withOrigin(origins: string[], origin: string): string[] {
  return origins.includes(origin) ? origins : [...origins, origin];
}

/** Drops cleared (`null`) entries: the stored form never holds empty values. */
export function withoutNulls(values: StoredRowValues): StoredRowValues {
  const result: StoredRowValues = {};
  for (const [key, value] of Object.entries(values)) {
    if (value !== null) {
      result[key] = value;
    }
  }
  return result;
}

/** `base` with `set` applied (`null` in `set` removes the key). */
export function applySet(base: StoredRowValues, set: StoredRowValues): StoredRowValues {
  return withoutNulls({ ...base, ...set });
}

type RowChange = Extract<ChangeDraft, { type: 'row-create' | 'row-update' | 'row-delete' }>;

function foldRowUpdate(previous: RowEffect, set: StoredRowValues, origins: string[]): RowEffect {
  switch (previous.kind) {
    case 'create':
    case 'replace':
      return { ...previous, values: applySet(previous.values, set), origins };
    case 'update':
      return { ...previous, set: { ...previous.set, ...set }, origins };
    case 'delete':
      // Validation refuses updates of deleted rows; keep the delete.
      return previous;
  }
}

/** `effect` on a new base version; a row the request creates has none (it is checked for `row-exists` instead). */
function rebased(effect: RowEffect, baseVersion: number | null): RowEffect {
  return effect.kind === 'create' ? effect : { ...effect, baseVersion };
}

function foldRow(previous: RowEffect | undefined, change: RowChange, origin: string): RowEffect | null {
  const rowId = change.targetId;
  const origins = withOrigin(previous?.origins ?? [], origin);
  switch (change.type) {
    case 'row-create':
      // A re-create keeps the delete's base: it carries no version (docs/documents.md, "Requests with changes").
      return previous?.kind === 'delete'
        ? { kind: 'replace', rowId, values: withoutNulls(change.data.values), baseVersion: previous.baseVersion, origins }
        : { kind: 'create', rowId, values: withoutNulls(change.data.values), baseVersion: null, origins };
    case 'row-update': {
      if (!previous) {
        return { kind: 'update', rowId, set: { ...change.data.values }, baseVersion: change.data.baseVersion, origins };
      }
      // The request's earlier values of the row stay; a re-basing change moves only the base they apply to.
      const next = foldRowUpdate(previous, change.data.values, origins);
      return change.data.rebase === true ? rebased(next, change.data.baseVersion) : next;
    }
    case 'row-delete':
      if (previous?.kind === 'create') {
        return null;
      }
      return {
        kind: 'delete',
        rowId,
        baseVersion: previous && change.data.rebase !== true ? previous.baseVersion : change.data.baseVersion,
        origins,
      };
  }
}

/**
 * A revert's property expectations after one more property change: its own (a revert's), or the earlier ones less
 * the properties this change sets (all of them when it replaces the set).
 */
function expectationsAfter(previous: StoredRowValues | undefined, values: StoredRowValues, replace: boolean, own: StoredRowValues | undefined): { expected?: StoredRowValues } {
  if (own) {
    return { expected: { ...(previous ?? {}), ...own } };
  }
  if (!previous || replace) {
    return {};
  }
  const kept = Object.fromEntries(Object.entries(previous).filter(([fieldId]) => !(fieldId in values)));
  return Object.keys(kept).length > 0 ? { expected: kept } : {};
}

/** Folds a request's changes, in recording order, into one effect per target. */
export function foldChanges(changes: readonly ChangeDraft[]): FoldedChanges {
  const folded: FoldedChanges = { rows: new Map(), properties: null, metadata: null, settings: null, relations: [], relationDeletes: [] };
  for (const change of changes) {
    switch (change.type) {
      case 'row-create':
      case 'row-update':
      case 'row-delete': {
        const next = foldRow(folded.rows.get(change.targetId), change, originOf(change));
        if (next) {
          folded.rows.set(change.targetId, next);
        } else {
          folded.rows.delete(change.targetId);
        }
        break;
      }
      case 'property-update': {
        const previous = folded.properties;
        const baseVersion = previous && change.data.rebase !== true ? previous.baseVersion : change.data.baseVersion;
        const bulkId = change.data.origin?.bulkId;
        const expected = expectationsAfter(previous?.expected, change.data.values, change.data.replace, change.data.expected);
        folded.properties = change.data.replace
          ? { set: { ...change.data.values }, replace: true, baseVersion, bulkId, ...expected }
          : { set: { ...(previous?.set ?? {}), ...change.data.values }, replace: previous?.replace ?? false, cleared: previous?.cleared, baseVersion, bulkId, ...expected };
        break;
      }
      case 'property-delete':
        folded.properties = {
          set: {},
          replace: true,
          cleared: true,
          baseVersion: folded.properties && change.data.rebase !== true ? folded.properties.baseVersion : change.data.baseVersion,
        };
        break;
      case 'metadata-update':
        folded.metadata = {
          fields: change.data.fields,
          properties: change.data.properties,
          baseMetadataVersion:
            folded.metadata && change.data.rebase !== true ? folded.metadata.baseMetadataVersion : change.data.baseMetadataVersion,
        };
        break;
      case 'settings-update':
        folded.settings = change.data.settings;
        if (change.data.revert) {
          folded.settingsRevert = change.data.revert;
        } else {
          delete folded.settingsRevert;
        }
        break;
      case 'relation-create':
        folded.relations.push({ id: change.targetId, data: change.data });
        break;
      case 'relation-delete':
        folded.relationDeletes.push(change.targetId);
        break;
      default: {
        const unknown: never = change;
        throw new Error(`unknown change ${JSON.stringify(unknown)}`);
      }
    }
  }
  return folded;
}

/** The properties after applying an effect to the current ones. */
export function applyPropertiesEffect(current: StoredRowValues, effect: PropertiesEffect): StoredRowValues {
  return effect.replace ? withoutNulls(effect.set) : applySet(current, effect.set);
}
