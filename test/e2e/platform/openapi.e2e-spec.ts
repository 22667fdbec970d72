import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3 } from 'openapi-types';
import request from 'supertest';
import { ErrorCode } from '../../../src/common/errors/error-code.js';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

describe('OpenAPI document and Swagger UI', () => {
  let t: TestApp;
  let doc: OpenAPIV3.Document;

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await request(t.http).get('/api/docs-json').expect(200)).body as OpenAPIV3.Document;
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves a valid OpenAPI 3 document at /api/docs-json', async () => {
    expect(doc.openapi).toMatch(/^3\./);
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('declares the bearer security scheme and marks protected operations with it', () => {
    expect(doc.components?.securitySchemes?.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const me = doc.paths['/api/v1/users/me']?.get;
    expect(me?.security).toEqual(expect.arrayContaining([{ bearer: [] }]));
    const register = doc.paths['/api/v1/auth/register']?.post;
    expect(register?.security ?? []).toEqual([]);
  });

  it('shows the envelope around every documented success response', () => {
    const problems: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item ?? {}) as Array<
        [string, OpenAPIV3.OperationObject]
      >) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) {
          continue;
        }
        const successes = Object.entries(operation.responses ?? {}).filter(([status]) =>
          /^2\d\d$/.test(status),
        );
        if (successes.length === 0) {
          problems.push(`${method.toUpperCase()} ${path}: no documented success response`);
        }
        for (const [status, response] of successes) {
          const content = (response as OpenAPIV3.ResponseObject).content;
          const schema = content?.['application/json']?.schema as OpenAPIV3.SchemaObject | undefined;
          // File downloads (revision exports) are the file itself; their failures are still the envelope.
          const isFile = schema?.type === 'string' && schema.format === 'binary';
          if (content && schema && !isFile && !(schema.required ?? []).includes('success')) {
            problems.push(`${method.toUpperCase()} ${path} ${status}: not the envelope`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('lists every error code, spelled as in the code, in the failure envelope', () => {
    const operation = doc.paths['/api/v1/users/me']?.get;
    const failure = (operation?.responses?.['401'] as OpenAPIV3.ResponseObject).content?.['application/json']
      ?.schema as OpenAPIV3.SchemaObject;
    const code = failure.properties?.code as OpenAPIV3.SchemaObject;
    expect(code.enum).toEqual(Object.values(ErrorCode));
  });

  it('serves the Swagger UI as HTML at /api/docs', async () => {
    const res = await request(t.http).get('/api/docs').redirects(1).expect(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toContain('swagger-ui');
  });
});
