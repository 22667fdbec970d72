import { walkFormula, type FormulaNode, type FormulaType, type FormulaValueType } from './formula.ast.js';
import { FormulaError } from './formula-error.js';
import { FUNCTIONS } from './formula-functions.js';

export type FieldTypeOf = (fieldId: string) => FormulaValueType | undefined;

export interface FormulaTypeOptions {
  /**
   * Property formulas only: the type of a data-row field. A row field may appear only as the direct argument of
   * SUM, AVG, MIN, MAX or COUNT (it then stands for the column of all rows), and COUNT(*) counts the rows.
   */
  rowFieldTypeOf?: FieldTypeOf;
}

const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);
const NUMERIC: FormulaValueType[] = ['number', 'blank'];

function comparable(left: FormulaValueType, right: FormulaValueType): boolean {
  if (left === 'blank' || right === 'blank' || left === right) {
    return left !== 'list' && right !== 'list';
  }
  const pair = [left, right].sort().join(',');
  return pair === 'date,text';
}

function isRowAggregateArg(parent: FormulaNode, arg: FormulaNode, options: FormulaTypeOptions): boolean {
  return (
    options.rowFieldTypeOf !== undefined &&
    parent.kind === 'call' &&
    FUNCTIONS[parent.name]?.aggregate === true &&
    parent.args.length === 1 &&
    ((arg.kind === 'field' && options.rowFieldTypeOf(arg.fieldId) !== undefined) ||
      (arg.kind === 'star' && parent.name === 'COUNT'))
  );
}

function check(node: FormulaNode, fieldTypeOf: FieldTypeOf, options: FormulaTypeOptions): FormulaValueType {
  switch (node.kind) {
    case 'number':
      return 'number';
    case 'text':
      return 'text';
    case 'boolean':
      return 'boolean';
    case 'star':
      throw new FormulaError(
        options.rowFieldTypeOf
          ? '"*" is only allowed as COUNT(*)'
          : '"*" (all rows) is only allowed in property formulas',
        node.pos,
      );
    case 'field': {
      const type = fieldTypeOf(node.fieldId);
      if (type !== undefined) {
        return type;
      }
      if (options.rowFieldTypeOf?.(node.fieldId) !== undefined) {
        throw new FormulaError(
          `row field {${node.fieldId}} must be the argument of SUM, AVG, MIN, MAX or COUNT in a property formula`,
          node.pos,
        );
      }
      throw new FormulaError(`unknown field {${node.fieldId}}`, node.pos);
    }
    case 'unary': {
      const type = check(node.operand, fieldTypeOf, options);
      if (!NUMERIC.includes(type)) {
        throw new FormulaError(`unary "-" expects a number, got ${type}`, node.operand.pos);
      }
      return 'number';
    }
    case 'binary': {
      const left = check(node.left, fieldTypeOf, options);
      const right = check(node.right, fieldTypeOf, options);
      if (node.op === '&') {
        return 'text';
      }
      if (ARITHMETIC.has(node.op)) {
        for (const [type, side] of [
          [left, node.left],
          [right, node.right],
        ] as const) {
          if (!NUMERIC.includes(type)) {
            throw new FormulaError(
              `operator "${node.op}" expects numbers, got ${type}${type === 'text' ? ' (use & to join text)' : ''}`,
              side.pos,
            );
          }
        }
        return 'number';
      }
      if (!comparable(left, right)) {
        throw new FormulaError(`cannot compare ${left} with ${right}`, node.pos);
      }
      return 'boolean';
    }
    case 'call': {
      const spec = FUNCTIONS[node.name];
      if (!spec) {
        throw new FormulaError(`unknown function ${node.name}`, node.pos);
      }
      if (node.args.length < spec.min || node.args.length > spec.max) {
        const expected =
          spec.min === spec.max
            ? `${spec.min}`
            : spec.max === Infinity
              ? `at least ${spec.min}`
              : `${spec.min} to ${spec.max}`;
        throw new FormulaError(
          `${node.name} expects ${expected} argument${expected.endsWith(' 1') || expected === '1' ? '' : 's'}, got ${node.args.length}`,
          node.pos,
        );
      }
      const types = node.args.map((arg): FormulaValueType => {
        if (!isRowAggregateArg(node, arg, options)) {
          return check(arg, fieldTypeOf, options);
        }
        const rowType = arg.kind === 'field' ? options.rowFieldTypeOf?.(arg.fieldId) : 'number';
        if (node.name !== 'COUNT' && rowType !== 'number') {
          throw new FormulaError(`${node.name} argument 1 must be a number, got ${rowType}`, arg.pos);
        }
        return 'list';
      });
      return spec.check(types, node.args, node.name);
    }
  }
}

/**
 * Infers the result type of a formula, throwing FormulaError (with position) for unknown fields or functions,
 * wrong argument counts or types. `fieldTypeOf` gives the type of each referenced field (undefined: unknown);
 * lookups and multi-valued fields are `list`. A formula whose value is blank or a list has type `text`.
 */
export function inferFormulaType(
  node: FormulaNode,
  fieldTypeOf: FieldTypeOf,
  options: FormulaTypeOptions = {},
): FormulaType {
  const type = check(node, fieldTypeOf, options);
  return type === 'blank' || type === 'list' ? 'text' : type;
}

/** The field ids a formula references as {fieldId}, in order of first appearance. */
export function formulaFieldRefs(node: FormulaNode): string[] {
  const refs: string[] = [];
  walkFormula(node, (child) => {
    if (child.kind === 'field' && !refs.includes(child.fieldId)) {
      refs.push(child.fieldId);
    }
  });
  return refs;
}

/** True when the formula reads the clock (NOW, TODAY): its value must be computed at read time. */
export function isVolatileFormula(node: FormulaNode): boolean {
  let volatile = false;
  walkFormula(node, (child) => {
    if (child.kind === 'call' && FUNCTIONS[child.name]?.volatile) {
      volatile = true;
    }
  });
  return volatile;
}

export interface RowAggregate {
  fn: 'SUM' | 'AVG' | 'MIN' | 'MAX' | 'COUNT';
  /** A data-row field id, or `*` for COUNT(*). */
  fieldId: string;
}

/** The row aggregates a property formula needs (SUM({amount}), COUNT(*), ...), for computing them in bulk. */
export function formulaRowAggregates(
  node: FormulaNode,
  isRowField: (fieldId: string) => boolean,
): RowAggregate[] {
  const found: RowAggregate[] = [];
  walkFormula(node, (child) => {
    if (child.kind !== 'call' || !FUNCTIONS[child.name]?.aggregate || child.args.length !== 1) {
      return;
    }
    const arg = child.args[0];
    const fieldId =
      arg.kind === 'star' && child.name === 'COUNT'
        ? '*'
        : arg.kind === 'field' && isRowField(arg.fieldId)
          ? arg.fieldId
          : null;
    if (fieldId !== null && !found.some((a) => a.fn === child.name && a.fieldId === fieldId)) {
      found.push({ fn: child.name as RowAggregate['fn'], fieldId });
    }
  });
  return found;
}
