import { assertNever } from '../../../common/assert-never.js';
import type { Principal, Scope } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import type { ChangeOperationKind, ChangeType, RevisionOperationType, TargetKind } from './document.records.js';

/** A change as a request body names it, as it is stored, or as a revision records it. */
export type AnyChangeType = ChangeType | RevisionOperationType;

/**
 * The scope of the direct route that writes the same thing (spec 5.8): rows and relation edges are data
 * (`/data`, `/relations`: `data:write`); fields, metadata, settings and properties are the document
 * (`/metadata`, `/settings`, `/properties`: `doc:write`). A request must not reach more than those routes do.
 */
export function scopeOfChange(type: AnyChangeType): Scope {
  switch (type) {
    case 'row-create':
    case 'row-update':
    case 'row-delete':
    case 'relation-create':
    case 'relation-delete':
      return 'data:write';
    case 'field-create':
    case 'field-update':
    case 'field-delete':
    case 'metadata-update':
    case 'settings-update':
    case 'property-update':
    case 'property-delete':
      return 'doc:write';
    default:
      return assertNever(type);
  }
}

/**
 * FORBIDDEN, like the access guard's missing scope, when the credential lacks the scope of one of the changes'
 * direct routes. A first-party session carries every scope, so only narrower tokens and API keys are refused.
 */
export function assertScopesForChanges(principal: Principal, types: Iterable<AnyChangeType>): void {
  const missing = new Set<Scope>();
  const refused = new Set<string>();
  for (const type of types) {
    const scope = scopeOfChange(type);
    if (!principal.scopes.includes(scope)) {
      missing.add(scope);
      refused.add(type);
    }
  }
  if (missing.size > 0) {
    throw AppException.forbidden(`missing scope ${[...missing].join(' ')} (changes of type ${[...refused].join(', ')})`);
  }
}

/** The `target.kind` a request body's change of each type names (spec 2.9). */
export function targetKindOf(type: AnyChangeType): TargetKind {
  switch (type) {
    case 'row-create':
    case 'row-update':
    case 'row-delete':
      return 'row';
    case 'field-create':
    case 'field-update':
    case 'field-delete':
      return 'field';
    case 'metadata-update':
      return 'metadata';
    case 'settings-update':
      return 'settings';
    case 'property-update':
    case 'property-delete':
      return 'property';
    case 'relation-create':
    case 'relation-delete':
      return 'relation';
    default:
      return assertNever(type);
  }
}

/**
 * The `operation`s (spec 2.9's Change: create, update, delete) a change of each type may show. A property-update
 * is `create` when it created the document's properties (`POST /properties`), else `update`.
 */
export function operationsOfChange(type: AnyChangeType): readonly ChangeOperationKind[] {
  switch (type) {
    case 'row-create':
    case 'field-create':
    case 'relation-create':
      return ['create'];
    case 'row-delete':
    case 'field-delete':
    case 'property-delete':
    case 'relation-delete':
      return ['delete'];
    case 'property-update':
      return ['create', 'update'];
    case 'row-update':
    case 'field-update':
    case 'metadata-update':
    case 'settings-update':
      return ['update'];
    default:
      return assertNever(type);
  }
}
