import type { OpenAPIV3 } from 'openapi-types';
import { createTestApp, type TestApp } from '../../utils/test-app.js';

/** The OpenAPI document declares the statuses the document data routes answer and the bulk body forms they take. */
describe('OpenAPI declarations of document data routes', () => {
  let t: TestApp;
  let doc: OpenAPIV3.Document;

  beforeAll(async () => {
    t = await createTestApp();
    doc = t.openApi as OpenAPIV3.Document;
  });
  afterAll(async () => {
    await t.close();
  });

  function operation(method: 'get' | 'post' | 'delete', path: string): OpenAPIV3.OperationObject {
    const found = doc.paths[`/api/v1/doc/{docType}/{docId}${path}`]?.[method];
    if (!found) {
      throw new Error(`no ${method.toUpperCase()} ${path} in the document`);
    }
    return found;
  }

  it.each([
    ['post', '/data', '409', 'ALREADY_EXISTS'],
    ['post', '/rows', '409', 'INVALID_STATE'],
    ['post', '/data/bulk', '409', 'INVALID_STATE'],
    ['post', '/rows/batch-update', '409', 'INVALID_STATE'],
    ['delete', '/properties', '409', 'VERSION_CONFLICT'],
    ['delete', '/properties', '409', 'INVALID_STATE'],
    ['get', '/revisions/{revId}/export', '400', 'VALIDATION_ERROR'],
  ] as const)('%s %s declares %s (%s)', (method, path, status, code) => {
    const response = operation(method, path).responses[status] as OpenAPIV3.ResponseObject | undefined;
    expect(response?.description).toContain(code);
  });

  it.each([
    ['put', '/doc/{docType}/{docId}/settings', '409', 'INVALID_STATE'],
    ['post', '/doc/{docType}/{docId}/requests', '409', 'ALREADY_EXISTS'],
    ['get', '/doc/{docType}/setting', '404', 'DOC_NOT_FOUND'],
    ['put', '/doc/{docType}/setting', '404', 'DOC_NOT_FOUND'],
    ['post', '/doc/{docType}', '404', 'NOT_FOUND'],
    ['post', '/doc/{docType}', '409', 'ALREADY_EXISTS'],
  ] as const)('%s %s declares %s (%s)', (method, path, status, code) => {
    const response = doc.paths[`/api/v1${path}`]?.[method]?.responses[status] as OpenAPIV3.ResponseObject | undefined;
    expect(response?.description).toContain(code);
  });

  it('declares the three bulk body forms: the array, {updates} and the order-book {rows}', () => {
    for (const path of ['/data/bulk', '/rows/batch-update']) {
      const body = operation('post', path).requestBody as OpenAPIV3.RequestBodyObject;
      const schema = body.content['application/json']?.schema as OpenAPIV3.SchemaObject;
      const forms = (schema.oneOf ?? []) as OpenAPIV3.SchemaObject[];
      expect(forms.map((form) => (form.type === 'array' ? 'array' : Object.keys(form.properties ?? {}).join(',')))).toEqual(['array', 'updates', 'rows']);
    }
  });

  it('declares the version query parameter on every properties write', () => {
    for (const method of ['post', 'put', 'patch', 'delete'] as const) {
      const found = doc.paths['/api/v1/doc/{docType}/{docId}/properties']?.[method];
      expect((found?.parameters as OpenAPIV3.ParameterObject[]).map((p) => p.name)).toContain('version');
    }
  });
});
