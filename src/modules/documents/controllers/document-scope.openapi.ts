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

/** Adds the context parameters to every operation under the given path prefixes, by reference. */
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
      }
    }
  }
}
