import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateBy } from 'class-validator';
import { UserResponseDto } from './user.dto.js';
import { PresentNotNull, Trimmed } from '../../../common/http/validation-decorators.js';

/** E.164: `+` and 7 to 15 digits. */
export const PHONE_PATTERN = /^\+[1-9]\d{6,14}$/;

/** A one-time code sent by SMS or e-mail, or shown by an authenticator app: 6 digits. */
export const SIX_DIGIT_CODE_PATTERN = /^\d{6}$/;

/**
 * The domain of the addresses given to third-party accounts whose provider shares no e-mail
 * (`<provider>-<hash of the subject>@oauth.quire.invalid`). They are predictable, so no one may choose one:
 * registering it first would make that identity's first sign-in fail with ALREADY_EXISTS.
 */
export const PLACEHOLDER_EMAIL_DOMAIN = 'oauth.quire.invalid';

/** Whether an address is in the placeholder domain (or under it), whatever its letter case. */
export function isPlaceholderEmail(email: string): boolean {
  const domain = email.trim().toLowerCase().split('@').pop() ?? '';
  return domain === PLACEHOLDER_EMAIL_DOMAIN || domain.endsWith(`.${PLACEHOLDER_EMAIL_DOMAIN}`);
}

const NotPlaceholderEmail = (): PropertyDecorator =>
  ValidateBy({
    name: 'notPlaceholderEmail',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !isPlaceholderEmail(value),
      defaultMessage: () => `email must not be in the reserved domain ${PLACEHOLDER_EMAIL_DOMAIN}`,
    },
  });

export class RegisterDto {
  @ApiProperty({
    example: 'ada@example.com',
    description: `Not in the reserved domain ${PLACEHOLDER_EMAIL_DOMAIN}`,
    maxLength: 254,
  })
  @IsEmail()
  @MaxLength(254)
  @NotPlaceholderEmail()
  email: string;

  @ApiProperty({ minLength: 8, maxLength: 256 })
  @IsString()
  @MinLength(8)
  @MaxLength(256)
  password: string;

  @ApiPropertyOptional({
    example: 'Ada Lovelace',
    description: "Default: the e-mail address's local part (the register body is not shown in the spec). Trimmed; blank is refused",
    minLength: 1,
    maxLength: 100,
  })
  @IsOptional()
  @Trimmed()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  displayName?: string;
}

/**
 * Either `email` + `password`, or `phone` alone (a code is sent by SMS; answer 202) and then `phone` + `code`.
 */
export class LoginDto {
  @ApiPropertyOptional({ example: 'ada@example.com', maxLength: 254 })
  @PresentNotNull()
  @IsEmail()
  @MaxLength(254)
  email?: string;

  @ApiPropertyOptional({ maxLength: 256 })
  @PresentNotNull()
  @IsString()
  @MaxLength(256)
  password?: string;

  @ApiPropertyOptional({ example: '+4915112345678', description: 'E.164 phone number of the account', pattern: PHONE_PATTERN.source })
  @PresentNotNull()
  @Matches(PHONE_PATTERN, { message: 'phone must be an E.164 number such as +4915112345678' })
  phone?: string;

  @ApiPropertyOptional({ example: '042917', description: 'The code sent by SMS to `phone`', pattern: SIX_DIGIT_CODE_PATTERN.source })
  @PresentNotNull()
  @Matches(SIX_DIGIT_CODE_PATTERN, { message: 'code must be 6 digits' })
  code?: string;
}

export class RefreshDto {
  @ApiProperty({ description: 'The refresh token of the session (`qrt_…`)', maxLength: 512 })
  @IsString()
  @MaxLength(512)
  refreshToken: string;
}

export class TokenPairDto {
  @ApiProperty({ description: 'JWT access token (RS256)' })
  accessToken: string;

  @ApiProperty({ description: 'Opaque refresh token; rotated on every use' })
  refreshToken: string;

  @ApiProperty({ example: 'Bearer' })
  tokenType: 'Bearer';

  @ApiProperty({ description: 'Access-token lifetime in seconds', example: 3600 })
  expiresIn: number;

  @ApiProperty()
  sessionId: string;

  @ApiProperty({ type: UserResponseDto })
  user: UserResponseDto;
}

export class LoginCodeSentDto {
  @ApiProperty({ example: true })
  codeSent: true;

  @ApiProperty({ description: 'Seconds the code stays valid', example: 300 })
  expiresIn: number;
}

export class ThirdPartyLoginResultDto extends TokenPairDto {
  @ApiProperty({ description: 'True when this sign-in created the account' })
  isNewUser: boolean;
}

/** Payload of the 401 TWO_FACTOR_REQUIRED answer to a first sign-in step. */
export class TwoFactorChallengeDto {
  @ApiProperty({
    description: 'Send it with the code to POST /auth/2fa/verify; valid for `expiresIn` seconds',
  })
  challengeToken: string;

  @ApiProperty({ enum: ['totp', 'sms', 'email', 'backup_code'], isArray: true })
  methods: string[];

  @ApiProperty({ example: 300 })
  expiresIn: number;

  @ApiPropertyOptional({
    description: 'Masked phone or e-mail a code was sent to (sms/email methods)',
    example: '+49******4567',
  })
  destination?: string;
}

export class EndedSessionsDto {
  @ApiProperty({ description: 'How many sessions were ended' })
  endedSessions: number;
}

export class SessionResponseDto {
  @ApiProperty() id: string;
  @ApiProperty({ description: '`quire` for first-party sign-in, otherwise the OAuth client id' })
  clientId: string;
  @ApiProperty({ description: 'password, phone_code, oauth:<provider>, authorization_code, implicit' })
  authMethod: string;
  @ApiProperty({ nullable: true, type: String }) userAgent: string | null;
  @ApiProperty({ nullable: true, type: String }) ip: string | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() lastUsedAt: string;
  @ApiProperty() expiresAt: string;
  @ApiProperty({ description: 'True for the session of the token making this request' }) current: boolean;
}
