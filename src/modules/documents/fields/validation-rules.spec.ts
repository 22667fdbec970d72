import type { FieldDefinition, FieldType, ValidationRule } from './field.types.js';
import { handlerFor } from './field-type.registry.js';
import { checkRuleDefinition } from './validation-rules.js';

function check(
  type: FieldType,
  stored: Parameters<ReturnType<typeof handlerFor>['validateRules']>[0],
  validations: ValidationRule[],
) {
  const field: FieldDefinition = { id: 'f1', name: 'F', type, validations };
  return handlerFor(type).validateRules(stored, field);
}

describe('validation rules', () => {
  it('pattern applies to text', () => {
    const rules: ValidationRule[] = [
      {
        ruleType: 'pattern',
        config: { pattern: '^[A-Z]{3}-\\d+$' },
        message: { en: 'Use ABC-123', fr: 'Utilisez ABC-123' },
      },
    ];
    expect(check('text', 'ABC-1', rules)).toEqual([]);
    expect(check('text', 'abc-1', rules)).toEqual([
      {
        fieldId: 'f1',
        reason: 'value does not match pattern ^[A-Z]{3}-\\d+$',
        message: { en: 'Use ABC-123', fr: 'Utilisez ABC-123' },
      },
    ]);
    expect(
      check('text', 'abc-1', [{ ruleType: 'pattern', config: { pattern: '^abc', flags: 'i' } }]),
    ).toEqual([]);
  });

  it('min and max apply to numbers with config.value or config.min/max', () => {
    expect(
      check('number', 5, [
        { ruleType: 'min', config: { value: 1 } },
        { ruleType: 'max', config: { max: 10 } },
      ]),
    ).toEqual([]);
    expect(check('number', 0, [{ ruleType: 'min', config: { value: 1 } }])[0]?.reason).toBe(
      'value must be at least 1',
    );
    expect(check('currency', 11, [{ ruleType: 'max', config: { max: 10 } }])[0]?.reason).toBe(
      'value must be at most 10',
    );
    expect(check('rating', 2, [{ ruleType: 'min', config: { min: 3 } }])).toHaveLength(1);
  });

  it('min and max apply to dates and datetimes', () => {
    const rules: ValidationRule[] = [
      { ruleType: 'min', config: { value: '2024-01-01' } },
      { ruleType: 'max', config: { value: '2024-12-31' } },
    ];
    expect(check('date', '2024-06-01', rules)).toEqual([]);
    expect(check('date', '2023-12-31', rules)[0]?.reason).toBe('value must be at least 2024-01-01');
    expect(check('datetime', '2025-01-01T00:00:00.000Z', rules)[0]?.reason).toBe(
      'value must be at most 2024-12-31T00:00:00.000Z',
    );
  });

  it('minLength and maxLength apply to text and lists', () => {
    expect(check('text', 'ab', [{ ruleType: 'minLength', config: { value: 3 } }])[0]?.reason).toBe(
      'value must have at least 3 characters',
    );
    expect(check('text', 'abcd', [{ ruleType: 'maxLength', config: { length: 3 } }])[0]?.reason).toBe(
      'value must have at most 3 characters',
    );
    expect(check('text', '😀😀😀', [{ ruleType: 'maxLength', config: { value: 3 } }])).toEqual([]);
    expect(
      check('multi_select', ['a', 'b'], [{ ruleType: 'maxLength', config: { value: 1 } }])[0]?.reason,
    ).toBe('value must have at most 1 items');
  });

  it('enum restricts values, every element of a list', () => {
    expect(check('text', 'a', [{ ruleType: 'enum', config: { values: ['a', 'b'] } }])).toEqual([]);
    expect(check('text', 'c', [{ ruleType: 'enum', config: { values: ['a', 'b'] } }])[0]?.reason).toBe(
      'value is not one of the allowed values',
    );
    expect(check('number', 2, [{ ruleType: 'enum', config: { values: [1, 2] } }])).toEqual([]);
    expect(check('multi_select', ['a', 'x'], [{ ruleType: 'enum', config: { values: ['a'] } }])).toHaveLength(
      1,
    );
  });

  it('pattern rules run in linear time: a nested quantifier fails fast instead of backtracking', () => {
    const rules: ValidationRule[] = [{ ruleType: 'pattern', config: { pattern: '^(a+)+$' } }];
    const started = performance.now();
    expect(check('text', `${'a'.repeat(5000)}!`, rules)).toEqual([
      { fieldId: 'f1', reason: 'value does not match pattern ^(a+)+$' },
    ]);
    expect(check('long_text', 'a'.repeat(5000), rules)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('pattern rules refuse text longer than the work bound instead of checking it', () => {
    const rules: ValidationRule[] = [{ ruleType: 'pattern', config: { pattern: '^[a-z]{1000}$' } }];
    expect(check('text', 'a'.repeat(1000), rules)).toEqual([]);
    expect(check('long_text', 'a'.repeat(100_000), rules)[0]?.reason).toMatch(
      /^value is too long to be checked against pattern \^\[a-z\]\{1000\}\$ \(at most \d+ characters\)$/,
    );
  });

  it('a stored pattern RE2 cannot evaluate refuses values rather than backtracking', () => {
    const failures = check('text', 'aa', [{ ruleType: 'pattern', config: { pattern: '(a)\\1' } }]);
    expect(failures).toHaveLength(1);
    expect(failures[0]?.reason).toMatch(
      /^value cannot be checked against pattern \(a\)\\1: pattern uses syntax/,
    );
  });

  it('custom rules are accepted but not evaluated', () => {
    expect(check('text', 'anything', [{ ruleType: 'custom', config: { script: 'return false' } }])).toEqual(
      [],
    );
  });

  it('reports every failing rule', () => {
    const failures = check('text', 'x', [
      { ruleType: 'minLength', config: { value: 2 } },
      { ruleType: 'pattern', config: { pattern: '^\\d+$' } },
    ]);
    expect(failures).toHaveLength(2);
  });

  it('checks rule definitions', () => {
    expect(checkRuleDefinition({ ruleType: 'pattern', config: { pattern: '(' } }, 'text', 'v')).toEqual([
      { field: 'v.config.pattern', reason: 'pattern is not a valid regular expression' },
    ]);
    for (const pattern of ['(a)\\1', '(?<=a)b', 'a(?!b)']) {
      expect(checkRuleDefinition({ ruleType: 'pattern', config: { pattern } }, 'text', 'v')).toEqual([
        {
          field: 'v.config.pattern',
          reason: expect.stringContaining('no backreferences, lookahead or lookbehind'),
        },
      ]);
    }
    expect(
      checkRuleDefinition({ ruleType: 'pattern', config: { pattern: '^(a+)+$', flags: 'iu' } }, 'text', 'v'),
    ).toEqual([]);
    expect(
      checkRuleDefinition({ ruleType: 'pattern', config: { pattern: 'a', flags: 'g' } }, 'text', 'v')[0]
        ?.field,
    ).toBe('v.config.flags');
    expect(checkRuleDefinition({ ruleType: 'nope' }, 'text', 'v')[0]?.field).toBe('v.ruleType');
    expect(checkRuleDefinition({ ruleType: 'min', config: { value: 'x' } }, 'number', 'v')[0]?.field).toBe(
      'v.config',
    );
    expect(checkRuleDefinition({ ruleType: 'enum', config: {} }, 'text', 'v')[0]?.field).toBe(
      'v.config.values',
    );
    expect(checkRuleDefinition({ ruleType: 'maxLength', config: { value: -1 } }, 'text', 'v')).toHaveLength(
      1,
    );
    expect(checkRuleDefinition({ ruleType: 'custom', message: { en: 5 } }, 'text', 'v')[0]?.field).toBe(
      'v.message',
    );
    expect(checkRuleDefinition({ ruleType: 'min', config: { value: '2024-01-01' } }, 'date', 'v')).toEqual(
      [],
    );
  });

  it('refuses a rule that cannot judge the type, and a bound rule without its bound', () => {
    expect(checkRuleDefinition({ ruleType: 'pattern', config: { pattern: '^1' } }, 'number', 'v', 'number')).toEqual([
      { field: 'v.ruleType', reason: 'a pattern rule does not apply to a number field' },
    ]);
    expect(checkRuleDefinition({ ruleType: 'min', config: { value: 5 } }, 'text', 'v')[0]?.field).toBe('v.ruleType');
    expect(checkRuleDefinition({ ruleType: 'maxLength', config: { value: 1 } }, 'scalar', 'v')[0]?.field).toBe('v.ruleType');
    expect(checkRuleDefinition({ ruleType: 'enum', config: { values: [1] } }, 'none', 'v')[0]?.field).toBe('v.ruleType');
    expect(checkRuleDefinition({ ruleType: 'custom' }, 'none', 'v')).toEqual([]);
    expect(checkRuleDefinition({ ruleType: 'maxLength', config: { value: 2 } }, 'list', 'v')).toEqual([]);
    expect(checkRuleDefinition({ ruleType: 'pattern', config: { pattern: '^2024' } }, 'date', 'v')).toEqual([]);
    expect(checkRuleDefinition({ ruleType: 'min', config: {} }, 'number', 'v')[0]?.field).toBe('v.config.value');
    expect(checkRuleDefinition({ ruleType: 'minLength' }, 'text', 'v')[0]?.field).toBe('v.config.value');
  });
});
