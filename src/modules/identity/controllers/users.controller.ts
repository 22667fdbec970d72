import { Body, Controller, Get, Patch, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { type Page, PageQueryDto } from '../../../common/http/pagination.js';
import { UpdateUserDto, UserResponseDto } from '../dtos/user.dto.js';
import { UserOrganizationDto } from '../dtos/user-organization.dto.js';
import { ProfileService } from '../services/profile.service.js';
import { UserOrganizationsService } from '../services/user-organizations.service.js';

@ApiTags('users')
@Controller('users/me')
@Authenticated()
export class UsersController {
  constructor(
    private readonly profiles: ProfileService,
    private readonly organizations: UserOrganizationsService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The current user, with default organization and workspace' })
  @ApiEnvelope(UserResponseDto)
  me(@CurrentPrincipal() principal: Principal): Promise<UserResponseDto> {
    return this.profiles.get(principal);
  }

  @Patch()
  @ApiOperation({ summary: 'Update the current user' })
  @ApiEnvelope(UserResponseDto)
  update(@CurrentPrincipal() principal: Principal, @Body() dto: UpdateUserDto): Promise<UserResponseDto> {
    return this.profiles.update(principal, dto);
  }

  @Get('organizations')
  @ApiOperation({ summary: "Organizations the current user belongs to, with the user's role" })
  @ApiEnvelope(UserOrganizationDto, { shape: 'page' })
  organizationsOf(
    @CurrentPrincipal() principal: Principal,
    @Query() query: PageQueryDto,
  ): Promise<Page<UserOrganizationDto>> {
    return this.organizations.list(principal, query);
  }
}
