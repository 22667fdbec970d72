import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const ORGANIZATION_TYPES = ['personal', 'team', 'enterprise'] as const;
export type OrganizationType = (typeof ORGANIZATION_TYPES)[number];

@Entity({ name: 'organizations' })
export class OrganizationEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') name: string;
  @Column('text') slug: string;
  @Column('text', { nullable: true }) displayName: string | null;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text') type: OrganizationType;
  @Column('text', { nullable: true }) logoUrl: string | null;
  @Column('jsonb', { default: {} }) settings: Record<string, unknown>;
  @Column('uuid') ownerId: string;
  @Column('uuid') createdBy: string;
  @Column('timestamptz', { nullable: true }) archivedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
