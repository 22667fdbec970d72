import { HttpStatus } from '@nestjs/common';
import { ErrorCode } from './error-code.js';

/** RFC 6585 section 5; Nest's HttpStatus has no member for it. */
const REQUEST_HEADER_FIELDS_TOO_LARGE = 431 as HttpStatus;

/** One HTTP status per error code. `satisfies Record<ErrorCode, …>` makes a missing code a compile error. */
export const ERROR_HTTP_STATUS = {
  [ErrorCode.UNAUTHORIZED]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.FORBIDDEN]: HttpStatus.FORBIDDEN,
  [ErrorCode.NOT_FOUND]: HttpStatus.NOT_FOUND,
  [ErrorCode.DOC_NOT_FOUND]: HttpStatus.NOT_FOUND,
  [ErrorCode.VALIDATION_ERROR]: HttpStatus.BAD_REQUEST,
  [ErrorCode.CONFLICT]: HttpStatus.CONFLICT,
  [ErrorCode.VERSION_CONFLICT]: HttpStatus.CONFLICT,
  [ErrorCode.RATE_LIMIT_EXCEEDED]: HttpStatus.TOO_MANY_REQUESTS,
  [ErrorCode.INVALID_CLIENT]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.INVALID_TOKEN]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.INVALID_SCOPE]: HttpStatus.BAD_REQUEST,
  [ErrorCode.BAD_USER_NAME]: HttpStatus.BAD_REQUEST,
  [ErrorCode.INTERNAL_ERROR]: HttpStatus.INTERNAL_SERVER_ERROR,
  [ErrorCode.PAYLOAD_TOO_LARGE]: HttpStatus.PAYLOAD_TOO_LARGE,
  [ErrorCode.REQUEST_HEADER_FIELDS_TOO_LARGE]: REQUEST_HEADER_FIELDS_TOO_LARGE,
  [ErrorCode.REQUEST_TIMEOUT]: HttpStatus.REQUEST_TIMEOUT,
  [ErrorCode.METHOD_NOT_ALLOWED]: HttpStatus.METHOD_NOT_ALLOWED,
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
  [ErrorCode.SERVICE_UNAVAILABLE]: HttpStatus.SERVICE_UNAVAILABLE,
  [ErrorCode.INVALID_CREDENTIALS]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.TWO_FACTOR_REQUIRED]: HttpStatus.UNAUTHORIZED,
  [ErrorCode.INVALID_GRANT]: HttpStatus.BAD_REQUEST,
  [ErrorCode.ALREADY_EXISTS]: HttpStatus.CONFLICT,
  [ErrorCode.INVALID_STATE]: HttpStatus.CONFLICT,
  [ErrorCode.GONE]: HttpStatus.GONE,
  [ErrorCode.AMBIGUOUS_DOCUMENT]: HttpStatus.CONFLICT,
  [ErrorCode.ALREADY_MEMBER]: HttpStatus.CONFLICT,
  [ErrorCode.INVITATION_ALREADY_ACCEPTED]: HttpStatus.CONFLICT,
  [ErrorCode.INVITATION_DECLINED]: HttpStatus.CONFLICT,
  [ErrorCode.INVITATION_REVOKED]: HttpStatus.GONE,
  [ErrorCode.INVITATION_EXPIRED]: HttpStatus.GONE,
  [ErrorCode.RESOURCE_LOCKED]: HttpStatus.CONFLICT,
  [ErrorCode.APPROVAL_REQUIRED]: HttpStatus.CONFLICT,
  [ErrorCode.SHARE_LINK_EXPIRED]: HttpStatus.GONE,
  [ErrorCode.SHARE_LINK_EXHAUSTED]: HttpStatus.GONE,
} as const satisfies Record<ErrorCode, HttpStatus>;

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_HTTP_STATUS[code];
}
