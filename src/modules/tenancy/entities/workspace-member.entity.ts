import { Column, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { MemberStatus } from './organization-member.entity.js';

export const WORKSPACE_ROLES = ['owner', 'editor', 'viewer'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

@Entity({ name: 'workspace_members' })
export class WorkspaceMemberEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') organizationId: string;
  @Column('uuid') workspaceId: string;
  @Column('uuid') userId: string;
  @Column('text') role: WorkspaceRole;
  @Column('text', { default: 'active' }) status: MemberStatus;
  @Column('timestamptz', { default: () => 'now()' }) joinedAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
