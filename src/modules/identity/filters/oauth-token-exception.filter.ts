import { type ArgumentsHost, Catch, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { AllExceptionsFilter } from '../../../common/http/all-exceptions.filter.js';
import type { Envelope } from '../../../common/http/envelope.js';
import { OAuthException, oauthErrorOf } from '../services/issuer/oauth.exception.js';

/** POST /token on both mounts (spec 5.3), whatever the letter case, as Express routes it. */
const TOKEN_ENDPOINT = /^(?:\/api\/v1\/auth)?\/token\/?$/i;

/**
 * Makes the failure about to be rendered a token-endpoint failure in both formats at once: the service envelope
 * (`success: false`, `code`, `message`, `details`) plus RFC 6749 section 5.2's top-level `error` and
 * `error_description`, so standard OAuth clients understand it too. `Cache-Control: no-store` always;
 * `WWW-Authenticate: Basic` on invalid_client when the client tried HTTP Basic (RFC 6749 5.2).
 */
function answerAsOAuth(exception: unknown, host: ArgumentsHost): void {
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
}

/** Failures of the token endpoint's handler and guards, in both formats (answerAsOAuth). */
@Catch()
export class OAuthTokenExceptionFilter implements ExceptionFilter {
  private readonly base = new AllExceptionsFilter({ bearerChallenge: false });

  catch(exception: unknown, host: ArgumentsHost): void {
    answerAsOAuth(exception, host);
    this.base.catch(exception, host);
  }
}

/**
 * The global filter. A token request whose body cannot be read (malformed, too large, of another type) fails
 * before the route and its own filter: it is answered in both formats here, like the route's other failures.
 * Everything else goes to the API filter.
 */
@Catch()
export class TokenAwareExceptionFilter implements ExceptionFilter {
  constructor(
    private readonly api: AllExceptionsFilter,
    private readonly token: AllExceptionsFilter,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() === 'http' && TOKEN_ENDPOINT.test(host.switchToHttp().getRequest<Request>().path ?? '')) {
      answerAsOAuth(exception, host);
      this.token.catch(exception, host);
      return;
    }
    this.api.catch(exception, host);
  }
}
