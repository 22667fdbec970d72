import {
  Body,
  Controller,
  Delete,
  Get,
  Param,
  Patch,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, Public } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import {
  CreateOidcProviderDto,
  OidcProviderAdminDto,
  OidcProviderPublicDto,
  UpdateOidcProviderDto,
} from '../dtos/oidc-provider.dto.js';
import { PlatformAdminGuard } from '../guards/platform-admin.guard.js';
import { OidcProviderAdminService } from '../services/third-party/oidc-provider-admin.service.js';
import { UuidParamPipe } from '../../../common/http/uuid-param.pipe.js';

@ApiTags('third-party login')
@Controller('oidc/providers')
export class OidcProvidersController {
  constructor(private readonly providers: OidcProviderAdminService) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Enabled third-party login options (public)' })
  @ApiEnvelope(OidcProviderPublicDto, { shape: 'page' })
  list(@Query() query: PageQueryDto): Promise<Page<OidcProviderPublicDto>> {
    return this.providers.listPublic(query);
  }
}

@ApiTags('admin')
@Controller('admin/oidc/providers')
@Authenticated()
@UseGuards(PlatformAdminGuard)
export class OidcProvidersAdminController {
  constructor(private readonly providers: OidcProviderAdminService) {}

  @Get()
  @ApiOperation({ summary: 'All configured login providers (platform administrators)' })
  @ApiEnvelope(OidcProviderAdminDto, { shape: 'page' })
  list(@Query() query: PageQueryDto): Promise<Page<OidcProviderAdminDto>> {
    return this.providers.list(query);
  }

  @Post()
  @ApiOperation({ summary: 'Add a login provider; the client secret is stored encrypted' })
  @ApiEnvelope(OidcProviderAdminDto, { status: 201 })
  @ApiConflictResponse({ description: 'ALREADY_EXISTS: the provider is configured already (one configuration per provider)', schema: ERROR_ENVELOPE_SCHEMA })
  create(@Body() dto: CreateOidcProviderDto): Promise<OidcProviderAdminDto> {
    return this.providers.create(dto);
  }

  @Patch(':providerId')
  @ApiOperation({ summary: 'Change a login provider' })
  @ApiEnvelope(OidcProviderAdminDto)
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown login provider', schema: ERROR_ENVELOPE_SCHEMA })
  update(
    @Param('providerId', new UuidParamPipe('provider')) providerId: string,
    @Body() dto: UpdateOidcProviderDto,
  ): Promise<OidcProviderAdminDto> {
    return this.providers.update(providerId, dto);
  }

  @Delete(':providerId')
  @ApiOperation({ summary: 'Remove a login provider (bound identities stay, unusable until it returns)' })
  @ApiEnvelope(null)
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown login provider', schema: ERROR_ENVELOPE_SCHEMA })
  remove(@Param('providerId', new UuidParamPipe('provider')) providerId: string): Promise<void> {
    return this.providers.remove(providerId);
  }
}
