import { Param } from '@nestjs/common';
import { UuidParamPipe } from '../../../common/http/uuid-param.pipe.js';

/**
 * The `{organizationId}` of a supply-chain path, in lower case: the module compares organization ids as strings
 * (owner checks, whitelists, bindings) against what PostgreSQL answers, which is lower case. Anything but a UUID
 * names no organization: NOT_FOUND, as the membership check answers.
 */
export function OrganizationIdParam(): ParameterDecorator {
  return Param('organizationId', new UuidParamPipe('organization'));
}
