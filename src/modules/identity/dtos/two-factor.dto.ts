import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PresentNotNull } from '../../../common/http/validation-decorators.js';
import { PHONE_PATTERN, SIX_DIGIT_CODE_PATTERN } from './auth.dto.js';

export const TWO_FACTOR_METHODS = ['totp', 'sms', 'email'] as const;
export type TwoFactorMethod = (typeof TWO_FACTOR_METHODS)[number];
export const SECOND_FACTOR_METHODS = [...TWO_FACTOR_METHODS, 'backup_code'] as const;
export type SecondFactorMethod = (typeof SECOND_FACTOR_METHODS)[number];

/** Without `code`: start enrolling `method`. With `code`: confirm it and turn two-step verification on. */
export class EnableTwoFactorDto {
  // Spec 4.7 shows no body for enable: one sent without a method enrols an authenticator app, the method that needs
  // nothing else (sms needs a phone number).
  @ApiPropertyOptional({
    enum: TWO_FACTOR_METHODS,
    description: 'Default: totp when starting; when confirming (with code), the enrolment pending',
  })
  @PresentNotNull()
  @IsIn(TWO_FACTOR_METHODS)
  method?: TwoFactorMethod;

  @ApiPropertyOptional({
    description: 'The code from the authenticator app, SMS or e-mail',
    example: '042917',
    pattern: SIX_DIGIT_CODE_PATTERN.source,
  })
  @IsOptional()
  @Matches(SIX_DIGIT_CODE_PATTERN, { message: 'code must be 6 digits' })
  code?: string;

  @ApiPropertyOptional({
    description: 'For `sms`: the E.164 number to send codes to (becomes the account phone)',
    example: '+4915112345678',
    pattern: PHONE_PATTERN.source,
  })
  @IsOptional()
  @Matches(PHONE_PATTERN, { message: 'phone must be an E.164 number such as +4915112345678' })
  phone?: string;
}

/** Proof for turning two-step verification off: the account password, or a current code or backup code. */
export class DisableTwoFactorDto {
  @ApiPropertyOptional({ description: 'A TOTP code or a backup code', maxLength: 32 })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  code?: string;

  @ApiPropertyOptional({ maxLength: 256 })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  password?: string;
}

/** The second sign-in step. */
export class VerifyTwoFactorDto {
  @ApiPropertyOptional({
    description:
      'challengeToken from the TWO_FACTOR_REQUIRED answer (the sign-in second step). Left out and sent with a signed-in bearer token: ' +
      'confirms the pending enrolment instead, as enable {method, code} does',
    maxLength: 256,
  })
  @PresentNotNull()
  @IsString()
  @MaxLength(256)
  challengeToken?: string;

  @ApiProperty({
    description: 'TOTP, SMS or e-mail code, or a backup code',
    example: '042917',
    maxLength: 32,
  })
  @IsString()
  @MaxLength(32)
  code: string;

  @ApiPropertyOptional({
    enum: SECOND_FACTOR_METHODS,
    description: 'Default: 6 digits → the account method, otherwise backup_code',
  })
  @IsOptional()
  @IsIn(SECOND_FACTOR_METHODS)
  method?: SecondFactorMethod;
}

/** The sign-in second step: a verify body that carries its challenge token. */
export type SecondStepInput = VerifyTwoFactorDto & { challengeToken: string };

export class TwoFactorEnrollmentDto {
  @ApiProperty({ enum: TWO_FACTOR_METHODS }) method: TwoFactorMethod;
  @ApiProperty({ enum: ['pending', 'enabled'] }) status: 'pending' | 'enabled';
  @ApiPropertyOptional({ description: 'TOTP: the base32 secret (pending only)' }) secret?: string;
  @ApiPropertyOptional({
    description: 'TOTP: otpauth:// URI for authenticator apps',
    example: 'otpauth://totp/Quire:ada%40example.com?secret=…&issuer=Quire',
  })
  otpauthUri?: string;
  @ApiPropertyOptional({ description: 'TOTP: the URI as a PNG QR code data URL' }) qrCodeDataUrl?: string;
  @ApiPropertyOptional({ description: 'SMS / e-mail: where the code was sent (masked)' })
  destination?: string;
  @ApiPropertyOptional({
    type: [String],
    description: 'On confirmation: one-time backup codes, shown only this once',
  })
  backupCodes?: string[];
}

export class TwoFactorStatusDto {
  @ApiProperty() enabled: boolean;
  @ApiProperty({ enum: TWO_FACTOR_METHODS, nullable: true, type: String }) method: TwoFactorMethod | null;
}
