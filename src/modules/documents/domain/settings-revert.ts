import type { StoredRowValues } from '../fields/field.types.js';
import { isPlainObject } from '../fields/field-value.utils.js';
import type { DocumentSettings, SettingsRevertEntry } from './document.records.js';
import { canonicalJson } from './metadata-diff.js';
import type { MergeConflict } from './merge.types.js';

/**
 * What a revert does to settings and properties (pure logic, unit-tested): it undoes only what the reverted
 * revision changed, and only while that is still as the revision left it (docs/documents.md, "Revision diff,
 * history, revert"). Settings are compared per entry: sections (`permissions`, `notifications`, `workflow`, any
 * other object) are walked, and each key whose value is not an object (`permissions.view`, `workflow.approvers`) is
 * one entry. An absent value is `undefined` here and left out of the stored JSON.
 */

function same(a: unknown, b: unknown): boolean {
  return a === undefined || b === undefined ? a === b : canonicalJson(a) === canonicalJson(b);
}

function at(settings: unknown, path: readonly string[]): unknown {
  let value: unknown = settings;
  for (const key of path) {
    if (!isPlainObject(value)) {
      return undefined;
    }
    value = value[key];
  }
  return value;
}

/** The entries `before` → `after` changed: each with the value before (`restore`) and after (`expected`). */
export function settingsChanges(before: unknown, after: unknown, path: string[] = []): SettingsRevertEntry[] {
  const entries: SettingsRevertEntry[] = [];
  const from = isPlainObject(before) ? before : {};
  const to = isPlainObject(after) ? after : {};
  for (const key of new Set([...Object.keys(from), ...Object.keys(to)])) {
    const old = from[key];
    const next = to[key];
    // A section that appears or goes is walked as an empty one: `{}` and absent mean the same thing.
    if (
      (isPlainObject(old) || old === undefined) &&
      (isPlainObject(next) || next === undefined) &&
      (old !== undefined || next !== undefined)
    ) {
      entries.push(...settingsChanges(old, next, [...path, key]));
    } else if (!same(old, next)) {
      entries.push({ path: [...path, key], restore: old, expected: next });
    }
  }
  return entries;
}

/**
 * Several settings operations of one revision undone together, taken last to first: an entry gets the value the
 * earliest operation found back, and is expected as the latest one left it.
 */
export function combineSettingsChanges(
  later: readonly SettingsRevertEntry[],
  earlier: readonly SettingsRevertEntry[],
): SettingsRevertEntry[] {
  const byPath = new Map(later.map((entry) => [JSON.stringify(entry.path), { ...entry }]));
  for (const entry of earlier) {
    const key = JSON.stringify(entry.path);
    const known = byPath.get(key);
    byPath.set(key, known ? { ...known, restore: entry.restore } : { ...entry });
  }
  return [...byPath.values()];
}

/** `settings` with each entry's `restore` put back (an absent one removes the key). */
export function applySettingsRevert(
  settings: DocumentSettings,
  entries: readonly SettingsRevertEntry[],
): DocumentSettings {
  const result = structuredClone(settings) as Record<string, unknown>;
  for (const entry of entries) {
    let section = result;
    for (const key of entry.path.slice(0, -1)) {
      const next = section[key];
      section[key] = isPlainObject(next) ? next : {};
      section = section[key] as Record<string, unknown>;
    }
    const last = entry.path[entry.path.length - 1] as string;
    if (entry.restore === undefined) {
      delete section[last];
    } else {
      section[last] = structuredClone(entry.restore);
    }
  }
  return result as DocumentSettings;
}

/** A `settings-changed` conflict per entry that no longer holds what the reverted revision left. */
export function settingsRevertConflicts(
  settings: DocumentSettings,
  entries: readonly SettingsRevertEntry[],
): MergeConflict[] {
  return entries
    .filter((entry) => !same(at(settings, entry.path), entry.expected))
    .map((entry) => ({
      type: 'settings-changed' as const,
      targetId: 'settings',
      fieldId: entry.path.join('.'),
      reason: `settings ${entry.path.join('.')} changed since the reverted revision; append the settings wanted to the request, or close it`,
    }));
}

/** A `properties-changed` conflict per property whose value is no longer the one the reverted revision left. */
export function propertyRevertConflicts(
  properties: StoredRowValues,
  expected: StoredRowValues,
): MergeConflict[] {
  return Object.entries(expected)
    .filter(([fieldId, value]) => !same(properties[fieldId] ?? null, value ?? null))
    .map(([fieldId]) => ({
      type: 'properties-changed' as const,
      targetId: 'properties',
      fieldId,
      reason: `property ${fieldId} changed since the reverted revision; append a change of it to the request, or close it`,
    }));
}
