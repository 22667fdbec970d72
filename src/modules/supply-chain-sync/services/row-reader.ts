import type { FieldDefinition, SelectOption } from '../../documents/fields/field.types.js';

/**
 * A plain reader of one row; `stored` reads the same field as stored (select option ids, not labels); `options` gives
 * a select field's options (filters resolve an operand to an option by id or label, filter-group.ts).
 */
export type PlainFieldReader = ((ref: string) => unknown) & {
  stored: (ref: string) => unknown;
  options: (ref: string) => readonly SelectOption[] | undefined;
  /** The definition of a field named by id or name: what a value that does not fit its target is converted from. */
  field: (ref: string) => FieldDefinition | undefined;
};

/**
 * Reads a stored row in the plain form filters and mappings use: select option ids become their labels, a field is
 * named by id or, failing that, by name (case-insensitive). Unknown fields read as undefined.
 */
export function plainReader(
  fields: readonly FieldDefinition[],
): (row: Record<string, unknown>) => PlainFieldReader {
  const byId = new Map(fields.map((field) => [field.id, field]));
  const byName = new Map(fields.map((field) => [field.name.trim().toLowerCase(), field]));
  const labels = new Map<string, Map<string, string>>();
  for (const field of fields) {
    if (field.type === 'single_select' || field.type === 'multi_select') {
      labels.set(
        field.id,
        new Map(
          (field.selectOptions ?? []).map((option) => [
            option.id,
            option.label ?? Object.values(option.name ?? {})[0] ?? option.id,
          ]),
        ),
      );
    }
  }
  const field = (ref: string): FieldDefinition | undefined => byId.get(ref) ?? byName.get(ref.trim().toLowerCase());
  return (row) => {
    const stored = (ref: string): unknown => row[field(ref)?.id ?? ref];
    const read = (ref: string): unknown => {
      const definition = field(ref);
      const value = stored(ref);
      const options = definition ? labels.get(definition.id) : undefined;
      if (!options || value === null || value === undefined) {
        return value;
      }
      return Array.isArray(value)
        ? value.map((id) => options.get(String(id)) ?? id)
        : (options.get(String(value)) ?? value);
    };
    const options = (ref: string): readonly SelectOption[] | undefined => {
      const definition = field(ref);
      return definition && labels.has(definition.id) ? (definition.selectOptions ?? []) : undefined;
    };
    return Object.assign(read, { stored, options, field });
  };
}
