import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A personal API key: acts as its owner with the key's scopes only. The key itself is stored hashed. */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column('uuid') userId: string;
  @Column('text') name: string;
  /** The first characters of the key (`qk_` + 8), shown in lists so a person can recognise a key. */
  @Column('text') prefix: string;
  @Column('text') keyHash: string;
  @Column('text', { array: true }) scopes: string[];
  @Column('text', { array: true, default: '{}' }) ipAllowlist: string[];
  @Column('timestamptz', { nullable: true }) expiresAt: Date | null;
  @Column('timestamptz', { nullable: true }) lastUsedAt: Date | null;
  @Column('text', { nullable: true }) lastUsedIp: string | null;
  @Column('timestamptz', { nullable: true }) revokedAt: Date | null;
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
