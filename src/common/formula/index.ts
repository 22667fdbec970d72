/**
 * The formula language: a framework-free library (no Nest, no database). Grammar and functions: docs/formulas.md.
 * This file is the library's public API; import from here, not from the implementation files.
 */
export { FormulaError } from './formula-error.js';
export type { BinaryOperator, FormulaNode, FormulaType, FormulaValueType } from './formula.ast.js';
export { MAX_FORMULA_DEPTH, parseFormula } from './formula.parser.js';
export { evaluateFormula, type EvaluateOptions } from './formula.evaluator.js';
export {
  formulaFieldRefs,
  formulaRowAggregates,
  inferFormulaType,
  isVolatileFormula,
  type FieldTypeOf,
  type FormulaTypeOptions,
  type RowAggregate,
} from './formula.checker.js';
export { FUNCTIONS as FORMULA_FUNCTIONS } from './formula-functions.js';
export { DATE_FORMAT_TOKENS, dateUnit, type DateUnit } from './formula-values.js';
