import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export const CLIENT_GRANT_TYPES = ['authorization_code', 'client_credentials', 'refresh_token'] as const;
export type ClientGrantType = (typeof CLIENT_GRANT_TYPES)[number];

/** A confidential OAuth 2.0 client registered by a user (its owner). The secret is stored hashed. */
@Entity({ name: 'oauth_clients' })
export class OAuthClientEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') clientId: string;
  @Column('uuid') ownerId: string;
  @Column('text') name: string;
  @Column('text', { array: true, default: '{}' }) redirectUris: string[];
  @Column('text', { array: true }) allowedScopes: string[];
  @Column('text', { array: true }) grantTypes: ClientGrantType[];
  @Column('text') secretHash: string;
  @Column('timestamptz', { nullable: true }) secretRotatedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
