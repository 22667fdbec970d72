import { Injectable } from '@nestjs/common';
import { evaluateFormula, type FormulaNode, parseFormula } from '../../../common/formula/index.js';

/** The `formula` transform: our formula language (src/common/formula) over the source row; parsed once per text. */
@Injectable()
export class FormulaRunner {
  private readonly cache = new Map<string, FormulaNode>();

  /** Throws FormulaError for a syntax error (the rule fails); null for a runtime error. */
  evaluate(source: string, read: (fieldId: string) => unknown, now: Date): unknown {
    let node = this.cache.get(source);
    if (!node) {
      node = parseFormula(source);
      if (this.cache.size > 1000) {
        this.cache.clear();
      }
      this.cache.set(source, node);
    }
    return evaluateFormula(node, read, { now });
  }
}
