import type { FieldDefinition } from '../fields/field.types.js';
import { canonicalJson, diffFields } from './metadata-diff.js';

const text = (id: string, extra: Partial<FieldDefinition> = {}): FieldDefinition => ({ id, name: id, type: 'text', ...extra });

describe('diffFields', () => {
  it('finds created, updated and deleted fields by id', () => {
    const diff = diffFields([text('a'), text('b'), text('c')], [text('a'), text('b', { name: 'B' }), text('d')]);
    expect(diff.created.map((f) => f.id)).toEqual(['d']);
    expect(diff.updated.map((u) => [u.after.id, u.convert])).toEqual([['b', false]]);
    expect(diff.deleted.map((f) => f.id)).toEqual(['c']);
  });

  it('asks for conversion on a type change or removed select options, not on added ones', () => {
    const select = (ids: string[]): FieldDefinition => ({ id: 's', name: 's', type: 'single_select', selectOptions: ids.map((id) => ({ id })) });
    expect(diffFields([text('a')], [{ id: 'a', name: 'a', type: 'number' }]).updated[0]?.convert).toBe(true);
    expect(diffFields([select(['x'])], [select(['x', 'y'])]).updated[0]?.convert).toBe(false);
    expect(diffFields([select(['x', 'y'])], [select(['x'])]).updated[0]?.convert).toBe(true);
  });

  it('notices unique being switched on and ignores key order', () => {
    expect(diffFields([text('a')], [text('a', { unique: true })]).updated[0]?.becameUnique).toBe(true);
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe(canonicalJson({ a: [{ c: 2, d: 1 }], b: 1 }));
    expect(diffFields([{ name: 'a', id: 'a', type: 'text' }], [text('a')]).updated).toEqual([]);
  });
});
