import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';

/**
 * Spec 9.4–9.5: the `apply` query parameter (direct writes) is deprecated, so every response to a write that
 * uses it — success or failure — carries `X-API-Deprecated: true`.
 */
@Injectable()
export class ApplyDeprecationInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    if (request.query.apply !== undefined) {
      http.getResponse<Response>().setHeader('X-API-Deprecated', 'true');
    }
    return next.handle();
  }
}
