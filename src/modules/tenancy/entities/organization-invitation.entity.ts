import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * `Tenant.InvitationStatus` (spec 2.4), exactly. A decline by the invitee writes `revoked` with `declinedAt`,
 * which tells it apart from a revoke by the organization (`revokedAt`); see docs/tenancy.md.
 */
export const INVITATION_STATUSES = ['pending', 'accepted', 'expired', 'revoked'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

/** Roles an invitation or a join request may grant: ownership changes only by transfer. */
export const GRANTABLE_ROLES = ['admin', 'member', 'guest'] as const;
export type GrantableRole = (typeof GRANTABLE_ROLES)[number];

@Entity({ name: 'organization_invitations' })
export class OrganizationInvitationEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') organizationId: string;
  @Column('text') email: string;
  @Column('text') role: GrantableRole;
  @Column('text', { nullable: true }) message: string | null;
  @Column('text', { default: 'pending' }) status: InvitationStatus;
  /** SHA-256 of the token; the token itself only travels in the invitee's e-mail. */
  @Column('text') tokenHash: string;
  @Column('uuid') invitedBy: string;
  @Column('timestamptz') expiresAt: Date;
  @Column('timestamptz', { nullable: true }) acceptedAt: Date | null;
  @Column('uuid', { nullable: true }) acceptedBy: string | null;
  @Column('timestamptz', { nullable: true }) declinedAt: Date | null;
  @Column('timestamptz', { nullable: true }) revokedAt: Date | null;
  @Column('uuid', { nullable: true }) revokedBy: string | null;
  @Column('timestamptz', { nullable: true }) expiredAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
