/** A formula that cannot be parsed or type-checked. `position` is the 0-based character offset of the culprit. */
export class FormulaError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'FormulaError';
  }
}
