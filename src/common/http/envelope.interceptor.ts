import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { map, type Observable } from 'rxjs';
import { SUCCESS_MESSAGE } from '../i18n/error-messages.js';
import type { Envelope } from './envelope.js';

export const RAW_RESPONSE = 'quire:raw-response';

/** Wraps every successful handler result in the envelope, unless the handler is marked @RawResponse(). */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const raw = this.reflector.getAllAndOverride<boolean>(RAW_RESPONSE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (raw || context.getType() !== 'http') {
      return next.handle();
    }
    return next
      .handle()
      .pipe(
        map((payload): Envelope<unknown> => ({
          success: true,
          message: SUCCESS_MESSAGE,
          payload: payload ?? null,
        })),
      );
  }
}
