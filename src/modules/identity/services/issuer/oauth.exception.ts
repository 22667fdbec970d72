import { AppException, type ErrorDetail } from '../../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../../common/errors/error-code.js';

/** RFC 6749 section 5.2 error codes (plus the authorization-endpoint ones of section 4.1.2.1). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'login_required';

const OAUTH_ERRORS: Partial<Record<ErrorCode, OAuthErrorCode>> = {
  [ErrorCode.INVALID_CLIENT]: 'invalid_client',
  [ErrorCode.INVALID_TOKEN]: 'invalid_grant',
  [ErrorCode.INVALID_GRANT]: 'invalid_grant',
  [ErrorCode.INVALID_SCOPE]: 'invalid_scope',
  [ErrorCode.INTERNAL_ERROR]: 'server_error',
  [ErrorCode.SERVICE_UNAVAILABLE]: 'server_error',
};

/** The RFC 6749 `error` of a service error code, when the thrower did not name one. */
export function oauthErrorOf(code: ErrorCode): OAuthErrorCode {
  return OAUTH_ERRORS[code] ?? 'invalid_request';
}

/** An AppException that also names its RFC 6749 error, for the token endpoint's dual-format answers. */
export class OAuthException extends AppException {
  constructor(
    code: ErrorCode,
    readonly oauthError: OAuthErrorCode,
    description: string,
    field?: string,
  ) {
    const detail: ErrorDetail = { reason: description };
    if (field) {
      detail.field = field;
    }
    super(code, { details: [detail] });
  }
}
