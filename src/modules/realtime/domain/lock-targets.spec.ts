import { type LockTarget, locksCollide, targetsOverlap } from './lock-targets.js';
import type { ChangeDraft, DocumentRecord } from '../../documents/domain/document.records.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { lockCoversWrite, type WriteTarget, writeTargetsOf } from './write-targets.js';

const row = (rowId: string): LockTarget => ({ type: 'row', rowId, fieldId: null });
const field = (fieldId: string): LockTarget => ({ type: 'field', rowId: null, fieldId });
const cell = (rowId: string, fieldId: string): LockTarget => ({ type: 'cell', rowId, fieldId });
const documentLock: LockTarget = { type: 'document', rowId: null, fieldId: null };

describe('lock targets', () => {
  it.each([
    [row('r1'), row('r1'), true],
    [row('r1'), row('r2'), false],
    [row('r1'), cell('r1', 'f'), true],
    [row('r1'), cell('r2', 'f'), false],
    [field('f'), cell('r9', 'f'), true],
    [field('f'), cell('r9', 'g'), false],
    [field('f'), row('r1'), true],
    [field('f'), field('g'), false],
    [cell('r1', 'f'), cell('r1', 'g'), false],
    [documentLock, cell('r1', 'f'), true],
  ])('%j overlaps %j: %s', (a, b, expected) => {
    expect(targetsOverlap(a, b)).toBe(expected);
    expect(targetsOverlap(b, a)).toBe(expected);
  });

  it('shared locks collide only with exclusive ones', () => {
    expect(
      locksCollide({ target: row('r1'), exclusive: false }, { target: row('r1'), exclusive: false }),
    ).toBe(false);
    expect(
      locksCollide({ target: row('r1'), exclusive: false }, { target: cell('r1', 'f'), exclusive: true }),
    ).toBe(true);
    expect(locksCollide({ target: row('r1'), exclusive: true }, { target: row('r2'), exclusive: true })).toBe(
      false,
    );
  });
});

describe('writes under locks', () => {
  const cells = (rowId: string, fields: string[] | null): WriteTarget => ({ kind: 'cells', rowId, fields });
  it.each([
    [row('r1'), cells('r1', ['a']), true],
    [row('r1'), cells('r2', ['a']), false],
    [cell('r1', 'a'), cells('r1', ['b']), false],
    [cell('r1', 'a'), cells('r1', ['a', 'b']), true],
    [cell('r1', 'a'), cells('r1', null), true],
    [field('a'), cells('r7', ['a']), true],
    [field('a'), cells('r7', ['b']), false],
    [field('a'), { kind: 'field-definition', fieldId: 'a' } as WriteTarget, true],
    [row('r1'), { kind: 'field-definition', fieldId: 'a' } as WriteTarget, false],
    [row('r1'), { kind: 'document-level' } as WriteTarget, false],
    [documentLock, { kind: 'document-level' } as WriteTarget, true],
    // Deleting or retyping a field changes its cell in every row.
    [row('r1'), { kind: 'field-cells', fieldId: 'a' } as WriteTarget, true],
    [cell('r1', 'a'), { kind: 'field-cells', fieldId: 'a' } as WriteTarget, true],
    [cell('r1', 'a'), { kind: 'field-cells', fieldId: 'b' } as WriteTarget, false],
    [field('a'), { kind: 'field-cells', fieldId: 'a' } as WriteTarget, true],
    [field('a'), { kind: 'field-cells', fieldId: 'b' } as WriteTarget, false],
  ])('%j covers %j: %s', (lock, write, expected) => {
    expect(lockCoversWrite(lock, write)).toBe(expected);
  });

  it('a metadata change touches the definitions it changes, and the cells of fields it deletes or retypes', () => {
    const fields: FieldDefinition[] = [
      { id: 'kept', name: 'Kept', type: 'text' },
      { id: 'renamed', name: 'Renamed', type: 'text' },
      { id: 'retyped', name: 'Retyped', type: 'number' },
      { id: 'deleted', name: 'Deleted', type: 'text' },
    ];
    const document = { metadata: { fields, properties: [] } } as unknown as DocumentRecord;
    const next: FieldDefinition[] = [
      { name: 'Kept', type: 'text', id: 'kept' },
      { id: 'renamed', name: 'Now renamed', type: 'text' },
      { id: 'retyped', name: 'Retyped', type: 'text' },
      { id: 'created', name: 'Created', type: 'text' },
    ];
    const draft = {
      type: 'metadata-update',
      operation: 'update',
      targetId: 'metadata',
      data: { fields: next, properties: [], baseMetadataVersion: 1 },
    } as ChangeDraft;
    expect(writeTargetsOf(document, [draft])).toEqual([
      { kind: 'field-definition', fieldId: 'created' },
      { kind: 'field-definition', fieldId: 'renamed' },
      { kind: 'field-definition', fieldId: 'retyped' },
      { kind: 'field-definition', fieldId: 'deleted' },
      { kind: 'field-cells', fieldId: 'deleted' },
      { kind: 'field-cells', fieldId: 'retyped' },
    ]);
  });
});
