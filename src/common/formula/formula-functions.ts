import type { FormulaNode, FormulaValueType } from './formula.ast.js';
import { FormulaError } from './formula-error.js';
import {
  addToDate,
  dateUnit,
  diffDates,
  fail,
  finite,
  flatten,
  formatDate,
  isBlank,
  toDate,
  toNumber,
  toText,
  truthy,
  type DateUnit,
  type RuntimeValue,
} from './formula-values.js';

/** A lazily evaluated argument: IF, SWITCH and COALESCE only evaluate the branch they return. */
export type Thunk = () => RuntimeValue;

export interface EvalContext {
  now: Date;
  equals(left: RuntimeValue, right: RuntimeValue): boolean;
}

export interface FunctionSpec {
  min: number;
  max: number;
  /** Aggregates over row fields in property formulas (SUM/AVG/MIN/MAX/COUNT). */
  aggregate?: boolean;
  /** Reads the clock: evaluated at read time, never materialised. */
  volatile?: boolean;
  check(types: FormulaValueType[], args: FormulaNode[], name: string): FormulaValueType;
  evaluate(args: Thunk[], ctx: EvalContext): RuntimeValue;
}

type Accept = 'number' | 'text' | 'date' | 'any' | 'numbers';

const ACCEPTS: Record<Accept, FormulaValueType[]> = {
  number: ['number', 'blank'],
  text: ['text', 'number', 'boolean', 'date', 'blank', 'list'],
  date: ['date', 'text', 'blank'],
  any: ['number', 'text', 'boolean', 'date', 'blank', 'list'],
  numbers: ['number', 'blank', 'list'],
};

function expectArgs(name: string, types: FormulaValueType[], args: FormulaNode[], accepts: Accept[]): void {
  types.forEach((type, index) => {
    const accept = accepts[Math.min(index, accepts.length - 1)];
    if (!ACCEPTS[accept].includes(type)) {
      throw new FormulaError(
        `${name} argument ${index + 1} must be ${accept === 'numbers' ? 'a number' : `a ${accept}`}, got ${type}`,
        args[index].pos,
      );
    }
  });
}

/** The common type of alternative results (IF branches, SWITCH results, COALESCE arguments). */
export function unify(name: string, types: FormulaValueType[], args: FormulaNode[]): FormulaValueType {
  let result: FormulaValueType = 'blank';
  types.forEach((type, index) => {
    if (type === 'blank' || type === result) {
      return;
    }
    if (result === 'blank') {
      result = type;
      return;
    }
    if ((result === 'date' && type === 'text') || (result === 'text' && type === 'date')) {
      result = 'text';
      return;
    }
    throw new FormulaError(`${name} results must have one type, got ${result} and ${type}`, args[index].pos);
  });
  return result;
}

function simple(
  accepts: Accept[],
  result: FormulaValueType,
  min: number,
  max: number,
  evaluate: FunctionSpec['evaluate'],
): FunctionSpec {
  return {
    min,
    max,
    check: (types, args, name) => {
      expectArgs(name, types, args, accepts);
      return result;
    },
    evaluate,
  };
}

function checkUnitArg(args: FormulaNode[], index: number): void {
  const node = args[index];
  if (node && node.kind === 'text' && dateUnit(node.value) === null) {
    throw new FormulaError(`unknown date unit "${node.value}"`, node.pos);
  }
}

const numbersOf = (args: Thunk[]): number[] =>
  flatten(args.map((arg) => arg()))
    .filter((value) => !isBlank(value))
    .map((value) => toNumber(value))
    .filter((value): value is number => value !== null);

const num = (arg: Thunk): number | null => toNumber(arg());
const text = (arg: Thunk): string => toText(arg());
const unitOf = (arg: Thunk | undefined, fallback: DateUnit): DateUnit =>
  arg ? (dateUnit(text(arg)) ?? fail()) : fallback;

/** `value` with its decimal point moved `places` digits (exact in decimal: 1.005 moved 2 is 100.5, not 100.49999…). */
function shift(value: number, places: number): number {
  const [mantissa, exponent] = value.toExponential().split('e');
  return Number(`${mantissa}e${Number(exponent) + places}`);
}

/**
 * Rounds half away from zero at `digits` decimals, in the number's shortest decimal digits (what a reader sees):
 * multiplying by 10^digits first would round 1.005 down and lose the digits of 1e21 or of 2.4999999999 plus a nudge.
 */
function roundTo(value: number, digits: number, mode: (n: number) => number): number {
  const places = Math.trunc(digits);
  const scaled = Number.isFinite(places) ? shift(Math.abs(value), places) : Infinity;
  if (value === 0 || !Number.isFinite(scaled) || scaled >= 2 ** 52) {
    return value; // no digit is stored below that place: nothing to round
  }
  const rounded = (value < 0 ? -1 : 1) * shift(mode(scaled), -places);
  return rounded === 0 ? 0 : finite(rounded);
}

function aggregate(evaluate: (numbers: number[]) => RuntimeValue): FunctionSpec {
  return {
    ...simple(['numbers'], 'number', 1, Infinity, (args) => evaluate(numbersOf(args))),
    aggregate: true,
  };
}

const TRUE_FALSE: Accept[] = ['any'];

/** Every function of the language, by upper-case name. */
export const FUNCTIONS: Record<string, FunctionSpec> = {
  SUM: aggregate((values) => values.reduce((sum, value) => sum + value, 0)),
  AVG: aggregate((values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null)),
  MIN: aggregate((values) => (values.length ? Math.min(...values) : null)),
  MAX: aggregate((values) => (values.length ? Math.max(...values) : null)),
  COUNT: {
    ...simple(
      ['any'],
      'number',
      1,
      Infinity,
      (args) => flatten(args.map((arg) => arg())).filter((value) => !isBlank(value)).length,
    ),
    aggregate: true,
  },
  ROUND: simple(['number', 'number'], 'number', 1, 2, (args) => {
    const value = num(args[0]);
    return value === null ? null : roundTo(value, args[1] ? (num(args[1]) ?? 0) : 0, Math.round);
  }),
  CEIL: simple(['number'], 'number', 1, 1, (args) => {
    const value = num(args[0]);
    return value === null ? null : Math.ceil(value);
  }),
  FLOOR: simple(['number'], 'number', 1, 1, (args) => {
    const value = num(args[0]);
    return value === null ? null : Math.floor(value);
  }),
  ABS: simple(['number'], 'number', 1, 1, (args) => {
    const value = num(args[0]);
    return value === null ? null : Math.abs(value);
  }),
  CONCAT: simple(['text'], 'text', 1, Infinity, (args) => args.map(text).join('')),
  UPPER: simple(['text'], 'text', 1, 1, (args) => text(args[0]).toUpperCase()),
  LOWER: simple(['text'], 'text', 1, 1, (args) => text(args[0]).toLowerCase()),
  TRIM: simple(['text'], 'text', 1, 1, (args) => text(args[0]).trim()),
  LEN: simple(['text'], 'number', 1, 1, (args) => [...text(args[0])].length),
  SUBSTRING: simple(['text', 'number', 'number'], 'text', 2, 3, (args) => {
    const chars = [...text(args[0])];
    const start = Math.max(1, Math.trunc(num(args[1]) ?? 1));
    const length = args[2] ? Math.max(0, Math.trunc(num(args[2]) ?? 0)) : chars.length;
    return chars.slice(start - 1, start - 1 + length).join('');
  }),
  LEFT: simple(['text', 'number'], 'text', 2, 2, (args) =>
    [...text(args[0])].slice(0, Math.max(0, Math.trunc(num(args[1]) ?? 0))).join(''),
  ),
  RIGHT: simple(['text', 'number'], 'text', 2, 2, (args) => {
    const count = Math.max(0, Math.trunc(num(args[1]) ?? 0));
    return count === 0 ? '' : [...text(args[0])].slice(-count).join('');
  }),
  REPLACE: simple(['text', 'number', 'number', 'text'], 'text', 4, 4, (args) => {
    const chars = [...text(args[0])];
    const start = Math.max(1, Math.trunc(num(args[1]) ?? 1));
    const count = Math.max(0, Math.trunc(num(args[2]) ?? 0));
    chars.splice(start - 1, count, text(args[3]));
    return chars.join('');
  }),
  SUBSTITUTE: simple(['text', 'text', 'text'], 'text', 3, 3, (args) => {
    const search = text(args[1]);
    return search === '' ? text(args[0]) : text(args[0]).split(search).join(text(args[2]));
  }),
  NOW: { ...simple([], 'date', 0, 0, (_args, ctx) => new Date(ctx.now.getTime())), volatile: true },
  TODAY: {
    ...simple(
      [],
      'date',
      0,
      0,
      (_args, ctx) =>
        new Date(Date.UTC(ctx.now.getUTCFullYear(), ctx.now.getUTCMonth(), ctx.now.getUTCDate())),
    ),
    volatile: true,
  },
  YEAR: simple(['date'], 'number', 1, 1, (args) => toDate(args[0]())?.getUTCFullYear() ?? null),
  MONTH: simple(['date'], 'number', 1, 1, (args) => {
    const date = toDate(args[0]());
    return date ? date.getUTCMonth() + 1 : null;
  }),
  DAY: simple(['date'], 'number', 1, 1, (args) => toDate(args[0]())?.getUTCDate() ?? null),
  DATEDIFF: {
    ...simple(['date', 'date', 'text'], 'number', 2, 3, (args) => {
      const start = toDate(args[0]());
      const end = toDate(args[1]());
      return start && end ? diffDates(start, end, unitOf(args[2], 'days')) : null;
    }),
    check: (types, args, name) => {
      expectArgs(name, types, args, ['date', 'date', 'text']);
      checkUnitArg(args, 2);
      return 'number';
    },
  },
  DATEADD: {
    ...simple(['date', 'number', 'text'], 'date', 2, 3, (args) => {
      const date = toDate(args[0]());
      const amount = num(args[1]);
      return date && amount !== null ? addToDate(date, amount, unitOf(args[2], 'days')) : null;
    }),
    check: (types, args, name) => {
      expectArgs(name, types, args, ['date', 'number', 'text']);
      checkUnitArg(args, 2);
      return 'date';
    },
  },
  DATETIME_FORMAT: simple(['date', 'text'], 'text', 1, 2, (args) => {
    const date = toDate(args[0]());
    return date ? formatDate(date, args[1] ? text(args[1]) : 'YYYY-MM-DD') : null;
  }),
  IF: {
    min: 2,
    max: 3,
    check: (types, args, name) => {
      expectArgs(name, types, args, TRUE_FALSE);
      return unify(name, types.slice(1), args.slice(1));
    },
    evaluate: (args) => (truthy(args[0]()) ? args[1]() : args[2] ? args[2]() : null),
  },
  SWITCH: {
    min: 3,
    max: Infinity,
    check: (types, args, name) => {
      expectArgs(name, types, args, TRUE_FALSE);
      const results = types.filter((_t, i) => i > 0 && (i % 2 === 0 || i === types.length - 1));
      const resultNodes = args.filter((_a, i) => i > 0 && (i % 2 === 0 || i === args.length - 1));
      return unify(name, results, resultNodes);
    },
    evaluate: (args, ctx) => {
      const subject = args[0]();
      let i = 1;
      for (; i + 1 < args.length; i += 2) {
        if (ctx.equals(subject, args[i]())) {
          return args[i + 1]();
        }
      }
      return i < args.length ? args[i]() : null;
    },
  },
  AND: simple(TRUE_FALSE, 'boolean', 1, Infinity, (args) => args.every((arg) => truthy(arg()))),
  OR: simple(TRUE_FALSE, 'boolean', 1, Infinity, (args) => args.some((arg) => truthy(arg()))),
  NOT: simple(TRUE_FALSE, 'boolean', 1, 1, (args) => !truthy(args[0]())),
  ISBLANK: simple(TRUE_FALSE, 'boolean', 1, 1, (args) => isBlank(args[0]())),
  COALESCE: {
    min: 1,
    max: Infinity,
    check: (types, args, name) => unify(name, types, args),
    evaluate: (args) => {
      for (const arg of args) {
        const value = arg();
        if (!isBlank(value)) {
          return value;
        }
      }
      return null;
    },
  },
  BLANK: simple([], 'blank', 0, 0, () => null),
  VALUE: simple(['text'], 'number', 1, 1, (args) => {
    const raw = text(args[0]).replace(/[\s,$€£¥%]/g, '');
    if (raw === '') {
      return null;
    }
    const parsed = Number(raw);
    return Number.isFinite(parsed) ? parsed : fail();
  }),
  TEXT: simple(['text'], 'text', 1, 1, (args) => text(args[0])),
};
