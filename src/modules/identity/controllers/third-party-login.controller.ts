import { Body, Controller, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { ApiProviderFailures } from './provider-failures.openapi.js';
import { ThirdPartyLoginResultDto } from '../dtos/auth.dto.js';
import {
  ProviderParamDto,
  ThirdPartyAuthorizeDto,
  ThirdPartyAuthorizeQueryDto,
  ThirdPartyCallbackDto,
} from '../dtos/oidc-provider.dto.js';
import { ThirdPartyLoginService } from '../services/third-party/third-party-login.service.js';
import { TWO_FACTOR_REQUIRED_RESPONSE } from './auth.controller.js';
import { metaOf } from './request-meta.js';

@ApiTags('third-party login')
@Controller('auth/oauth')
export class ThirdPartyLoginController {
  constructor(private readonly login: ThirdPartyLoginService) {}

  @Get(':provider/authorize')
  @Public()
  // Public, but a first-party bearer token, when sent, turns the flow into binding: the bearer is optional.
  @ApiBearerAuth()
  @ApiSecurity({})
  @ApiOperation({
    summary: 'The provider sign-in URL (with state, nonce and PKCE)',
    description:
      'Public. Called with a first-party bearer token, the flow binds the provider to that account (finish with POST /users/me/oauth/{provider}).',
  })
  @ApiEnvelope(ThirdPartyAuthorizeDto)
  @ApiResponse({
    status: 401,
    description: 'UNAUTHORIZED or INVALID_TOKEN: a bearer token was sent and is not valid',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  @ApiResponse({
    status: 403,
    description:
      'FORBIDDEN: the bearer token sent is not a first-party session (an API key or a client token)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  @ApiProviderFailures()
  authorize(
    @Param() params: ProviderParamDto,
    @Query() query: ThirdPartyAuthorizeQueryDto,
    @Req() request: Request,
  ): Promise<ThirdPartyAuthorizeDto> {
    return this.login.authorize(params.provider, query.redirectUri, request);
  }

  @Post(':provider/callback')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'Finish a third-party sign-in with the code and state the provider returned' })
  @ApiEnvelope(ThirdPartyLoginResultDto)
  @ApiResponse({
    ...TWO_FACTOR_REQUIRED_RESPONSE,
    description:
      'INVALID_TOKEN: unknown, expired or used state, or a code the provider refuses; or TWO_FACTOR_REQUIRED with ' +
      'the challenge in `payload` (continue at POST /auth/2fa/verify)',
  })
  @ApiResponse({
    status: 409,
    description:
      "ALREADY_EXISTS: the provider's e-mail belongs to an account this identity is not bound to (details.field email)",
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  @ApiResponse({
    status: 429,
    description: 'RATE_LIMIT_EXCEEDED: the account is over its limit of failed second steps',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  @ApiProviderFailures()
  callback(
    @Param() params: ProviderParamDto,
    @Body() dto: ThirdPartyCallbackDto,
    @Req() request: Request,
  ): Promise<ThirdPartyLoginResultDto> {
    return this.login.callback(params.provider, dto, metaOf(request));
  }
}
