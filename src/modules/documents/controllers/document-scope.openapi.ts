import type { OpenAPIObject } from '@nestjs/swagger';

// @nestjs/swagger does not export its OpenAPI part types from the package root; derive them from the document type.
type OperationObject = NonNullable<OpenAPIObject['paths'][string]['get']>;
type AnyParameter = NonNullable<OperationObject['parameters']>[number];
type ParameterObject = Extract<AnyParameter, { name: string }>;

const CONTEXT_RULE =
  'Document context (docs/documents.md). A workspace context serves that workspace\'s document, or the source workspace\'s ' +
  '(read-only) while a data-source reference replaces the type there, else the organization-level document of its organization. ' +
  'Without any context the document is looked up among everything the caller can read: one match is served, none is ' +
  'DOC_NOT_FOUND, several are 409 AMBIGUOUS_DOCUMENT with the candidates\' organizationId and workspaceId in the payload. ' +
  'The query parameter and the header have the same meaning; both given with different values is VALIDATION_ERROR.';

const uuid = { type: 'string', format: 'uuid' } as const;

/** The four context parameters, declared once under components.parameters and referenced by every /doc operation. */
export const DOCUMENT_SCOPE_PARAMETERS: Record<string, ParameterObject> = {
  WorkspaceContext: { name: 'workspaceId', in: 'query', required: false, schema: uuid, description: `The workspace context. ${CONTEXT_RULE}` },
  WorkspaceContextHeader: { name: 'X-Workspace-Id', in: 'header', required: false, schema: uuid, description: 'Header form of workspaceId.' },
  OrganizationContext: {
    name: 'organizationId',
    in: 'query',
    required: false,
    schema: uuid,
    description: 'Organization context: addresses the organization-level documents (workspaceId null: catalogs, order books) of this organization.',
  },
  OrganizationContextHeader: { name: 'X-Organization-Id', in: 'header', required: false, schema: uuid, description: 'Header form of organizationId.' },
};

const CONTEXT_NAMES = new Set(['workspaceId', 'organizationId', 'X-Workspace-Id', 'X-Organization-Id']);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function isContextParameter(parameter: AnyParameter): boolean {
  return 'name' in parameter && (parameter.in === 'query' || parameter.in === 'header') && CONTEXT_NAMES.has(parameter.name);
}

const AMBIGUOUS =
  'AMBIGUOUS_DOCUMENT: no context was given and several documents the caller can read have this type and id ' +
  '(payload docType, docId, candidates [{organizationId, workspaceId}]); retry with workspaceId or organizationId';

/**
 * Every operation that opens one document by id (`{docId}` in the path; `POST /relations` opens both ends) can answer
 * 409 AMBIGUOUS_DOCUMENT when called without a context: declared here once, next to the parameters that avoid it,
 * added to the operation's own 409 (ALREADY_EXISTS, CONFLICT, …) when it has one. The body is the error envelope the
 * operation's other failures declare.
 */
function declareAmbiguous(path: string, operation: OperationObject): void {
  if (!path.includes('/{docId}') && !path.endsWith('/relations')) {
    return;
  }
  const responses = operation.responses;
  const conflict = responses['409'];
  if (conflict && 'description' in conflict) {
    if (!conflict.description.includes('AMBIGUOUS_DOCUMENT')) {
      conflict.description = `${conflict.description}; ${AMBIGUOUS}`;
    }
    return;
  }
  const envelope = ['404', '403', '400'].map((status) => responses[status]).find((response) => response !== undefined && 'content' in response);
  responses['409'] = { description: AMBIGUOUS, ...(envelope && 'content' in envelope && envelope.content ? { content: envelope.content } : {}) };
}

/**
 * Adds the context parameters to every operation under the given path prefixes, by reference, and declares the
 * 409 AMBIGUOUS_DOCUMENT a lookup without context may answer.
 */
export function declareDocumentScope(document: OpenAPIObject, prefixes: readonly string[]): void {
  document.components = { ...document.components, parameters: { ...document.components?.parameters, ...DOCUMENT_SCOPE_PARAMETERS } };
  const refs = Object.keys(DOCUMENT_SCOPE_PARAMETERS).map((name) => ({ $ref: `#/components/parameters/${name}` }));
  for (const [path, item] of Object.entries(document.paths)) {
    if (!prefixes.some((prefix) => path.startsWith(prefix))) {
      continue;
    }
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) {
        operation.parameters = [...(operation.parameters ?? []).filter((parameter) => !isContextParameter(parameter)), ...refs];
        declareAmbiguous(path, operation);
      }
    }
  }
}
