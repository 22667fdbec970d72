import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiConflictResponse, ApiExtraModels, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope, ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';
import {
  LoginCodeSentDto,
  LoginDto,
  RefreshDto,
  RegisterDto,
  TokenPairDto,
  TwoFactorChallengeDto,
} from '../dtos/auth.dto.js';
import { AccountService } from '../services/account.service.js';
import { SignInService } from '../services/sign-in.service.js';
import { metaOf } from './request-meta.js';

/** Documents the 401 TWO_FACTOR_REQUIRED answer whose payload is the challenge. */
export const TWO_FACTOR_REQUIRED_RESPONSE = {
  status: 401,
  description:
    'INVALID_CREDENTIALS; or TWO_FACTOR_REQUIRED with the challenge in `payload` (continue at POST /auth/2fa/verify)',
  schema: {
    ...ERROR_ENVELOPE_SCHEMA,
    properties: {
      ...ERROR_ENVELOPE_SCHEMA.properties,
      // The challenge with TWO_FACTOR_REQUIRED; null with the other 401s (INVALID_CREDENTIALS, INVALID_TOKEN).
      payload: { allOf: [{ $ref: getSchemaPath(TwoFactorChallengeDto) }], nullable: true },
    },
  },
};

@ApiTags('auth')
@ApiExtraModels(TwoFactorChallengeDto)
@Controller('auth')
export class AuthController {
  constructor(
    private readonly accounts: AccountService,
    private readonly signIn: SignInService,
  ) {}

  @Post('register')
  @Public()
  @ApiOperation({ summary: 'Register; creates a personal organization and its default workspace' })
  @ApiEnvelope(TokenPairDto, { status: 201 })
  @ApiConflictResponse({ description: 'ALREADY_EXISTS: an account with this e-mail address exists (details.field email)', schema: ERROR_ENVELOPE_SCHEMA })
  register(@Body() dto: RegisterDto, @Req() request: Request): Promise<TokenPairDto> {
    return this.accounts.register(dto, metaOf(request));
  }

  @Post('login')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Sign in: email + password, or phone (a code is sent, 202) then phone + code',
    description:
      'With two-step verification on, the answer is 401 TWO_FACTOR_REQUIRED carrying a challenge; repeated failures → 429.',
  })
  @ApiEnvelope(TokenPairDto)
  @ApiEnvelope(LoginCodeSentDto, {
    status: 202,
    description: 'A sign-in code was sent by SMS (same answer for unknown numbers)',
  })
  @ApiResponse(TWO_FACTOR_REQUIRED_RESPONSE)
  @ApiResponse({
    status: 429,
    description: 'RATE_LIMIT_EXCEEDED: too many failures for the account or address',
    schema: ERROR_ENVELOPE_SCHEMA,
  })
  async login(
    @Body() dto: LoginDto,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TokenPairDto | LoginCodeSentDto> {
    const result = await this.accounts.login(dto, metaOf(request));
    if ('codeSent' in result) {
      response.status(202);
    }
    return result;
  }

  @Post('refresh')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'Exchange a session refresh token for new tokens (the refresh token rotates)' })
  @ApiEnvelope(TokenPairDto)
  @ApiResponse({ status: 401, description: 'INVALID_TOKEN: unknown, expired, revoked or already used refresh token', schema: ERROR_ENVELOPE_SCHEMA })
  refresh(@Body() dto: RefreshDto): Promise<TokenPairDto> {
    return this.signIn.refresh(dto);
  }
}
