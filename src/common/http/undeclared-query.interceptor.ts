import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { AppException } from '../errors/app.exception.js';
import { RAW_RESPONSE } from './envelope.interceptor.js';

/** What a handler reads from the query string: everything (a query DTO), or only these names (`@Query('name')`). */
type DeclaredQuery = 'dto' | ReadonlySet<string>;

/** Paths whose document context may be named by query (`workspaceId`, `organizationId`; document-scope.ts). */
const DOCUMENT_PATHS = /^\/(api\/v1\/(doc\/|relations(\/|$))|realtime\/doc\/)/i;
/** Realtime routes also take a connect token as `?token=` (realtime-auth.service.ts). */
const REALTIME_PATHS = /^\/realtime\//i;
/** Host-root probes (`/health`, `/metrics`) are not the API: monitors add cache-busting parameters freely. */
const API_PATHS = /^\/(api\/v1|realtime)(\/|$)/i;

/**
 * Unknown query parameters are refused like unknown body keys (docs/decisions/platform-paging.md): the global
 * validation pipe does that for handlers with a query DTO, but a handler that reads no query at all never met the
 * pipe, so `GET /users/me?fields=id` or `POST /organizations?requestId=…` answered as if the parameter were not
 * there. This refuses, with the pipe's wording, every query parameter such a handler does not read. Handlers with a
 * query DTO are left to the pipe; protocol endpoints (`@RawResponse()`: OAuth, discovery, streams, exports) and the
 * host-root probes keep their own rules.
 */
@Injectable()
export class UndeclaredQueryInterceptor implements NestInterceptor {
  private readonly declared = new Map<unknown, DeclaredQuery>();

  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') {
      return next.handle();
    }
    const request = context.switchToHttp().getRequest<Request>();
    const names = Object.keys(request.query ?? {});
    if (names.length === 0 || !API_PATHS.test(request.path)) {
      return next.handle();
    }
    if (this.reflector.getAllAndOverride<boolean>(RAW_RESPONSE, [context.getHandler(), context.getClass()])) {
      return next.handle();
    }
    const declared = this.declaredBy(context);
    if (declared === 'dto') {
      return next.handle();
    }
    const unknown = names.filter((name) => !declared.has(name) && !readByTheEdge(name, request.path));
    if (unknown.length > 0) {
      throw AppException.validation(unknown.map((name) => ({ field: name, reason: `property ${name} should not exist` })));
    }
    return next.handle();
  }

  private declaredBy(context: ExecutionContext): DeclaredQuery {
    const handler = context.getHandler();
    let declared = this.declared.get(handler);
    if (declared === undefined) {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) ?? {}) as Record<string, { data?: unknown }>;
      const named = new Set<string>();
      declared = named;
      for (const [key, arg] of Object.entries(args)) {
        if (Number(key.split(':')[0]) !== RouteParamtypes.QUERY) {
          continue;
        }
        if (typeof arg.data !== 'string') {
          declared = 'dto';
          break;
        }
        named.add(arg.data);
      }
      this.declared.set(handler, declared);
    }
    return declared;
  }
}

/** Query parameters read from the request itself rather than through a handler's parameters. */
function readByTheEdge(name: string, path: string): boolean {
  if ((name === 'workspaceId' || name === 'organizationId') && DOCUMENT_PATHS.test(path)) {
    return true;
  }
  return name === 'token' && REALTIME_PATHS.test(path);
}
