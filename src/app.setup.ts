import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { QueryValidationPipe } from './common/http/query-validation.pipe.js';
import { UndeclaredQueryInterceptor } from './common/http/undeclared-query.interceptor.js';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { declareDocumentScope } from './modules/documents/controllers/document-scope.openapi.js';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import type { ValidationError } from 'class-validator';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { AppException, type ErrorDetail } from './common/errors/app.exception.js';
import { AllExceptionsFilter } from './common/http/all-exceptions.filter.js';
import { EnvelopeInterceptor } from './common/http/envelope.interceptor.js';
import { clearRoutes, registerRoute } from './common/http/route-table.js';
import type { AppConfig } from './config/app.config.js';
import { MetricsService } from './modules/metrics/metrics.service.js';
import { Reflector } from '@nestjs/core';
import { WsAdapter } from '@nestjs/platform-ws';
import { readsAsJson, refuseUnreadBody } from './common/http/body-type.middleware.js';
import { answerNotFound, answerUnknownPaths } from './common/http/unknown-path.middleware.js';
import { answerClientErrors } from './common/http/client-error.handler.js';
import { limitBodyDepth } from './common/http/body-depth.middleware.js';
import { lowerCaseTenantIds } from './common/http/tenant-id-case.middleware.js';
import { assignRequestId } from './common/logging/logger.options.js';
import { RateLimiter } from './common/rate-limit/rate-limiter.service.js';
import { TokenAwareExceptionFilter } from './modules/identity/filters/oauth-token-exception.filter.js';

export const API_PREFIX = 'api/v1';

/**
 * Paths served at the host root rather than under /api/v1: probes, metrics, the authentication host
 * (`{auth_url}`, spec 5.3), realtime (spec 4.5) and share links (spec 4.8).
 */
export const HOST_ROOT_ROUTES = [
  'health',
  'health/ready',
  'metrics',
  '.well-known/openid-configuration',
  'jwks.json',
  'authorize',
  'token',
  'userinfo',
  'realtime/{*path}',
  'connect/share/{*path}',
];

/** Checks of what kind a value is; when one fails, its size and range checks say nothing useful. */
const KIND_CHECKS = new Set(['isInt', 'isNumber', 'isString', 'isBoolean', 'isArray', 'isObject', 'isNumberString', 'isDate', 'isDateString', 'isIso8601', 'isISO8601']);
const SIZE_CHECKS = new Set(['min', 'max', 'minLength', 'maxLength', 'length', 'arrayMinSize', 'arrayMaxSize', 'isPositive', 'isNegative', 'minDate', 'maxDate']);

/**
 * The reasons of one property: a failed kind check ("must be an integer number") hides the size checks the value
 * also failed, which for `page=abc` read "page must not be greater than 1000000" first.
 */
function reasonsOf(constraints: Record<string, string>): string[] {
  const keys = Object.keys(constraints);
  const kindFailed = keys.some((key) => KIND_CHECKS.has(key));
  return keys.filter((key) => !(kindFailed && SIZE_CHECKS.has(key))).map((key) => constraints[key]);
}

/**
 * Flattens class-validator's nested errors into `{field: 'a.b[0].c', reason}` entries. A required property that is
 * missing fails every check it has ("must be a string", "must be shorter than …"): it is reported once, as
 * `<name> is required` (optional properties are not checked when absent, so only required ones get here).
 */
export function validationDetails(errors: ValidationError[], parent = ''): ErrorDetail[] {
  return errors.flatMap((error) => {
    const field = parent
      ? /^\d+$/.test(error.property)
        ? `${parent}[${error.property}]`
        : `${parent}.${error.property}`
      : error.property;
    const reasons = reasonsOf(error.constraints ?? {});
    const own =
      error.value === undefined && reasons.length > 0
        ? [{ field, reason: `${error.property} is required` }]
        : reasons.map((reason) => ({ field, reason }));
    return [...own, ...validationDetails(error.children ?? [], field)];
  });
}

export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Quire API')
    .setDescription(
      'Structured collaborative documents, multi-tenant membership and supply-chain data sync. ' +
        'Every response under /api/v1 is the envelope {success, code?, message, payload, details?}.',
    )
    .setVersion('1.0.0')
    .addServer(config.publicBaseUrl)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT or API key' })
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, 'api-key')
    // OAuth client authentication at the token endpoint (RFC 6749 2.3.1); client_id/client_secret form fields also work.
    .addBasicAuth({ type: 'http', scheme: 'basic' }, 'client-basic')
    .build();
  const document = SwaggerModule.createDocument(app, builder, {
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
  });
  // POST /relations opens both ends in the call's context too (docs/documents.md "Relations").
  declareDocumentScope(document, [`/${API_PREFIX}/doc/`, '/realtime/doc/', `/${API_PREFIX}/relations`]);
  return document;
}

/** The one place that sets up the HTTP edge; main.ts and the tests both call it. */
export function configureApp(app: NestExpressApplication, config: AppConfig): OpenAPIObject {
  app.useLogger(app.get(Logger));
  // Requests Node's parser refuses (oversized headers, malformed request lines) never reach Express: the envelope too.
  answerClientErrors(app.getHttpServer() as Server);
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'extended');
  app.use(assignRequestId);
  // JSON also under its structured-syntax types (application/merge-patch+json …), as text/plain or without a type.
  app.useBodyParser('json', { limit: config.bodyLimitBytes, type: (request: unknown) => readsAsJson(request as Parameters<typeof readsAsJson>[0]) });
  app.useBodyParser('urlencoded', { limit: config.bodyLimitBytes, extended: false });
  app.use(refuseUnreadBody);
  app.use(limitBodyDepth);
  app.use(helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false }));
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
      exposedHeaders: [
        'X-Request-Id',
        'X-API-Deprecated',
        'Retry-After',
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
      ],
    });
  }
  app.use(app.get(MetricsService).middleware);
  app.use(lowerCaseTenantIds);
  // Outside /api/v1, the OpenAPI pages and the host-root routes there is nothing: the 404 envelope, not Express's page.
  app.use(answerUnknownPaths([API_PREFIX, `${API_PREFIX}/{*path}`, 'api/docs', 'api/docs/{*path}', 'api/docs-json', ...HOST_ROOT_ROUTES]));
  app.setGlobalPrefix(API_PREFIX, { exclude: HOST_ROOT_ROUTES });
  // Realtime sockets (docs/realtime.md) share the HTTP server's port.
  app.useWebSocketAdapter(new WsAdapter(app));
  app.useGlobalPipes(
    new QueryValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      stopAtFirstError: false,
      exceptionFactory: (errors) => AppException.validation(validationDetails(errors)),
    }),
  );
  const limiter = app.get(RateLimiter);
  app.useGlobalFilters(
    new TokenAwareExceptionFilter(
      new AllExceptionsFilter({ bearerChallenge: true, limiter }),
      new AllExceptionsFilter({ bearerChallenge: false, limiter }),
    ),
  );
  app.useGlobalInterceptors(new EnvelopeInterceptor(app.get(Reflector)), new UndeclaredQueryInterceptor(app.get(Reflector)));

  const document = buildOpenApiDocument(app, config);
  SwaggerModule.setup('api/docs', app, document, {
    jsonDocumentUrl: 'api/docs-json',
    useGlobalPrefix: false,
    customSiteTitle: 'Quire API',
  });
  app.use(['/api/docs', '/api/docs-json'], answerNotFound);
  clearRoutes();
  // Served outside the OpenAPI document: the Prometheus scrape and the OpenAPI pages (a wrong method → 405).
  for (const path of ['/metrics', '/api/docs', '/api/docs-json']) {
    registerRoute('get', path);
  }
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of Object.keys(item)) {
      if (['get', 'post', 'put', 'patch', 'delete', 'head', 'options'].includes(method)) {
        registerRoute(method, path);
      }
    }
  }
  return document;
}
