import { Injectable } from '@nestjs/common';
import type { Principal } from '../../../common/auth/principal.js';
import { type Page, pageOf } from '../../../common/http/pagination.js';
import type { EndedSessionsDto, SessionResponseDto } from '../dtos/auth.dto.js';
import { SessionService } from './session.service.js';

/** The current user's view of their sessions (GET/DELETE /auth/sessions, logout-all). */
@Injectable()
export class AccountSessionsService {
  constructor(private readonly sessions: SessionService) {}

  async list(
    principal: Principal,
    query: { page: number; pageSize: number },
  ): Promise<Page<SessionResponseDto>> {
    const { items, total } = await this.sessions.listActive(principal.userId, query);
    return pageOf(
      items.map((s) => ({
        id: s.id,
        clientId: s.clientId,
        authMethod: s.authMethod,
        userAgent: s.userAgent,
        ip: s.ip,
        createdAt: new Date(s.createdAt).toISOString(),
        lastUsedAt: new Date(s.lastUsedAt).toISOString(),
        expiresAt: new Date(s.expiresAt).toISOString(),
        current: s.id === principal.sessionId,
      })),
      total,
      query,
    );
  }

  async end(principal: Principal, sessionId: string): Promise<void> {
    await this.sessions.end(principal.userId, sessionId);
  }

  async endAll(principal: Principal): Promise<EndedSessionsDto> {
    return { endedSessions: await this.sessions.endAll(principal.userId) };
  }
}
