import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { AllExceptionsFilter } from '../../../common/http/all-exceptions.filter.js';
import type { Envelope } from '../../../common/http/envelope.js';
import { OAuthException, oauthErrorOf } from '../services/issuer/oauth.exception.js';

/**
 * Failures of POST /token in both formats at once: the service envelope (`success: false`, `code`,
 * `message`, `details`) rendered by the global filter, plus RFC 6749 section 5.2's top-level `error` and
 * `error_description`, so standard OAuth clients understand it too. `Cache-Control: no-store` always;
 * `WWW-Authenticate: Basic` on invalid_client when the client tried HTTP Basic (RFC 6749 5.2).
 */
@Catch()
export class OAuthTokenExceptionFilter implements ExceptionFilter {
  private readonly base = new AllExceptionsFilter({ bearerChallenge: false });

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const usedBasic = /^Basic\s/i.test(host.switchToHttp().getRequest<Request>().headers.authorization ?? '');
    const explicit = exception instanceof OAuthException ? exception.oauthError : undefined;
    const json = response.json.bind(response);
    response.json = (body: Envelope<unknown>): Response => {
      const code = body.code ?? ErrorCode.INTERNAL_ERROR;
      const error = explicit ?? oauthErrorOf(code);
      const description = body.details?.reason ?? body.message?.en ?? error;
      if (error === 'invalid_client' && usedBasic) {
        response.setHeader('WWW-Authenticate', 'Basic realm="quire", charset="UTF-8"');
      }
      response.setHeader('Cache-Control', 'no-store');
      response.setHeader('Pragma', 'no-cache');
      return json({ error, error_description: description, ...body });
    };
    this.base.catch(exception, host);
  }
}
