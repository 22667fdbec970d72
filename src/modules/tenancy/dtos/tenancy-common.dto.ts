import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';

/** Who a member, inviter or applicant is: a read-only summary of the user record. */
export class UserSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty() displayName: string;
  @ApiProperty({ nullable: true, type: String }) avatarUrl: string | null;
}

/** The field may be left out, but when present it must not be null (non-nullable columns). */
export const PresentNotNull = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** Query-string booleans: `true`/`false` (also `1`/`0`); anything else is left for @IsBoolean to refuse. */
export const QueryBoolean = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => {
    if (value === 'true' || value === '1') {
      return true;
    }
    if (value === 'false' || value === '0') {
      return false;
    }
    return value;
  });

export function iso(date: Date | string | null | undefined): string | null {
  return date === null || date === undefined ? null : new Date(date).toISOString();
}

export function isoRequired(date: Date | string): string {
  return new Date(date).toISOString();
}
