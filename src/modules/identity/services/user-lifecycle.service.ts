import { Injectable } from '@nestjs/common';
import type { UserEntity } from '../entities/user.entity.js';

export type UserRegisteredHook = (user: UserEntity) => Promise<void>;

/**
 * Lets other modules take part in account creation without identity depending on them: the tenancy module
 * registers a hook that creates the personal organization. Hooks run inside the registration transaction,
 * so a failing hook leaves no half-made account.
 */
@Injectable()
export class UserLifecycleService {
  private readonly registeredHooks: UserRegisteredHook[] = [];

  onUserRegistered(hook: UserRegisteredHook): void {
    this.registeredHooks.push(hook);
  }

  async userRegistered(user: UserEntity): Promise<void> {
    for (const hook of this.registeredHooks) {
      await hook(user);
    }
  }
}
