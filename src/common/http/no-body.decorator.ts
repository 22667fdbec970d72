import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AppException, type ErrorDetail } from '../errors/app.exception.js';

/** What is wrong with the body of a route that takes none: nothing for no body or `{}`. */
function bodyProblems(body: unknown): ErrorDetail[] {
  if (body === undefined) {
    return [];
  }
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    return Object.keys(body).map((key) => ({ field: key, reason: `property ${key} should not exist` }));
  }
  return [{ field: 'body', reason: 'this route takes no body (send none, or {})' }];
}

/**
 * For routes that take no body (webhook pause/resume/regenerate-secret/redeliver/delete, realtime disconnect-all
 * and unlock): anything but no body or `{}` is VALIDATION_ERROR naming the keys, worded like the whitelist errors of
 * the routes with a body — so `{"secret": "mine"}` on regenerate-secret is not mistaken for a secret the caller
 * chose. Not an OpenAPI body.
 */
export const NoBody = createParamDecorator((_data: unknown, context: ExecutionContext): undefined => {
  const problems = bodyProblems(context.switchToHttp().getRequest<Request>().body);
  if (problems.length > 0) {
    throw AppException.validation(problems);
  }
  return undefined;
});
