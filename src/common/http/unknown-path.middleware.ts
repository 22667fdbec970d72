import { NotFoundException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * Answers paths outside everything the service serves with the 404 envelope. Nest's own not-found handler only
 * covers the global prefix and the host-root routes, so `/users/me` (a forgotten prefix) or `/api/v2/…` fell
 * through to Express's HTML page. `served` lists the routes as Nest writes them: an exact path (`health`) passes
 * only itself (with or without a trailing slash), a wildcard (`realtime/{*path}`, `api/v1/{*path}`) everything
 * under it. An exact path is not a prefix: Nest's not-found handler covers only the global prefix, wildcard
 * exclusions and the exact excluded paths, so `/health/x` passed on used to reach Express's HTML page.
 */
export function answerUnknownPaths(served: readonly string[]): (request: Request, response: Response, next: NextFunction) => void {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const route of served) {
    const path = `/${route.replace(/^\/+/, '')}`;
    if (path.endsWith('/{*path}')) {
      prefixes.push(path.slice(0, -'{*path}'.length));
    } else {
      exact.add(path);
    }
  }
  return (request, _response, next) => {
    const path = request.path.length > 1 ? request.path.replace(/\/+$/, '') : request.path;
    const lower = path.toLowerCase();
    if (exact.has(lower) || prefixes.some((prefix) => lower.startsWith(prefix))) {
      next();
      return;
    }
    next(new NotFoundException(`Cannot ${request.method} ${path}`));
  };
}

/**
 * Mounted after routes Nest does not own (the Swagger UI and its JSON): what they leave unanswered (another method,
 * an unknown file) gets the 404 envelope, or 405 when the path is served under other methods, not Express's page.
 */
export function answerNotFound(request: Request, _response: Response, next: NextFunction): void {
  next(new NotFoundException(`Cannot ${request.method} ${request.path}`));
}
