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
 * A lone surrogate: JSON may escape one (`"\ud800"`), but it is no Unicode text. Validators choked on it (isEmail
 * throws URIError: 500 on public routes) and PostgreSQL stores it as U+FFFD, silently changing what was written.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** String.prototype.isWellFormed (native since Node 20; ES2024, past this project's `lib`). */
const isWellFormed = (String.prototype as unknown as { isWellFormed: (this: string) => boolean }).isWellFormed;

function illFormed(text: string): boolean {
  return !isWellFormed.call(text);
}

/** A key fit for an error's `field`: its lone surrogates written as `\uXXXX` escapes. */
function printable(key: string): string {
  return key.replace(new RegExp(LONE_SURROGATE.source, 'g'), (unit) => `\\u${unit.charCodeAt(0).toString(16)}`);
}

/**
 * What is wrong with a parsed body: nesting deeper than `limit` levels (reported first), a reserved key
 * (reserved-keys.ts), or text that is not well-formed Unicode. Walks with two flat stacks and builds no path strings:
 * a 1000-item bulk body has tens of thousands of nodes.
 */
function bodyProblem(value: unknown, limit: number): 'depth' | 'reserved-key' | 'ill-formed' | null {
  let reserved = false;
  let broken = false;
  const items: unknown[] = [value];
  const depths: number[] = [0];
  while (items.length > 0) {
    const item = items.pop();
    const depth = depths.pop() as number;
    if (typeof item === 'string') {
      broken ||= illFormed(item);
      continue;
    }
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
      broken ||= illFormed(key);
      items.push((item as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return reserved ? 'reserved-key' : broken ? 'ill-formed' : null;
}

/** What a path search looks for: a bad key, and (optionally) a bad string value. */
interface PathTest {
  key: (key: string) => boolean;
  text?: (text: string) => boolean;
}

const ILL_FORMED: PathTest = { key: illFormed, text: illFormed };
const RESERVED: PathTest = { key: (key) => RESERVED_KEYS.has(key) };

/** The path of the first key or string value `test` refuses (only called once bodyProblem found one). */
function firstPath(value: unknown, path: string, test: PathTest): string | null {
  if (typeof value === 'string') {
    return test.text?.(value) ? path : null;
  }
  if (value === null || typeof value !== 'object') {
    return null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = firstPath(value[i], `${path}[${i}]`, test);
      if (found !== null) {
        return found;
      }
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const keyPath = `${path}.${printable(key)}`;
    if (test.key(key)) {
      return keyPath;
    }
    const found = firstPath((value as Record<string, unknown>)[key], keyPath, test);
    if (found !== null) {
      return found;
    }
  }
  return null;
}

/**
 * Refuses, with VALIDATION_ERROR before any pipe walks it, a parsed body nesting deeper than MAX_BODY_DEPTH, using a
 * reserved key, or holding text that is not well-formed Unicode (the depth is checked first, so the path searches
 * below never recurse past it).
 */
export function limitBodyDepth(request: Request, _response: Response, next: NextFunction): void {
  const body: unknown = request.body;
  const problem = typeof body === 'object' && body !== null ? bodyProblem(body, MAX_BODY_DEPTH) : null;
  if (problem === null) {
    next();
  } else if (problem === 'depth') {
    const path = tooDeepPath(body, MAX_BODY_DEPTH) ?? 'body';
    next(AppException.validation([{ field: 'body', reason: `the body nests deeper than ${MAX_BODY_DEPTH} levels (at ${path.slice(0, 120)}…)` }]));
  } else if (problem === 'ill-formed') {
    const path = (firstPath(body, 'body', ILL_FORMED) ?? 'body').replace(/^body\.?/, '') || 'body';
    next(AppException.validation([{ field: path.slice(0, 200), reason: 'text must be well-formed Unicode (it holds a lone surrogate such as \\ud800)' }]));
  } else {
    const path = (firstPath(body, 'body', RESERVED) ?? 'body').replace(/^body\.?/, '') || 'body';
    const key = path.slice(path.lastIndexOf('.') + 1);
    next(AppException.validation([{ field: path.slice(0, 200), reason: `"${key}" is reserved (a JavaScript object member name) and cannot be used as a key` }]));
  }
}
