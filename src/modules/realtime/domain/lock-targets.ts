import { assertNever } from '../../../common/assert-never.js';
/**
 * What a lock covers and when two locks (or a lock and a write) collide. A document lock covers everything;
 * a row lock covers the row's cells; a field lock covers that field's cells in every row (and the field's
 * definition); a cell lock covers one value.
 */
export const LOCK_TARGET_TYPES = ['row', 'cell', 'field', 'document'] as const;
export type LockTargetType = (typeof LOCK_TARGET_TYPES)[number];

export interface LockTargetInput {
  type: LockTargetType;
  rowId?: string;
  fieldId?: string;
}

export interface LockTarget {
  type: LockTargetType;
  rowId: string | null;
  fieldId: string | null;
}

export function isLockTargetType(value: string): value is LockTargetType {
  return (LOCK_TARGET_TYPES as readonly string[]).includes(value);
}

/** Row, field and cell ids: the characters of ids elsewhere in the API. */
export const LOCK_TARGET_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * What is wrong with a target's ids for its type, one entry per id: row and cell locks need `rowId`, field and cell
 * locks `fieldId`, and the other ids are not allowed (a missing id would otherwise stand for "all"). The socket's
 * `lock` message and `POST .../lock` both check targets with it.
 */
export function lockTargetIdProblems(target: {
  type: LockTargetType;
  rowId?: unknown;
  fieldId?: unknown;
}): { key: 'rowId' | 'fieldId'; reason: string }[] {
  const needsRow = target.type === 'row' || target.type === 'cell';
  const needsField = target.type === 'field' || target.type === 'cell';
  const problems: { key: 'rowId' | 'fieldId'; reason: string }[] = [];
  for (const [key, needed] of [
    ['rowId', needsRow],
    ['fieldId', needsField],
  ] as const) {
    const value = target[key];
    if (needed && (typeof value !== 'string' || !LOCK_TARGET_ID.test(value))) {
      problems.push({ key, reason: `${key} is required for a ${target.type} lock` });
    } else if (!needed && value !== undefined) {
      problems.push({ key, reason: `${key} is not allowed for a ${target.type} lock` });
    }
  }
  return problems;
}

/**
 * A field or cell lock must name a field of the document (`fieldIds`): one on an unknown field covered nothing a
 * write could touch yet stood in the way of every other user's row locks. A row id need not exist: a row lock
 * may reserve the id of a row about to be created (creating it is a write the lock covers).
 */
export function lockTargetFieldProblem(
  target: { type: LockTargetType; fieldId?: string },
  fieldIds: readonly string[],
): { key: 'fieldId'; reason: string } | null {
  if (
    (target.type === 'field' || target.type === 'cell') &&
    target.fieldId !== undefined &&
    !fieldIds.includes(target.fieldId)
  ) {
    return { key: 'fieldId', reason: `fieldId ${target.fieldId} is not a field of the document` };
  }
  return null;
}

export function normalizeTarget(input: LockTargetInput): LockTarget {
  return { type: input.type, rowId: input.rowId ?? null, fieldId: input.fieldId ?? null };
}

/** The (row, field) area of a target; null stands for "all". */
function area(target: LockTarget): { row: string | null; field: string | null } {
  switch (target.type) {
    case 'document':
      return { row: null, field: null };
    case 'row':
      return { row: target.rowId, field: null };
    case 'field':
      return { row: null, field: target.fieldId };
    case 'cell':
      return { row: target.rowId, field: target.fieldId };
    default:
      return assertNever(target.type);
  }
}

/** True when the two targets share at least one cell (or both are about the whole document). */
export function targetsOverlap(a: LockTarget, b: LockTarget): boolean {
  const x = area(a);
  const y = area(b);
  const rows = x.row === null || y.row === null || x.row === y.row;
  const fields = x.field === null || y.field === null || x.field === y.field;
  return rows && fields;
}

/** Two locks of different holders collide when they overlap and at least one of them is exclusive. */
export function locksCollide(
  a: { target: LockTarget; exclusive: boolean },
  b: { target: LockTarget; exclusive: boolean },
): boolean {
  return (a.exclusive || b.exclusive) && targetsOverlap(a.target, b.target);
}
