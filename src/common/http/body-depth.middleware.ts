import type { NextFunction, Request, Response } from 'express';
import { AppException } from '../errors/app.exception.js';

/**
 * How deep a JSON body may nest. The deepest body the API defines is a filter of 20 nested groups (about 60
 * levels); class-transformer and class-validator walk bodies recursively and overflow the call stack somewhere past
 * a few thousand levels, which answered 500.
 */
export const MAX_BODY_DEPTH = 128;

/** The first path in `value` deeper than `limit` levels, or null. Walks with its own stack, never recursing. */
export function tooDeepPath(value: unknown, limit: number): string | null {
  const pending: [unknown, number, string][] = [[value, 0, 'body']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth, path] = next;
    if (item === null || typeof item !== 'object') {
      continue;
    }
    if (depth >= limit) {
      return path;
    }
    if (Array.isArray(item)) {
      item.forEach((inner, index) => pending.push([inner, depth + 1, `${path}[${index}]`]));
    } else {
      for (const [key, inner] of Object.entries(item)) {
        pending.push([inner, depth + 1, `${path}.${key}`]);
      }
    }
  }
  return null;
}

/** Refuses a parsed body nesting deeper than MAX_BODY_DEPTH with VALIDATION_ERROR, before any pipe walks it. */
export function limitBodyDepth(request: Request, _response: Response, next: NextFunction): void {
  const path = typeof request.body === 'object' && request.body !== null ? tooDeepPath(request.body, MAX_BODY_DEPTH) : null;
  next(path === null ? undefined : AppException.validation([{ field: 'body', reason: `the body nests deeper than ${MAX_BODY_DEPTH} levels (at ${path.slice(0, 120)}…)` }]));
}
