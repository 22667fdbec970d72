import { FirstPartyOnly } from '../../../common/auth/first-party-session.guard.js';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiConflictResponse, ApiNotFoundResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { CreateOrganizationDto, OrganizationDetailDto, TransferOwnershipDto, UpdateOrganizationDto } from '../dtos/organization.dto.js';
import { RequireOrgRole } from '../guards/tenancy-roles.decorators.js';
import { OrganizationsService } from '../services/organizations.service.js';
import { NoBody } from '../../../common/http/no-body.decorator.js';

@ApiTags('organizations')
@Controller('organizations')
@Authenticated()
export class OrganizationsController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Post()
  @FirstPartyOnly()
  @ApiOperation({ summary: 'Create an organization; the caller becomes owner and a default workspace is created' })
  @ApiEnvelope(OrganizationDetailDto, { status: 201 })
  @ApiConflictResponse({ description: 'ALREADY_EXISTS: the slug is taken (details.field slug)', schema: ERROR_ENVELOPE_SCHEMA })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateOrganizationDto): Promise<OrganizationDetailDto> {
    return this.organizations.create(principal, dto);
  }

  @Get(':organizationId')
  @RequireOrgRole('guest')
  @ApiOperation({ summary: "Organization detail with the caller's role and statistics" })
  @ApiEnvelope(OrganizationDetailDto)
  get(@CurrentPrincipal() principal: Principal, @Param('organizationId') organizationId: string): Promise<OrganizationDetailDto> {
    return this.organizations.get(principal, organizationId);
  }

  @Patch(':organizationId')
  @FirstPartyOnly()
  @RequireOrgRole('admin')
  @ApiOperation({ summary: 'Update the organization (owner or admin)' })
  @ApiEnvelope(OrganizationDetailDto)
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Body() dto: UpdateOrganizationDto,
  ): Promise<OrganizationDetailDto> {
    return this.organizations.update(principal, organizationId, dto);
  }

  @Delete(':organizationId')
  @FirstPartyOnly()
  @RequireOrgRole('owner')
  @ApiOperation({ summary: 'Archive (soft delete) the organization (owner only)' })
  @ApiEnvelope(null)
  archive(@CurrentPrincipal() principal: Principal, @Param('organizationId') organizationId: string, @NoBody() _body: undefined): Promise<null> {
    return this.organizations.archive(principal, organizationId);
  }

  @Post(':organizationId/leave')
  @FirstPartyOnly()
  @HttpCode(200)
  @ApiNotFoundResponse({ description: 'NOT_FOUND: unknown or archived organization, or not a member', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiOperation({ summary: 'Leave the organization, also while suspended (the owner must transfer ownership first)' })
  @ApiEnvelope(null)
  leave(@CurrentPrincipal() principal: Principal, @Param('organizationId') organizationId: string, @NoBody() _body: undefined): Promise<null> {
    return this.organizations.leave(principal, organizationId);
  }

  @Post(':organizationId/transfer-ownership')
  @FirstPartyOnly()
  @HttpCode(200)
  @RequireOrgRole('owner')
  @ApiOperation({ summary: 'Make another active member the owner; the previous owner becomes admin' })
  @ApiEnvelope(OrganizationDetailDto)
  transferOwnership(
    @CurrentPrincipal() principal: Principal,
    @Param('organizationId') organizationId: string,
    @Body() dto: TransferOwnershipDto,
  ): Promise<OrganizationDetailDto> {
    return this.organizations.transferOwnership(principal, organizationId, dto);
  }
}
