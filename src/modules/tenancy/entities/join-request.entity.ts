import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { GrantableRole } from './organization-invitation.entity.js';

/** `Tenant.JoinRequestStatus` (spec 2.4). */
export const JOIN_REQUEST_STATUSES = ['pending', 'approved', 'rejected', 'cancelled'] as const;
export type JoinRequestStatus = (typeof JOIN_REQUEST_STATUSES)[number];

@Entity({ name: 'organization_join_requests' })
export class JoinRequestEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') organizationId: string;
  @Column('uuid') userId: string;
  @Column('text', { nullable: true }) message: string | null;
  @Column('text', { default: 'pending' }) status: JoinRequestStatus;
  /** The role granted on approval. */
  @Column('text', { nullable: true }) role: GrantableRole | null;
  @Column('text', { nullable: true }) reviewNote: string | null;
  @Column('uuid', { nullable: true }) reviewedBy: string | null;
  @Column('timestamptz', { nullable: true }) reviewedAt: Date | null;
  @Column('timestamptz', { nullable: true }) cancelledAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
