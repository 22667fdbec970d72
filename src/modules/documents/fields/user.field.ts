import type { FieldDefinition, StoredValue, Value } from './field.types.js';
import { BaseFieldHandler, NOT_CONVERTIBLE } from './base.field.js';
import {
  OPS_EQUALITY,
  OPS_SET,
  jsonSql,
  textSql,
  type ConvertResult,
  type FieldRef,
  type OperandResult,
  type PortableValue,
  type TypedSql,
} from './field-type-handler.js';
import { dedupe, describeInput, idOf, invalid, unwrapValue } from './field-value.utils.js';

const MAX_ID_LENGTH = 255;

/** A user id from `"u1"` or `{id: "u1"}`; throws when neither. */
export function parseUserId(raw: unknown, field: FieldDefinition): string {
  const id = idOf(raw);
  if (id === null || id.trim() === '' || id.length > MAX_ID_LENGTH) {
    return invalid(field, `expected a user reference ({id}) or user id, got ${describeInput(raw)}`);
  }
  return id;
}

/** The Value keys the writes of user and collaborator accept. */
const USER_KEYS = ['user'];
const COLLABORATOR_KEYS = ['collaborators', 'collaborator', 'users', 'user'];

/** One user id: `"id"`, `{id}`, or either inside the field's Value keys (`{user: {id}}`). */
export function userOperand(value: unknown, keys: readonly string[] = USER_KEYS): OperandResult {
  const id = idOf(unwrapValue(value, keys));
  return id === null || id === '' ? { ok: false, reason: 'expected a user id' } : { ok: true, value: id };
}

export function usersPortable(ids: string[], stored: StoredValue): PortableValue {
  return { kind: 'users', text: ids.join(', '), items: ids.map((id) => ({ id, label: id })), stored };
}

/** user. Value `{user: {id}}`, `{user: "id"}`, a plain id or `{id}`; stored as the user id. Response `{user: {id}}`. */
export class UserFieldHandler extends BaseFieldHandler {
  readonly family = 'id';
  readonly operators = OPS_EQUALITY;
  readonly ruleKind = 'scalar';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    const raw = unwrapValue(input, USER_KEYS);
    return raw === null || raw === undefined || raw === '' ? null : parseUserId(raw, field);
  }

  toValue(stored: StoredValue): Value {
    return { user: { id: String(stored) } };
  }

  toPortable(stored: StoredValue): PortableValue {
    return usersPortable([String(stored)], stored);
  }

  convertFrom(source: PortableValue): ConvertResult {
    if (source.kind !== 'users' || (source.items ?? []).length > 1) {
      return NOT_CONVERTIBLE;
    }
    return { ok: true, value: source.items?.[0]?.id ?? null };
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: textSql(ref), cast: 'text' };
  }

  override operand(value: unknown): OperandResult {
    return userOperand(value);
  }
}

/**
 * collaborator. Value `{collaborators: [{id} | "id"]}` or `{collaborator: {id} | "id"}`, a plain id or array;
 * stored as an array of user ids (deduplicated). Response `{collaborators: [{id}]}`.
 */
export class CollaboratorFieldHandler extends BaseFieldHandler {
  readonly family = 'set';
  readonly operators = OPS_SET;
  readonly ruleKind = 'list';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    let raw = unwrapValue(input, COLLABORATOR_KEYS);
    if (raw === null || raw === undefined || raw === '') {
      return null;
    }
    if (!Array.isArray(raw)) {
      raw = [raw];
    }
    const ids = dedupe(
      (raw as unknown[]).map((item) => parseUserId(item, field)),
      (id) => id,
    );
    return ids.length === 0 ? null : ids;
  }

  toValue(stored: StoredValue): Value {
    const ids = Array.isArray(stored) ? stored.map(String) : [String(stored)];
    return { collaborators: ids.map((id) => ({ id })) };
  }

  toPortable(stored: StoredValue): PortableValue {
    return usersPortable(Array.isArray(stored) ? stored.map(String) : [String(stored)], stored);
  }

  convertFrom(source: PortableValue): ConvertResult {
    if (source.kind !== 'users') {
      return NOT_CONVERTIBLE;
    }
    const ids = (source.items ?? []).map((item) => item.id);
    return { ok: true, value: ids.length === 0 ? null : ids };
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: jsonSql(ref), cast: 'jsonb' };
  }

  override operand(value: unknown): OperandResult {
    return userOperand(value, COLLABORATOR_KEYS);
  }
}
