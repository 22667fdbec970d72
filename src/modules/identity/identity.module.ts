import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CredentialVerifier } from '../../common/auth/credential-verifier.js';
import { AuthController } from './controllers/auth.controller.js';
import { UsersController } from './controllers/users.controller.js';
import { SessionEntity } from './entities/session.entity.js';
import { SigningKeyEntity } from './entities/signing-key.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { AccountService } from './services/account.service.js';
import { JwtCredentialVerifier } from './services/jwt-credential.verifier.js';
import { ProfileService } from './services/profile.service.js';
import { SessionService } from './services/session.service.js';
import { SigningKeyService } from './services/signing-key.service.js';
import { TokenService } from './services/token.service.js';
import { UserLifecycleService } from './services/user-lifecycle.service.js';
import { UsersService } from './services/users.service.js';

/**
 * Accounts, sessions, the token issuer and credential verification. Global because the authentication
 * guard (registered app-wide) needs its CredentialVerifier.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity, SessionEntity, SigningKeyEntity])],
  controllers: [AuthController, UsersController],
  providers: [
    AccountService,
    ProfileService,
    SessionService,
    SigningKeyService,
    TokenService,
    UserLifecycleService,
    UsersService,
    JwtCredentialVerifier,
    { provide: CredentialVerifier, useExisting: JwtCredentialVerifier },
  ],
  exports: [CredentialVerifier, JwtCredentialVerifier, UsersService, UserLifecycleService, ProfileService, TokenService],
})
export class IdentityModule {}
