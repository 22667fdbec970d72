import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';

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

/**
 * A UUID a client names (a user, a source workspace) in lower case, as PostgreSQL answers it: UUIDs compare
 * case-insensitively (RFC 9562), so the services' comparisons with stored ids (the owner transferring to
 * themselves, a workspace referencing itself, a reference set keyed by source) must not depend on the case sent.
 */
export const LowerCaseUuid = (): PropertyDecorator => Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value));
