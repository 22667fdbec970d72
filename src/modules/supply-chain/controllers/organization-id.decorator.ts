import { Param } from '@nestjs/common';
import { UuidParamPipe } from '../../../common/http/uuid-param.pipe.js';

/**
 * The `{organizationId}` of a supply-chain path: anything but a UUID names no organization (NOT_FOUND, as the
 * membership check answers). The id arrives lower-cased already (`lowerCaseTenantIds`, which the module's string
 * comparisons of owners, whitelists and bindings rely on); the pipe lower-cases it too, for callers outside HTTP.
 */
export function OrganizationIdParam(): ParameterDecorator {
  return Param('organizationId', new UuidParamPipe('organization'));
}
