import type { FieldDefinition, SelectOption } from '../../documents/fields/field.types.js';

/** An order-book field generated from a catalog field (spec 2.14 `sourceFieldId`). */
export interface GeneratedSource {
  id: string;
  sourceFieldId: string;
}

/** The order book's fields generated from one catalog (those that name their catalog field). */
export function generatedSourcesOf(
  generatedFields: readonly { id: string; sourceCatalogId: string; sourceFieldId: string }[],
  catalogId: string,
): GeneratedSource[] {
  return generatedFields.filter((field) => field.sourceCatalogId === catalogId && field.sourceFieldId);
}

const SELECT_TYPES = new Set(['single_select', 'multi_select']);

function sameLabel(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.trim().toLowerCase() === b.trim().toLowerCase();
}

/**
 * The options of a generated select field in step with its catalog select (docs/supply-chain.md, "Generated fields
 * in step"): an option the catalog has under the same id takes the catalog's label (and color, names); a catalog
 * option the field lacks is appended with the catalog's id, unless an option of the field already has its label.
 * Options only the order book has stay (its rows may hold them). Null when nothing changes.
 */
function alignedOptions(
  target: readonly SelectOption[],
  source: readonly SelectOption[],
): SelectOption[] | null {
  const next = target.map((option) => ({ ...option }));
  let changed = false;
  for (const option of source) {
    const same = next.find((item) => item.id === option.id);
    if (same) {
      for (const key of ['label', 'color', 'name'] as const) {
        if (option[key] !== undefined && JSON.stringify(same[key]) !== JSON.stringify(option[key])) {
          Object.assign(same, { [key]: option[key] });
          changed = true;
        }
      }
      continue;
    }
    if (next.some((item) => sameLabel(item.label, option.label))) {
      continue;
    }
    next.push({ ...option });
    changed = true;
  }
  return changed ? next : null;
}

/**
 * The order book's field definitions with its generated fields in step with the catalog: a generated select field
 * whose catalog field is still a select takes the catalog's new options and renamed labels (alignedOptions). Nothing
 * else follows the catalog: names, types (a retyped catalog field's values are converted when written, binding-plan),
 * options the catalog removed, fields it deleted. Null when the order book is already in step.
 */
export function alignGeneratedFields(
  orderFields: readonly FieldDefinition[],
  catalogFields: readonly FieldDefinition[],
  generated: readonly GeneratedSource[],
): FieldDefinition[] | null {
  const catalogById = new Map(catalogFields.map((field) => [field.id, field]));
  const sourceOf = new Map(generated.map((field) => [field.id, field.sourceFieldId]));
  let changed = false;
  const fields = orderFields.map((field) => {
    const sourceId = sourceOf.get(field.id);
    const source = sourceId !== undefined ? catalogById.get(sourceId) : undefined;
    if (!source || !SELECT_TYPES.has(field.type) || !SELECT_TYPES.has(source.type)) {
      return field;
    }
    const options = alignedOptions(field.selectOptions ?? [], source.selectOptions ?? []);
    if (!options) {
      return field;
    }
    changed = true;
    return { ...field, selectOptions: options };
  });
  return changed ? fields : null;
}
