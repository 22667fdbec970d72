import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import {
  CreateOAuthClientDto,
  OAuthClientResponseDto,
  OAuthClientWithSecretDto,
} from '../dtos/oauth-client.dto.js';
import { FirstPartySessionGuard } from '../../../common/auth/first-party-session.guard.js';
import { OAuthClientService } from '../services/issuer/oauth-client.service.js';

@ApiTags('oauth')
@Controller('oauth/clients')
@Authenticated()
@UseGuards(FirstPartySessionGuard)
export class OAuthClientsController {
  constructor(private readonly clients: OAuthClientService) {}

  @Post()
  @ApiOperation({ summary: 'Register an OAuth client; the secret is shown only in this answer' })
  @ApiEnvelope(OAuthClientWithSecretDto, { status: 201 })
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: CreateOAuthClientDto,
  ): Promise<OAuthClientWithSecretDto> {
    return this.clients.create(principal, dto);
  }

  @Get()
  @ApiOperation({ summary: "The current user's OAuth clients" })
  @ApiEnvelope(OAuthClientResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: PageQueryDto,
  ): Promise<Page<OAuthClientResponseDto>> {
    return this.clients.list(principal, query);
  }

  @Get(':clientId')
  @ApiOperation({ summary: 'One of the current user’s OAuth clients' })
  @ApiEnvelope(OAuthClientResponseDto)
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown client, or one of another user', schema: ERROR_ENVELOPE_SCHEMA })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('clientId') clientId: string,
  ): Promise<OAuthClientResponseDto> {
    return this.clients.get(principal, clientId);
  }

  @Delete(':clientId')
  @ApiOperation({ summary: 'Delete the client; its codes, tokens and refresh tokens stop working' })
  @ApiEnvelope(null)
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown client, or one of another user', schema: ERROR_ENVELOPE_SCHEMA })
  remove(@CurrentPrincipal() principal: Principal, @Param('clientId') clientId: string): Promise<void> {
    return this.clients.remove(principal, clientId);
  }

  @Post(':clientId/regenerate-secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'Issue a new client secret (shown once); the old one stops working' })
  @ApiEnvelope(OAuthClientWithSecretDto)
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown client, or one of another user', schema: ERROR_ENVELOPE_SCHEMA })
  regenerateSecret(
    @CurrentPrincipal() principal: Principal,
    @Param('clientId') clientId: string,
  ): Promise<OAuthClientWithSecretDto> {
    return this.clients.regenerateSecret(principal, clientId);
  }
}
