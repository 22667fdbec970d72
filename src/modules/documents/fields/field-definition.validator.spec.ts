import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { validateFieldDefinitions } from './field-definition.validator.js';

function details(input: unknown): ErrorDetail[] {
  try {
    validateFieldDefinitions(input);
  } catch (error) {
    expect(error).toBeInstanceOf(AppException);
    return (error as AppException).options.details ?? [];
  }
  throw new Error('expected a VALIDATION_ERROR');
}

describe('validateFieldDefinitions', () => {
  it('accepts and normalizes valid definitions', () => {
    const fields = validateFieldDefinitions([
      { id: 'title', name: 'Title', type: 'text', required: true, resultType: 'text' },
      {
        id: 'status',
        name: 'Status',
        type: 'single_select',
        selectOptions: [{ id: 'a', label: 'A', color: 'red' }],
        defaultValue: 'a',
      },
      { id: 'link', name: 'Link', type: 'relation' },
      { id: 'price', name: 'Price', type: 'lookup', lookup: { relationFieldId: 'link', targetFieldId: 'p' } },
      {
        id: 'total',
        name: 'Total',
        type: 'rollup',
        rollup: { relationFieldId: 'link', targetFieldId: 'p', agg: 'sum' },
      },
      {
        id: 'score',
        name: 'Score',
        type: 'number',
        validations: [{ ruleType: 'min', config: { value: 0 } }],
      },
    ]);
    expect(fields[0]).toEqual({ id: 'title', name: 'Title', type: 'text', required: true });
    expect(fields[1]?.defaultValue).toBe('a');
    expect(fields[4]?.rollup).toEqual({ relationFieldId: 'link', targetFieldId: 'p', agg: 'sum' });
  });

  it('reports every problem with its path', () => {
    const found = details([
      { id: 'a', name: 'A', type: 'text' },
      { id: 'a', name: 'Dup', type: 'text' },
      { id: 'bad id!', name: 'X', type: 'number' },
      { id: 'c', name: '', type: 'nope' },
      { id: 'd', name: 'D', type: 'single_select', selectOptions: [{ id: 'o' }, { id: 'o' }] },
      { id: 'e', name: 'E', type: 'lookup', lookup: { relationFieldId: 'a', targetFieldId: 'x' } },
      {
        id: 'f',
        name: 'F',
        type: 'rollup',
        rollup: { relationFieldId: 'a', targetFieldId: 'x', agg: 'median' },
      },
      { id: 'g', name: 'G', type: 'text', validations: [{ ruleType: 'pattern', config: { pattern: '[' } }] },
      { id: 'h', name: 'H', type: 'rating', defaultValue: 9 },
      { id: 'i', name: 'I', type: 'formula', defaultValue: 1 },
      // An attribute spec 2.5 does not name is refused, not dropped (a misspelt `required` left the field optional).
      { id: 'j', name: 'J', type: 'text', requird: true },
    ]);
    expect(found.map((detail) => detail.field)).toEqual([
      'fields[1].id',
      'fields[2].id',
      'fields[3].name',
      'fields[3].type',
      'fields[4].selectOptions[1].id',
      'fields[5].lookup.relationFieldId',
      'fields[6].rollup.relationFieldId',
      'fields[6].rollup.agg',
      'fields[7].validations[0].config.pattern',
      'fields[8].defaultValue',
      'fields[9].defaultValue',
      'fields[10].requird',
    ]);
  });

  it('names the field of a pattern RE2 cannot evaluate', () => {
    expect(
      details([
        {
          id: 'ok',
          name: 'OK',
          type: 'text',
          validations: [{ ruleType: 'pattern', config: { pattern: '^(a+)+$' } }],
        },
        {
          id: 'ref',
          name: 'Ref',
          type: 'text',
          validations: [{ ruleType: 'pattern', config: { pattern: '(a)\\1' } }],
        },
      ]),
    ).toEqual([
      {
        fieldId: 'ref',
        field: 'fields[1].validations[0].config.pattern',
        reason: expect.stringContaining('no backreferences, lookahead or lookbehind'),
      },
    ]);
  });

  it('names every definition text holding U+0000', () => {
    expect(
      details([
        { id: 'a', name: 'A\u0000', type: 'text' },
        { id: 'b', name: 'B', type: 'single_select', selectOptions: [{ id: 'o1', label: 'x\u0000' }] },
        { id: 'c', name: 'C', type: 'text', defaultValue: '\u0000' },
      ]).map((detail) => detail.field),
    ).toEqual(['fields[0].name', 'fields[1].selectOptions[0].label', 'fields[2].defaultValue']);
  });

  it('refuses non-arrays', () => {
    expect(details({})[0]?.field).toBe('fields');
  });
});
