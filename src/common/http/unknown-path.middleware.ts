import { NotFoundException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * Answers paths outside everything the service serves with the 404 envelope. Nest's own not-found handler only
 * covers the global prefix and the host-root routes, so `/users/me` (a forgotten prefix) or `/api/v2/…` fell
 * through to Express's HTML page. `served` lists the path prefixes (`/api/v1`) and host-root routes as Nest
 * writes them (`health`, `realtime/{*path}`); everything under a prefix or wildcard passes on unchanged.
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
      prefixes.push(`${path}/`);
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
