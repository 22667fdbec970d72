import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CredentialVerifier } from '../../common/auth/credential-verifier.js';
import { ApiKeysController } from './controllers/api-keys.controller.js';
import { AuthController } from './controllers/auth.controller.js';
import { IssuerApiController, IssuerController } from './controllers/issuer.controller.js';
import { OAuthBindingsController } from './controllers/oauth-bindings.controller.js';
import { OAuthClientsController } from './controllers/oauth-clients.controller.js';
import {
  OidcProvidersAdminController,
  OidcProvidersController,
} from './controllers/oidc-providers.controller.js';
import { SessionsController } from './controllers/sessions.controller.js';
import { SigningKeysController } from './controllers/signing-keys.controller.js';
import { ThirdPartyLoginController } from './controllers/third-party-login.controller.js';
import { TwoFactorController } from './controllers/two-factor.controller.js';
import { UsersController } from './controllers/users.controller.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';
import { OAuthClientEntity } from './entities/oauth-client.entity.js';
import { OAuthConnectionEntity } from './entities/oauth-connection.entity.js';
import { OidcProviderEntity } from './entities/oidc-provider.entity.js';
import { SessionEntity } from './entities/session.entity.js';
import { SigningKeyEntity } from './entities/signing-key.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { FirstPartySessionGuard } from '../../common/auth/first-party-session.guard.js';
import { PlatformAdminGuard } from './guards/platform-admin.guard.js';
import { AccountSessionsService } from './services/account-sessions.service.js';
import { AccountService } from './services/account.service.js';
import { ApiKeyService } from './services/api-keys/api-key.service.js';
import { AuthorizationCodeService } from './services/issuer/authorization-code.service.js';
import { AuthorizePageService } from './services/issuer/authorize-page.service.js';
import { IssuerMetadataService } from './services/issuer/issuer-metadata.service.js';
import { OAuthClientService } from './services/issuer/oauth-client.service.js';
import { TokenEndpointService } from './services/issuer/token-endpoint.service.js';
import { CredentialStatusService } from './services/credential-status.service.js';
import { JwtCredentialVerifier } from './services/jwt-credential.verifier.js';
import { LoginThrottleService } from './services/login-throttle.service.js';
import { ProfileService } from './services/profile.service.js';
import { SecretBoxService } from './services/secret-box.service.js';
import { SessionService } from './services/session.service.js';
import { SignInService } from './services/sign-in.service.js';
import { SigningKeyRotationJob } from './services/signing-key-rotation.job.js';
import { SigningKeyService } from './services/signing-key.service.js';
import { LoginStateService } from './services/third-party/login-state.service.js';
import { OAuthBindingService } from './services/third-party/oauth-binding.service.js';
import { OidcProviderAdminService } from './services/third-party/oidc-provider-admin.service.js';
import { RelyingPartyService } from './services/third-party/relying-party.service.js';
import { ThirdPartyLoginService } from './services/third-party/third-party-login.service.js';
import { TokenService } from './services/token.service.js';
import { BackupCodeService } from './services/two-factor/backup-code.service.js';
import { LoginChallengeService } from './services/two-factor/login-challenge.service.js';
import { OneTimeCodeService } from './services/two-factor/one-time-code.service.js';
import { TotpService } from './services/two-factor/totp.service.js';
import { TwoFactorService } from './services/two-factor/two-factor.service.js';
import { UserLifecycleService } from './services/user-lifecycle.service.js';
import { UsersService } from './services/users.service.js';

/**
 * Accounts, sessions, two-step verification, the OAuth 2.0 / OpenID Connect token issuer, API keys,
 * third-party login and credential verification. Global because the authentication guard (registered
 * app-wide) needs its CredentialVerifier.
 */
@Global()
@Module({
  imports: [
    TypeOrmModule.forFeature([
      UserEntity,
      SessionEntity,
      SigningKeyEntity,
      ApiKeyEntity,
      OAuthClientEntity,
      OidcProviderEntity,
      OAuthConnectionEntity,
    ]),
  ],
  controllers: [
    AuthController,
    SessionsController,
    TwoFactorController,
    UsersController,
    OAuthBindingsController,
    IssuerController,
    IssuerApiController,
    OAuthClientsController,
    ApiKeysController,
    OidcProvidersController,
    OidcProvidersAdminController,
    SigningKeysController,
    ThirdPartyLoginController,
  ],
  providers: [
    CredentialStatusService,
    AccountService,
    AccountSessionsService,
    ApiKeyService,
    AuthorizationCodeService,
    AuthorizePageService,
    BackupCodeService,
    FirstPartySessionGuard,
    IssuerMetadataService,
    LoginChallengeService,
    LoginStateService,
    LoginThrottleService,
    OAuthBindingService,
    OAuthClientService,
    OidcProviderAdminService,
    OneTimeCodeService,
    PlatformAdminGuard,
    ProfileService,
    RelyingPartyService,
    SecretBoxService,
    SessionService,
    SignInService,
    SigningKeyRotationJob,
    SigningKeyService,
    ThirdPartyLoginService,
    TokenEndpointService,
    TokenService,
    TotpService,
    TwoFactorService,
    UserLifecycleService,
    UsersService,
    JwtCredentialVerifier,
    { provide: CredentialVerifier, useExisting: JwtCredentialVerifier },
  ],
  exports: [
    CredentialStatusService,
    CredentialVerifier,
    JwtCredentialVerifier,
    UsersService,
    UserLifecycleService,
    ProfileService,
    TokenService,
    SecretBoxService,
  ],
})
export class IdentityModule {}
