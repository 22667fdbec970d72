import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import type { Response } from 'express';

export const DEPRECATED = 'quire:deprecated';
export const DEPRECATED_HEADER = 'X-API-Deprecated';

/**
 * Marks an operation deprecated (spec section 9.4): every response of it — successes and failures alike —
 * carries `X-API-Deprecated: true`, and OpenAPI marks it `deprecated`. The header is set by the first
 * global guard (AuthGuard), which runs for every matched route before anything can fail.
 */
export function Deprecated(note = 'Deprecated'): MethodDecorator {
  return applyDecorators(
    SetMetadata(DEPRECATED, true),
    ApiOperation({ deprecated: true, description: note }),
  );
}

export function markDeprecated(response: Response): void {
  response.setHeader(DEPRECATED_HEADER, 'true');
}

export const ACCEPTS_APPLY = 'quire:accepts-apply';

/**
 * Routes that still take the deprecated `apply` query parameter (spec 9.4–9.5: direct writes; every write goes
 * through `requestId`): a request that uses it gets `X-API-Deprecated: true` on every response — success or
 * failure, including a refused credential or an unknown document — set by AuthGuard like @Deprecated's.
 */
export const AcceptsApply = (): MethodDecorator & ClassDecorator => SetMetadata(ACCEPTS_APPLY, true);
