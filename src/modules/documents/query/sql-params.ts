/**
 * Bound parameters of a statement being compiled. Every user-supplied text (field ids, values, option ids) enters
 * SQL only as a `$n` placeholder; `offset` leaves `$1..$offset` to the caller (such as `$1` = document id).
 */
export class SqlParams {
  private readonly values: unknown[];
  private readonly keys: Map<string, string>;

  constructor(
    private readonly offset = 0,
    values: unknown[] = [],
    keys: Map<string, string> = new Map(),
  ) {
    if (!Number.isInteger(offset) || offset < 0) {
      throw new Error('parameter offset must be a non-negative integer');
    }
    this.values = [...values];
    this.keys = new Map(keys);
  }

  /** Binds a value; returns its placeholder. Arrays bind as PostgreSQL arrays; JSON must be passed stringified. */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.offset + this.values.length}`;
  }

  /** The placeholder of a field id used as a `values` key; one parameter per distinct id. */
  fieldKey(fieldId: string): string {
    let placeholder = this.keys.get(fieldId);
    if (!placeholder) {
      placeholder = this.add(fieldId);
      this.keys.set(fieldId, placeholder);
    }
    return placeholder;
  }

  /** A copy that continues the numbering, for a section used only together with this one. */
  fork(): SqlParams {
    return new SqlParams(this.offset, this.values, this.keys);
  }

  get list(): unknown[] {
    return [...this.values];
  }
}
