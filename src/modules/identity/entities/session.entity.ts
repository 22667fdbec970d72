import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A signed-in session: it owns a refresh token, and its access tokens carry its id (`sid`). */
@Entity({ name: 'sessions' })
export class SessionEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid')
  userId: string;

  @Column('text', { nullable: true })
  refreshTokenHash: string | null;

  @Column('text', { nullable: true })
  userAgent: string | null;

  @Column('text', { nullable: true })
  ip: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { default: () => 'now()' })
  lastUsedAt: Date;

  @Column('timestamptz')
  expiresAt: Date;

  @Column('timestamptz', { nullable: true })
  revokedAt: Date | null;
}
