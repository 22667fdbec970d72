import { Injectable } from '@nestjs/common';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';

export const TOTP_ISSUER = 'Quire';

/** RFC 6238 codes (30-second steps, 6 digits, SHA-1: what authenticator apps expect). */
@Injectable()
export class TotpService {
  newSecret(): string {
    return generateSecret();
  }

  async provisioning(
    secret: string,
    accountName: string,
  ): Promise<{ otpauthUri: string; qrCodeDataUrl: string }> {
    const otpauthUri = generateURI({ issuer: TOTP_ISSUER, label: accountName, secret });
    const qrCodeDataUrl = await QRCode.toDataURL(otpauthUri, {
      errorCorrectionLevel: 'M',
      margin: 1,
      width: 240,
    });
    return { otpauthUri, qrCodeDataUrl };
  }

  /**
   * Checks a code against the secret, accepting one step of clock drift either way. A code of a time step
   * at or before `afterTimeStep` is refused (replay). Returns the matched time step, or null.
   */
  async check(secret: string, code: string, afterTimeStep: number | null): Promise<number | null> {
    if (!/^\d{6}$/.test(code)) {
      return null;
    }
    try {
      const result = await verify({
        secret,
        token: code,
        epochTolerance: 30,
        afterTimeStep: afterTimeStep ?? undefined,
      });
      return result.valid && 'timeStep' in result ? result.timeStep : null;
    } catch {
      return null;
    }
  }
}
