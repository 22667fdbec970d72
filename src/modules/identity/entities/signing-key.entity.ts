import type { JWK } from 'jose';
import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** RS256 key pairs. The newest unretired key signs; retired keys stay in the JWKS until their tokens expire. */
@Entity({ name: 'signing_keys' })
export class SigningKeyEntity {
  @PrimaryColumn('text')
  kid: string;

  @Column('text')
  algorithm: string;

  @Column('jsonb')
  publicJwk: JWK;

  @Column('jsonb')
  privateJwk: JWK;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { nullable: true })
  retiredAt: Date | null;
}
