import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal, RequireScopes } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { UpdateUserDto, UserResponseDto } from '../dtos/user.dto.js';
import { ProfileService } from '../services/profile.service.js';

@ApiTags('users')
@Controller('users/me')
export class UsersController {
  constructor(private readonly profiles: ProfileService) {}

  @Get()
  @Authenticated()
  @ApiOperation({ summary: 'The current user, with default organization and workspace' })
  @ApiEnvelope(UserResponseDto)
  me(@CurrentPrincipal() principal: Principal): Promise<UserResponseDto> {
    return this.profiles.get(principal);
  }

  // Reading who you are needs any credential; changing the profile needs the OpenID `profile` scope, so a narrow
  // key (say doc:read for a report job) cannot rename its owner. First-party sessions carry every scope.
  @Patch()
  @RequireScopes('profile')
  @ApiOperation({ summary: 'Update the current user (scope profile)' })
  @ApiEnvelope(UserResponseDto)
  update(@CurrentPrincipal() principal: Principal, @Body() dto: UpdateUserDto): Promise<UserResponseDto> {
    return this.profiles.update(principal, dto);
  }
}
