/**
 * Ids that clients choose and later name in a URL path: document ids, row ids, view ids. Never `.` or `..`: URL
 * clients (curl, browsers, most HTTP libraries) collapse those as path segments, so `DELETE …/data/..` would reach
 * `DELETE /doc/{docType}/{docId}` and a document named `..` could not be addressed at all.
 */
export const CLIENT_ID_PATTERN = /^(?!\.\.?$)[A-Za-z0-9_.:-]{1,128}$/;
export const CLIENT_ID_RULE = 'must match ^[A-Za-z0-9_.:-]{1,128}$ and not be "." or ".."';

/** Document types (a path segment too): the same, up to 64 characters, without `:`. */
export const DOC_TYPE_PATTERN = /^(?!\.\.?$)[A-Za-z0-9_.-]{1,64}$/;
export const DOC_TYPE_RULE = 'must match ^[A-Za-z0-9_.-]{1,64}$ and not be "." or ".."';

/**
 * Document ids that name a route of their own under `/doc/{docType}/`: `GET /doc/{docType}/setting` is the type's
 * settings, so a document named `setting` could never be read at its path. Routes match without regard to case
 * (Express's default), so `Setting` or `SETTING` names that route too: compare with `isReservedDocumentId`.
 */
export const RESERVED_DOCUMENT_IDS: ReadonlySet<string> = new Set(['setting']);

/** True when `docId`, in any letter case, names a route of `RESERVED_DOCUMENT_IDS`. */
export function isReservedDocumentId(docId: string): boolean {
  return RESERVED_DOCUMENT_IDS.has(docId.toLowerCase());
}
