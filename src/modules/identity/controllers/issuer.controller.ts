import {
  Body,
  Controller,
  Get,
  Header,
  Headers,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  Res,
  UseFilters,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiHeader,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal, Public, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { RawResponse } from '../../../common/http/raw-response.decorator.js';
import { OAUTH_PROVIDERS } from '../entities/oidc-provider.entity.js';
import { OAuthTokenExceptionFilter } from '../filters/oauth-token-exception.filter.js';
import { AuthorizePageService, type PageResult } from '../services/issuer/authorize-page.service.js';
import { type Hybrid, hybrid, hybridSchema } from '../services/issuer/hybrid-response.js';
import {
  type DiscoveryDocument,
  IssuerMetadataService,
  type UserInfoClaims,
} from '../services/issuer/issuer-metadata.service.js';
import { type TokenFields, TokenEndpointService } from '../services/issuer/token-endpoint.service.js';
import { metaOf } from './request-meta.js';

const str = { type: 'string' };
const strings = { type: 'array', items: str };
const HTML_PAGE = {
  description: 'Sign-in / second step / consent page',
  content: { 'text/html': { schema: str } },
};
const REDIRECT = {
  status: 303,
  description: 'Back to redirect_uri with code + state (or error + error_description + state)',
};

function send(response: Response, result: PageResult): void {
  response.setHeader('Cache-Control', 'no-store');
  if (result.kind === 'redirect') {
    response.redirect(303, result.location);
    return;
  }
  response.setHeader(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  );
  response.setHeader('X-Frame-Options', 'DENY');
  response.status(result.status).type('html').send(result.html);
}

/**
 * The token issuer's endpoints (spec 5.3). Declared once here and mounted twice: at the host root
 * (`{auth_url}`) and under `/api/v1/auth/`. JSON answers are hybrid bodies: the standard protocol fields at
 * the top level plus the envelope (`success`, `message`, `payload`).
 */
@ApiTags('oauth')
export abstract class IssuerEndpoints {
  constructor(
    private readonly metadata: IssuerMetadataService,
    protected readonly pages: AuthorizePageService,
    private readonly tokenEndpoint: TokenEndpointService,
  ) {}

  @Get('.well-known/openid-configuration')
  @Public()
  @RawResponse()
  @ApiOperation({ summary: 'OpenID Connect discovery' })
  @ApiResponse({
    status: 200,
    description: 'Discovery document (also in `payload`)',
    schema: hybridSchema(
      {
        issuer: str,
        authorization_endpoint: str,
        token_endpoint: str,
        userinfo_endpoint: str,
        jwks_uri: str,
        scopes_supported: strings,
        response_types_supported: strings,
        response_modes_supported: strings,
        grant_types_supported: strings,
        token_endpoint_auth_methods_supported: strings,
        code_challenge_methods_supported: strings,
        subject_types_supported: strings,
        id_token_signing_alg_values_supported: strings,
        claims_supported: strings,
      },
      [
        'issuer',
        'authorization_endpoint',
        'token_endpoint',
        'userinfo_endpoint',
        'jwks_uri',
        'scopes_supported',
        'response_types_supported',
        'response_modes_supported',
        'grant_types_supported',
        'token_endpoint_auth_methods_supported',
        'code_challenge_methods_supported',
        'subject_types_supported',
        'id_token_signing_alg_values_supported',
        'claims_supported',
      ],
    ),
  })
  discovery(): Hybrid<DiscoveryDocument> {
    return hybrid(this.metadata.discovery());
  }

  @Get('jwks.json')
  @Public()
  @RawResponse()
  @Header('Cache-Control', 'public, max-age=60')
  @ApiOperation({ summary: 'Public keys that verify access and ID tokens (current and recently retired)' })
  @ApiResponse({
    status: 200,
    description: 'JWK set (also in `payload`)',
    schema: hybridSchema({ keys: { type: 'array', items: { type: 'object' } } }, ['keys']),
  })
  async jwks(): Promise<Hybrid<{ keys: object[] }>> {
    return hybrid(await this.metadata.jwks());
  }

  @Get('authorize')
  @Public()
  @RawResponse()
  @ApiOperation({
    summary: 'Authorization endpoint: sign-in and consent page (response_type code or token, PKCE S256)',
    description:
      'Query: response_type, client_id, redirect_uri, scope, state, nonce, code_challenge, code_challenge_method=S256, prompt, ' +
      'response_mode (query or fragment; default query for a code, fragment for a token).',
  })
  @ApiResponse({ status: 200, ...HTML_PAGE })
  @ApiResponse(REDIRECT)
  @ApiResponse({
    status: 400,
    description: 'Unknown client or redirect_uri: an error page, no redirect',
    content: { 'text/html': { schema: str } },
  })
  async authorize(@Query() query: Record<string, unknown>, @Res() response: Response): Promise<void> {
    send(response, await this.pages.start(query));
  }

  @Post('authorize')
  @Public()
  @RawResponse()
  @ApiOperation({
    summary: 'The sign-in, second-step and consent forms of the authorization page post here',
    description:
      'Step `third_party` (with `provider`) answers 303 to the provider; the provider returns the browser to GET /api/v1/auth/authorize/oauth/{provider}/callback.',
  })
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
  @ApiBody({
    schema: {
      type: 'object',
      properties: {
        step: { type: 'string', enum: ['login', 'third_party', 'two_factor', 'consent'] },
        request: str,
        provider: { type: 'string', enum: [...OAUTH_PROVIDERS] },
      },
    },
  })
  @ApiResponse({ status: 200, ...HTML_PAGE })
  @ApiResponse({ ...REDIRECT, description: `${REDIRECT.description}; or to the provider (step third_party)` })
  @ApiResponse({
    status: 400,
    description:
      'An incomplete form (unknown step, missing or expired request, no e-mail or password) or an unavailable provider: ' +
      'the page again with the problem, no redirect. A JSON body the parser refuses (broken JSON, or a JSON string or ' +
      'number) is answered before the page, as the JSON error envelope VALIDATION_ERROR (details.field body)',
    content: { 'text/html': { schema: str }, 'application/json': { schema: ERROR_ENVELOPE_SCHEMA } },
  })
  @ApiResponse({
    status: 401,
    description: 'Wrong e-mail, password or code: the page again with the problem',
    content: { 'text/html': { schema: str } },
  })
  @ApiResponse({
    status: 429,
    description: 'Too many failed sign-ins for the account or address: the page again with the problem',
    content: { 'text/html': { schema: str } },
  })
  @ApiResponse({
    status: 503,
    description:
      'Step `third_party`: the provider cannot be reached; the sign-in page again with the problem',
    content: { 'text/html': { schema: str } },
  })
  async authorizeStep(
    @Body() form: Record<string, unknown>,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    // No form (another content type, or none) is an empty one: the page answers it like any incomplete form.
    send(response, await this.pages.submit(form ?? {}, metaOf(request)));
  }

  @Post('token')
  @Public()
  @HttpCode(200)
  @RawResponse()
  @UseFilters(OAuthTokenExceptionFilter)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  // Spec 5.5: the token request is application/x-www-form-urlencoded; JSON bodies are accepted too.
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
  @ApiOperation({
    summary: 'Token endpoint: client_credentials, authorization_code (+PKCE) and refresh_token grants',
    description:
      'application/x-www-form-urlencoded. Client authentication by HTTP Basic or client_id + client_secret form fields.',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['grant_type'],
      properties: {
        grant_type: { type: 'string', enum: ['client_credentials', 'authorization_code', 'refresh_token'] },
        client_id: str,
        client_secret: str,
        scope: str,
        code: str,
        redirect_uri: str,
        code_verifier: str,
        refresh_token: str,
      },
    },
  })
  // HTTP Basic client authentication, or none here when client_id and client_secret come as form fields.
  @ApiSecurity('client-basic')
  @ApiSecurity({})
  @ApiHeader({
    name: 'authorization',
    required: false,
    description: 'Basic base64(client_id:client_secret), or leave out and send the form fields',
  })
  @ApiResponse({
    status: 200,
    description: 'RFC 6749 token response, also in `payload`',
    schema: hybridSchema(
      {
        access_token: str,
        token_type: { type: 'string', example: 'Bearer' },
        expires_in: { type: 'integer', example: 3600 },
        refresh_token: str,
        scope: str,
        id_token: str,
      },
      ['access_token', 'token_type', 'expires_in', 'scope'],
    ),
  })
  @ApiResponse({
    status: 400,
    description:
      'VALIDATION_ERROR / INVALID_SCOPE, with RFC 6749 `error` (invalid_request, unsupported_grant_type, invalid_scope) at the top level',
    schema: {
      ...ERROR_ENVELOPE_SCHEMA,
      properties: { ...ERROR_ENVELOPE_SCHEMA.properties, error: str, error_description: str },
    },
  })
  @ApiResponse({
    status: 401,
    description:
      'INVALID_CLIENT (error invalid_client / unauthorized_client) or INVALID_TOKEN (error invalid_grant)',
    schema: {
      ...ERROR_ENVELOPE_SCHEMA,
      properties: { ...ERROR_ENVELOPE_SCHEMA.properties, error: str, error_description: str },
    },
  })
  async token(
    @Body() form: Record<string, unknown>,
    @Headers('authorization') authorization?: string,
  ): Promise<Hybrid<TokenFields>> {
    return hybrid(await this.tokenEndpoint.exchange(form ?? {}, authorization));
  }

  @Get('userinfo')
  @RequireScopes('openid')
  @RawResponse()
  @ApiOperation({ summary: 'OpenID Connect userinfo of the bearer token (claims limited by its scopes)' })
  @UserInfoResponse()
  async userinfo(@CurrentPrincipal() principal: Principal): Promise<Hybrid<UserInfoClaims>> {
    return hybrid(await this.metadata.userinfo(principal));
  }

  /** OIDC Core 5.3.1: the UserInfo endpoint answers POST as it answers GET (the token in the header). */
  @Post('userinfo')
  @HttpCode(200)
  @RequireScopes('openid')
  @RawResponse()
  @ApiOperation({
    summary:
      'OpenID Connect userinfo by POST (OIDC Core 5.3.1); the same claims as GET; the bearer token in the header',
  })
  @UserInfoResponse()
  async userinfoByPost(@CurrentPrincipal() principal: Principal): Promise<Hybrid<UserInfoClaims>> {
    return hybrid(await this.metadata.userinfo(principal));
  }
}

/** The claims userinfo answers, by GET or POST. */
function UserInfoResponse(): MethodDecorator {
  return ApiResponse({
    status: 200,
    description: 'Claims, also in `payload`',
    schema: hybridSchema(
      {
        sub: str,
        email: str,
        email_verified: { type: 'boolean' },
        name: str,
        picture: str,
        locale: str,
        zoneinfo: str,
        updated_at: { type: 'integer', description: 'Seconds since the epoch (OIDC Core 5.1)' },
      },
      ['sub'],
    ),
  });
}

/** `{auth_url}`: the issuer endpoints at the host root. */
@ApiTags('oauth')
@Controller()
export class IssuerController extends IssuerEndpoints {}

/** The same endpoints under `/api/v1/auth/`. */
@ApiTags('oauth')
@Controller('auth')
export class IssuerApiController extends IssuerEndpoints {
  /**
   * Declared on this mount only: a host-root route needs an entry in HOST_ROOT_ROUTES (src/app.setup.ts),
   * and on the root controller it would otherwise land at `/api/v1/authorize/...`.
   */
  @Get('authorize/oauth/:provider/callback')
  @Public()
  @RawResponse()
  @ApiOperation({
    summary:
      'Where a provider returns the browser after a third-party sign-in started on the authorization page',
    description:
      'Query: code, state, iss (RFC 9207), or error. Register this URL at the provider. Continues the authorization page: second step or consent.',
  })
  @ApiParam({ name: 'provider', enum: [...OAUTH_PROVIDERS] })
  @ApiResponse({ status: 200, ...HTML_PAGE })
  @ApiResponse({
    status: 400,
    description: 'Unknown, expired or used state: an error page, no redirect',
    content: { 'text/html': { schema: str } },
  })
  @ApiResponse({
    status: 401,
    description:
      'The provider refused or did not confirm the sign-in: the sign-in page again, with the reason',
    content: { 'text/html': { schema: str } },
  })
  @ApiResponse({
    status: 409,
    description:
      "The provider's e-mail belongs to an account this identity is not bound to: the sign-in page again, with the reason",
    content: { 'text/html': { schema: str } },
  })
  @ApiResponse({
    status: 429,
    description: 'The account is over its limit of failed sign-ins: the sign-in page again, with the problem',
    content: { 'text/html': { schema: str } },
  })
  @ApiResponse({
    status: 503,
    description: 'The provider cannot be reached: the sign-in page again, with the problem',
    content: { 'text/html': { schema: str } },
  })
  async authorizeThirdPartyCallback(
    @Param('provider') provider: string,
    @Query() query: Record<string, unknown>,
    @Res() response: Response,
  ): Promise<void> {
    send(response, await this.pages.thirdPartyCallback(provider, query));
  }
}
