/** The syntax tree of a formula. `pos` is the 0-based offset of the node's first character in the source. */
export type BinaryOperator = '+' | '-' | '*' | '/' | '%' | '&' | '=' | '!=' | '<' | '<=' | '>' | '>=';

export type FormulaNode =
  | { kind: 'number'; value: number; pos: number }
  | { kind: 'text'; value: string; pos: number }
  | { kind: 'boolean'; value: boolean; pos: number }
  | { kind: 'field'; fieldId: string; pos: number }
  | { kind: 'star'; pos: number }
  | { kind: 'unary'; op: '-'; operand: FormulaNode; pos: number }
  | { kind: 'binary'; op: BinaryOperator; left: FormulaNode; right: FormulaNode; pos: number }
  | { kind: 'call'; name: string; args: FormulaNode[]; pos: number };

/** Static result types a formula can have. `blank` and `list` only occur inside expressions. */
export type FormulaType = 'number' | 'text' | 'boolean' | 'date';
export type FormulaValueType = FormulaType | 'blank' | 'list';

/** Visits every node of a tree, parents first. */
export function walkFormula(node: FormulaNode, visit: (node: FormulaNode) => void): void {
  visit(node);
  switch (node.kind) {
    case 'unary':
      walkFormula(node.operand, visit);
      break;
    case 'binary':
      walkFormula(node.left, visit);
      walkFormula(node.right, visit);
      break;
    case 'call':
      node.args.forEach((arg) => walkFormula(arg, visit));
      break;
    case 'number':
    case 'text':
    case 'boolean':
    case 'field':
    case 'star':
      break;
  }
}
