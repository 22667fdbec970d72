import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Request } from 'express';
import { AppException } from '../../../common/errors/app.exception.js';

/** The organization header of create and list, as documented (ApiHeader) and named in errors. */
export const ORGANIZATION_HEADER = 'X-Organization-Id';

/**
 * `X-Organization-Id` of create and list: absent → undefined; otherwise it must be a UUID, exactly like the
 * `organizationId` body/query field (IsUUID), else VALIDATION_ERROR on `X-Organization-Id`. A custom parameter
 * (not `@Headers`) so the OpenAPI document lists the header once, as `ApiHeader` declares it.
 */
export const OrganizationHeader = createParamDecorator(
  (_data: unknown, context: ExecutionContext): string | undefined => {
    const value = context.switchToHttp().getRequest<Request>().headers[ORGANIZATION_HEADER.toLowerCase()];
    if (value === undefined) {
      return undefined;
    }
    if (typeof value !== 'string' || !isUUID(value)) {
      throw AppException.validation([
        { field: ORGANIZATION_HEADER, reason: `${ORGANIZATION_HEADER} must be a UUID` },
      ]);
    }
    return value;
  },
);
