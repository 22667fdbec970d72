import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../../config/app.config.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Probes and scrapes arrive every few seconds; logging each would drown the real traffic. */
const QUIET_PATHS = new Set(['/health', '/health/ready', '/metrics']);

/** A caller's X-Request-Id when it is sane, a fresh UUID otherwise; echoed back on the response. */
export function requestIdOf(request: IncomingMessage, response: ServerResponse): string {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/**
 * Query parameters that carry credentials (OAuth codes and secrets, realtime connect tokens), and the names clients
 * commonly put credentials under even where no route reads them (`access_token` of RFC 6750, API keys, share codes):
 * a refused request is logged too, and its URL must not keep the secret it carried.
 */
const SECRET_NAME =
  /^(?:token|code|client_secret|refresh_token|access_token|id_token|code_verifier|api[_-]?key|key|secret|password|share_?code)$/i;

/** One query parameter: its separator, its raw name, and its value up to the next parameter or the fragment. */
const QUERY_PARAM = /([?&])([^=&#]*)=([^&#]*)/g;

/**
 * A parameter name as the query parser reads it: percent-escapes decoded (`access%5Ftoken` is `access_token` to
 * Express, so matched on the raw URL it slipped through) and a bracket suffix dropped (`token[]` and `token[0]` are
 * `token` to the extended parser). Escapes are decoded one byte at a time, so a malformed one never throws, and only
 * ASCII ones, since every credential name is ASCII.
 */
function parameterName(raw: string): string {
  const decoded = raw.replace(/%([0-7][0-9a-f])/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  // As qs reads it: `token[]` is `token`, and a name starting with a bracket takes its first bracketed part
  // (`[token]` is `token`).
  const bracketed = /^\[([^\]]*)\]/.exec(decoded);
  return bracketed ? bracketed[1] : decoded.replace(/\[.*$/s, '');
}

/**
 * Paths whose segment is itself the credential: an invitation token (`/api/v1/invitations/{token}…`) and a share
 * code (`/connect/share/{code}`). Ids in other paths (`/organizations/{id}/invitations/{invitationId}`) are kept.
 */
const SECRET_PATH = /^((?:\/api\/v1)?\/invitations\/|\/connect\/share\/)[^/?#]+/i;

/** A request URL or path fit for the logs: the credentials it may carry are replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const query = url.indexOf('?');
  const path = (query === -1 ? url : url.slice(0, query)).replace(SECRET_PATH, '$1[redacted]');
  if (query === -1) {
    return path;
  }
  // The query as it is, name by name: only the values of credential names are replaced.
  const rest = url
    .slice(query)
    .replace(QUERY_PARAM, (whole, separator: string, name: string) =>
      SECRET_NAME.test(parameterName(name)) ? `${separator}${name}=[redacted]` : whole,
    );
  return path + rest;
}

/**
 * Mounted first, before the body parsers: gives the request its id and echoes it, so the answers given before Nest's
 * logging middleware runs (a body the parsers refuse, an unknown path) carry `X-Request-Id` too. pino-http keeps an
 * id already set (`req.id ||= genReqId(…)`), so the log line of the request has the same id.
 */
export function assignRequestId(request: IncomingMessage & { id?: unknown }, response: ServerResponse, next: () => void): void {
  if (request.id === undefined) {
    request.id = requestIdOf(request, response);
  }
  next();
}

/** Levels at which pino-http's "request completed" lines (logged at `info`) are written. */
const REQUEST_LOG_LEVELS = new Set(['trace', 'debug', 'info']);

/**
 * Structured JSON logs with the request id; credentials and secrets are redacted.
 * Per-request cost matters (docs/performance.md): `service` is a base field, not pino-http's `customProps` (which
 * builds two child loggers per request), and above `info` the completion hooks are not installed at all, since
 * every line they would write is below the level.
 */
export function loggerOptions(config: AppConfig): Params {
  const logRequests = REQUEST_LOG_LEVELS.has(config.logLevel);
  return {
    pinoHttp: {
      level: config.logLevel,
      base: { pid: process.pid, hostname: hostname(), service: 'quire' },
      genReqId: requestIdOf,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["x-api-key"]',
          'res.headers["set-cookie"]',
          '*.password',
          '*.secret',
          '*.token',
          '*.accessToken',
          '*.refreshToken',
          '*.clientSecret',
        ],
        censor: '[redacted]',
      },
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(String(req.url)),
        }),
      },
      autoLogging: logRequests ? { ignore: (req) => QUIET_PATHS.has(String(req.url).split('?')[0]) } : false,
    },
  };
}
