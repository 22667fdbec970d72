import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { AuthenticatedRequest } from '../../../common/auth/auth.decorators.js';
import { assertFirstPartySession } from '../../../common/auth/first-party-session.guard.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import { UsersService } from '../services/users.service.js';

/**
 * Platform administration: a first-party session with every scope (as account security asks; a token narrowed at
 * `/token` with `scope=` is refused too) of a user whose e-mail is listed in ADMIN_EMAILS.
 * Everyone else gets 403 FORBIDDEN.
 */
@Injectable()
export class PlatformAdminGuard implements CanActivate {
  constructor(
    private readonly users: UsersService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
    if (principal?.kind !== 'session') {
      throw AppException.forbidden('platform administration needs a signed-in session');
    }
    assertFirstPartySession(principal);
    const user = await this.users.findById(principal.userId);
    if (!user || !this.config.auth.adminEmails.includes(user.email.toLowerCase())) {
      throw AppException.forbidden('platform administrators only');
    }
    return true;
  }
}
