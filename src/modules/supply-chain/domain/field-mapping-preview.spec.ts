import { nameSimilarity, previewMapping, typeCompatibility } from './field-mapping-preview.js';

describe('field-mapping preview', () => {
  it('scores names and types', () => {
    expect(nameSimilarity('Unit Price', 'unit_price')).toBe(1);
    expect(nameSimilarity('Price', 'Unit price')).toBeGreaterThanOrEqual(0.5);
    expect(nameSimilarity('Colour', 'Weight')).toBeLessThan(0.5);
    expect(typeCompatibility('number', 'number')).toBe(1);
    expect(typeCompatibility('number', 'currency')).toBe(0.9);
    expect(typeCompatibility('number', 'boolean')).toBe(0.5);
  });

  it('prefers generated fields, uses each target once and lists the rest', () => {
    const preview = previewMapping(
      'cat',
      [
        { id: 'sku', name: 'SKU', type: 'text' },
        { id: 'price', name: 'Price', type: 'number' },
        { id: 'colour', name: 'Colour', type: 'single_select', selectOptions: [{ id: 'red' }] },
      ],
      [
        { id: 'sku_2', name: 'Article', type: 'text' },
        { id: 'cost', name: 'price', type: 'currency' },
        { id: 'notes', name: 'Notes', type: 'long_text' },
        { id: 'color', name: 'Colour', type: 'single_select', selectOptions: [{ id: 'rouge' }] },
      ],
      [
        {
          id: 'sku_2',
          name: 'Article',
          type: 'text',
          sourceCatalogId: 'cat',
          sourceFieldId: 'sku',
          connectionId: 'c',
        },
      ],
    );
    expect(
      preview.suggestedMappings.map((m) => [
        m.sourceFieldId,
        m.targetFieldId,
        m.confidence,
        m.transformType,
        m.reason,
      ]),
    ).toEqual([
      ['sku', 'sku_2', 1, 'direct', 'generated_from_source'],
      ['colour', 'color', 1, 'option_mapping', 'same_name'],
      ['price', 'cost', 0.9, 'type_convert', 'same_name'],
    ]);
    expect(preview.unmappedSourceFields).toEqual([]);
    expect(preview.unmappedTargetFields).toEqual([{ id: 'notes', name: 'Notes', type: 'long_text' }]);
  });
});
