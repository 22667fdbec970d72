import { DOMAIN_EVENT_TYPES, EVENT_GROUPS } from '../../events/event-catalogue.js';
import { narrowedScopes, readScopeOf, scopesRead } from './webhook-event-scopes.js';

describe('webhook event scopes', () => {
  const ofDocument = (eventType: string) => ({ eventType, docType: 'products', docId: 'p-1' });

  it('reads row events with data:read and every other event of a document with doc:read', () => {
    for (const type of DOMAIN_EVENT_TYPES) {
      const expected = (EVENT_GROUPS.data as readonly string[]).includes(type) ? 'data:read' : 'doc:read';
      expect([type, readScopeOf(ofDocument(type))]).toEqual([type, expected]);
    }
    expect(readScopeOf({ eventType: 'member_added', docType: null, docId: null })).toBeNull();
  });

  it('admits an event when the scopes hold its read scope, or when no scopes were recorded', () => {
    expect(scopesRead(['webhooks:manage'], ofDocument('data_row_updated'))).toBe(false);
    expect(scopesRead(['doc:read', 'webhooks:manage'], ofDocument('data_row_updated'))).toBe(false);
    expect(scopesRead(['doc:read', 'webhooks:manage'], ofDocument('comment_created'))).toBe(true);
    expect(scopesRead(['data:read'], ofDocument('data_bulk_operation'))).toBe(true);
    expect(scopesRead(null, ofDocument('data_row_created'))).toBe(true);
    expect(scopesRead([], { eventType: 'member_added', docType: null, docId: null })).toBe(true);
  });

  it('narrows to the intersection on PUT and never widens', () => {
    expect(
      narrowedScopes(['data:read', 'doc:read', 'webhooks:manage'], ['webhooks:manage', 'doc:read']),
    ).toEqual(['doc:read', 'webhooks:manage']);
    expect(narrowedScopes(['webhooks:manage'], ['data:read', 'doc:read', 'webhooks:manage'])).toEqual([
      'webhooks:manage',
    ]);
    expect(narrowedScopes(null, ['webhooks:manage', 'doc:read', 'doc:read'])).toEqual([
      'doc:read',
      'webhooks:manage',
    ]);
  });
});
