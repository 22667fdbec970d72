import {
  applyDecorators,
  type CanActivate,
  createParamDecorator,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiNotFoundResponse, ApiParam } from '@nestjs/swagger';
import type { Request } from 'express';
import type { AuthenticatedRequest } from '../../../common/auth/auth.decorators.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { DocumentAccessService, type DocumentContext, type DocumentNeed } from '../services/document-access.service.js';
import { readDocumentScope } from './document-scope.js';

const DOCUMENT_NEED = 'quire:document-need';
const NOT_DOCUMENT_CONTENT = 'quire:not-document-content';

/**
 * A DELETE that removes the caller's own contribution about the document (a comment, a reaction), not document
 * content: `permissions.delete` (who may delete the document, rows, properties, views; docs/settings.md) does not
 * apply; the route's own rules do.
 */
export const NotDocumentContent = (): MethodDecorator & ClassDecorator => SetMetadata(NOT_DOCUMENT_CONTENT, true);

interface DocumentRequest extends Request, AuthenticatedRequest {
  documentContext?: DocumentContext;
}

/**
 * Opens `/doc/{docType}/{docId}` for the caller before the handler runs (after authentication and scopes), in
 * the context the call names (workspaceId / X-Workspace-Id, organizationId / X-Organization-Id, or none):
 * DOC_NOT_FOUND for unknown or other-tenant documents, AMBIGUOUS_DOCUMENT without a context when several match, FORBIDDEN when the role does not allow the operation or a
 * data-source reference makes the document read-only. The handler receives it with @CurrentDocument().
 */
@Injectable()
export class DocumentAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly access: DocumentAccessService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const need = this.reflector.getAllAndOverride<DocumentNeed | undefined>(DOCUMENT_NEED, [context.getHandler(), context.getClass()]) ?? 'read';
    const request = context.switchToHttp().getRequest<DocumentRequest>();
    if (!request.principal) {
      throw new AppException(ErrorCode.UNAUTHORIZED);
    }
    const docType = String(request.params.docType ?? '');
    const docId = String(request.params.docId ?? '');
    // A read of one row fetches the row with the document (one statement instead of two; docs/performance.md).
    const rowId = need === 'read' && request.method === 'GET' && typeof request.params.rowId === 'string' ? request.params.rowId : undefined;
    request.documentContext = await this.access.open(request.principal, docType, docId, need, readDocumentScope(request), rowId);
    const notContent = this.reflector.getAllAndOverride<boolean | undefined>(NOT_DOCUMENT_CONTENT, [context.getHandler(), context.getClass()]);
    if (request.method === 'DELETE' && need !== 'read' && notContent !== true) {
      await this.access.narrowBySettings(request.documentContext, 'delete');
    }
    return true;
  }
}

/** The document operation needs `need` on the document's workspace ('read' | 'write' | 'manage'). */
export const DocumentAccess = (need: DocumentNeed): MethodDecorator & ClassDecorator =>
  applyDecorators(
    SetMetadata(DOCUMENT_NEED, need),
    UseGuards(DocumentAccessGuard),
    ApiParam({ name: 'docType', type: String }),
    ApiParam({ name: 'docId', type: String }),
    ApiNotFoundResponse({ description: 'DOC_NOT_FOUND', schema: ERROR_ENVELOPE_SCHEMA }),
  );

export const CurrentDocument = createParamDecorator((_data: unknown, context: ExecutionContext): DocumentContext => {
  const request = context.switchToHttp().getRequest<DocumentRequest>();
  if (!request.documentContext) {
    throw new Error('@CurrentDocument() needs @DocumentAccess() on the route');
  }
  return request.documentContext;
});
