import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { OpenAPIV3 } from 'openapi-types';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { bearer } from '../../../factories/users.factory.js';

type Node = Record<string, unknown>;

/** Keywords whose value is one schema, or a list or map of schemas; everything else is data (enum, default, example). */
const ONE_SCHEMA = new Set(['items', 'not', 'additionalProperties']);
const SCHEMA_LIST = new Set(['allOf', 'oneOf', 'anyOf']);

/**
 * An OpenAPI 3.0 schema as JSON Schema 2020-12, read the way a generated client reads it: `nullable: true` admits
 * null, `$ref` points into the components, and an object that lists its properties has no others (a client built
 * from the schema drops what it does not declare).
 */
export function toJsonSchema(node: unknown): unknown {
  if (!node || typeof node !== 'object' || Array.isArray(node)) {
    return node;
  }
  const source = node as Node;
  const out: Node = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'nullable' || key === 'example') {
      continue;
    }
    if (key === '$ref') {
      out.$ref = String(value).replace('#/components/schemas/', 'openapi#/$defs/');
    } else if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Node).map(([name, schema]) => [name, toJsonSchema(schema)]));
    } else if (ONE_SCHEMA.has(key)) {
      out[key] = typeof value === 'object' ? toJsonSchema(value) : value;
    } else if (SCHEMA_LIST.has(key)) {
      out[key] = (value as unknown[]).map(toJsonSchema);
    } else {
      out[key] = value;
    }
  }
  if (out.properties && out.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  return source.nullable === true ? { anyOf: [{ type: 'null' }, out] } : out;
}

export interface Exchange {
  /** `GET /api/v1/users/me`, the path as the document spells it. */
  operation: string;
  status: number;
  body: unknown;
  contentType: string | undefined;
}

/** Checks answers against the response schemas an OpenAPI document declares for them. */
export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  readonly checked = new Set<string>();

  constructor(private readonly doc: OpenAPIV3.Document) {
    const defs = Object.fromEntries(Object.entries(doc.components?.schemas ?? {}).map(([name, schema]) => [name, toJsonSchema(schema)]));
    // The formats generated clients parse (a uuid or date-time typed property); others stay free text.
    this.ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
    this.ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
    this.ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
    this.ajv.addFormat('uri', /^[a-z][a-z0-9+.-]*:\S*$/i);
    this.ajv.addFormat('email', /^[^\s@]+@[^\s@]+$/);
    this.ajv.addSchema({ $id: 'openapi', $defs: defs });
  }

  /** The problems of one answer as `operation status pointer: problem` lines; none when it is what the document says. */
  check(exchange: Exchange): string[] {
    const [method, path] = exchange.operation.split(' ') as [string, string];
    const operation = (this.doc.paths[path] as Record<string, OpenAPIV3.OperationObject> | undefined)?.[method.toLowerCase()];
    const label = `${exchange.operation} ${exchange.status}`;
    if (!operation) {
      return [`${exchange.operation}: operation not in the document`];
    }
    this.checked.add(exchange.operation);
    const response = operation.responses[String(exchange.status)] as OpenAPIV3.ResponseObject | undefined;
    if (!response) {
      return [`${label}: status not declared (declared: ${Object.keys(operation.responses).join(', ')})`];
    }
    const answered = exchange.contentType?.split(';')[0]?.trim().toLowerCase();
    const declared = Object.keys(response.content ?? {});
    // A file or a page (a binary schema, or a media type other than JSON): the answer's media type is what a client
    // dispatches on, so it must be one the document lists; the body itself is not JSON to check.
    const jsonSchema = response.content?.['application/json']?.schema as OpenAPIV3.SchemaObject | undefined;
    const isFile = declared.length > 0 && (!jsonSchema || jsonSchema.format === 'binary');
    if (isFile) {
      return answered && declared.includes(answered) ? [] : [`${label}: declared ${declared.join(' or ')}, answered ${answered ?? 'no content type'}`];
    }
    // JSON or a page (a response that lists both): an answered page is one of the declared media types.
    if (answered && !answered.includes('json') && declared.includes(answered)) {
      return [];
    }
    const schema = jsonSchema;
    if (!schema) {
      const empty = exchange.body === undefined || exchange.body === '' || (typeof exchange.body === 'object' && exchange.body !== null && Object.keys(exchange.body).length === 0);
      return empty ? [] : [`${label}: a JSON body is answered but none is declared`];
    }
    if (!exchange.contentType?.includes('json')) {
      return [`${label}: declared JSON, answered ${exchange.contentType ?? 'no content type'}`];
    }
    const key = `${exchange.operation} ${exchange.status}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as object);
      this.compiled.set(key, validate);
    }
    if (validate(exchange.body)) {
      return [];
    }
    return readable(validate.errors ?? []).map((line) => `${label} ${line}`);
  }
}

/**
 * Ajv's errors without the noise of the nullable branches: the `must be null` of `anyOf[0]` and the `anyOf` summary
 * say nothing when the other branch names the real problem.
 */
function readable(errors: ErrorObject[]): string[] {
  const lines = new Set<string>();
  for (const error of errors) {
    if (error.keyword === 'type' && (error.params as { type?: string }).type === 'null' && /\/anyOf\/0\/type$/.test(error.schemaPath)) {
      continue;
    }
    if (error.keyword === 'anyOf' && errors.some((other) => other !== error && other.keyword !== 'anyOf' && other.instancePath.startsWith(error.instancePath) && !/\/anyOf\/0\/type$/.test(other.schemaPath))) {
      continue;
    }
    if (error.keyword === 'additionalProperties') {
      const name = (error.params as { additionalProperty: string }).additionalProperty;
      lines.add(`${error.instancePath}/${name}: undeclared property`);
    } else if (error.keyword === 'enum') {
      lines.add(`${error.instancePath || '/'}: ${error.message} ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}`);
    } else {
      lines.add(`${error.instancePath || '/'}: ${error.message}`);
    }
  }
  return [...lines];
}

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type Params = Record<string, string>;

/**
 * A request to an operation's path `template` with its `{name}` parts filled from `params` (URL-encoded), sent as
 * `user` when one is given, with `query` when given: both conformance files call the API this way.
 */
export function operationRequest(
  http: App,
  user: { token: string } | null,
  method: Method,
  template: string,
  params: Params,
  query?: Record<string, unknown>,
): request.Test {
  const url = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) {
      throw new Error(`no value for {${name}} of ${template}`);
    }
    return encodeURIComponent(value);
  });
  let req = request(http)[method](url);
  if (user) {
    req = req.set(bearer(user));
  }
  return query ? req.query(query as Record<string, string>) : req;
}
