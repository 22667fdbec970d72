import { randomUUID } from 'node:crypto';
import type { OpenAPIV3 } from 'openapi-types';

type Schema = OpenAPIV3.SchemaObject;

/** Which properties of an object a generated value has: the required ones only, or every declared one. */
export type Fill = 'required' | 'all';

/** Past this depth an optional nested object is left out and a required one is `{}`: schemas may refer to themselves. */
const MAX_DEPTH = 6;

/**
 * Values of a pattern-checked string that clients commonly send, tried in turn against the pattern (after a unique
 * name, which most id and slug patterns take): an ISO currency, a language, a six-digit code, a phone number, a date.
 */
const PATTERN_CANDIDATES = ['x', 'USD', 'en', '123456', '+12025550123', '2026-01-01', 'ABC', 'abc', 'a,b', '1'];

/**
 * Request values built from an OpenAPI 3.0 document: what a client generated from the document would send when it
 * fills in only what the schema requires (or everything it declares). `$ref`s are followed, `allOf` members merged,
 * the first `oneOf`/`anyOf` branch taken; a value comes from the schema's `example`, `enum[0]` or `default`, else
 * from its type, `format` (a free-text `…Url`/`…Uri`/`…Endpoint` counts as a uri) and bounds (minimum, minLength,
 * maxLength, minItems, a pattern matched by one of a few candidates). Ids (format uuid) are always fresh, so they
 * name nothing.
 */
export class RequestValues {
  private counter = 0;

  /**
   * `known`: values of string properties and parameters by name wherever they appear (the caller's real
   * organization, workspace, document, row, user id), so a body can point at what exists around the id that does not.
   */
  constructor(
    private readonly doc: OpenAPIV3.Document,
    private readonly known: Readonly<Record<string, string>> = {},
  ) {}

  /** A JSON request body for the operation, or undefined when it takes none. */
  body(operation: OpenAPIV3.OperationObject, fill: Fill): unknown {
    const body = this.ref<OpenAPIV3.RequestBodyObject>(operation.requestBody);
    const schema = body?.content?.['application/json']?.schema;
    return schema ? this.value(schema, fill, 0) : undefined;
  }

  /** The operation's required query parameters with a value each (all declared ones with `fill: 'all'`). */
  query(operation: OpenAPIV3.OperationObject, fill: Fill): Record<string, unknown> {
    const query: Record<string, unknown> = {};
    for (const node of operation.parameters ?? []) {
      const parameter = this.ref<OpenAPIV3.ParameterObject>(node);
      if (parameter?.in === 'query' && (parameter.required || fill === 'all') && parameter.schema) {
        query[parameter.name] = this.value(parameter.schema, fill, 0, parameter.name);
      }
    }
    return query;
  }

  /** The operation's parameter `name` in `where` (a path, query or header parameter), references followed. */
  parameter(operation: OpenAPIV3.OperationObject, where: string, name: string): OpenAPIV3.ParameterObject | undefined {
    return (operation.parameters ?? []).map((node) => this.ref<OpenAPIV3.ParameterObject>(node)).find((p) => p?.in === where && p.name === name);
  }

  /** A value of `node`; `name` is the property or parameter it is the value of. */
  value(node: Schema | OpenAPIV3.ReferenceObject, fill: Fill, depth: number, name?: string): unknown {
    const schema = this.resolve(node);
    const known = name === undefined ? undefined : this.known[name];
    if (known !== undefined && schema.type === 'string' && (!schema.enum || schema.enum.includes(known))) {
      return known;
    }
    // An id is fresh even where the schema shows an example one: it must name nothing.
    if (schema.type === 'string' && schema.format === 'uuid') {
      return randomUUID();
    }
    if (schema.example !== undefined) {
      return structuredClone(schema.example);
    }
    if (schema.enum && schema.enum.length > 0) {
      return schema.enum[0];
    }
    if (schema.default !== undefined) {
      return structuredClone(schema.default);
    }
    const branches = schema.oneOf ?? schema.anyOf;
    if (branches && branches.length > 0) {
      return this.value(branches[0]!, fill, depth);
    }
    switch (schema.type) {
      case 'string':
        return this.string(schema, name);
      case 'integer':
      case 'number':
        return this.number(schema);
      case 'boolean':
        return true;
      case 'array':
        return this.array(schema, fill, depth);
      case 'object':
      case undefined:
        return this.object(schema, fill, depth);
    }
  }

  /** The schema itself: references followed, `allOf` members merged (properties, required lists, other keywords). */
  resolve(node: Schema | OpenAPIV3.ReferenceObject): Schema {
    const schema = this.ref<Schema>(node) ?? {};
    if (!schema.allOf) {
      return schema;
    }
    const { allOf, ...rest } = schema;
    const merged: Schema = {};
    for (const member of [...allOf.map((part) => this.resolve(part)), rest as Schema]) {
      Object.assign(merged, member, {
        properties: { ...merged.properties, ...member.properties },
        required: [...(merged.required ?? []), ...(member.required ?? [])],
      });
    }
    return merged;
  }

  private ref<T>(node: unknown): T | undefined {
    let current = node as (T & { $ref?: string }) | undefined;
    for (let hops = 0; current?.$ref && hops < 10; hops += 1) {
      const [, , kind, name] = current.$ref.split('/');
      current = (this.doc.components as Record<string, Record<string, unknown> | undefined> | undefined)?.[kind!]?.[name!] as typeof current;
    }
    return current;
  }

  private string(schema: Schema, name = ''): string {
    this.counter += 1;
    // A link the schema types as free text (avatarUrl, redirectUri, tokenEndpoint): what its name says it is.
    const format = schema.format ?? (/(url|uri|endpoint)$/i.test(name) ? 'uri' : '');
    switch (format) {
      case 'uuid':
        return randomUUID();
      case 'email':
        return `sweep-${randomUUID().slice(0, 8)}@example.com`;
      case 'date-time':
        return new Date().toISOString();
      case 'date':
        return new Date().toISOString().slice(0, 10);
      case 'uri':
      case 'url':
        return 'https://example.com/x';
    }
    const unique = `sweep${this.counter}`;
    const min = schema.minLength ?? 0;
    const max = schema.maxLength ?? Infinity;
    const fits = (text: string): boolean => text.length >= min && text.length <= max && (!schema.pattern || new RegExp(schema.pattern).test(text));
    const padded = (text: string): string => (text.length < min ? text + 'x'.repeat(min - text.length) : text).slice(0, Math.max(max, min));
    for (const text of [unique, ...PATTERN_CANDIDATES]) {
      if (fits(padded(text))) {
        return padded(text);
      }
    }
    // A pattern none of the candidates matches: the value is sent anyway and the route answers VALIDATION_ERROR.
    return padded(unique);
  }

  private number(schema: Schema): number {
    const exclusive = schema.exclusiveMinimum === true ? 1 : 0;
    if (schema.minimum !== undefined) {
      return schema.minimum + exclusive;
    }
    return schema.maximum !== undefined ? Math.min(1, schema.maximum) : 1;
  }

  private array(schema: Schema & { items?: Schema | OpenAPIV3.ReferenceObject }, fill: Fill, depth: number): unknown[] {
    const count = Math.max(schema.minItems ?? 0, fill === 'all' ? 1 : 0);
    const items = schema.items ? this.resolve(schema.items) : {};
    // Distinct values where the items choose from an enum (unique lists of scopes, events, roles).
    if (items.enum && items.example === undefined) {
      return items.enum.slice(0, count);
    }
    return Array.from({ length: count }, () => this.value(items, fill, depth + 1));
  }

  private object(schema: Schema, fill: Fill, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const required = new Set(schema.required ?? []);
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const wanted = required.has(name) || (fill === 'all' && depth < MAX_DEPTH && !this.resolve(property).readOnly);
      if (wanted) {
        out[name] = depth < MAX_DEPTH ? this.value(property, fill, depth + 1, name) : {};
      }
    }
    return out;
  }
}
