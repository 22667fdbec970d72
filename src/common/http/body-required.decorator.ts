import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor, UseInterceptors } from '@nestjs/common';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { AppException } from '../errors/app.exception.js';

/** Refuses a request that carries no body at all (after the guards, so 401/403/404 come first). */
@Injectable()
class BodyRequiredInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    // No bytes at all: the JSON parser reads an empty body (`Content-Length: 0`) as {}, or leaves none undefined.
    const length = request.headers['content-length'];
    const empty = request.headers['transfer-encoding'] === undefined && (length === undefined || Number(length) === 0);
    if (request.body === undefined || empty) {
      throw AppException.validation([{ field: 'body', reason: 'a body is required (send {} for the defaults)' }]);
    }
    return next.handle();
  }
}

/**
 * For replacing writes whose body has no required key, where an empty body means "everything to its default"
 * (`PUT /settings`): a request with no body at all — a client that forgot it — is VALIDATION_ERROR instead of
 * resetting everything; `{}` still asks for the defaults. The global validation pipe cannot tell the two apart (it
 * validates a missing body as `{}`).
 */
export const BodyRequired = (): MethodDecorator => UseInterceptors(BodyRequiredInterceptor);
