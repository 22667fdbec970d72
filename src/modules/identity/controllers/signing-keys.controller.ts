import { Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../../../common/auth/auth.decorators.js';
import { ApiEnvelope } from '../../../common/http/api-envelope.decorator.js';
import { PlatformAdminGuard } from '../guards/platform-admin.guard.js';
import { SigningKeyService } from '../services/signing-key.service.js';

export class RotatedKeyDto {
  @ApiProperty({ description: 'Key id (`kid`) of the new signing key' }) kid: string;
}

@ApiTags('admin')
@Controller('admin/signing-keys')
@Authenticated()
@UseGuards(PlatformAdminGuard)
export class SigningKeysController {
  constructor(private readonly keys: SigningKeyService) {}

  @Post('rotate')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Rotate the token signing key now; the old public key stays in the JWKS until its tokens expire',
  })
  @ApiEnvelope(RotatedKeyDto)
  async rotate(): Promise<RotatedKeyDto> {
    return { kid: await this.keys.rotate() };
  }
}
