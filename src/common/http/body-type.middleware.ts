import type { NextFunction, Request, Response } from 'express';
import { ErrorCode } from '../errors/error-code.js';
import { AppException } from '../errors/app.exception.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The OAuth endpoints take forms (spec 5.5) and answer a body they cannot read in their own format
 * (`invalid_request`, or the login page of /authorize); every other route of the API takes JSON.
 */
const OWN_FORMAT_ROUTES = /^\/api\/v1\/auth\/(token|authorize|userinfo)\/?$/i;

/**
 * Which bodies the JSON parser reads: the JSON types (`application/json`, `application/*+json`), and — as GitHub's
 * API does — a body sent as `text/plain`, as a form (`curl -d '{…}'` without a header) or without any Content-Type
 * (`fetch` with a bytes body), except on the OAuth endpoints, whose bodies are forms (spec 5.5). Bearer-token routes are not exposed to cross-site form
 * posts, so reading text/plain as JSON opens no CSRF path. Anything else (XML, octet-stream, multipart) is left
 * unread and refused below.
 */
export function readsAsJson(request: Request): boolean {
  if (request.is(['application/json', 'application/*+json'])) {
    return true;
  }
  const path = request.path ?? request.url ?? '';
  const api = path.startsWith('/api/') || path.startsWith('/realtime/');
  return (
    api &&
    !OWN_FORMAT_ROUTES.test(path) &&
    (!request.headers['content-type'] || Boolean(request.is(['text/plain', 'application/x-www-form-urlencoded'])))
  );
}

function hasBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Refuses a write whose body neither the JSON nor the form parser read (XML, octet-stream, multipart …) with 415
 * UNSUPPORTED_MEDIA_TYPE. Without it the route saw an empty body: `POST /webhooks` with an XML body answered "name is
 * required", and a settings PUT went ahead as if empty.
 */
export function refuseUnreadBody(request: Request, _response: Response, next: NextFunction): void {
  const path = request.path;
  const api = path.startsWith('/api/') || path.startsWith('/realtime/');
  // A parser that read the body consumed the stream; one left unread means no parser took its content type.
  if (!api || request.readableEnded || !WRITE_METHODS.has(request.method) || !hasBody(request) || OWN_FORMAT_ROUTES.test(path)) {
    next();
    return;
  }
  next(
    new AppException(ErrorCode.UNSUPPORTED_MEDIA_TYPE, {
      details: [{ field: 'Content-Type', reason: `send the body as application/json (got ${String(request.headers['content-type'] ?? 'no Content-Type').slice(0, 100)})` }],
    }),
  );
}
