/**
 * Every error code the service answers with. The first block is the interface specification's own list
 * (section 7); the rest are codes Quire adds where the specification leaves the list open.
 * Each code maps to exactly one HTTP status (error-status.ts) and to messages in every shipped language
 * (common/i18n/error-messages.ts); both maps are exhaustive, so adding a code here forces both.
 */
export enum ErrorCode {
  UNAUTHORIZED = 'UNAUTHORIZED',
  FORBIDDEN = 'FORBIDDEN',
  NOT_FOUND = 'NOT_FOUND',
  DOC_NOT_FOUND = 'DOC_NOT_FOUND',
  VALIDATION_ERROR = 'VALIDATION_ERROR',
  CONFLICT = 'CONFLICT',
  VERSION_CONFLICT = 'VERSION_CONFLICT',
  RATE_LIMIT_EXCEEDED = 'RATE_LIMIT_EXCEEDED',
  INVALID_CLIENT = 'INVALID_CLIENT',
  INVALID_TOKEN = 'INVALID_TOKEN',
  INVALID_SCOPE = 'INVALID_SCOPE',
  BAD_USER_NAME = 'BAD_USER_NAME',

  // Added by Quire.
  INTERNAL_ERROR = 'INTERNAL_ERROR',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  METHOD_NOT_ALLOWED = 'METHOD_NOT_ALLOWED',
  UNSUPPORTED_MEDIA_TYPE = 'UNSUPPORTED_MEDIA_TYPE',
  SERVICE_UNAVAILABLE = 'SERVICE_UNAVAILABLE',
  INVALID_CREDENTIALS = 'INVALID_CREDENTIALS',
  TWO_FACTOR_REQUIRED = 'TWO_FACTOR_REQUIRED',
  INVALID_GRANT = 'INVALID_GRANT',
  ALREADY_EXISTS = 'ALREADY_EXISTS',
  INVALID_STATE = 'INVALID_STATE',
  GONE = 'GONE',

  // Tenancy (organizations, invitations).
  ALREADY_MEMBER = 'ALREADY_MEMBER',
  INVITATION_ALREADY_ACCEPTED = 'INVITATION_ALREADY_ACCEPTED',
  INVITATION_DECLINED = 'INVITATION_DECLINED',
  INVITATION_REVOKED = 'INVITATION_REVOKED',
  INVITATION_EXPIRED = 'INVITATION_EXPIRED',
}
