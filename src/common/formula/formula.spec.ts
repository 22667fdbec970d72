import {
  FormulaError,
  evaluateFormula,
  formulaFieldRefs,
  formulaRowAggregates,
  inferFormulaType,
  isVolatileFormula,
  MAX_FORMULA_DEPTH,
  parseFormula,
  type FormulaValueType,
} from './index.js';

const FIELD_TYPES: Record<string, FormulaValueType> = {
  n: 'number',
  m: 'number',
  e: 'number',
  t: 'text',
  b: 'boolean',
  d: 'date',
  d2: 'date',
  l: 'list',
};
const ROW: Record<string, unknown> = {
  n: 10,
  m: 4,
  e: null,
  t: ' Hello World ',
  b: true,
  d: new Date('2024-01-31T00:00:00.000Z'),
  d2: '2024-03-15',
  l: [1, 2, 3],
};
const NOW = new Date('2026-11-22T13:45:00.000Z');

function run(source: string, row: Record<string, unknown> = ROW): unknown {
  return evaluateFormula(parseFormula(source), (id) => row[id], { now: NOW });
}

function typeOf(source: string): string {
  return inferFormulaType(parseFormula(source), (id) => FIELD_TYPES[id]);
}

function error(source: string, check = true): FormulaError {
  try {
    const node = parseFormula(source);
    if (check) {
      inferFormulaType(node, (id) => FIELD_TYPES[id]);
    }
  } catch (caught) {
    expect(caught).toBeInstanceOf(FormulaError);
    return caught as FormulaError;
  }
  throw new Error(`expected ${source} to fail`);
}

describe('formula parser', () => {
  it('parses literals, field references and precedence', () => {
    expect(run('1 + 2 * 3')).toBe(7);
    expect(run('(1 + 2) * 3')).toBe(9);
    expect(run('-2 * 3 + 10 % 4')).toBe(-4);
    expect(run('10 - 2 - 3')).toBe(5);
    expect(run('8 / 2 / 2')).toBe(2);
    expect(run('1.5e2 + .5')).toBe(150.5);
    expect(run('"a" & \'b\' & "c\\"d"')).toBe('abc"d');
    expect(run('1 + 2 & "x"')).toBe('3x');
    expect(run('1 + 1 = 2')).toBe(true);
    expect(run('true')).toBe(true);
    expect(run('FALSE')).toBe(false);
    expect(run('{ n } * 2')).toBe(20);
    expect(run('if(TRUE, 1, 2)')).toBe(1);
  });

  it('reads a plain name as a field id, as spec 2.5 writes formulas', () => {
    expect(run('n * 2')).toBe(20);
    expect(run('FLOOR(n / m)')).toBe(2);
    expect(run('n * m = {n} * {m}')).toBe(true);
    expect(typeOf('t & n')).toBe('text');
    expect(formulaFieldRefs(parseFormula('n + IF(b, {n}, m)'))).toEqual(['n', 'b', 'm']);
    // Still booleans, whatever the case; a field with such an id is named in braces.
    expect(run('true')).toBe(true);
    expect(formulaFieldRefs(parseFormula('{true} + 1'))).toEqual(['true']);
    // An unknown name is an unknown field, at its position.
    expect(error('1 + amount')).toMatchObject({ position: 4, message: 'unknown field {amount}' });
  });

  it('reports syntax errors with positions', () => {
    expect(error('1 +', false)).toMatchObject({ position: 3, message: 'unexpected end of formula' });
    expect(error('(1 + 2', false).position).toBe(6);
    expect(error('"abc', false)).toMatchObject({ position: 0, message: 'unterminated string' });
    expect(error('{abc', false).position).toBe(0);
    expect(error('{ }', false).message).toBe('empty field reference');
    expect(error('1 # 2', false).position).toBe(2);
    expect(error('1 2', false)).toMatchObject({ position: 2 });
    expect(error('', false).message).toBe('empty formula');
    expect(error('SUM(1,)', false).position).toBe(6);
    expect(error('SUM(1 2)', false).message).toMatch(/expected "\)"/);
  });

  it('refuses formulas nested deeper than MAX_FORMULA_DEPTH, whatever builds the depth', () => {
    const deep = `formula is nested too deeply (at most ${MAX_FORMULA_DEPTH} levels)`;
    for (const source of [
      '-'.repeat(4000) + '1',
      '1+'.repeat(20000) + '1',
      '1+'.repeat(3000) + 'YEAR(NOW())',
      '('.repeat(5000) + '1' + ')'.repeat(5000),
      'ABS('.repeat(5000) + '1' + ')'.repeat(5000),
      '2*'.repeat(MAX_FORMULA_DEPTH) + '2',
    ]) {
      expect(error(source, false).message).toBe(deep);
    }
    // A chain of n terms is n - 1 levels: 200 terms parse, check and evaluate.
    expect(run('1+'.repeat(199) + '1')).toBe(200);
    expect(typeOf('n+'.repeat(199) + 'n')).toBe('number');
    expect(run('-'.repeat(MAX_FORMULA_DEPTH - 1) + '1')).toBe(-1);
    expect(run('('.repeat(MAX_FORMULA_DEPTH - 1) + '1' + ')'.repeat(MAX_FORMULA_DEPTH - 1))).toBe(1);
  });

  it('lists field references and volatility', () => {
    const node = parseFormula('{a} + IF({b} > 0, {a}, LEN({c}))');
    expect(formulaFieldRefs(node)).toEqual(['a', 'b', 'c']);
    expect(isVolatileFormula(node)).toBe(false);
    expect(isVolatileFormula(parseFormula('DATEDIFF({d}, TODAY())'))).toBe(true);
    expect(isVolatileFormula(parseFormula('now()'))).toBe(true);
  });
});

describe('formula operators', () => {
  it('does arithmetic with blanks as zero, blank when both are blank', () => {
    expect(run('{n} + {e}')).toBe(10);
    expect(run('{e} - {n}')).toBe(-10);
    expect(run('{e} * 3')).toBe(0);
    expect(run('{e} + {e}')).toBeNull();
    expect(run('-{e}')).toBeNull();
    expect(run('{n} % 4')).toBe(2);
    expect(run('{n} / {m}')).toBe(2.5);
  });

  it('gives an empty cell for runtime errors', () => {
    expect(run('{n} / 0')).toBeNull();
    expect(run('{n} / {e}')).toBeNull();
    expect(run('({n} / 0) + 1')).toBeNull();
    expect(run('{n} % 0')).toBeNull();
    expect(run('IF({e} = 0, 0, {n} / {e})')).toBeNull();
    expect(run('IF(ISBLANK({e}), 0, {n} / {e})')).toBe(0);
    expect(run('{x} + 1', { x: 'abc' })).toBeNull();
  });

  it('compares numbers, text, dates, booleans and blanks', () => {
    expect(run('{n} > {m}')).toBe(true);
    expect(run('{n} >= 10')).toBe(true);
    expect(run('{n} < 10')).toBe(false);
    expect(run('{n} <= 9')).toBe(false);
    expect(run('{n} != 10')).toBe(false);
    expect(run('{n} <> 11')).toBe(true);
    expect(run('"a" < "b"')).toBe(true);
    expect(run('{d} < {d2}')).toBe(true);
    expect(run('{d} = "2024-01-31"')).toBe(true);
    expect(run('{b} = TRUE')).toBe(true);
    expect(run('{e} = BLANK()')).toBe(true);
    expect(run('{e} = ""')).toBe(true);
    expect(run('{e} = 0')).toBe(false);
    expect(run('{e} > 0')).toBe(false);
    expect(run('{e} < 0')).toBe(false);
  });

  it('concatenates anything as text', () => {
    expect(run('{t} & {e} & {n} & {b}')).toBe(' Hello World 10true');
    expect(run('{d} & ""')).toBe('2024-01-31T00:00:00.000Z');
    expect(run('{l} & ""')).toBe('1, 2, 3');
    expect(run('{e} & {e}')).toBeNull();
  });

  it('refuses operands of the wrong type', () => {
    expect(error('{t} + 1')).toMatchObject({
      position: 0,
      message: 'operator "+" expects numbers, got text (use & to join text)',
    });
    expect(error('1 * {d}').position).toBe(4);
    expect(error('-{b}').position).toBe(1);
    expect(error('{n} = "x"')).toMatchObject({ position: 4, message: 'cannot compare number with text' });
    expect(error('{l} > 1').message).toBe('cannot compare list with number');
    expect(error('{missing} + 1')).toMatchObject({ position: 0, message: 'unknown field {missing}' });
    expect(error('1 + *').message).toMatch(/only allowed in property formulas/);
  });
});

describe('formula functions', () => {
  it.each([
    ['SUM({n}, {m}, {e}, 1)', 15],
    ['SUM({l})', 6],
    ['SUM({e})', 0],
    ['AVG({n}, {m})', 7],
    ['AVG({l})', 2],
    ['AVG({e})', null],
    ['MIN({n}, {m}, {l})', 1],
    ['MIN({e})', null],
    ['MAX({n}, {m}, {l})', 10],
    ['COUNT({l}, {e}, {n})', 4],
    ['ROUND(2.5)', 3],
    ['ROUND(-2.5)', -3],
    ['ROUND(1.005, 2)', 1.01],
    ['ROUND(1234, -2)', 1200],
    // Rounded in the decimal digits, not by adding a nudge after multiplying by 10^digits.
    ['ROUND(2.4999999999)', 2],
    ['ROUND(-0.49999999995)', 0],
    ['ROUND(1e21, 2)', 1e21],
    ['ROUND(1e24, 2)', 1e24],
    ['ROUND(0.0000001234, 9)', 1.23e-7],
    ['ROUND(123.456, 400)', 123.456],
    ['ROUND({e})', null],
    ['CEIL(1.2)', 2],
    ['CEIL(-1.2)', -1],
    ['FLOOR(1.8)', 1],
    ['FLOOR({e})', null],
    ['ABS(-3)', 3],
    ['ABS({e})', null],
    ['CONCAT("a", {n}, {e}, TRUE)', 'a10true'],
    ['UPPER({t})', ' HELLO WORLD '],
    ['LOWER("ÀB")', 'àb'],
    ['TRIM({t})', 'Hello World'],
    ['TRIM({e})', null],
    ['LEN({t})', 13],
    ['LEN({e})', 0],
    ['SUBSTRING("abcdef", 2, 3)', 'bcd'],
    ['SUBSTRING("abcdef", 4)', 'def'],
    ['SUBSTRING("abc", 9, 2)', null],
    ['LEFT("abcdef", 2)', 'ab'],
    ['RIGHT("abcdef", 2)', 'ef'],
    ['RIGHT("abc", 0)', null],
    ['REPLACE("abcdef", 2, 3, "X")', 'aXef'],
    ['SUBSTITUTE("a-b-c", "-", "+")', 'a+b+c'],
    ['NOW()', '2026-11-22T13:45:00.000Z'],
    ['TODAY()', '2026-11-22T00:00:00.000Z'],
    ['YEAR({d})', 2024],
    ['MONTH({d2})', 3],
    ['DAY({d})', 31],
    ['YEAR({e})', null],
    ['YEAR("not a date")', null],
    ['DATEDIFF({d}, {d2})', 44],
    ['DATEDIFF({d}, {d2}, "months")', 1],
    ['DATEDIFF({d2}, {d}, "weeks")', -6],
    ['DATEDIFF("2024-01-01", "2026-06-01", "years")', 2],
    ['DATEDIFF({e}, {d})', null],
    ['DATEADD({d}, 1, "months")', '2024-02-29T00:00:00.000Z'],
    ['DATEADD({d}, 2)', '2024-02-02T00:00:00.000Z'],
    ['DATEADD({d}, -3, "hours")', '2024-01-30T21:00:00.000Z'],
    ['DATEADD({e}, 2)', null],
    ['DATETIME_FORMAT({d})', '2024-01-31'],
    ['DATETIME_FORMAT(DATEADD({d}, 90, "minutes"), "DD/MM/YYYY HH:mm")', '31/01/2024 01:30'],
    ['DATETIME_FORMAT("garbage")', null],
    ['IF({n} > 5, "big", "small")', 'big'],
    ['IF({e}, "yes", "no")', 'no'],
    ['IF(FALSE, 1)', null],
    ['AND({b}, {n} > 1)', true],
    ['AND({b}, {e})', false],
    ['OR({e}, FALSE)', false],
    ['OR({e}, {n})', true],
    ['NOT({e})', true],
    ['SWITCH({n}, 1, "one", 10, "ten", "other")', 'ten'],
    ['SWITCH({m}, 1, "one", 10, "ten", "other")', 'other'],
    ['SWITCH({m}, 1, "one")', null],
    ['ISBLANK({e})', true],
    ['ISBLANK("")', true],
    ['ISBLANK({n})', false],
    ['COALESCE({e}, "", {n})', 10],
    ['COALESCE({e})', null],
    ['BLANK()', null],
    ['VALUE("$1,234.5")', 1234.5],
    ['VALUE("abc")', null],
    ['VALUE({e})', null],
    ['TEXT({n})', '10'],
    ['TEXT({e})', null],
  ])('%s → %p', (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it('is case-insensitive about function names', () => {
    expect(run('sum(1, 2) + Round(1.4)')).toBe(4);
  });

  it('infers result types', () => {
    expect(typeOf('{n} + 1')).toBe('number');
    expect(typeOf('{n} & ""')).toBe('text');
    expect(typeOf('{n} > 1')).toBe('boolean');
    expect(typeOf('DATEADD({d}, 1)')).toBe('date');
    expect(typeOf('IF({b}, {d}, BLANK())')).toBe('date');
    expect(typeOf('IF({b}, 1)')).toBe('number');
    expect(typeOf('COALESCE({e}, 0)')).toBe('number');
    expect(typeOf('{l}')).toBe('text');
    expect(typeOf('BLANK()')).toBe('text');
    expect(typeOf('SWITCH({t}, "a", 1, "b", 2, 0)')).toBe('number');
    expect(typeOf('NOW()')).toBe('date');
  });

  it('refuses unknown functions, wrong argument counts and types', () => {
    expect(error('FOO(1)')).toMatchObject({ position: 0, message: 'unknown function FOO' });
    expect(error('1 + ROUND()')).toMatchObject({
      position: 4,
      message: 'ROUND expects 1 to 2 arguments, got 0',
    });
    expect(error('NOW(1)').message).toBe('NOW expects 0 arguments, got 1');
    expect(error('UPPER("a", "b")').message).toBe('UPPER expects 1 argument, got 2');
    expect(error('SUM()').message).toBe('SUM expects at least 1 argument, got 0');
    expect(error('IF(1)').message).toBe('IF expects 2 to 3 arguments, got 1');
    expect(error('SWITCH(1, 2)').message).toMatch(/at least 3/);
    expect(error('SUM({t})')).toMatchObject({
      position: 4,
      message: 'SUM argument 1 must be a number, got text',
    });
    expect(error('ROUND({n}, "2")').position).toBe(11);
    expect(error('YEAR({n})').message).toBe('YEAR argument 1 must be a date, got number');
    expect(error('DATEADD({d}, "x")').message).toMatch(/argument 2 must be a number/);
    expect(error('DATEADD({d}, 1, "fortnights")')).toMatchObject({
      position: 16,
      message: 'unknown date unit "fortnights"',
    });
    expect(error('IF({b}, 1, "x")')).toMatchObject({
      position: 11,
      message: 'IF results must have one type, got number and text',
    });
    expect(error('COALESCE({n}, TRUE)').message).toMatch(/one type/);
    expect(error('COUNT(*)').message).toMatch(/only allowed in property formulas/);
  });
});

describe('formula type errors per function', () => {
  it.each([
    ['AVG({t})', 'AVG argument 1 must be a number, got text'],
    ['MIN(1, {d})', 'MIN argument 2 must be a number, got date'],
    ['MAX({b})', 'MAX argument 1 must be a number, got boolean'],
    ['CEIL({t})', 'CEIL argument 1 must be a number, got text'],
    ['FLOOR({l})', 'FLOOR argument 1 must be a number, got list'],
    ['ABS({d})', 'ABS argument 1 must be a number, got date'],
    ['SUBSTRING({t}, "1")', 'SUBSTRING argument 2 must be a number, got text'],
    ['LEFT({t}, {b})', 'LEFT argument 2 must be a number, got boolean'],
    ['RIGHT({t}, {d})', 'RIGHT argument 2 must be a number, got date'],
    ['REPLACE({t}, "1", 1, "x")', 'REPLACE argument 2 must be a number, got text'],
    ['MONTH({b})', 'MONTH argument 1 must be a date, got boolean'],
    ['DAY({l})', 'DAY argument 1 must be a date, got list'],
    ['DATEDIFF({n}, {d})', 'DATEDIFF argument 1 must be a date, got number'],
    ['DATETIME_FORMAT({n})', 'DATETIME_FORMAT argument 1 must be a date, got number'],
    ['SWITCH({t}, "a", 1, "b", "two")', 'SWITCH results must have one type, got number and text'],
    ['TODAY(1)', 'TODAY expects 0 arguments, got 1'],
    ['BLANK(1)', 'BLANK expects 0 arguments, got 1'],
    ['NOT(1, 2)', 'NOT expects 1 argument, got 2'],
    ['AND()', 'AND expects at least 1 argument, got 0'],
    ['LEN()', 'LEN expects 1 argument, got 0'],
    ['VALUE("1", "2")', 'VALUE expects 1 argument, got 2'],
    ['TEXT()', 'TEXT expects 1 argument, got 0'],
    ['CONCAT()', 'CONCAT expects at least 1 argument, got 0'],
    ['ISBLANK()', 'ISBLANK expects 1 argument, got 0'],
    ['REPLACE("a", 1, 1)', 'REPLACE expects 4 arguments, got 3'],
  ])('%s is refused: %s', (source, message) => {
    expect(error(source).message).toBe(message);
  });
});

describe('property formulas', () => {
  const rowTypes: Record<string, FormulaValueType> = { amount: 'number', name: 'text' };
  const propertyTypes: Record<string, FormulaValueType> = { budget: 'number' };
  const check = (source: string): string =>
    inferFormulaType(parseFormula(source), (id) => propertyTypes[id], {
      rowFieldTypeOf: (id) => rowTypes[id],
    });

  it('aggregates row fields and counts rows', () => {
    expect(check('SUM({amount}) / COUNT(*)')).toBe('number');
    expect(check('{budget} - SUM({amount})')).toBe('number');
    const node = parseFormula('{budget} - SUM({amount}) + COUNT(*) + MAX({amount})');
    const isRowField = (id: string): boolean => id in rowTypes;
    expect(formulaRowAggregates(node, isRowField)).toEqual([
      { fn: 'SUM', fieldId: 'amount' },
      { fn: 'COUNT', fieldId: '*' },
      { fn: 'MAX', fieldId: 'amount' },
    ]);
    const aggregates: Record<string, number> = { 'SUM:amount': 60, 'COUNT:*': 3, 'MAX:amount': 30 };
    const value = evaluateFormula(node, (id) => (id === 'budget' ? 100 : undefined), {
      isRowField,
      aggregate: (fn, id) => aggregates[`${fn}:${id}`],
    });
    expect(value).toBe(100 - 60 + 3 + 30);
  });

  it('refuses row fields outside aggregates and * outside COUNT', () => {
    const fail = (source: string): FormulaError => {
      try {
        check(source);
      } catch (caught) {
        return caught as FormulaError;
      }
      throw new Error('expected failure');
    };
    expect(fail('{amount} + 1')).toMatchObject({ position: 0 });
    expect(fail('{amount} + 1').message).toMatch(/must be the argument of SUM/);
    expect(fail('SUM(*)').message).toBe('"*" is only allowed as COUNT(*)');
    expect(fail('SUM({name})').message).toBe('SUM argument 1 must be a number, got text');
    expect(check('COUNT({name})')).toBe('number');
    expect(fail('{nope}').message).toBe('unknown field {nope}');
  });
});
