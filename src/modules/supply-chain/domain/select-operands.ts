import type { SelectOption } from '../../documents/fields/field.types.js';

/*
 * How a filter condition (share scope, receiver filter, accept rules, connector source filter) names a select
 * option (docs/supply-chain.md, "Connections", filter groups). Spec 2.6 gives a select value as an option id (or
 * `{selectOption: {id}}`, which the validation reads as that id), and the document query API compares by id; the
 * supply-chain filters also took labels, which existing configurations use. Both name the option, so a filter keeps
 * matching it when its label is renamed if it was written with the id. Shared by the validation (refuses an operand
 * naming no option) and the evaluation (supply-chain-sync's filter-group.ts).
 */

/** The label an option is shown, mapped and filtered by: its label, else its first translated name, else its id. */
export function optionLabel(option: SelectOption): string {
  return option.label ?? Object.values(option.name ?? {})[0] ?? option.id;
}

/**
 * Resolves an operand to the id of the option it names: an option id first (the spec's form; an id never changes),
 * else a label, compared trimmed and case-insensitive (as target selects are matched by the propagation). Undefined
 * when the operand is not a string or names no option.
 */
export function selectOptionResolver(
  options: readonly SelectOption[],
): (operand: unknown) => string | undefined {
  const ids = new Set(options.map((option) => option.id));
  const byLabel = new Map<string, string>();
  for (const option of options) {
    const key = optionLabel(option).trim().toLowerCase();
    if (!byLabel.has(key)) {
      byLabel.set(key, option.id);
    }
  }
  return (operand) => {
    if (typeof operand !== 'string') {
      return undefined;
    }
    return ids.has(operand) ? operand : byLabel.get(operand.trim().toLowerCase());
  };
}
