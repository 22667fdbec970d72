import { ApiConflictResponse, ApiGoneResponse, ApiNotFoundResponse } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';

/** The 409 answers of a supply-chain operation (INVALID_STATE, ALREADY_EXISTS, VERSION_CONFLICT, CONFLICT…). */
export function ApiScConflict(description: string): MethodDecorator & ClassDecorator {
  return ApiConflictResponse({ description, schema: ERROR_ENVELOPE_SCHEMA });
}

/** The 410 of an operation taking a share code: revoked or expired, or its organizations used up. */
export function ApiShareCodeGone(): MethodDecorator & ClassDecorator {
  return ApiGoneResponse({
    description:
      'SHARE_LINK_EXPIRED: the share code is revoked, expired or its connection disabled; SHARE_LINK_EXHAUSTED: maxUses organizations admitted already',
    schema: ERROR_ENVELOPE_SCHEMA,
  });
}

export function ApiScNotFound(description: string): MethodDecorator & ClassDecorator {
  return ApiNotFoundResponse({ description, schema: ERROR_ENVELOPE_SCHEMA });
}

/** Row writes through the documents module: an open request to append to, a row id taken, a concurrent merge. */
export const ROW_WRITE_CONFLICTS =
  'INVALID_STATE: requestId names a request that is not open; ALREADY_EXISTS: operation create with an id that exists; ' +
  'VERSION_CONFLICT: version is not the current version of the row (payload currentVersion, yourVersion); ' +
  'CONFLICT: a concurrent change conflicts with the merge (payload requestId, conflicts)';
