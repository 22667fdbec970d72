import {
  Body,
  Controller,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import {
  ApiKeyResponseDto,
  ApiKeyUsageDto,
  ApiKeyWithSecretDto,
  CreateApiKeyDto,
} from '../dtos/api-key.dto.js';
import { FirstPartySessionGuard } from '../../../common/auth/first-party-session.guard.js';
import { ApiKeyService } from '../services/api-keys/api-key.service.js';
import { UuidParamPipe } from '../../../common/http/uuid-param.pipe.js';

@ApiTags('api-keys')
@Controller('api-keys')
@Authenticated()
@UseGuards(FirstPartySessionGuard)
export class ApiKeysController {
  constructor(private readonly keys: ApiKeyService) {}

  @Post()
  @ApiOperation({ summary: 'Create an API key; the key is shown only in this answer' })
  @ApiEnvelope(ApiKeyWithSecretDto, { status: 201 })
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: CreateApiKeyDto,
  ): Promise<ApiKeyWithSecretDto> {
    return this.keys.create(principal, dto);
  }

  @Get()
  @ApiOperation({ summary: "The current user's API keys (never the keys themselves)" })
  @ApiEnvelope(ApiKeyResponseDto, { shape: 'page' })
  list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: PageQueryDto,
  ): Promise<Page<ApiKeyResponseDto>> {
    return this.keys.list(principal, query);
  }

  @Post(':keyId/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke an API key; requests with it get 401 from now on' })
  @ApiEnvelope(ApiKeyResponseDto)
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown API key, or one of another user', schema: ERROR_ENVELOPE_SCHEMA })
  revoke(
    @CurrentPrincipal() principal: Principal,
    @Param('keyId', new UuidParamPipe('API key')) keyId: string,
  ): Promise<ApiKeyResponseDto> {
    return this.keys.revoke(principal, keyId);
  }

  @Get(':keyId/usage')
  @ApiOperation({ summary: 'Usage log of an API key, newest first' })
  @ApiEnvelope(ApiKeyUsageDto, { shape: 'page' })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown API key, or one of another user', schema: ERROR_ENVELOPE_SCHEMA })
  usage(
    @CurrentPrincipal() principal: Principal,
    @Param('keyId', new UuidParamPipe('API key')) keyId: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<ApiKeyUsageDto>> {
    return this.keys.usage(principal, keyId, query);
  }
}
