import { Column, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const ORGANIZATION_ROLES = ['owner', 'admin', 'member', 'guest'] as const;
export type OrganizationRole = (typeof ORGANIZATION_ROLES)[number];
export const MEMBER_STATUSES = ['active', 'suspended'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

@Entity({ name: 'organization_members' })
export class OrganizationMemberEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') organizationId: string;
  @Column('uuid') userId: string;
  @Column('text') role: OrganizationRole;
  @Column('text', { default: 'active' }) status: MemberStatus;
  @Column('timestamptz', { default: () => 'now()' }) joinedAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
