import type { NextFunction, Request, Response } from 'express';

const UUID = '[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}';

/** `/organizations/{id}` and `/organizations/{id}/workspaces/{id}` at the start of a path (with or without `/api/v1`). */
const TENANT_PATH = new RegExp(`^((?:/api/v1)?/organizations/)(${UUID})(?:(/workspaces/)(${UUID}))?(?=[/?#]|$)`);

/**
 * UUIDs are case-insensitive (RFC 9562), and PostgreSQL answers them in lower case, which the services compare as
 * strings: an organization or workspace id in upper case in a path would name a tenant the caller belongs to and
 * still miss it in those comparisons. Those two ids (always made by the service) are lower-cased before routing;
 * every other segment keeps its case, since document, row and request ids may be chosen by clients.
 */
export function lowerCaseTenantIds(request: Request, _response: Response, next: NextFunction): void {
  const match = TENANT_PATH.exec(request.url);
  if (match && /[A-F]/.test(match[0])) {
    const [whole, prefix, organizationId, workspaces, workspaceId] = match;
    const lowered = `${prefix}${organizationId.toLowerCase()}${workspaces ? `${workspaces}${workspaceId.toLowerCase()}` : ''}`;
    request.url = lowered + request.url.slice(whole.length);
  }
  next();
}
