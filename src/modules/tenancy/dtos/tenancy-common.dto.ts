import { ApiProperty } from '@nestjs/swagger';

/** Who a member, inviter or applicant is: a read-only summary of the user record. */
export class UserSummaryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() email: string;
  @ApiProperty() displayName: string;
  @ApiProperty({ nullable: true, type: String }) avatarUrl: string | null;
}

export function iso(date: Date | string | null | undefined): string | null {
  return date === null || date === undefined ? null : new Date(date).toISOString();
}

export function isoRequired(date: Date | string): string {
  return new Date(date).toISOString();
}
