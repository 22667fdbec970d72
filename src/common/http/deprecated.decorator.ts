import { applyDecorators, Header } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';

/** Marks an operation deprecated (spec section 9.4): every response carries `X-API-Deprecated: true`. */
export function Deprecated(note = 'Deprecated'): MethodDecorator {
  return applyDecorators(Header('X-API-Deprecated', 'true'), ApiOperation({ deprecated: true, description: note }));
}
