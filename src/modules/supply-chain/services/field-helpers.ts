import type { FieldDefinition } from '../../documents/fields/field.types.js';
import type { ScField } from '../domain/supply-chain.types.js';
import { RESERVED_KEYS } from '../../../common/http/reserved-keys.js';

/** A field id from a name: lower-case letters, digits and `_`, unique among `taken`. */
export function fieldIdFrom(name: string, taken: Set<string>, fallback = 'field'): string {
  const base =
    name
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 56) || fallback;
  let id = base;
  for (let n = 2; taken.has(id) || RESERVED_KEYS.has(id); n += 1) {
    id = `${base}_${n}`;
  }
  taken.add(id);
  return id;
}

/** A document field as the supply-chain routes show it. */
export function toScField(field: FieldDefinition, descriptions: Record<string, string>): ScField {
  const result: ScField = {
    id: field.id,
    name: field.name,
    type: field.type,
    required: field.required === true,
  };
  const description = descriptions[field.id];
  if (description !== undefined) {
    result.description = description;
  }
  if (field.selectOptions) {
    result.selectOptions = field.selectOptions.map((option) => ({
      id: option.id,
      ...(option.label !== undefined ? { label: option.label } : {}),
      ...(option.color !== undefined ? { color: option.color } : {}),
    }));
  }
  return result;
}
