import type { NextFunction, Request, Response } from 'express';
import { AppException } from '../errors/app.exception.js';
import { RESERVED_KEYS } from './reserved-keys.js';

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

/**
 * What is wrong with a parsed body: nesting deeper than `limit` levels (reported first), or a reserved key
 * (reserved-keys.ts). Walks with two flat stacks and builds no path strings: a 1000-item bulk body has tens of
 * thousands of nodes.
 */
function bodyProblem(value: unknown, limit: number): 'depth' | 'reserved-key' | null {
  let reserved = false;
  const items: unknown[] = [value];
  const depths: number[] = [0];
  while (items.length > 0) {
    const item = items.pop();
    const depth = depths.pop() as number;
    if (item === null || typeof item !== 'object') {
      continue;
    }
    if (depth >= limit) {
      return 'depth';
    }
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i += 1) {
        items.push(item[i]);
        depths.push(depth + 1);
      }
      continue;
    }
    for (const key of Object.keys(item)) {
      // Keep walking: a too-deep body is refused as such, and the path search below only runs on shallow ones.
      reserved ||= RESERVED_KEYS.has(key);
      items.push((item as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return reserved ? 'reserved-key' : null;
}

/** The path of the first reserved key in `value` (only called once bodyProblem found one). */
function reservedKeyPath(value: unknown, path: string): string | null {
  if (value === null || typeof value !== 'object') {
    return null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = reservedKeyPath(value[i], `${path}[${i}]`);
      if (found !== null) {
        return found;
      }
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (RESERVED_KEYS.has(key)) {
      return `${path}.${key}`;
    }
    const found = reservedKeyPath((value as Record<string, unknown>)[key], `${path}.${key}`);
    if (found !== null) {
      return found;
    }
  }
  return null;
}

/**
 * Refuses, with VALIDATION_ERROR before any pipe walks it, a parsed body nesting deeper than MAX_BODY_DEPTH or
 * using a reserved key (the depth is checked first, so the path search below never recurses past it).
 */
export function limitBodyDepth(request: Request, _response: Response, next: NextFunction): void {
  const body: unknown = request.body;
  const problem = typeof body === 'object' && body !== null ? bodyProblem(body, MAX_BODY_DEPTH) : null;
  if (problem === null) {
    next();
  } else if (problem === 'depth') {
    const path = tooDeepPath(body, MAX_BODY_DEPTH) ?? 'body';
    next(AppException.validation([{ field: 'body', reason: `the body nests deeper than ${MAX_BODY_DEPTH} levels (at ${path.slice(0, 120)}…)` }]));
  } else {
    const path = (reservedKeyPath(body, 'body') ?? 'body').replace(/^body\.?/, '') || 'body';
    const key = path.slice(path.lastIndexOf('.') + 1);
    next(AppException.validation([{ field: path.slice(0, 200), reason: `"${key}" is reserved (a JavaScript object member name) and cannot be used as a key` }]));
  }
}
