import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import type { FieldDefinition, FieldType } from './field.types.js';
import { FIELD_TYPES } from './field.types.js';
import { FIELD_TYPE_HANDLERS, handlerFor } from './field-type.registry.js';

function field(type: FieldType, extra: Partial<FieldDefinition> = {}): FieldDefinition {
  return { id: 'f1', name: 'F', type, ...extra };
}

function parse(type: FieldType, input: unknown, extra: Partial<FieldDefinition> = {}): unknown {
  return handlerFor(type).parse(input, field(type, extra));
}

function refusal(type: FieldType, input: unknown, extra: Partial<FieldDefinition> = {}): ErrorDetail {
  try {
    parse(type, input, extra);
  } catch (error) {
    expect(error).toBeInstanceOf(AppException);
    const exception = error as AppException;
    expect(exception.code).toBe('VALIDATION_ERROR');
    const detail = exception.options.details?.[0];
    expect(detail?.fieldId).toBe('f1');
    return detail as ErrorDetail;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be refused for ${type}`);
}

const options = {
  selectOptions: [
    { id: 'o1', label: 'One', color: 'red' },
    { id: 'o2', name: { en: 'Two', fr: 'Deux' } },
  ],
};

describe('field-type handlers', () => {
  it('has a handler for every field type', () => {
    for (const type of FIELD_TYPES) {
      expect(handlerFor(type)).toBe(FIELD_TYPE_HANDLERS[type]);
    }
  });

  it.each(FIELD_TYPES)('%s treats null, undefined and {} as empty', (type) => {
    for (const input of [null, undefined, {}]) {
      expect(parse(type, input, options)).toBeNull();
    }
  });

  it('refuses U+0000 anywhere in a value, which PostgreSQL cannot store', () => {
    expect(refusal('text', 'a\u0000b').reason).toContain('NUL character');
    expect(refusal('text', { text: '\u0000' }).reason).toContain('NUL character');
    expect(refusal('user', { user: { id: 'u\u0000' } }).reason).toContain('NUL character');
    expect(refusal('relation', [{ rowId: 'r1' }, 'r\u0000']).reason).toContain('NUL character');
    expect(refusal('attachment', [{ name: 'a\u0000.pdf', url: 'https://f/a.pdf' }]).reason).toContain(
      'NUL character',
    );
  });

  describe('text, long_text', () => {
    it.each(['text', 'long_text'] as const)('%s accepts {text} and plain strings', (type) => {
      expect(parse(type, { text: 'a' })).toBe('a');
      expect(parse(type, 'plain')).toBe('plain');
      expect(parse(type, { text: '' })).toBeNull();
      expect(handlerFor(type).toValue('a', field(type))).toEqual({ text: 'a' });
    });

    it('refuses other types', () => {
      expect(refusal('text', 5).reason).toContain('expected text');
      expect(refusal('text', { number: 5 }).reason).toContain('expected text');
      expect(refusal('text', ['a']).reason).toContain('expected text');
    });
  });

  describe('number, currency, percent', () => {
    it.each(['number', 'currency', 'percent'] as const)('%s stores a JSON number', (type) => {
      expect(parse(type, { number: 3 })).toBe(3);
      expect(parse(type, 1.5)).toBe(1.5);
      expect(parse(type, ' 12.5 ')).toBe(12.5);
      expect(parse(type, '-1e3')).toBe(-1000);
      expect(handlerFor(type).toValue(3, field(type))).toEqual({ number: 3 });
    });

    it('refuses NaN, Infinity, non-numeric text and wrong types', () => {
      for (const input of [
        Number.NaN,
        Number.POSITIVE_INFINITY,
        'NaN',
        'Infinity',
        'abc',
        '12abc',
        true,
        [1],
        { text: '1' },
      ]) {
        expect(refusal('number', input).reason).toContain('expected a finite number');
      }
    });
  });

  describe('boolean', () => {
    it('accepts booleans and "true"/"false"', () => {
      expect(parse('boolean', { boolean: true })).toBe(true);
      expect(parse('boolean', false)).toBe(false);
      expect(parse('boolean', 'TRUE')).toBe(true);
      expect(parse('boolean', 'false')).toBe(false);
      expect(handlerFor('boolean').toValue(false, field('boolean'))).toEqual({ boolean: false });
    });

    it('refuses other values', () => {
      for (const input of [1, 0, 'yes', ['true'], { text: 'true' }]) {
        expect(refusal('boolean', input).reason).toContain('expected a boolean');
      }
    });
  });

  describe('date', () => {
    it('normalizes to YYYY-MM-DD', () => {
      expect(parse('date', { date: '2024-01-02' })).toBe('2024-01-02');
      expect(parse('date', '2024-02-29')).toBe('2024-02-29');
      expect(parse('date', '2024-01-02T23:30:00-05:00')).toBe('2024-01-02');
      expect(handlerFor('date').toValue('2024-01-02', field('date'))).toEqual({ date: '2024-01-02' });
    });

    it('refuses dates that are not ISO 8601 or do not exist', () => {
      for (const input of ['2023-02-29', '2024-13-01', '02/01/2024', 'tomorrow', '2024-1-2', 20240102]) {
        expect(refusal('date', input).reason).toContain('ISO 8601');
      }
    });
  });

  describe('datetime', () => {
    it('normalizes to ISO UTC with milliseconds', () => {
      expect(parse('datetime', { date: '2024-01-02T10:00:00+02:00' })).toBe('2024-01-02T08:00:00.000Z');
      expect(parse('datetime', { datetime: '2024-01-02T10:00:00.123456Z' })).toBe('2024-01-02T10:00:00.123Z');
      expect(parse('datetime', '2024-01-02')).toBe('2024-01-02T00:00:00.000Z');
      expect(parse('datetime', '2024-01-02 10:00')).toBe('2024-01-02T10:00:00.000Z');
      expect(parse('datetime', '2024-12-31T23:30:00-01:00')).toBe('2025-01-01T00:30:00.000Z');
      expect(handlerFor('datetime').toValue('2024-01-02T08:00:00.000Z', field('datetime'))).toEqual({
        date: '2024-01-02T08:00:00.000Z',
      });
    });

    it('refuses invalid date-times', () => {
      for (const input of [
        '2024-01-02T25:00:00Z',
        '2024-01-02T10:61Z',
        'yesterday',
        1704189600000,
        '2024-01-02T10:00:00+25:00',
      ]) {
        expect(refusal('datetime', input).reason).toContain('ISO 8601');
      }
    });
  });

  describe('duration', () => {
    it('stores integer milliseconds', () => {
      expect(parse('duration', { duration: 90000 })).toBe(90000);
      expect(parse('duration', '1500')).toBe(1500);
      expect(parse('duration', { number: 0 })).toBe(0);
      expect(handlerFor('duration').toValue(90000, field('duration'))).toEqual({ duration: 90000 });
    });

    it('refuses fractions and non-numbers', () => {
      expect(refusal('duration', 1.5).reason).toContain('integer');
      expect(refusal('duration', 'soon').reason).toContain('expected a finite number');
    });
  });

  describe('rating', () => {
    it('accepts integers 1 to 5', () => {
      expect(parse('rating', { rating: 4 })).toBe(4);
      expect(parse('rating', 1)).toBe(1);
      expect(parse('rating', { number: 5 })).toBe(5);
      expect(handlerFor('rating').toValue(4, field('rating'))).toEqual({ rating: 4 });
    });

    it.each([0, 6, 3.5, -1])('refuses %s', (input) => {
      expect(refusal('rating', input).reason).toContain('rating must be an integer from 1 to 5');
    });
  });

  describe('single_select', () => {
    it('accepts every option form and stores the id', () => {
      for (const input of [
        { selectOption: { id: 'o1' } },
        { selectOption: 'o1' },
        { select: 'o1' },
        'o1',
        { id: 'o1' },
      ]) {
        expect(parse('single_select', input, options)).toBe('o1');
      }
    });

    it('answers the option data', () => {
      const handler = handlerFor('single_select');
      expect(handler.toValue('o1', field('single_select', options))).toEqual({
        selectOption: { id: 'o1', label: 'One', color: 'red' },
      });
      expect(handler.toValue('gone', field('single_select', options))).toEqual({
        selectOption: { id: 'gone' },
      });
    });

    it('refuses unknown ids and labels', () => {
      expect(refusal('single_select', { selectOption: { id: 'nope' } }, options).reason).toBe(
        'unknown select option "nope"',
      );
      expect(refusal('single_select', 'One', options).reason).toBe('unknown select option "One"');
      expect(refusal('single_select', 5, options).reason).toContain('expected a select option');
    });
  });

  describe('multi_select', () => {
    it('stores deduplicated ids', () => {
      expect(parse('multi_select', { multiSelect: [{ id: 'o2' }, 'o1', 'o2'] }, options)).toEqual([
        'o2',
        'o1',
      ]);
      expect(parse('multi_select', ['o1'], options)).toEqual(['o1']);
      expect(parse('multi_select', 'o1', options)).toEqual(['o1']);
      expect(parse('multi_select', [], options)).toBeNull();
      expect(handlerFor('multi_select').toValue(['o2'], field('multi_select', options))).toEqual({
        multiSelect: [{ id: 'o2', name: { en: 'Two', fr: 'Deux' } }],
      });
    });

    it('refuses unknown ids and non-arrays', () => {
      expect(refusal('multi_select', ['o1', 'o9'], options).reason).toBe('unknown select option "o9"');
      expect(refusal('multi_select', 7, options).reason).toContain('expected an array');
      expect(refusal('multi_select', [7], options).reason).toContain('expected select option ids');
    });
  });

  describe('user, collaborator', () => {
    it('stores user ids', () => {
      expect(parse('user', { user: { id: 'u1' } })).toBe('u1');
      expect(parse('user', { user: 'u1' })).toBe('u1');
      expect(parse('user', 'u1')).toBe('u1');
      expect(handlerFor('user').toValue('u1', field('user'))).toEqual({ user: { id: 'u1' } });
      expect(parse('collaborator', { collaborators: [{ id: 'u1' }, 'u2', 'u1'] })).toEqual(['u1', 'u2']);
      expect(parse('collaborator', { collaborator: { id: 'u1' } })).toEqual(['u1']);
      expect(parse('collaborator', 'u3')).toEqual(['u3']);
      expect(handlerFor('collaborator').toValue(['u1'], field('collaborator'))).toEqual({
        collaborators: [{ id: 'u1' }],
      });
    });

    it('refuses non-references', () => {
      expect(refusal('user', 5).reason).toContain('user');
      expect(refusal('user', { user: { name: 'x' } }).reason).toContain('user');
      expect(refusal('collaborator', [{ id: 1 }]).reason).toContain('user');
    });
  });

  describe('attachment', () => {
    it('keeps the known keys', () => {
      const stored = parse('attachment', {
        attachments: [
          {
            id: 'a1',
            name: 'a.pdf',
            url: 'https://x.test/a.pdf',
            mimeType: 'application/pdf',
            size: 10,
            extra: 1,
          },
        ],
      });
      expect(stored).toEqual([
        { id: 'a1', name: 'a.pdf', url: 'https://x.test/a.pdf', mimeType: 'application/pdf', size: 10 },
      ]);
      expect(parse('attachment', { name: 'b', url: '/files/b' })).toEqual([{ name: 'b', url: '/files/b' }]);
      expect(handlerFor('attachment').toValue([{ name: 'b', url: '/b' }], field('attachment'))).toEqual({
        attachments: [{ name: 'b', url: '/b' }],
      });
    });

    it('refuses missing names, bad urls and sizes', () => {
      expect(refusal('attachment', [{ url: 'https://x' }]).reason).toContain('name is required');
      expect(refusal('attachment', [{ name: 'a' }]).reason).toContain('url is required');
      expect(refusal('attachment', [{ name: 'a', url: 'javascript:alert(1)' }]).reason).toContain('http(s)');
      expect(refusal('attachment', [{ name: 'a', url: '/a', size: -1 }]).reason).toContain('size');
      expect(refusal('attachment', 'a.pdf').reason).toContain('expected an array');
    });
  });

  describe('relation', () => {
    it('stores deduplicated references', () => {
      expect(
        parse('relation', {
          relation: [{ docType: 'order', docId: 'd1', rowId: 'r1' }, { rowId: 'r2' }, 'r2'],
        }),
      ).toEqual([{ docType: 'order', docId: 'd1', rowId: 'r1' }, { rowId: 'r2' }]);
      expect(parse('relation', 'r9')).toEqual([{ rowId: 'r9' }]);
      expect(handlerFor('relation').toValue([{ rowId: 'r2' }], field('relation'))).toEqual({
        relation: [{ rowId: 'r2' }],
      });
    });

    it('refuses references without rowId', () => {
      expect(refusal('relation', [{ docId: 'd1' }]).reason).toContain('rowId');
      expect(refusal('relation', [{ rowId: 'r1', docType: 5 }]).reason).toContain('docType');
    });
  });

  describe('computed types', () => {
    const computed = [
      'lookup',
      'rollup',
      'formula',
      'auto_number',
      'created_time',
      'updated_time',
      'created_by',
      'updated_by',
    ] as const;

    it.each(computed)('%s refuses writes', (type) => {
      expect(handlerFor(type).computed).toBe(true);
      expect(refusal(type, { number: 1 }).reason).toBe('field is computed and read-only');
      expect(refusal(type, 'x').reason).toBe('field is computed and read-only');
    });

    it('answers values by runtime type', () => {
      const formula = handlerFor('formula');
      expect(formula.toValue(3, field('formula'))).toEqual({ number: 3 });
      expect(formula.toValue('x', field('formula'))).toEqual({ text: 'x' });
      expect(formula.toValue(true, field('formula'))).toEqual({ boolean: true });
      expect(handlerFor('lookup').toValue(['a', 1], field('lookup'))).toEqual({ list: ['a', 1] });
      expect(handlerFor('rollup').toValue(7.5, field('rollup'))).toEqual({ number: 7.5 });
      expect(handlerFor('auto_number').toValue(12, field('auto_number'))).toEqual({ number: 12 });
      expect(
        handlerFor('created_time').toValue('2024-01-02 03:04:05.123456+00', field('created_time')),
      ).toEqual({
        date: '2024-01-02T03:04:05.123Z',
      });
      expect(handlerFor('updated_by').toValue('u1', field('updated_by'))).toEqual({ user: { id: 'u1' } });
    });

    it('reads the created/updated fields from system columns', () => {
      expect(handlerFor('created_time').systemColumn).toBe('r.created_at');
      expect(handlerFor('updated_time').systemColumn).toBe('r.updated_at');
      expect(handlerFor('created_by').systemColumn).toBe('r.created_by');
      expect(handlerFor('updated_by').systemColumn).toBe('r.updated_by');
      expect(handlerFor('auto_number').systemColumn).toBeUndefined();
    });
  });
});
