import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const WORKSPACE_VISIBILITIES = ['public', 'private'] as const;
export type WorkspaceVisibility = (typeof WORKSPACE_VISIBILITIES)[number];

@Entity({ name: 'workspaces' })
export class WorkspaceEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') organizationId: string;
  @Column('text') name: string;
  @Column('text') slug: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { nullable: true }) icon: string | null;
  @Column('text', { nullable: true }) color: string | null;
  @Column('text', { default: 'private' }) visibility: WorkspaceVisibility;
  @Column('boolean', { default: false }) isDefault: boolean;
  @Column('uuid') createdBy: string;
  @Column('timestamptz', { nullable: true }) archivedAt: Date | null;
  @Column('timestamptz', { nullable: true }) deletedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
