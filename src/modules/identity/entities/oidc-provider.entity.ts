import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** `Tenant.OAuthProvider`: the third-party identity providers a person can sign in with. */
export const OAUTH_PROVIDERS = ['google', 'github', 'wechat', 'dingtalk', 'feishu'] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];

/** A third-party login provider configured by a platform administrator. The client secret is encrypted. */
@Entity({ name: 'oidc_providers' })
export class OidcProviderEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('text') provider: OAuthProvider;
  @Column('text') displayName: string;
  @Column('text') issuer: string;
  @Column('text') clientId: string;
  @Column('text', { nullable: true }) clientSecretEncrypted: string | null;
  @Column('text', { array: true }) scopes: string[];
  @Column('boolean', { default: true }) enabled: boolean;
  /** Set for OAuth 2.0 providers without OpenID discovery; otherwise taken from the issuer's metadata. */
  @Column('text', { nullable: true }) authorizationEndpoint: string | null;
  @Column('text', { nullable: true }) tokenEndpoint: string | null;
  @Column('text', { nullable: true }) userinfoEndpoint: string | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
