import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { OAuthProvider } from './oidc-provider.entity.js';

/** A third-party identity (provider + subject) bound to an account. */
@Entity({ name: 'oauth_connections' })
export class OAuthConnectionEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') userId: string;
  @Column('text') provider: OAuthProvider;
  @Column('text') subject: string;
  @Column('text', { nullable: true }) email: string | null;
  @Column('text', { nullable: true }) displayName: string | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @Column('timestamptz', { nullable: true }) lastLoginAt: Date | null;
}
