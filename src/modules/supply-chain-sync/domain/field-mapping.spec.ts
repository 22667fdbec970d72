import {
  applyFieldMapping,
  applyRule,
  convertType,
  type MappingContext,
  type MappingRule,
} from './field-mapping.js';

const source: Record<string, unknown> = {
  name: 'Bolt',
  brand: 'Acme',
  price: 10,
  weight: 2,
  grade: 'A',
  dims: '10x20x30',
  tags: ['x', 'y'],
};
const ctx: MappingContext = {
  read: (id) => source[id],
  targetType: (id) => (id === 'qty' ? 'number' : 'text'),
  rates: [{ base: 'USD', quote: 'EUR', rate: 0.9, effectiveDate: '2026-01-01' }],
  today: '2026-05-01',
  formula: (text, read) => (text === 'price * 2' ? Number(read('price')) * 2 : null),
};
const rule = (partial: Partial<MappingRule>): MappingRule => ({ targetFieldId: 't', ...partial });

describe('field mapping', () => {
  it('maps select options named by label or by option id', () => {
    // Stored: option ids; read: their labels.
    const stored: Record<string, unknown> = { colour: 'opt-b', tags: ['opt-x', 'opt-y', 'opt-z'] };
    const labels: Record<string, unknown> = { colour: 'Blue', tags: ['X', 'Y', 'Z'] };
    const selects: MappingContext = { ...ctx, read: (id) => labels[id], readStored: (id) => stored[id] };
    const optionRule = (
      sourceFieldId: string,
      mappings: Record<string, string>,
      unmappedStrategy?: 'clear',
    ) =>
      rule({ sourceFieldId, transformType: 'option_mapping', optionMapping: { mappings, unmappedStrategy } });
    expect(applyRule(optionRule('colour', { Blue: 'Navy' }), selects)).toBe('Navy');
    expect(applyRule(optionRule('colour', { 'opt-b': 'Navy' }), selects)).toBe('Navy');
    // The label wins when a key names one option's label and another's id.
    expect(applyRule(optionRule('colour', { Blue: 'Navy', 'opt-b': 'Teal' }), selects)).toBe('Navy');
    expect(applyRule(optionRule('tags', { 'opt-x': 'one', Y: 'two' }, 'clear'), selects)).toEqual([
      'one',
      'two',
    ]);
    expect(applyRule(optionRule('tags', { 'opt-z': 'three' }), selects)).toEqual(['X', 'Y', 'three']);
  });

  it('applies every transform type', () => {
    expect(applyRule(rule({ sourceFieldId: 'name' }), ctx)).toBe('Bolt');
    expect(applyRule(rule({ sourceFieldId: 'price', transformType: 'type_convert' }), ctx)).toBe('10');
    expect(
      applyRule(rule({ sourceFieldId: 'price', transformType: 'type_convert', targetFieldId: 'qty' }), ctx),
    ).toBe(10);
    expect(
      applyRule(
        rule({
          sourceFieldId: 'weight',
          transformType: 'unit_convert',
          unitConversion: { sourceUnit: 'kg', targetUnit: 'g', conversionType: 'weight' },
        }),
        ctx,
      ),
    ).toBe(2000);
    expect(
      applyRule(
        rule({
          sourceFieldId: 'weight',
          transformType: 'unit_convert',
          unitConversion: { fromUnit: 'm', toUnit: 'cm' },
        }),
        ctx,
      ),
    ).toBe(200);
    expect(
      applyRule(
        rule({
          sourceFieldId: 'price',
          transformType: 'unit_convert',
          unitConversion: { fromUnit: 'USD', toUnit: 'CNY', rate: 7.1 },
        }),
        ctx,
      ),
    ).toBe(71);
    expect(
      applyRule(
        rule({
          sourceFieldId: 'price',
          transformType: 'unit_convert',
          unitConversion: {
            sourceUnit: 'USD',
            targetUnit: 'EUR',
            conversionType: 'currency',
            fixedRate: 0.5,
          },
        }),
        ctx,
      ),
    ).toBe(5);
    expect(
      applyRule(
        rule({
          sourceFieldId: 'price',
          transformType: 'unit_convert',
          unitConversion: {
            sourceUnit: 'USD',
            targetUnit: 'EUR',
            conversionType: 'currency',
            exchangeRateSource: 'daily',
          },
        }),
        ctx,
      ),
    ).toBe(9);
    expect(
      applyRule(
        rule({
          sourceFieldId: 'price',
          transformType: 'unit_convert',
          unitConversion: {
            sourceUnit: 'EUR',
            targetUnit: 'USD',
            conversionType: 'currency',
            exchangeRateSource: 'realtime',
          },
        }),
        ctx,
      ),
    ).toBeCloseTo(11.1111111, 5);
    expect(
      applyRule(
        rule({
          sourceFieldId: 'grade',
          transformType: 'option_mapping',
          optionMapping: { mappings: { A: 'Premium' } },
        }),
        ctx,
      ),
    ).toBe('Premium');
    expect(
      applyRule(
        rule({
          sourceFieldId: 'name',
          transformType: 'option_mapping',
          optionMapping: { mappings: { A: 'Premium' }, unmappedStrategy: 'keep_original' },
        }),
        ctx,
      ),
    ).toBe('Bolt');
    expect(
      applyRule(
        rule({
          sourceFieldId: 'tags',
          transformType: 'option_mapping',
          optionMapping: { mappings: { x: 'X' } },
        }),
        ctx,
      ),
    ).toEqual(['X', 'y']);
    expect(applyRule(rule({ transformType: 'formula', formula: 'price * 2' }), ctx)).toBe(20);
    expect(
      applyRule(
        rule({
          sourceFieldId: 'price',
          transformType: 'format',
          formatConfig: { template: 'USD ${value}/pc' },
        }),
        ctx,
      ),
    ).toBe('USD 10/pc');
    expect(
      applyRule(
        rule({
          transformType: 'merge',
          sourceFieldIds: ['brand', 'name'],
          mergeConfig: { separator: ' - ' },
        }),
        ctx,
      ),
    ).toBe('Acme - Bolt');
    expect(
      applyRule(
        rule({ sourceFieldId: 'dims', transformType: 'split', splitConfig: { separator: 'x', index: 1 } }),
        ctx,
      ),
    ).toBe('20');
    expect(
      applyRule(
        rule({
          sourceFieldId: 'grade',
          transformType: 'option_mapping',
          optionMapping: { mappings: { B: 'x' }, unmappedStrategy: 'clear' },
        }),
        ctx,
      ),
    ).toBeNull();
    const split = applyFieldMapping(
      {
        rules: [
          {
            sourceFieldId: 'dims',
            targetFieldId: 'w',
            targetFieldIds: ['w', 'h', 'd'],
            separator: 'x',
            transformType: 'split',
          },
        ],
      },
      [],
      ctx,
    );
    expect([...split.values.entries()].map(([id, mapped]) => [id, mapped.value])).toEqual([
      ['w', '10'],
      ['h', '20'],
      ['d', '30'],
    ]);
  });

  it('converts types and refuses what cannot be converted', () => {
    expect(convertType('12.5', 'number')).toBe(12.5);
    expect(convertType('yes', 'boolean')).toBe(true);
    expect(convertType('2026-05-01T10:00:00Z', 'date')).toBe('2026-05-01');
    expect(convertType('a, b', 'multi_select')).toEqual(['a', 'b']);
    expect(() => convertType('lots', 'number')).toThrow('cannot convert');
  });

  it('reports failing rules, skips disabled ones, lists unmapped source fields', () => {
    const result = applyFieldMapping(
      {
        rules: [
          { sourceFieldId: 'name', targetFieldId: 'n', propagationMode: 'oneway' },
          {
            sourceFieldId: 'price',
            targetFieldId: 'p',
            transformType: 'unit_convert',
            unitConversion: { sourceUnit: 'USD', targetUnit: 'JPY', conversionType: 'currency' },
          },
          { sourceFieldId: 'brand', targetFieldId: 'b', enabled: false },
        ],
        unmappedFields: 'ignore',
      },
      Object.keys(source),
      ctx,
    );
    expect(result.values.get('n')).toEqual({ value: 'Bolt', mode: 'oneway' });
    expect(result.values.has('p')).toBe(false);
    expect(result.errors).toEqual([
      { targetFieldId: 'p', reason: expect.stringContaining('no exchange rate USD→JPY') },
    ]);
    expect(result.unmapped).toEqual(['brand', 'weight', 'grade', 'dims', 'tags']);
  });
});
