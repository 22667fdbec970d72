import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A signed-in session: it owns a refresh token, and its access tokens carry its id (`sid`). */
@Entity({ name: 'sessions' })
export class SessionEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('uuid')
  userId: string;

  /** `quire` for first-party sign-in; otherwise the OAuth client whose authorization this session is. */
  @Column('text', { default: 'quire' })
  clientId: string;

  /** Granted scopes (space separated) of an OAuth authorization; null for first-party sessions (every scope). */
  @Column('text', { nullable: true })
  scope: string | null;

  /** How the person proved who they are: `password`, `phone_code`, `oauth:<provider>`, `authorization_code`. */
  @Column('text', { default: 'password' })
  authMethod: string;

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
