import { ErrorCode } from './error-code.js';
import { httpStatusOf } from './error-status.js';

/** One entry of a failure's `details`: which input was wrong and why. */
export interface ErrorDetail {
  field?: string;
  fieldId?: string;
  reason: string;
  message?: Record<string, string>;
  [extra: string]: unknown;
}

/**
 * The one exception type services throw. The global filter renders it as the envelope:
 * `code`, the catalogue's multilingual message (or `message` given here), `details`, and `payload` for context.
 */
export class AppException extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly options: {
      details?: ErrorDetail[];
      payload?: unknown;
      message?: Record<string, string>;
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(code, { cause: options.cause });
    this.status = httpStatusOf(code);
  }

  static validation(details: ErrorDetail[]): AppException {
    return new AppException(ErrorCode.VALIDATION_ERROR, { details });
  }

  static notFound(what = 'resource'): AppException {
    return new AppException(ErrorCode.NOT_FOUND, { details: [{ reason: `${what} not found` }] });
  }

  static forbidden(reason = 'insufficient permission'): AppException {
    return new AppException(ErrorCode.FORBIDDEN, { details: [{ reason }] });
  }
}
