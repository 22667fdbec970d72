import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { plainReader } from './row-reader.js';
import { plainOfValue } from './sync-document-read.gateway.js';

describe('plain values of rows', () => {
  const fields: FieldDefinition[] = [
    { id: 'cat', name: 'Category', type: 'single_select', selectOptions: [{ id: 'hw', label: 'Hardware' }] },
    {
      id: 'tags',
      name: 'Tags',
      type: 'multi_select',
      selectOptions: [
        { id: 'a', label: 'Alpha' },
        { id: 'b', name: { en: 'Beta' } },
      ],
    },
    { id: 'price', name: 'Unit price', type: 'number' },
  ];

  it('reads selects as labels and fields by id or name', () => {
    const read = plainReader(fields)({ cat: 'hw', tags: ['a', 'b', 'gone'], price: 3 });
    expect(read('cat')).toBe('Hardware');
    expect(read('tags')).toEqual(['Alpha', 'Beta', 'gone']);
    expect(read('unit price')).toBe(3);
    expect(read('missing')).toBeUndefined();
  });

  it('turns rendered values back into plain ones', () => {
    expect(plainOfValue({ number: 12 })).toBe(12);
    expect(plainOfValue({ selectOption: { id: 'hw', label: 'Hardware' } })).toBe('Hardware');
    expect(plainOfValue({ multiSelect: [{ id: 'a', label: 'Alpha' }, { id: 'b' }] })).toEqual(['Alpha', 'b']);
    expect(plainOfValue('text')).toBe('text');
    expect(plainOfValue(null)).toBeNull();
  });
});
