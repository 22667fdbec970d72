import { ApiConflictResponse } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';

/**
 * The 409 of a write that takes an optimistic-lock `version` (spec 7 rule 1): VERSION_CONFLICT when it is not the
 * current version of `target`, CONFLICT when a concurrent change conflicts with the merge.
 */
export function ApiWriteConflict(target: string): MethodDecorator & ClassDecorator {
  return ApiConflictResponse({
    description:
      `VERSION_CONFLICT: version is not the current version of the ${target} (payload currentVersion, yourVersion); ` +
      'CONFLICT: a concurrent change conflicts with the merge (payload requestId, conflicts)',
    schema: ERROR_ENVELOPE_SCHEMA,
  });
}
