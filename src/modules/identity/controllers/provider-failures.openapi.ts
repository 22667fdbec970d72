import { applyDecorators } from '@nestjs/common';
import { ApiNotFoundResponse, ApiResponse } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';

/**
 * The failures of an operation that goes to a third-party login provider (docs/auth.md "Third-party login"): the
 * provider is not configured or not enabled (404), or its discovery document cannot be fetched (503).
 */
export function ApiProviderFailures(): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiNotFoundResponse({ description: 'NOT_FOUND: the login provider is not configured or not enabled', schema: ERROR_ENVELOPE_SCHEMA }),
    ApiResponse({ status: 503, description: 'SERVICE_UNAVAILABLE: the login provider is not reachable', schema: ERROR_ENVELOPE_SCHEMA }),
  );
}
