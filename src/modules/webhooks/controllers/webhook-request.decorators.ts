import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Request } from 'express';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';

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

/** What is wrong with the body of a route that takes none: nothing for no body or `{}`. */
export function bodyProblems(body: unknown): ErrorDetail[] {
  if (body === undefined) {
    return [];
  }
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    return Object.keys(body).map((key) => ({ field: key, reason: `property ${key} should not exist` }));
  }
  return [{ field: 'body', reason: 'this route takes no body (send none, or {})' }];
}

/**
 * For the webhook routes that take no body (pause, resume, regenerate-secret, redeliver, delete): anything but no
 * body or `{}` is VALIDATION_ERROR naming the fields, worded like the whitelist errors of the routes with a body —
 * so `{"secret": "mine"}` on regenerate-secret is not mistaken for a secret the caller chose. Not an OpenAPI body.
 */
export const NoBody = createParamDecorator((_data: unknown, context: ExecutionContext): undefined => {
  const problems = bodyProblems(context.switchToHttp().getRequest<Request>().body);
  if (problems.length > 0) {
    throw AppException.validation(problems);
  }
  return undefined;
});
