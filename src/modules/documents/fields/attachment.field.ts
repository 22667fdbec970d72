import type { Attachment, FieldDefinition, StoredValue, Value } from './field.types.js';
import { BaseFieldHandler, NOT_CONVERTIBLE } from './base.field.js';
import {
  OPS_EMPTY,
  jsonSql,
  type ConvertResult,
  type FieldRef,
  type OperandResult,
  type PortableValue,
  type TypedSql,
} from './field-type-handler.js';
import { describeInput, invalid, isPlainObject, unwrapValue } from './field-value.utils.js';

/** `http(s)://...` or a path; other schemes (`javascript:`, `data:` ...) are refused. */
const URL_SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/**
 * What a browser parses of a URL (WHATWG URL standard): leading and trailing C0 controls and spaces are stripped and
 * every tab and newline removed, so `java\nscript:alert(1)` or `\u0001javascript:…` in an href is a `javascript:`
 * URL. The scheme is read from that form; the URL is stored as written.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const URL_EDGE_CONTROLS = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;
const URL_TABS_AND_NEWLINES = /[\t\n\r]/g;

function schemeOf(url: string): string | undefined {
  const parsed = url.trim().replace(URL_EDGE_CONTROLS, '').replace(URL_TABS_AND_NEWLINES, '');
  return URL_SCHEME.exec(parsed)?.[1]?.toLowerCase();
}

function optionalString(
  item: Record<string, unknown>,
  key: string,
  field: FieldDefinition,
  index: number,
): string | undefined {
  const value = item[key];
  if (value === undefined || value === null) {
    return undefined;
  }
  return typeof value === 'string' ? value : invalid(field, `attachments[${index}].${key} must be a string`);
}

function parseAttachment(item: unknown, field: FieldDefinition, index: number): Attachment {
  if (!isPlainObject(item)) {
    return invalid(field, `attachments[${index}] must be an object, got ${describeInput(item)}`);
  }
  const name = optionalString(item, 'name', field, index);
  const url = optionalString(item, 'url', field, index);
  if (!name || name.trim() === '') {
    return invalid(field, `attachments[${index}].name is required`);
  }
  if (!url || url.trim() === '') {
    return invalid(field, `attachments[${index}].url is required`);
  }
  const scheme = schemeOf(url);
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') {
    return invalid(field, `attachments[${index}].url must be an http(s) URL or a path`);
  }
  const attachment: Attachment = { name, url };
  const id = optionalString(item, 'id', field, index);
  const mimeType = optionalString(item, 'mimeType', field, index);
  if (id !== undefined) {
    attachment.id = id;
  }
  if (mimeType !== undefined) {
    attachment.mimeType = mimeType;
  }
  if (item.size !== undefined && item.size !== null) {
    if (typeof item.size !== 'number' || !Number.isSafeInteger(item.size) || item.size < 0) {
      return invalid(field, `attachments[${index}].size must be a non-negative integer`);
    }
    attachment.size = item.size;
  }
  return attachment;
}

/**
 * attachment. Value `{attachments: [{id?, name, url, mimeType?, size?}]}` (or `{attachment: ...}`), a plain
 * array or one object; stored as the array with only those keys. Filters: is_empty / is_not_empty.
 */
export class AttachmentFieldHandler extends BaseFieldHandler {
  readonly family = 'attachment';
  readonly operators = OPS_EMPTY;
  readonly ruleKind = 'list';

  protected parseValue(input: unknown, field: FieldDefinition): StoredValue | null {
    let raw = unwrapValue(input, ['attachments', 'attachment']);
    if (raw === null || raw === undefined) {
      return null;
    }
    if (isPlainObject(raw)) {
      raw = [raw];
    }
    if (!Array.isArray(raw)) {
      return invalid(field, `expected an array of attachments, got ${describeInput(raw)}`);
    }
    const attachments = raw.map((item, index) => parseAttachment(item, field, index));
    return attachments.length === 0 ? null : (attachments as unknown as StoredValue);
  }

  toValue(stored: StoredValue): Value {
    return { attachments: (Array.isArray(stored) ? stored : []) as unknown as Attachment[] };
  }

  toPortable(stored: StoredValue): PortableValue {
    const names = (Array.isArray(stored) ? stored : []).map((item) =>
      isPlainObject(item) ? String(item.name) : '',
    );
    return { kind: 'attachments', text: names.join(', '), stored };
  }

  convertFrom(source: PortableValue): ConvertResult {
    return source.kind === 'attachments' ? { ok: true, value: source.stored } : NOT_CONVERTIBLE;
  }

  sqlExpr(ref: FieldRef): TypedSql {
    return { sql: jsonSql(ref), cast: 'jsonb' };
  }

  override operand(): OperandResult {
    return { ok: false, reason: 'attachment fields only support is_empty and is_not_empty' };
  }
}
