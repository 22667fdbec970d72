import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AppException, type ErrorDetail } from '../../../common/errors/app.exception.js';
import { isUuid } from '../../tenancy/policies/organization-roles.js';
import type { DocumentScope } from '../services/document-access.service.js';

/** The header forms of the document context; the query forms are `workspaceId` and `organizationId`. */
export const WORKSPACE_HEADER = 'x-workspace-id';
export const ORGANIZATION_HEADER = 'x-organization-id';

function one(request: Request, query: string, header: string, details: ErrorDetail[]): string | undefined {
  const fromQuery = request.query[query];
  const fromHeader = request.headers[header];
  if (fromQuery !== undefined && typeof fromQuery !== 'string') {
    details.push({ field: query, reason: `${query} must be given once` });
    return undefined;
  }
  if (Array.isArray(fromHeader)) {
    details.push({ field: header, reason: `${header} must be given once` });
    return undefined;
  }
  for (const [field, value] of [
    [query, fromQuery],
    [header, fromHeader],
  ] as const) {
    if (value !== undefined && !isUuid(value)) {
      details.push({ field, reason: `${field} must be a UUID` });
    }
  }
  if (fromQuery !== undefined && fromHeader !== undefined && fromQuery.toLowerCase() !== fromHeader.toLowerCase()) {
    details.push({ field: header, reason: `${header} and the ${query} query parameter name different ${query === 'workspaceId' ? 'workspaces' : 'organizations'}` });
  }
  return (fromQuery ?? fromHeader)?.toLowerCase();
}

/**
 * Reads the document context of a `/doc/...` call: `workspaceId` (query) or `X-Workspace-Id` (header), and
 * `organizationId` (query) or `X-Organization-Id` (header). Each pair has one meaning; both forms given with
 * different values, or a value that is not a UUID, is VALIDATION_ERROR. Guards run before the validation pipe,
 * so the raw request is checked here.
 */
export function readDocumentScope(request: Request): DocumentScope {
  const details: ErrorDetail[] = [];
  const workspaceId = one(request, 'workspaceId', WORKSPACE_HEADER, details);
  const organizationId = one(request, 'organizationId', ORGANIZATION_HEADER, details);
  if (details.length > 0) {
    throw AppException.validation(details);
  }
  return { ...(workspaceId ? { workspaceId } : {}), ...(organizationId ? { organizationId } : {}) };
}

/** The document context of the call (see readDocumentScope), for routes that name no single document. */
export const CurrentDocumentScope = createParamDecorator((_data: unknown, context: ExecutionContext): DocumentScope =>
  readDocumentScope(context.switchToHttp().getRequest<Request>()),
);
