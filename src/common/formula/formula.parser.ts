import type { BinaryOperator, FormulaNode } from './formula.ast.js';
import { FormulaError } from './formula-error.js';

/**
 * A hand-written lexer and Pratt parser for the formula language (grammar in docs/formulas.md).
 * Binding powers, lowest first: comparisons, `&`, `+ -`, `* / %`, unary minus. All binary operators are
 * left-associative.
 */

type Token =
  | { type: 'number'; value: number; pos: number }
  | { type: 'string'; value: string; pos: number }
  | { type: 'field'; value: string; pos: number }
  | { type: 'ident'; value: string; pos: number }
  | { type: 'op'; value: string; pos: number }
  | { type: '(' | ')' | ',' | 'eof'; pos: number };

const TWO_CHAR_OPS = ['<=', '>=', '!=', '<>'];
const ONE_CHAR_OPS = '+-*/%&=<>';
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'" };

const BINARY_POWER: Record<string, number> = {
  '=': 10,
  '!=': 10,
  '<>': 10,
  '<': 10,
  '<=': 10,
  '>': 10,
  '>=': 10,
  '&': 20,
  '+': 30,
  '-': 30,
  '*': 40,
  '/': 40,
  '%': 40,
};
const UNARY_POWER = 50;

/**
 * How deeply a formula may nest: the depth of its tree (each operator, unary minus and function call is a level, so
 * a chain `a + b + c …` of n terms is n - 1 levels) and the nesting of parentheses. The checker, the evaluator and
 * the SQL compiler recurse over the tree, so this bound keeps them within the stack.
 */
export const MAX_FORMULA_DEPTH = 256;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const start = i;
    if (/[0-9.]/.test(ch)) {
      const match = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(source.slice(i));
      if (!match) {
        throw new FormulaError(`unexpected character "${ch}"`, i);
      }
      i += match[0].length;
      tokens.push({ type: 'number', value: Number(match[0]), pos: start });
      continue;
    }
    if (ch === '"' || ch === "'") {
      let value = '';
      i++;
      while (i < source.length && source[i] !== ch) {
        if (source[i] === '\\' && i + 1 < source.length) {
          value += ESCAPES[source[i + 1]] ?? source[i + 1];
          i += 2;
        } else {
          value += source[i++];
        }
      }
      if (i >= source.length) {
        throw new FormulaError('unterminated string', start);
      }
      i++;
      tokens.push({ type: 'string', value, pos: start });
      continue;
    }
    if (ch === '{') {
      const end = source.indexOf('}', i);
      if (end < 0) {
        throw new FormulaError('unterminated field reference, expected "}"', start);
      }
      const id = source.slice(i + 1, end).trim();
      if (id === '') {
        throw new FormulaError('empty field reference', start);
      }
      i = end + 1;
      tokens.push({ type: 'field', value: id, pos: start });
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i)) as RegExpExecArray;
      i += match[0].length;
      tokens.push({ type: 'ident', value: match[0], pos: start });
      continue;
    }
    if (ch === '(' || ch === ')' || ch === ',') {
      i++;
      tokens.push({ type: ch, pos: start });
      continue;
    }
    const two = source.slice(i, i + 2);
    if (TWO_CHAR_OPS.includes(two)) {
      i += 2;
      tokens.push({ type: 'op', value: two, pos: start });
      continue;
    }
    if (ch === '=' && source[i + 1] === '=') {
      i += 2;
      tokens.push({ type: 'op', value: '=', pos: start });
      continue;
    }
    if (ONE_CHAR_OPS.includes(ch)) {
      i++;
      tokens.push({ type: 'op', value: ch, pos: start });
      continue;
    }
    throw new FormulaError(`unexpected character "${ch}"`, i);
  }
  tokens.push({ type: 'eof', pos: source.length });
  return tokens;
}

function describe(token: Token): string {
  switch (token.type) {
    case 'eof':
      return 'end of formula';
    case 'number':
    case 'ident':
    case 'op':
      return `"${token.value}"`;
    case 'string':
      return 'a string';
    case 'field':
      return `{${token.value}}`;
    case '(':
    case ')':
    case ',':
      return `"${token.type}"`;
  }
}

class Parser {
  private index = 0;
  private nesting = 0;
  private readonly depths = new WeakMap<FormulaNode, number>();

  constructor(private readonly tokens: Token[]) {}

  parse(): FormulaNode {
    if (this.peek().type === 'eof') {
      throw new FormulaError('empty formula', 0);
    }
    const node = this.expression(0);
    const rest = this.peek();
    if (rest.type !== 'eof') {
      throw new FormulaError(`unexpected ${describe(rest)}`, rest.pos);
    }
    return node;
  }

  private peek(): Token {
    return this.tokens[this.index];
  }

  private next(): Token {
    return this.tokens[this.index++];
  }

  private expect(type: ')' | ','): Token {
    const token = this.next();
    if (token.type !== type) {
      throw new FormulaError(`expected "${type}" but found ${describe(token)}`, token.pos);
    }
    return token;
  }

  /** Records the depth of a new inner node; refuses it past MAX_FORMULA_DEPTH. */
  private nested<T extends FormulaNode>(node: T, children: readonly FormulaNode[]): T {
    const depth = 1 + children.reduce((max, child) => Math.max(max, this.depths.get(child) ?? 1), 0);
    if (depth > MAX_FORMULA_DEPTH) {
      throw tooDeep(node.pos);
    }
    this.depths.set(node, depth);
    return node;
  }

  private expression(minPower: number): FormulaNode {
    if (++this.nesting > MAX_FORMULA_DEPTH) {
      throw tooDeep(this.peek().pos);
    }
    let left = this.prefix();
    for (;;) {
      const token = this.peek();
      if (token.type !== 'op' || BINARY_POWER[token.value] <= minPower) {
        this.nesting--;
        return left;
      }
      this.next();
      const right = this.expression(BINARY_POWER[token.value]);
      const op = (token.value === '<>' ? '!=' : token.value) as BinaryOperator;
      left = this.nested({ kind: 'binary', op, left, right, pos: token.pos }, [left, right]);
    }
  }

  private prefix(): FormulaNode {
    const token = this.next();
    switch (token.type) {
      case 'number':
        return { kind: 'number', value: token.value, pos: token.pos };
      case 'string':
        return { kind: 'text', value: token.value, pos: token.pos };
      case 'field':
        return { kind: 'field', fieldId: token.value, pos: token.pos };
      case '(': {
        const inner = this.expression(0);
        this.expect(')');
        return inner;
      }
      case 'op':
        if (token.value === '-') {
          const operand = this.expression(UNARY_POWER);
          return this.nested({ kind: 'unary', op: '-', operand, pos: token.pos }, [operand]);
        }
        if (token.value === '+') {
          return this.expression(UNARY_POWER);
        }
        if (token.value === '*') {
          return { kind: 'star', pos: token.pos };
        }
        throw new FormulaError(`unexpected ${describe(token)}`, token.pos);
      case 'ident':
        return this.identifier(token.value, token.pos);
      case ',':
      case ')':
      case 'eof':
        throw new FormulaError(`unexpected ${describe(token)}`, token.pos);
    }
  }

  /**
   * A name followed by "(" calls a function; TRUE and FALSE (any case) are booleans; any other name is a field id,
   * as spec 2.5 writes formulas ("refer to fields by id": `price * quantity`). `{fieldId}` names the same field and
   * is needed for ids that are not plain names (`{unit-price}`) or spell TRUE or FALSE.
   */
  private identifier(name: string, pos: number): FormulaNode {
    const upper = name.toUpperCase();
    if (this.peek().type !== '(') {
      if (upper === 'TRUE' || upper === 'FALSE') {
        return { kind: 'boolean', value: upper === 'TRUE', pos };
      }
      return { kind: 'field', fieldId: name, pos };
    }
    this.next();
    const args: FormulaNode[] = [];
    if (this.peek().type !== ')') {
      for (;;) {
        args.push(this.expression(0));
        if (this.peek().type === ',') {
          this.next();
          continue;
        }
        break;
      }
    }
    this.expect(')');
    return this.nested({ kind: 'call', name: upper, args, pos }, args);
  }
}

function tooDeep(pos: number): FormulaError {
  return new FormulaError(`formula is nested too deeply (at most ${MAX_FORMULA_DEPTH} levels)`, pos);
}

/** Parses a formula; throws FormulaError with the position of the first problem. */
export function parseFormula(source: string): FormulaNode {
  if (typeof source !== 'string') {
    throw new FormulaError('formula must be a string', 0);
  }
  return new Parser(tokenize(source)).parse();
}
