import { Body, Controller, HttpCode, Post, Req, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Authenticated, CurrentPrincipal, Public } from '../../../common/auth/auth.decorators.js';
import type { Principal } from '../../../common/auth/principal.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import { TokenPairDto } from '../dtos/auth.dto.js';
import {
  DisableTwoFactorDto,
  EnableTwoFactorDto,
  TwoFactorEnrollmentDto,
  TwoFactorStatusDto,
  VerifyTwoFactorDto,
} from '../dtos/two-factor.dto.js';
import { FirstPartySessionGuard } from '../../../common/auth/first-party-session.guard.js';
import { SignInService } from '../services/sign-in.service.js';
import { TwoFactorService } from '../services/two-factor/two-factor.service.js';
import { metaOf } from './request-meta.js';

@ApiTags('auth')
@Controller('auth/2fa')
export class TwoFactorController {
  constructor(
    private readonly twoFactor: TwoFactorService,
    private readonly signIn: SignInService,
  ) {}

  @Post('enable')
  @HttpCode(200)
  @Authenticated()
  @UseGuards(FirstPartySessionGuard)
  @ApiOperation({
    summary: 'Turn on two-step verification',
    description:
      'Without `code`: starts enrolling (TOTP: secret, otpauth URI and QR code; sms/email: a code is sent). ' +
      'With `code`: confirms and answers the one-time backup codes.',
  })
  @ApiEnvelope(TwoFactorEnrollmentDto)
  @ApiResponse({
    status: 409,
    description:
      'INVALID_STATE: two-step verification is already on, or (with `code`) no enrolment of that method is pending; ' +
      'ALREADY_EXISTS: the phone number belongs to another account',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  enable(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: EnableTwoFactorDto,
  ): Promise<TwoFactorEnrollmentDto> {
    return this.twoFactor.enable(principal, dto);
  }

  @Post('verify')
  @HttpCode(200)
  @Public()
  // Public, but a first-party bearer token without challengeToken confirms an enrolment: the bearer is optional.
  @ApiBearerAuth()
  @ApiSecurity({})
  @ApiOperation({
    summary: 'Second sign-in step: the challenge token and a code → tokens; or, signed in and without a challenge token, confirm the pending enrolment',
    description:
      'With `challengeToken`: the second step of a sign-in that answered TWO_FACTOR_REQUIRED → tokens. Without it, with a signed-in ' +
      "bearer token: confirms the caller's pending enrolment (method: the one pending, or `method`) → the backup codes, as " +
      '`POST /auth/2fa/enable {method, code}` does.',
  })
  @ApiEnvelope(TokenPairDto, { oneOf: [TwoFactorEnrollmentDto] })
  @ApiResponse({
    status: 401,
    description:
      'INVALID_CREDENTIALS (wrong code) or INVALID_TOKEN (challenge expired/used); UNAUTHORIZED or INVALID_TOKEN: a bearer token was sent and is not valid',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  @ApiResponse({
    status: 429,
    description: 'RATE_LIMIT_EXCEEDED: too many failures for the account or address',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  @ApiResponse({
    status: 403,
    description: 'FORBIDDEN: confirming an enrolment with a bearer token that is not a signed-in session (an API key, a client token)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  @ApiResponse({
    status: 409,
    description: 'INVALID_STATE: confirming an enrolment (no challengeToken, signed in) with none pending, or two-step verification already on',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  verify(@Body() dto: VerifyTwoFactorDto, @Req() request: Request): Promise<TokenPairDto | TwoFactorEnrollmentDto> {
    return dto.challengeToken === undefined
      ? this.twoFactor.confirmWithBearer(request, dto.code, dto.method)
      : this.signIn.completeTwoFactor({ ...dto, challengeToken: dto.challengeToken }, metaOf(request));
  }

  @Post('disable')
  @HttpCode(200)
  @Authenticated()
  @UseGuards(FirstPartySessionGuard)
  @ApiOperation({ summary: 'Turn off two-step verification (password, TOTP code or backup code required)' })
  @ApiEnvelope(TwoFactorStatusDto)
  @ApiResponse({ status: 409, description: 'INVALID_STATE: two-step verification is not on', schema: ERROR_ENVELOPE_SCHEMA })
  @ApiResponse({
    status: 429,
    description:
      'RATE_LIMIT_EXCEEDED: too many wrong passwords or codes for the account or address (counted with sign-in failures)',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  disable(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: DisableTwoFactorDto,
    @Req() request: Request,
  ): Promise<TwoFactorStatusDto> {
    return this.twoFactor.disable(principal, dto, metaOf(request));
  }
}
