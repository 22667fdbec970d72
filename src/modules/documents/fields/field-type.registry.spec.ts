import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition } from './field.types.js';
import { convertValue, parseRowValues, rowToValueEntries, storedToValue } from './field-type.registry.js';

const fields: FieldDefinition[] = [
  { id: 'title', name: 'Title', type: 'text', required: true },
  {
    id: 'qty',
    name: 'Qty',
    type: 'number',
    defaultValue: { number: 1 },
    validations: [{ ruleType: 'min', config: { value: 0 } }],
  },
  {
    id: 'status',
    name: 'Status',
    type: 'single_select',
    selectOptions: [
      { id: 'open', label: 'Open' },
      { id: 'done', label: 'Done' },
    ],
    defaultValue: 'open',
  },
  { id: 'due', name: 'Due', type: 'date' },
  { id: 'no', name: 'No', type: 'auto_number' },
  { id: 'created', name: 'Created', type: 'created_time' },
  { id: 'author', name: 'Author', type: 'created_by' },
];

function details(fn: () => unknown): ErrorDetail[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppException);
    expect((error as AppException).code).toBe('VALIDATION_ERROR');
    return (error as AppException).options.details ?? [];
  }
  throw new Error('expected a VALIDATION_ERROR');
}

describe('parseRowValues', () => {
  it('parses ValueEntry arrays and applies defaults on full writes', () => {
    const values = parseRowValues(
      [
        { fieldId: 'title', value: { text: 'A' } },
        { fieldId: 'due', value: { date: '2024-01-02T10:00:00Z' } },
      ],
      fields,
      {
        partial: false,
      },
    );
    expect(values).toEqual({ title: 'A', qty: 1, status: 'open', due: '2024-01-02' });
  });

  it('accepts an object keyed by field id and skips defaults when asked', () => {
    expect(parseRowValues({ title: 'A', qty: 3 }, fields, { partial: false, applyDefaults: false })).toEqual({
      title: 'A',
      qty: 3,
    });
  });

  it('keeps null for cleared fields on partial writes and applies no defaults', () => {
    expect(parseRowValues({ qty: null, due: {} }, fields, { partial: true })).toEqual({
      qty: null,
      due: null,
    });
  });

  it('collects every error of the row', () => {
    const found = details(() =>
      parseRowValues(
        [
          { fieldId: 'qty', value: { number: -1 } },
          { fieldId: 'status', value: { selectOption: { id: 'nope' } } },
          { fieldId: 'ghost', value: { text: 'x' } },
          { fieldId: 'no', value: { number: 5 } },
          { fieldId: 'due', value: 'someday' },
        ],
        fields,
        { partial: false },
      ),
    );
    expect(found).toEqual([
      { fieldId: 'qty', reason: 'value must be at least 0' },
      { fieldId: 'status', reason: 'unknown select option "nope"' },
      { fieldId: 'ghost', reason: 'unknown field' },
      { fieldId: 'no', reason: 'field is computed and read-only' },
      { fieldId: 'due', reason: 'expected an ISO 8601 date (YYYY-MM-DD), got "someday"' },
      { fieldId: 'title', reason: 'field is required' },
    ]);
  });

  it('refuses clearing a required field on a partial write', () => {
    expect(details(() => parseRowValues({ title: null }, fields, { partial: true }))).toEqual([
      { fieldId: 'title', reason: 'field is required' },
    ]);
    expect(parseRowValues({ qty: 2 }, fields, { partial: true })).toEqual({ qty: 2 });
  });

  it('ignores empty values of computed fields and refuses duplicates and malformed entries', () => {
    expect(parseRowValues({ title: 'A', no: null, created: {} }, fields, { partial: true })).toEqual({
      title: 'A',
    });
    const found = details(() =>
      parseRowValues(
        [{ fieldId: 'title', value: 'a' }, { fieldId: 'title', value: 'b' }, { value: 1 }],
        fields,
        { partial: true },
      ),
    );
    expect(found).toEqual([
      { fieldId: 'title', field: 'values[1]', reason: 'duplicate field' },
      { field: 'values[2].fieldId', reason: 'each value entry needs a fieldId' },
    ]);
    expect(
      details(() => parseRowValues('x' as unknown as Record<string, unknown>, fields, { partial: true }))[0]
        ?.field,
    ).toBe('values');
  });
});

describe('rowToValueEntries', () => {
  it('answers Values in field order, leaving out empties and unknown keys', () => {
    const entries = rowToValueEntries(
      { qty: 2, title: 'A', status: 'done', ghost: 'x', due: null, no: 7 },
      fields,
      {
        createdAt: new Date('2024-01-02T03:04:05.000Z'),
        createdBy: 'u1',
      },
    );
    expect(entries).toEqual([
      { fieldId: 'title', value: { text: 'A' } },
      { fieldId: 'qty', value: { number: 2 } },
      { fieldId: 'status', value: { selectOption: { id: 'done', label: 'Done' } } },
      { fieldId: 'no', value: { number: 7 } },
      { fieldId: 'created', value: { date: '2024-01-02T03:04:05.000Z' } },
      { fieldId: 'author', value: { user: { id: 'u1' } } },
    ]);
    expect(rowToValueEntries(null, fields)).toEqual([]);
    expect(storedToValue('', fields[0] as FieldDefinition)).toBeNull();
  });
});

describe('convertValue', () => {
  const f = (type: FieldDefinition['type'], extra: Partial<FieldDefinition> = {}): FieldDefinition => ({
    id: 'f',
    name: 'F',
    type,
    ...extra,
  });
  const select = f('single_select', {
    selectOptions: [
      { id: 'o1', label: 'Red' },
      { id: 'o2', name: { en: 'Blue', fr: 'Bleu' } },
    ],
  });
  const multi = f('multi_select', {
    selectOptions: [
      { id: 'm1', label: 'Red' },
      { id: 'm2', label: 'Green' },
    ],
  });

  it.each([
    ['text "12" → number', '12', f('text'), f('number'), { ok: true, value: 12 }],
    ['text "abc" → number', 'abc', f('text'), f('number'), { ok: false }],
    ['number → text', 12.5, f('number'), f('text'), { ok: true, value: '12.5' }],
    ['number → currency', 3, f('number'), f('currency'), { ok: true, value: 3 }],
    ['number 4 → rating', 4, f('number'), f('rating'), { ok: true, value: 4 }],
    ['number 7 → rating', 7, f('number'), f('rating'), { ok: false }],
    ['number 1.5 → duration', 1.5, f('number'), f('duration'), { ok: false }],
    ['select → text uses label', 'o1', select, f('text'), { ok: true, value: 'Red' }],
    ['select → text uses name.en', 'o2', select, f('long_text'), { ok: true, value: 'Blue' }],
    ['text → select by id', 'o2', f('text'), select, { ok: true, value: 'o2' }],
    ['text → select by label', 'red', f('text'), select, { ok: true, value: 'o1' }],
    ['text → select by name', 'Bleu', f('text'), select, { ok: true, value: 'o2' }],
    ['text → select without match', 'pink', f('text'), select, { ok: false }],
    ['text → multi_select splits commas', 'Red, Green', f('text'), multi, { ok: true, value: ['m1', 'm2'] }],
    ['select → multi_select by label', 'o1', select, multi, { ok: true, value: ['m1'] }],
    ['multi(2) → single_select', ['m1', 'm2'], multi, select, { ok: false }],
    ['multi(1) → single_select', ['m1'], multi, select, { ok: true, value: 'o1' }],
    ['multi → text', ['m1', 'm2'], multi, f('text'), { ok: true, value: 'Red, Green' }],
    ['boolean → text', true, f('boolean'), f('text'), { ok: true, value: 'true' }],
    ['text → boolean', 'False', f('text'), f('boolean'), { ok: true, value: false }],
    ['text "maybe" → boolean', 'maybe', f('text'), f('boolean'), { ok: false }],
    ['number → boolean', 1, f('number'), f('boolean'), { ok: false }],
    [
      'date → datetime',
      '2024-01-02',
      f('date'),
      f('datetime'),
      { ok: true, value: '2024-01-02T00:00:00.000Z' },
    ],
    [
      'datetime → date',
      '2024-01-02T23:00:00.000Z',
      f('datetime'),
      f('date'),
      { ok: true, value: '2024-01-02' },
    ],
    ['text → date', '2024-01-02', f('text'), f('date'), { ok: true, value: '2024-01-02' }],
    ['number → date', 5, f('number'), f('date'), { ok: false }],
    ['user → collaborator', 'u1', f('user'), f('collaborator'), { ok: true, value: ['u1'] }],
    ['collaborator(1) → user', ['u1'], f('collaborator'), f('user'), { ok: true, value: 'u1' }],
    ['collaborator(2) → user', ['u1', 'u2'], f('collaborator'), f('user'), { ok: false }],
    ['text → user', 'u1', f('text'), f('user'), { ok: false }],
    [
      'relation → relation',
      [{ rowId: 'r1' }],
      f('relation'),
      f('relation'),
      { ok: true, value: [{ rowId: 'r1' }] },
    ],
    [
      'relation → text',
      [{ rowId: 'r1' }, { rowId: 'r2' }],
      f('relation'),
      f('text'),
      { ok: true, value: 'r1, r2' },
    ],
    [
      'attachment → text',
      [{ name: 'a.pdf', url: '/a' }],
      f('attachment'),
      f('text'),
      { ok: true, value: 'a.pdf' },
    ],
    ['text → attachment', 'a.pdf', f('text'), f('attachment'), { ok: false }],
    ['anything → formula', 'x', f('text'), f('formula'), { ok: true, value: null }],
    ['formula number → number', 3, f('formula'), f('number'), { ok: true, value: 3 }],
    ['empty', null, f('text'), f('number'), { ok: true, value: null }],
  ])('%s', (_label, stored, from, to, expected) => {
    expect(convertValue(stored, from, to)).toEqual(expected);
  });

  it('keeps select ids across option edits and maps renamed ones by label', () => {
    const edited = f('single_select', { selectOptions: [{ id: 'x9', label: 'Red' }, { id: 'o2' }] });
    expect(convertValue('o2', select, edited)).toEqual({ ok: true, value: 'o2' });
    expect(convertValue('o1', select, edited)).toEqual({ ok: true, value: 'x9' });
  });
});
