import { Body, Controller, Delete, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import { BindOAuthDto, OAuthBindingDto, ProviderParamDto } from '../dtos/oidc-provider.dto.js';
import { FirstPartySessionGuard } from '../../../common/auth/first-party-session.guard.js';
import { OAuthBindingService } from '../services/third-party/oauth-binding.service.js';
import { ApiProviderFailures } from './provider-failures.openapi.js';

@ApiTags('users')
@Controller('users/me/oauth')
@Authenticated()
@UseGuards(FirstPartySessionGuard)
export class OAuthBindingsController {
  constructor(private readonly bindings: OAuthBindingService) {}

  @Get()
  @ApiOperation({ summary: 'Third-party identities bound to the current user (paged, by provider)' })
  @ApiEnvelope(OAuthBindingDto, { shape: 'page' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageQueryDto): Promise<Page<OAuthBindingDto>> {
    return this.bindings.list(principal, query);
  }

  @Post(':provider')
  @ApiOperation({ summary: 'Bind a third-party identity with an authorization code from the provider' })
  @ApiEnvelope(OAuthBindingDto, { status: 201 })
  @ApiConflictResponse({ description: 'ALREADY_EXISTS: the identity is bound to an account, or another identity of the provider is bound to yours', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiProviderFailures()
  bind(
    @CurrentPrincipal() principal: Principal,
    @Param() params: ProviderParamDto,
    @Body() dto: BindOAuthDto,
  ): Promise<OAuthBindingDto> {
    return this.bindings.bind(principal, params.provider, dto);
  }

  @Delete(':provider')
  @ApiOperation({ summary: 'Unbind a third-party identity' })
  @ApiEnvelope(null)
  @ApiNotFoundResponse({ description: 'NOT_FOUND: no identity of this provider is bound', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiConflictResponse({ description: 'INVALID_STATE: it is the only way left to sign in (bind another provider first)', schema: ERROR_ENVELOPE_SCHEMA })
  unbind(@CurrentPrincipal() principal: Principal, @Param() params: ProviderParamDto): Promise<void> {
    return this.bindings.unbind(principal, params.provider);
  }
}
