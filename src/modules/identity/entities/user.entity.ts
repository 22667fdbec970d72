import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('text')
  email: string;

  @Column('text', { nullable: true })
  passwordHash: string | null;

  @Column('text')
  displayName: string;

  @Column('text', { nullable: true })
  avatarUrl: string | null;

  @Column('text', { nullable: true })
  locale: string | null;

  @Column('text', { nullable: true })
  timezone: string | null;

  @Column('text', { nullable: true })
  phone: string | null;

  @Column('uuid', { nullable: true })
  defaultOrganizationId: string | null;

  @Column('uuid', { nullable: true })
  defaultWorkspaceId: string | null;

  @Column('boolean', { default: false })
  twoFactorEnabled: boolean;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
