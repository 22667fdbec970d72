import type { OpenAPIV3 } from 'openapi-types';
import { answerOf, call, createOrderBook, openSyncApp, type SyncApp, text } from './sync.fixtures.js';

/** A JSON schema's `type` (OpenAPI 3.0: one type, or none for any value) admits `value`. */
function typeAdmits(schema: OpenAPIV3.SchemaObject, value: unknown): boolean {
  if (value === null) {
    return schema.nullable === true || schema.type === undefined;
  }
  if (schema.oneOf) {
    return (schema.oneOf as OpenAPIV3.SchemaObject[]).some((option) => typeAdmits(option, value));
  }
  if (schema.type === undefined) {
    return true;
  }
  const actual = Array.isArray(value) ? 'array' : typeof value;
  return schema.type === actual || (schema.type === 'integer' && Number.isInteger(value));
}

interface SyncRequestAnswer {
  changes: Array<{ values: Array<{ fieldId: string; value: unknown }> }>;
}

/**
 * The OpenAPI schema of a sync change's ValueEntry admits what the route answers: a change's values are recorded as
 * sent (a Value, or a write form of docs/values.md such as a plain string), so `value` is declared as any JSON.
 */
describe('Sync request changes against their OpenAPI schema', () => {
  let s: SyncApp;

  beforeAll(async () => {
    s = await openSyncApp(1);
  });
  afterAll(async () => {
    await s.t.close();
  });

  it('declares value as any JSON, so a plain string sent and answered back fits the schema', async () => {
    const [buyer] = s.users;
    const org = s.orgs[0] as string;
    const orderBookId = await createOrderBook(s.t, buyer!, org, 'Contract', [text('note')]);
    const answer = await call<SyncRequestAnswer>(s.t, buyer!, 'post', `/organizations/${org}/orderbooks/${orderBookId}/requests`, {
      changes: [{ operation: 'create_row', rowId: 'x1', values: [{ fieldId: 'note', value: 'hi' }] }],
    });
    const sent = answer.changes[0]?.values[0]?.value;
    expect(sent).toBe('hi');
    const schemas = (s.t.openApi as OpenAPIV3.Document).components?.schemas ?? {};
    const entry = schemas.SyncValueEntryDto as OpenAPIV3.SchemaObject;
    const valueSchema = entry.properties?.value as OpenAPIV3.SchemaObject;
    expect(typeAdmits(valueSchema, sent)).toBe(true);
    expect(typeAdmits(valueSchema, { text: 'hi' })).toBe(true);
    expect(typeAdmits(valueSchema, null)).toBe(true);
  });

  it("names the sync request as requestId when an order book's approval gate refuses its accept, and changes nothing", async () => {
    const [buyer] = s.users;
    const org = s.orgs[0] as string;
    const orderBookId = await createOrderBook(s.t, buyer!, org, 'Gated', [text('note')]);
    await call(s.t, buyer!, 'put', `/doc/orderbook/${orderBookId}/settings?organizationId=${org}`, {
      workflow: { requiresApproval: true },
    });
    const created = await call<{ requestId: string; documentRequestId: string }>(
      s.t,
      buyer!,
      'post',
      `/organizations/${org}/orderbooks/${orderBookId}/requests`,
      { requestId: 'gated-1', changes: [{ operation: 'create_row', rowId: 'g1', values: [{ fieldId: 'note', value: 'hi' }] }] },
    );
    const path = `/organizations/${org}/orderbooks/${orderBookId}/requests/gated-1`;
    const before = await call(s.t, buyer!, 'get', path);
    const refused = await answerOf(s.t, buyer!, 'post', `${path}/accept`, {});
    // As for a merge conflict of the same route: requestId is the id the client decides with, next to the
    // document request that met the gate.
    expect(refused).toMatchObject({
      status: 409,
      code: 'APPROVAL_REQUIRED',
      payload: { requestId: 'gated-1', documentRequestId: created.documentRequestId, instanceId: null, status: null },
    });
    expect(await call(s.t, buyer!, 'get', path)).toEqual(before);
  });
});
