import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { LoginDto, RegisterDto, TokenPairDto } from '../dtos/auth.dto.js';
import { AccountService } from '../services/account.service.js';

function metaOf(request: Request): { userAgent?: string; ip?: string } {
  return { userAgent: request.headers['user-agent'], ip: request.ip };
}

@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(private readonly accounts: AccountService) {}

  @Post('register')
  @Public()
  @ApiOperation({ summary: 'Register; creates a personal organization and its default workspace' })
  @ApiEnvelope(TokenPairDto, { status: 201 })
  register(@Body() dto: RegisterDto, @Req() request: Request): Promise<TokenPairDto> {
    return this.accounts.register(dto, metaOf(request));
  }

  @Post('login')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'Sign in with e-mail and password' })
  @ApiEnvelope(TokenPairDto)
  login(@Body() dto: LoginDto, @Req() request: Request): Promise<TokenPairDto> {
    return this.accounts.login(dto, metaOf(request));
  }
}
