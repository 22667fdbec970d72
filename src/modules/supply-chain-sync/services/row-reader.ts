import type { FieldDefinition } from '../../documents/fields/field.types.js';

/** A plain reader of one row; `stored` reads the same field as stored (select option ids, not labels). */
export type PlainFieldReader = ((ref: string) => unknown) & { stored: (ref: string) => unknown };

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
  return (row) => {
    const stored = (ref: string): unknown =>
      row[(byId.get(ref) ?? byName.get(ref.trim().toLowerCase()))?.id ?? ref];
    const read = (ref: string): unknown => {
      const field = byId.get(ref) ?? byName.get(ref.trim().toLowerCase());
      const value = stored(ref);
      const options = field ? labels.get(field.id) : undefined;
      if (!options || value === null || value === undefined) {
        return value;
      }
      return Array.isArray(value)
        ? value.map((id) => options.get(String(id)) ?? id)
        : (options.get(String(value)) ?? value);
    };
    return Object.assign(read, { stored });
  };
}
