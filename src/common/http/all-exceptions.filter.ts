import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppException, type ErrorDetail } from '../errors/app.exception.js';
import { ErrorCode } from '../errors/error-code.js';
import { mapPgError } from '../errors/pg-error.mapper.js';
import { messageOf } from '../i18n/error-messages.js';
import { redactUrl } from '../logging/logger.options.js';
import type { RateLimiter } from '../rate-limit/rate-limiter.service.js';
import { type Envelope, errorDetailsOf } from './envelope.js';
import { allowedMethodsFor, markUnmatched } from './route-table.js';

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
  /** The raw text, on a parse failure. */
  body?: string;
}

/** Why a JSON body was refused: broken JSON, or valid JSON the strict parser refuses (`null`, `"x"`, `5`). */
function parseFailureReason(raw: string | undefined): string {
  const text = raw?.trim() ?? '';
  if (text !== '' && !text.startsWith('{') && !text.startsWith('[')) {
    try {
      JSON.parse(text);
      return 'the body must be a JSON object or array';
    } catch {
      // broken JSON after all
    }
  }
  return 'malformed JSON';
}

const STATUS_TO_CODE: Partial<Record<number, ErrorCode>> = {
  [HttpStatus.BAD_REQUEST]: ErrorCode.VALIDATION_ERROR,
  [HttpStatus.UNAUTHORIZED]: ErrorCode.UNAUTHORIZED,
  [HttpStatus.FORBIDDEN]: ErrorCode.FORBIDDEN,
  [HttpStatus.NOT_FOUND]: ErrorCode.NOT_FOUND,
  [HttpStatus.METHOD_NOT_ALLOWED]: ErrorCode.METHOD_NOT_ALLOWED,
  [HttpStatus.CONFLICT]: ErrorCode.CONFLICT,
  [HttpStatus.PAYLOAD_TOO_LARGE]: ErrorCode.PAYLOAD_TOO_LARGE,
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
  [HttpStatus.TOO_MANY_REQUESTS]: ErrorCode.RATE_LIMIT_EXCEEDED,
  [HttpStatus.SERVICE_UNAVAILABLE]: ErrorCode.SERVICE_UNAVAILABLE,
};

/**
 * A failed readiness check (@nestjs/terminus) as `{status, details: {name: {status}}}`: which dependency is
 * down, without the driver's error text (it can name internal hosts).
 */
function healthStatusOf(body: unknown): Record<string, unknown> | null {
  const details = (body as { details?: unknown } | null)?.details;
  if (typeof details !== 'object' || details === null) {
    return null;
  }
  const checks = Object.fromEntries(
    Object.entries(details as Record<string, { status?: unknown }>).map(([name, check]) => [
      name,
      { status: check?.status ?? 'down' },
    ]),
  );
  return { status: 'error', details: checks };
}

/**
 * The one place every failure becomes the envelope. Services throw AppException; everything else
 * (body-parser errors, Nest's own HTTP exceptions, PostgreSQL errors a client can cause) is translated here,
 * and anything unexpected is logged with its stack and answered as INTERNAL_ERROR without one.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionFilter');

  /**
   * `bearerChallenge: false` for the OAuth token endpoint, whose errors are not about a bearer token. `limiter`
   * (the global filter's) counts failures that happened before the rate-limit guard could (spec 8).
   */
  constructor(private readonly options: { bearerChallenge: boolean; limiter?: RateLimiter } = { bearerChallenge: true }) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') {
      throw exception;
    }
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    // An unknown path, a wrong method or an unreadable body fails before the guards: count it here, and answer
    // 429 instead once the caller's budget is spent, as the guard would have.
    const counting = response.headersSent ? null : this.options.limiter?.countUncounted(request, response);
    if (counting) {
      void counting
        .then((refusal) => this.render(refusal ?? exception, request, response))
        .catch((error: unknown) => this.logger.error({ err: error, path: redactUrl(request.path) }, 'could not render an error'));
      return;
    }
    this.render(exception, request, response);
  }

  private render(exception: unknown, request: Request, response: Response): void {
    const app = this.toAppException(exception, request);

    if (app.code === ErrorCode.INTERNAL_ERROR) {
      this.logger.error({ err: exception, path: redactUrl(request.path) }, 'unhandled error');
    }
    if (response.headersSent) {
      return;
    }
    for (const [name, value] of Object.entries(app.options.headers ?? {})) {
      response.setHeader(name, value);
    }
    if (
      this.options.bearerChallenge &&
      (app.code === ErrorCode.UNAUTHORIZED || app.code === ErrorCode.INVALID_TOKEN) &&
      !response.hasHeader('WWW-Authenticate')
    ) {
      // A refused bearer credential names its challenge (RFC 6750 3, with the error for a bad token).
      response.setHeader(
        'WWW-Authenticate',
        app.code === ErrorCode.INVALID_TOKEN
          ? 'Bearer realm="quire", error="invalid_token"'
          : 'Bearer realm="quire"',
      );
    }
    const body: Envelope<unknown> = {
      success: false,
      code: app.code,
      message: app.options.message ?? messageOf(app.code),
      payload: app.options.payload ?? null,
    };
    const details = errorDetailsOf(app.options.details);
    if (details) {
      body.details = details;
    }
    response.status(app.status).json(body);
  }

  private toAppException(exception: unknown, request: Request): AppException {
    if (exception instanceof AppException) {
      return exception;
    }
    const parserError = exception as BodyParserError;
    if (parserError?.type === 'entity.too.large') {
      return new AppException(ErrorCode.PAYLOAD_TOO_LARGE, {
        details: [{ field: 'body', reason: `body exceeds ${parserError.limit ?? ''} bytes`.trim() }],
      });
    }
    if (parserError?.type === 'entity.parse.failed') {
      return AppException.validation([{ field: 'body', reason: parseFailureReason(parserError.body) }]);
    }
    if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
      return new AppException(ErrorCode.UNSUPPORTED_MEDIA_TYPE, {
        details: [{ field: parserError.type === 'charset.unsupported' ? 'Content-Type' : 'Content-Encoding', reason: 'unsupported encoding' }],
      });
    }
    if (exception instanceof HttpException) {
      return this.fromHttpException(exception, request);
    }
    const pg = mapPgError(exception);
    if (pg) {
      return pg;
    }
    return new AppException(ErrorCode.INTERNAL_ERROR, { cause: exception });
  }

  private fromHttpException(exception: HttpException, request: Request): AppException {
    const status = exception.getStatus();
    if (status === HttpStatus.NOT_FOUND && exception.message.startsWith('Cannot ')) {
      // Nest's router answers an unknown method+path pair with 404; tell a wrong method apart.
      const path = (request.originalUrl ?? request.url).split('?')[0];
      markUnmatched(request);
      const allowed = allowedMethodsFor(path);
      if (allowed.length > 0) {
        return new AppException(ErrorCode.METHOD_NOT_ALLOWED, {
          headers: { Allow: allowed.join(', ') },
          details: [{ reason: `${request.method} is not allowed; use ${allowed.join(', ')}` }],
        });
      }
      return new AppException(ErrorCode.NOT_FOUND, {
        details: [{ reason: `no route ${request.method} ${path}` }],
      });
    }
    if (status === HttpStatus.BAD_REQUEST && exception.cause instanceof SyntaxError) {
      // Nest's adapter wraps body-parser's error; the raw text rides on the cause.
      return AppException.validation([{ field: 'body', reason: parseFailureReason((exception.cause as BodyParserError).body) }]);
    }
    if (status === HttpStatus.SERVICE_UNAVAILABLE) {
      return new AppException(ErrorCode.SERVICE_UNAVAILABLE, {
        payload: healthStatusOf(exception.getResponse()),
        cause: exception,
      });
    }
    const code =
      STATUS_TO_CODE[status] ?? (status >= 500 ? ErrorCode.INTERNAL_ERROR : ErrorCode.VALIDATION_ERROR);
    const details: ErrorDetail[] =
      status >= 500
        ? []
        : status === HttpStatus.UNSUPPORTED_MEDIA_TYPE
          ? [{ field: 'Content-Type', reason: exception.message }]
          : [{ reason: exception.message }];
    return new AppException(code, { details, cause: exception });
  }
}
