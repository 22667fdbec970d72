import { AppException } from '../../../common/errors/app.exception.js';
import type { FieldDefinition } from '../../documents/fields/field.types.js';
import { filterFieldIds, filterOperandDetails } from './sync-config-fields.validation.js';
import { ConfigChecker, isCron, parseConfig } from './sync-config.validation.js';

function problems(parse: (checker: ConfigChecker) => unknown): string[] {
  try {
    parseConfig(parse);
    return [];
  } catch (error) {
    if (!(error instanceof AppException)) {
      throw error;
    }
    return (error.options.details ?? []).map((detail) => String(detail.field));
  }
}

describe('supply-chain configuration validators', () => {
  it('fills defaults', () => {
    const checker = new ConfigChecker();
    expect(checker.fieldMapping(undefined, 'm')).toEqual({ rules: [], unmappedFields: 'ignore' });
    expect(checker.receiverFilter(undefined, 'r')).toEqual({ acceptMode: 'auto' });
    expect(checker.conflictResolution(undefined, 'c')).toEqual({
      defaultStrategy: 'keep_upstream',
      fieldStrategies: {},
    });
    expect(checker.accessControl(undefined, 'a')).toEqual({ mode: 'approval', allowedOrganizations: [] });
    expect(checker.shareScope(undefined, 's')).toEqual({ type: 'all' });
    expect(checker.propagationEvents({ batchMerge: true }, 'p')).toEqual({
      eventTypes: ['row_created', 'row_updated', 'row_deleted', 'field_value_changed'],
      batchMerge: true,
      batchWindowSeconds: 300,
    });
    expect(checker.errors).toEqual([]);
  });

  it('admits exists alone or with true/false, nothing else', () => {
    const group = parseConfig((c) =>
      c.filterGroup(
        { operator: 'AND', conditions: [{ fieldId: 'a', operator: 'exists' }, { fieldId: 'b', operator: 'exists', value: false }] },
        'g',
      ),
    );
    expect(group?.conditions).toEqual([
      { fieldId: 'a', operator: 'exists' },
      { fieldId: 'b', operator: 'exists', value: false },
    ]);
    expect(problems((c) => c.filterGroup({ conditions: [{ fieldId: 'a', operator: 'exists', value: 3 }] }, 'g'))).toEqual([
      'g.conditions[0].value',
    ]);
  });

  it('reads a Value with one typed key as its plain operand, and refuses operands that could never match', () => {
    const group = parseConfig((c) =>
      c.filterGroup(
        {
          conditions: [
            { fieldId: 'sku', operator: 'eq', value: { text: 'S1' } },
            { fieldId: 'qty', operator: 'gte', values: [{ number: 3 }] },
            { fieldId: 'state', operator: 'in', values: [{ selectOption: { id: 'open' } }, 'held'] },
          ],
        },
        'g',
      ),
    );
    expect(group?.conditions).toEqual([
      { fieldId: 'sku', operator: 'eq', value: 'S1' },
      { fieldId: 'qty', operator: 'gte', value: 3 },
      { fieldId: 'state', operator: 'in', value: ['open', 'held'] },
    ]);
    expect(problems((c) => c.filterGroup({ conditions: [{ fieldId: 'sku', operator: 'eq', value: { text: 'S1', number: 3 } }] }, 'g'))).toEqual([
      'g.conditions[0].value',
    ]);
    expect(problems((c) => c.filterGroup({ conditions: [{ fieldId: 'sku', operator: 'in', values: [{ text: ['a'] }] }] }, 'g'))).toEqual([
      'g.conditions[0].value',
    ]);
    // One key that is no typed Value key is not read as its content ({min: 5} is not 5).
    expect(problems((c) => c.filterGroup({ conditions: [{ fieldId: 'qty', operator: 'eq', value: { min: 5 } }] }, 'g'))).toEqual([
      'g.conditions[0].value',
    ]);
    // The rendered select option names its option by id.
    expect(
      parseConfig((c) => c.filterGroup({ conditions: [{ fieldId: 'state', operator: 'eq', value: { selectOption: { id: 'open', label: 'Open' } } }] }, 'g'))
        ?.conditions,
    ).toEqual([{ fieldId: 'state', operator: 'eq', value: 'open' }]);
  });

  it('refuses operands that cannot fit the field they test', () => {
    const fields: FieldDefinition[] = [
      { id: 'state', name: 'State', type: 'single_select', selectOptions: [{ id: 'open', label: 'Open' }] },
      { id: 'tags', name: 'Tags', type: 'multi_select', selectOptions: [{ id: 'hot', label: 'Hot' }] },
      { id: 'qty', name: 'Qty', type: 'number' },
      { id: 'due', name: 'Due', type: 'date' },
      { id: 'ok', name: 'OK', type: 'boolean' },
      { id: 'sku', name: 'SKU', type: 'text' },
    ];
    const check = (conditions: unknown[]): string[] =>
      filterOperandDetails(parseConfig((c) => c.filterGroup({ conditions }, 'g')), 'g', fields).map((detail) =>
        String(detail.field),
      );
    expect(
      check([
        { fieldId: 'state', operator: 'eq', value: 'open' },
        { fieldId: 'state', operator: 'eq', value: ' open ' },
        { fieldId: 'state', operator: 'ne', value: 'OPEN' },
        { fieldId: 'state', operator: 'startsWith', value: 'Op' },
        { fieldId: 'tags', operator: 'in', values: ['hot', 'Hot'] },
        { fieldId: 'qty', operator: 'gt', value: '4' },
        { fieldId: 'qty', operator: 'range', rangeStart: 1 },
        { fieldId: 'due', operator: 'lt', value: '2026-01-01T10:00:00Z' },
        { fieldId: 'ok', operator: 'eq', value: false },
        { fieldId: 'sku', operator: 'gt', value: 'abc' },
        { fieldId: 'ghost', operator: 'gt', value: 'abc' },
        { fieldId: 'qty', operator: 'eq', value: null },
      ]),
    ).toEqual([]);
    expect(
      check([
        { fieldId: 'state', operator: 'eq', value: 'closed' },
        { fieldId: 'tags', operator: 'contains', value: 'cold' },
        { fieldId: 'qty', operator: 'gt', value: 'abc' },
        { fieldId: 'qty', operator: 'startsWith', value: '1' },
        { fieldId: 'due', operator: 'gte', value: 20260101 },
        { fieldId: 'ok', operator: 'in', values: ['true'] },
        { fieldId: 'qty', operator: 'range', rangeStart: 'low' },
      ]),
    ).toEqual([
      'g.conditions[0].value',
      'g.conditions[1].value',
      'g.conditions[2].value',
      'g.conditions[3].value',
      'g.conditions[4].value',
      'g.conditions[5].value',
      'g.conditions[6]',
    ]);
  });

  it('normalizes filter groups and both unit-conversion forms', () => {
    const group = parseConfig((c) =>
      c.filterGroup(
        {
          logic: 'or',
          conditions: [{ field: 'a', operator: 'in', values: [1, 2] }],
          groups: [{ operator: 'AND', conditions: [{ fieldId: 'b', operator: 'is_empty' }] }],
        },
        'g',
      ),
    );
    expect(group).toEqual({
      operator: 'OR',
      conditions: [{ fieldId: 'a', operator: 'in', value: [1, 2] }],
      groups: [{ operator: 'AND', conditions: [{ fieldId: 'b', operator: 'is_empty' }], groups: [] }],
    });
    expect(filterFieldIds(group)).toEqual(['a', 'b']);
    const mapping = parseConfig((c) =>
      c.fieldMapping(
        {
          rules: [
            {
              sourceFieldId: 'w',
              targetFieldId: 'w',
              transformType: 'unit_convert',
              unitConversion: { fromUnit: 'kg', toUnit: 'lb', rate: 2.2 },
            },
            {
              sourceFieldId: 'p',
              targetFieldId: 'p',
              transformType: 'unit_convert',
              unitConversion: {
                sourceUnit: 'USD',
                targetUnit: 'EUR',
                conversionType: 'currency',
                fixedRate: 0.9,
              },
            },
          ],
        },
        'm',
      ),
    );
    expect(mapping?.rules.map((rule) => rule.unitConversion)).toEqual([
      { sourceUnit: 'kg', targetUnit: 'lb', rate: 2.2 },
      { sourceUnit: 'USD', targetUnit: 'EUR', conversionType: 'currency', fixedRate: 0.9, rate: 0.9 },
    ]);
  });

  it('reports every wrong enum with its path', () => {
    expect(
      problems((c) =>
        c.fieldMapping(
          {
            unmappedFields: 'keep',
            rules: [
              { sourceFieldId: 's', targetFieldId: 't', transformType: 'magic', propagationMode: 'both' },
              { sourceFieldIds: ['a'], targetFieldId: 't', transformType: 'merge' },
              { sourceFieldId: 's', targetFieldIds: ['x', 'y'], transformType: 'split' },
            ],
          },
          'm',
        ),
      ),
    ).toEqual([
      'm.unmappedFields',
      'm.rules[0].transformType',
      'm.rules[0].propagationMode',
      'm.rules[1].sourceFieldIds',
    ]);
    expect(
      problems((c) =>
        c.receiverFilter(
          { acceptMode: 'x', manualAcceptRules: { defaultAction: 'y', autoAcceptIf: { operator: 'NAND' } } },
          'r',
        ),
      ),
    ).toEqual([
      'r.acceptMode',
      'r.manualAcceptRules.defaultAction',
      'r.manualAcceptRules.autoAcceptIf.operator',
    ]);
    expect(
      problems((c) =>
        c.filterGroup(
          {
            conditions: [
              { fieldId: 'a', operator: 'range', value: [1] },
              { fieldId: 'b', operator: 'gt', value: true },
            ],
          },
          'g',
        ),
      ),
    ).toEqual(['g.conditions[0].value', 'g.conditions[1].value']);
  });

  it('takes range bounds as rangeStart and rangeEnd (spec 2.12), either one open, or as [min, max]', () => {
    const conditions = [
      { fieldId: 'a', operator: 'range', rangeStart: 0, rangeEnd: 1000 },
      { fieldId: 'b', operator: 'range', rangeStart: '2026-01-01' },
      { fieldId: 'c', operator: 'range', value: [1, 2] },
    ];
    expect(parseConfig((c) => c.filterGroup({ conditions }, 'g'))).toMatchObject({
      conditions: [
        { fieldId: 'a', operator: 'range', value: [0, 1000] },
        { fieldId: 'b', operator: 'range', value: ['2026-01-01', null] },
        { fieldId: 'c', operator: 'range', value: [1, 2] },
      ],
    });
    expect(problems((c) => c.filterGroup({ conditions: [{ fieldId: 'a', operator: 'range', rangeStart: true }] }, 'g'))).toEqual([
      'g.conditions[0].rangeStart',
    ]);
  });

  it('checks connector schedules with cron-parser', () => {
    expect(isCron('*/5 * * * *', 'UTC')).toBe(true);
    expect(isCron('0 0 8 * * 1-5', 'Europe/Paris')).toBe(true);
    expect(isCron('61 * * * *', 'UTC')).toBe(false);
    expect(isCron('every day', 'UTC')).toBe(false);
    expect(problems((c) => c.connectorConfig({ syncMode: 'scheduled' }, 'k'))).toEqual(['k.scheduleConfig']);
    expect(
      problems((c) =>
        c.connectorConfig(
          { syncMode: 'scheduled', scheduleConfig: { cron: '* * * * *', timezone: 'Nowhere/City' } },
          'k',
        ),
      ),
    ).toEqual(['k.scheduleConfig.timezone']);
    expect(parseConfig((c) => c.connectorConfig({}, 'k'))).toEqual({
      fieldMapping: { rules: [], unmappedFields: 'ignore' },
      syncMode: 'realtime',
      conflictResolution: 'source_wins',
      bidirectional: false,
    });
  });
});
