/**
 * The last branch of a switch over a union: TypeScript refuses the call while a member is unhandled, and a value
 * that arrives anyway at run time (an old stored row, a cast) fails loudly instead of being skipped.
 */
export function assertNever(value: never): never {
  throw new Error(`unexpected value ${describe(value)}`);
}

function describe(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
  return String(value);
}
