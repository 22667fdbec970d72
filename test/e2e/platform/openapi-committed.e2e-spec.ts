import { readFileSync } from 'node:fs';
import type { OpenAPIV3 } from 'openapi-types';
import request from 'supertest';
import { createTestApp, type TestApp } from '../../utils/test-app.js';
import { ResponseChecker } from './support/openapi-responses.js';

/**
 * The conformance files check answers against the document the app serves under jest. The document clients get is
 * the committed docs/openapi.json, built from dist/ by `npm run openapi:export`; the two can differ where a library
 * documents itself only outside jest (@nestjs/terminus loads @nestjs/swagger with `require`, which under jest's ESM
 * sandbox writes to another `Reflect`). These checks read the committed document itself.
 */
describe('the committed OpenAPI document (docs/openapi.json)', () => {
  const committed = JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as OpenAPIV3.Document;
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('declares every JSON answer as the envelope of spec 1 (success, message, payload)', () => {
    const bare: string[] = [];
    for (const [path, item] of Object.entries(committed.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, OpenAPIV3.OperationObject>)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const schema = (response as OpenAPIV3.ResponseObject).content?.['application/json']?.schema as OpenAPIV3.SchemaObject | undefined;
          if (!schema || schema.format === 'binary') {
            continue;
          }
          const required = schema.required ?? [];
          if (!['success', 'message', 'payload'].every((name) => required.includes(name))) {
            bare.push(`${method.toUpperCase()} ${path} ${status}`);
          }
        }
      }
    }
    expect(bare).toEqual([]);
  });

  it('declares failures as JSON only: an error is the envelope whatever media type the success has', () => {
    const elsewhere: string[] = [];
    for (const [path, item] of Object.entries(committed.paths)) {
      for (const [method, operation] of Object.entries(item as Record<string, OpenAPIV3.OperationObject>)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          for (const [mediaType, content] of Object.entries((response as OpenAPIV3.ResponseObject).content ?? {})) {
            const required = (content.schema as OpenAPIV3.SchemaObject | undefined)?.required ?? [];
            if (Number(status) >= 400 && required.includes('success') && mediaType !== 'application/json') {
              elsewhere.push(`${method.toUpperCase()} ${path} ${status} ${mediaType}`);
            }
          }
        }
      }
    }
    expect(elsewhere).toEqual([]);
  });

  it('names every typed key a Value is answered with (docs/values.md, "Shapes")', () => {
    const value = (committed.components?.schemas?.ValueEntryDto as OpenAPIV3.SchemaObject).properties?.value as OpenAPIV3.SchemaObject;
    const keys = ['text', 'number', 'boolean', 'date', 'selectOption', 'multiSelect', 'user', 'duration', 'rating', 'attachments', 'collaborators', 'relation', 'list', 'json'];
    const named = new Set(value.description?.match(/\w+/g) ?? []);
    expect(keys.filter((key) => !named.has(key))).toEqual([]);
  });

  it('describes what the health probes answer', async () => {
    const checker = new ResponseChecker(committed);
    const problems: string[] = [];
    for (const path of ['/health', '/health/ready']) {
      const res = await request(t.http).get(path).expect(200);
      problems.push(...checker.check({ operation: `GET ${path}`, status: res.status, body: res.body, contentType: res.headers['content-type'] }));
    }
    expect(problems).toEqual([]);
  });
});
