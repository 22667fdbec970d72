import type { BinaryOperator, FormulaNode } from './formula.ast.js';
import { FUNCTIONS, type EvalContext } from './formula-functions.js';
import {
  fail,
  finite,
  fromResolved,
  isBlank,
  toDate,
  toNumber,
  toText,
  type RuntimeValue,
} from './formula-values.js';
import type { RowAggregate } from './formula.checker.js';

export interface EvaluateOptions {
  /** The clock NOW() and TODAY() read; defaults to the current time. */
  now?: Date;
  /** Property formulas: tells which field ids are data-row fields (aggregated instead of resolved). */
  isRowField?: (fieldId: string) => boolean;
  /** Property formulas: the value of SUM/AVG/MIN/MAX/COUNT over all rows (`*` for COUNT(*)). */
  aggregate?: (fn: RowAggregate['fn'], fieldId: string) => unknown;
}

type Resolve = (fieldId: string) => unknown;

function compareValues(left: RuntimeValue, right: RuntimeValue): number | null {
  if (left instanceof Date || right instanceof Date) {
    const a = toDate(left);
    const b = toDate(right);
    return a && b ? a.getTime() - b.getTime() : null;
  }
  if (
    typeof left === 'number' ||
    typeof right === 'number' ||
    typeof left === 'boolean' ||
    typeof right === 'boolean'
  ) {
    const a = toNumber(left);
    const b = toNumber(right);
    return a !== null && b !== null ? a - b : null;
  }
  const a = toText(left);
  const b = toText(right);
  return a < b ? -1 : a > b ? 1 : 0;
}

function equals(left: RuntimeValue, right: RuntimeValue): boolean {
  if (isBlank(left) || isBlank(right)) {
    return isBlank(left) && isBlank(right);
  }
  return compareValues(left, right) === 0;
}

function arithmetic(op: string, left: RuntimeValue, right: RuntimeValue): RuntimeValue {
  const a = toNumber(left);
  const b = toNumber(right);
  if (a === null && b === null) {
    return null;
  }
  const x = a ?? 0;
  const y = b ?? 0;
  switch (op) {
    case '+':
      return finite(x + y);
    case '-':
      return finite(x - y);
    case '*':
      return finite(x * y);
    case '/':
      return y === 0 ? fail() : finite(x / y);
    default:
      return y === 0 ? fail() : finite(x % y);
  }
}

function binary(op: BinaryOperator, left: RuntimeValue, right: RuntimeValue): RuntimeValue {
  switch (op) {
    case '&':
      return toText(left) + toText(right);
    case '=':
      return equals(left, right);
    case '!=':
      return !equals(left, right);
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
      return arithmetic(op, left, right);
    case '<':
    case '<=':
    case '>':
    case '>=': {
      if (isBlank(left) || isBlank(right)) {
        return false;
      }
      const order = compareValues(left, right);
      if (order === null) {
        return false;
      }
      return op === '<' ? order < 0 : op === '<=' ? order <= 0 : op === '>' ? order > 0 : order >= 0;
    }
  }
}

function evaluate(
  node: FormulaNode,
  resolve: Resolve,
  options: EvaluateOptions,
  ctx: EvalContext,
): RuntimeValue {
  switch (node.kind) {
    case 'number':
    case 'text':
    case 'boolean':
      return node.value;
    case 'star':
      return fail();
    case 'field':
      return fromResolved(resolve(node.fieldId));
    case 'unary': {
      const value = toNumber(evaluate(node.operand, resolve, options, ctx));
      return value === null ? null : -value;
    }
    case 'binary':
      return binary(
        node.op,
        evaluate(node.left, resolve, options, ctx),
        evaluate(node.right, resolve, options, ctx),
      );
    case 'call': {
      const spec = FUNCTIONS[node.name];
      if (!spec) {
        return fail();
      }
      if (spec.aggregate && options.aggregate && node.args.length === 1) {
        const arg = node.args[0];
        if (arg.kind === 'star') {
          return fromResolved(options.aggregate(node.name as RowAggregate['fn'], '*'));
        }
        if (arg.kind === 'field' && options.isRowField?.(arg.fieldId)) {
          return fromResolved(options.aggregate(node.name as RowAggregate['fn'], arg.fieldId));
        }
      }
      return spec.evaluate(
        node.args.map((arg) => () => evaluate(arg, resolve, options, ctx)),
        ctx,
      );
    }
  }
}

function output(value: RuntimeValue): unknown {
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? null : value.toISOString();
  }
  if (Array.isArray(value)) {
    return isBlank(value) ? null : toText(value);
  }
  if (typeof value === 'number') {
    return Number.isFinite(value) ? value : null;
  }
  return value === '' ? null : value;
}

/**
 * Evaluates a parsed formula. `resolve` returns a referenced field's value (stored JSON, Date, list).
 * Runtime errors (division by zero, a bad date, text that is not a number) give null; never throws.
 * Dates come out as ISO 8601 strings; lists as text joined with ", "; the empty string as null.
 */
export function evaluateFormula(node: FormulaNode, resolve: Resolve, options: EvaluateOptions = {}): unknown {
  const ctx: EvalContext = { now: options.now ?? new Date(), equals };
  try {
    return output(evaluate(node, resolve, options, ctx));
  } catch {
    // FormulaCellError, or a RangeError from an absurd date: the cell is empty, the request goes on.
    return null;
  }
}
