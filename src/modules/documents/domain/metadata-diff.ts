import type { FieldDefinition } from '../fields/field.types.js';

export interface FieldUpdate {
  before: FieldDefinition;
  after: FieldDefinition;
  /** Stored values must be carried across: the type changed, or select options were removed. */
  convert: boolean;
  /** `unique` was switched on: existing values must be checked. */
  becameUnique: boolean;
}

export interface FieldDiff {
  created: FieldDefinition[];
  updated: FieldUpdate[];
  deleted: FieldDefinition[];
}

/** JSON with sorted object keys, so two equal definitions compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonicalJson).join(',')}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function optionsRemoved(before: FieldDefinition, after: FieldDefinition): boolean {
  const kept = new Set((after.selectOptions ?? []).map((option) => option.id));
  return (before.selectOptions ?? []).some((option) => !kept.has(option.id));
}

/** Diffs two field lists by id into creates, updates (changed definitions) and deletes. */
export function diffFields(before: readonly FieldDefinition[], after: readonly FieldDefinition[]): FieldDiff {
  const previous = new Map(before.map((field) => [field.id, field]));
  const next = new Map(after.map((field) => [field.id, field]));
  const diff: FieldDiff = { created: [], updated: [], deleted: [] };
  for (const field of after) {
    const old = previous.get(field.id);
    if (!old) {
      diff.created.push(field);
    } else if (canonicalJson(old) !== canonicalJson(field)) {
      const isSelect = field.type === 'single_select' || field.type === 'multi_select';
      diff.updated.push({
        before: old,
        after: field,
        convert: old.type !== field.type || (isSelect && optionsRemoved(old, field)),
        becameUnique: field.unique === true && old.unique !== true,
      });
    }
  }
  for (const field of before) {
    if (!next.has(field.id)) {
      diff.deleted.push(field);
    }
  }
  return diff;
}

export function isEmptyDiff(diff: FieldDiff): boolean {
  return diff.created.length === 0 && diff.updated.length === 0 && diff.deleted.length === 0;
}
