import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const DATA_SOURCE_REFERENCE_STATUSES = ['active', 'inactive'] as const;
export type DataSourceReferenceStatus = (typeof DATA_SOURCE_REFERENCE_STATUSES)[number];

/**
 * `Tenant.DataSourceReference` (spec 2.3, replacement mode): while `active`, reads of `docType` in
 * `workspaceId` are served from `sourceWorkspaceId`, read-only.
 */
@Entity({ name: 'data_source_references' })
export class DataSourceReferenceEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') organizationId: string;
  @Column('uuid') workspaceId: string;
  @Column('uuid') sourceWorkspaceId: string;
  @Column('text') docType: string;
  @Column('text', { default: 'active' }) status: DataSourceReferenceStatus;
  @Column('uuid') createdBy: string;
  @Column('uuid', { nullable: true }) updatedBy: string | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
