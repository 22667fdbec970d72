import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import { UserOrganizationDto } from '../dtos/user-organization.dto.js';
import { UserOrganizationsService } from '../services/user-organizations.service.js';

/** Spec 4.1 `GET /users/me/organizations`: served by tenancy, which owns memberships. */
@ApiTags('users')
@Controller('users/me/organizations')
@Authenticated()
export class UserOrganizationsController {
  constructor(private readonly organizations: UserOrganizationsService) {}

  @Get()
  @ApiOperation({ summary: "Organizations the current user belongs to, with the user's role" })
  @ApiEnvelope(UserOrganizationDto, { shape: 'page' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageQueryDto): Promise<Page<UserOrganizationDto>> {
    return this.organizations.list(principal, query);
  }
}
