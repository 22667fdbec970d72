/**
 * Field definitions and the value shapes of document rows (interface specification sections 2.5 and 2.6).
 * The key of each type's `Value` and its stored form are listed at the top of field-type.registry.ts.
 */

/** Every field type, spelled exactly as the specification writes them. */
export const FIELD_TYPES = [
  'text',
  'long_text',
  'number',
  'currency',
  'percent',
  'date',
  'datetime',
  'boolean',
  'duration',
  'rating',
  'single_select',
  'multi_select',
  'attachment',
  'user',
  'collaborator',
  'relation',
  'lookup',
  'rollup',
  'formula',
  'auto_number',
  'created_time',
  'updated_time',
  'created_by',
  'updated_by',
] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

export const ROLLUP_AGGREGATIONS = ['sum', 'avg', 'min', 'max', 'count'] as const;
export type RollupAggregation = (typeof ROLLUP_AGGREGATIONS)[number];

export const VALIDATION_RULE_TYPES = [
  'pattern',
  'min',
  'max',
  'minLength',
  'maxLength',
  'enum',
  'custom',
] as const;
export type ValidationRuleType = (typeof VALIDATION_RULE_TYPES)[number];

export interface SelectOption {
  id: string;
  /** Language code → display name. */
  name?: Record<string, string>;
  label?: string;
  color?: string;
}

export interface ValidationRule {
  ruleType: ValidationRuleType;
  config?: Record<string, unknown>;
  /** Language code → message shown when the rule fails. */
  message?: Record<string, string>;
}

export interface LookupConfig {
  relationFieldId: string;
  targetFieldId: string;
}

export interface RollupConfig extends LookupConfig {
  agg: RollupAggregation;
}

export interface FieldDefinition {
  id: string;
  name: string;
  type: FieldType;
  required?: boolean;
  unique?: boolean;
  /** A Value (or a lenient raw form) parsed like any written value; applied on create. */
  defaultValue?: unknown;
  selectOptions?: SelectOption[];
  validations?: ValidationRule[];
  formula?: string;
  lookup?: LookupConfig;
  rollup?: RollupConfig;
  /** formula only: the inferred result type, set by the server when the metadata is written (docs/formulas.md). */
  resultType?: FormulaResultType;
}

/** What a formula evaluates to; decides its query operators (docs/formulas.md). */
export type FormulaResultType = 'number' | 'text' | 'boolean' | 'date';

/** What the `values` JSONB column holds per field id: a plain JSON value. */
export type StoredValue = string | number | boolean | null | StoredValue[] | { [key: string]: StoredValue };

/** Stored values of one row, keyed by field id. */
export type StoredRowValues = Record<string, StoredValue>;

export interface UserRef {
  id: string;
}

export interface SelectOptionValue {
  id: string;
  name?: Record<string, string>;
  label?: string;
  color?: string;
}

export interface Attachment {
  id?: string;
  name: string;
  url: string;
  mimeType?: string;
  size?: number;
}

export interface RelationRef {
  docType?: string;
  docId?: string;
  rowId: string;
}

/** The canonical response shape: an object carrying exactly one typed key. */
export type Value =
  | { text: string }
  | { number: number }
  | { boolean: boolean }
  | { date: string }
  | { selectOption: SelectOptionValue }
  | { multiSelect: SelectOptionValue[] }
  | { user: UserRef }
  | { duration: number }
  | { rating: number }
  | { attachments: Attachment[] }
  | { collaborators: UserRef[] }
  | { relation: RelationRef[] }
  /** A computed (lookup / formula) value that is a list. */
  | { list: StoredValue[] }
  /** A computed value that is a JSON object. */
  | { json: { [key: string]: StoredValue } };

export interface ValueEntry {
  fieldId: string;
  value: Value;
}

/** System columns that back computed fields and the query pseudo field ids. */
export type SystemColumn =
  'r.id' | 'r.created_at' | 'r.updated_at' | 'r.created_by' | 'r.updated_by' | 'r.version';

/** Row metadata that computed system fields (created_time, created_by, ...) read from. */
export interface RowSystemValues {
  createdAt?: string | Date | null;
  updatedAt?: string | Date | null;
  createdBy?: string | null;
  updatedBy?: string | null;
}
