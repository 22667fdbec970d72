import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { decodeJwt } from 'jose';
import { credentialOf } from '../../../common/auth/auth.guard.js';
import { CredentialVerifier } from '../../../common/auth/credential-verifier.js';
import type { Principal } from '../../../common/auth/principal.js';
import { AppException } from '../../../common/errors/app.exception.js';
import { ErrorCode } from '../../../common/errors/error-code.js';
import { sameUuid } from '../../../common/uuids.js';
import { APP_CONFIG, type AppConfig } from '../../../config/app.config.js';
import type { DocumentRecord } from '../../documents/domain/document.records.js';
import {
  DocumentAccessService,
  type DocumentContext,
  type DocumentRights,
  type DocumentScope,
  rightsOfOrganizationLevel,
  rightsOfWorkspace,
} from '../../documents/services/document-access.service.js';
import { DocumentSettingsPolicy } from '../../documents/services/document-settings.policy.js';
import { TokenService } from '../../identity/services/token.service.js';
import type { CredentialBinding, DocRef } from '../domain/realtime.types.js';
import { CredentialStatusService } from '../../identity/services/credential-status.service.js';
import { WorkspaceAccessService } from '../../tenancy/services/workspace-access.service.js';

/**
 * Audience of connect tokens. They are signed by the issuer as interaction tokens (JOSE `typ`
 * `quire-interaction+jwt`, audience `urn:quire:realtime-connect`): the access-token verifier demands
 * `typ: at+jwt`, so the API refuses them, and no other interaction accepts this audience.
 */
const CONNECT_PURPOSE = 'realtime-connect';
const READ_SCOPE = 'doc:read';
/** The scope of the socket's Yjs updates, the writes `canWrite` speaks of. */
const YJS_WRITE_SCOPE = 'doc:write';

interface ConnectClaims {
  doc: string;
  dt: string;
  di: string;
  org: string;
  ws: string | null;
  via: string | null;
  cred: CredentialBinding;
}

/** Who is connected to which document, and how to tell later whether that still holds. */
export interface RealtimeIdentity {
  principal: Principal;
  binding: CredentialBinding;
  doc: DocRef;
  /** Groups connections that share a credential and document, so a re-check runs once for all of them. */
  accessKey: string;
  /**
   * Write access (role, archived workspace, read-only reference, `permissions.edit`) as last seen: at connect (the
   * `auth` ack), at each re-check and at each write. Informative only: every write over the socket asks
   * authorizeWrite, which opens the document with `write` again.
   */
  canWrite: boolean;
  /** Manage access as last seen (the same moments); `unlock` reopens the document rather than trusting it. */
  canManage: boolean;
}

export function docRefOf(ctx: DocumentContext): DocRef {
  return {
    uuid: ctx.document.uuid,
    organizationId: ctx.document.organizationId,
    workspaceId: ctx.document.workspaceId,
    docType: ctx.document.docType,
    docId: ctx.document.docId,
    viaWorkspaceId: ctx.viaWorkspaceId,
  };
}

/** The context that reopens exactly this document (the workspace it was addressed through, else its own tenant). */
export function scopeOf(doc: DocRef): DocumentScope {
  const workspaceId = doc.viaWorkspaceId ?? doc.workspaceId;
  return workspaceId ? { workspaceId } : { organizationId: doc.organizationId };
}

function principalOf(binding: CredentialBinding): Principal {
  return {
    userId: binding.userId,
    kind: binding.kind,
    scopes: binding.scopes,
    ...(binding.clientId ? { clientId: binding.clientId } : {}),
    ...(binding.sessionId ? { sessionId: binding.sessionId } : {}),
    ...(binding.apiKeyId ? { apiKeyId: binding.apiKeyId } : {}),
    ...(binding.tokenId ? { tokenId: binding.tokenId } : {}),
  };
}

@Injectable()
export class RealtimeAuthService {
  constructor(
    private readonly verifier: CredentialVerifier,
    private readonly tokens: TokenService,
    private readonly access: DocumentAccessService,
    private readonly credentials: CredentialStatusService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly workspaces: WorkspaceAccessService,
    private readonly settingsPolicy: DocumentSettingsPolicy,
  ) {}

  /**
   * The binding of a credential the guard already verified (its secret is not kept), with the credential's own
   * expiry: an access token's `exp`, an API key's `expires_at`. Connect tokens are capped by it.
   */
  async bindingOf(principal: Principal, credential: string | undefined): Promise<CredentialBinding> {
    let expiresAt: number | undefined;
    if (credential && principal.tokenId) {
      try {
        expiresAt = decodeJwt(credential).exp;
      } catch {
        expiresAt = undefined;
      }
    } else if (principal.apiKeyId) {
      expiresAt = await this.credentials.expiresAt({ apiKeyId: principal.apiKeyId });
    }
    return {
      userId: principal.userId,
      kind: principal.kind,
      scopes: principal.scopes,
      ...(principal.sessionId ? { sessionId: principal.sessionId } : {}),
      ...(principal.apiKeyId ? { apiKeyId: principal.apiKeyId } : {}),
      ...(principal.clientId ? { clientId: principal.clientId } : {}),
      ...(principal.tokenId ? { tokenId: principal.tokenId } : {}),
      ...(expiresAt ? { expiresAt } : {}),
    };
  }

  /** A token for one document and one user, valid for REALTIME_CONNECT_TOKEN_TTL_SECONDS (never past its credential). */
  async issueConnectToken(
    ctx: DocumentContext,
    binding: CredentialBinding,
  ): Promise<{ token: string; expiresIn: number }> {
    const doc = docRefOf(ctx);
    const remaining = binding.expiresAt
      ? binding.expiresAt - Math.floor(Date.now() / 1000)
      : Number.POSITIVE_INFINITY;
    const expiresIn = Math.max(1, Math.min(this.config.realtime.connectTokenTtlSeconds, remaining));
    const claims: ConnectClaims = {
      doc: doc.uuid,
      dt: doc.docType,
      di: doc.docId,
      org: doc.organizationId,
      ws: doc.workspaceId,
      via: doc.viaWorkspaceId,
      cred: binding,
    };
    const token = await this.tokens.signInteraction(
      CONNECT_PURPOSE,
      claims as unknown as Record<string, unknown>,
      expiresIn,
    );
    return { token, expiresIn };
  }

  /**
   * The caller of an event stream: `Authorization: Bearer` (an access token, an API key, or the connect token of
   * this document — the socket's `auth` takes either kind as its bearer token, spec 4.5), else the `token` query
   * parameter from /connect, which must name this document. Needs `doc:read` and read access to the document.
   */
  async authenticateRequest(
    request: Request,
    docType: string,
    docId: string,
    scope: DocumentScope,
  ): Promise<RealtimeIdentity> {
    const credential = credentialOf(request);
    if (credential) {
      const claims = await this.tokens.verifyInteraction(CONNECT_PURPOSE, credential);
      if (claims) {
        return this.fromClaims(claims as unknown as ConnectClaims, { docType, docId }, scope);
      }
      const principal = await this.verifier.verify(credential, request);
      return this.identify(principal, await this.bindingOf(principal, credential), docType, docId, scope);
    }
    const token = request.query.token;
    if (typeof token === 'string' && token !== '') {
      return this.fromConnectToken(token, { docType, docId }, scope);
    }
    throw new AppException(ErrorCode.UNAUTHORIZED, {
      details: [{ reason: 'missing bearer token or connect token' }],
    });
  }

  /**
   * The `auth` message of a socket: a connect token (which names its document), else a bearer credential for the
   * document named in the socket URL. A valid bearer credential on a URL that names no document is
   * VALIDATION_ERROR naming the missing `docType` / `docId`: a new token would not help (spec 7, rule 3).
   */
  async authenticateSocket(
    token: string,
    request: Request,
    named: { docType?: string; docId?: string; scope: DocumentScope },
  ): Promise<RealtimeIdentity> {
    const claims = await this.tokens.verifyInteraction(CONNECT_PURPOSE, token);
    if (claims) {
      return this.fromClaims(
        claims as unknown as ConnectClaims,
        named.docType && named.docId ? { docType: named.docType, docId: named.docId } : undefined,
        named.scope,
      );
    }
    const principal = await this.verifier.verify(token, request);
    if (!named.docType || !named.docId) {
      throw AppException.validation(
        (['docType', 'docId'] as const)
          .filter((name) => !named[name])
          .map((name) => ({
            field: name,
            reason: `the socket URL must name the document (${name}) when the token is not a connect token`,
          })),
      );
    }
    return this.identify(
      principal,
      await this.bindingOf(principal, token),
      named.docType,
      named.docId,
      named.scope,
    );
  }

  /**
   * The connection's document as it is now (its fields may have changed since connect), opened as the connected
   * user with `need`; DOC_NOT_FOUND when it is gone or another document now answers to its name.
   */
  async reopen(identity: RealtimeIdentity, need: 'read' | 'write'): Promise<DocumentContext> {
    const { doc, principal } = identity;
    const ctx = await this.access.open(principal, doc.docType, doc.docId, need, scopeOf(doc));
    if (ctx.document.uuid !== doc.uuid) {
      throw new AppException(ErrorCode.DOC_NOT_FOUND);
    }
    return ctx;
  }

  /**
   * A write over the socket (a Yjs update, a lock): the route's scope, then the document opened with `write` exactly
   * as the HTTP routes open it — the role, an archived workspace, a read-only reference and `permissions.edit` as
   * they are now. FORBIDDEN (DOC_NOT_FOUND once the document is gone) otherwise. Roles come from the access cache
   * (docs/auth.md, "Caches") and the document is read again, so a write costs one lookup more, not a re-check.
   */
  async authorizeWrite(
    identity: RealtimeIdentity,
    scope: 'doc:write' | 'data:write',
  ): Promise<DocumentContext> {
    if (!identity.principal.scopes.includes(scope)) {
      throw AppException.forbidden(`missing scope ${scope}`);
    }
    try {
      const ctx = await this.reopen(identity, 'write');
      // A lock (data:write) passing says nothing of doc:write, which the Yjs updates need.
      identity.canWrite = identity.principal.scopes.includes(YJS_WRITE_SCOPE);
      identity.canManage = ctx.access.canManage;
      return ctx;
    } catch (error) {
      if (error instanceof AppException) {
        identity.canWrite = false;
      }
      throw error;
    }
  }

  /**
   * Whether `userId` may write `document` now, where it lives (its workspace, or its organization's
   * organization-level documents), narrowed by its and its type's `permissions.view` and `permissions.edit` as a
   * write through open() is: whether a lock of theirs still stands (docs/realtime.md, "Locks"). Removed, demoted or
   * suspended members, an archived workspace and a narrowed `permissions.view` or `permissions.edit` all answer false.
   */
  async mayWrite(document: DocumentRecord, userId: string): Promise<boolean> {
    let rights: DocumentRights;
    try {
      rights =
        document.workspaceId === null
          ? rightsOfOrganizationLevel(
              await this.workspaces.resolveOrganizationLevel(userId, document.organizationId),
            )
          : rightsOfWorkspace(await this.workspaces.resolve(userId, document.workspaceId));
    } catch (error) {
      // Not a member (any more): no write. Anything else is a failure, not an answer.
      if (
        error instanceof AppException &&
        (error.code === ErrorCode.NOT_FOUND || error.code === ErrorCode.FORBIDDEN)
      ) {
        return false;
      }
      throw error;
    }
    // A write needs `view` as well as `edit` (DocumentAccessService.narrowBySettings, docs/settings.md).
    return (
      rights.canRead &&
      rights.canWrite &&
      (await this.settingsPolicy.admitsUser(document, rights, userId, 'view')) &&
      (await this.settingsPolicy.admitsUser(document, rights, userId, 'edit'))
    );
  }

  /**
   * True while the credential stands and the user may still read the document (same document, same tenant).
   * Refreshes the identity's `canWrite` and `canManage` on the way (writes check again anyway: authorizeWrite).
   */
  async stillAllowed(identity: RealtimeIdentity): Promise<boolean> {
    const { binding, doc } = identity;
    if (binding.expiresAt && binding.expiresAt * 1000 <= Date.now()) {
      return false;
    }
    if (!(await this.credentials.isActive(binding))) {
      return false;
    }
    try {
      const ctx = await this.access.open(identity.principal, doc.docType, doc.docId, 'read', scopeOf(doc));
      if (ctx.document.uuid !== doc.uuid || !ctx.access.canRead) {
        return false;
      }
      identity.canWrite = await this.writable(ctx);
      identity.canManage = ctx.access.canManage;
      return true;
    } catch (error) {
      if (error instanceof AppException) {
        return false;
      }
      throw error;
    }
  }

  private async fromConnectToken(
    token: string,
    named: { docType: string; docId: string },
    context: DocumentScope,
  ): Promise<RealtimeIdentity> {
    const claims = await this.tokens.verifyInteraction(CONNECT_PURPOSE, token);
    if (!claims) {
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ reason: 'connect token invalid or expired' }],
      });
    }
    return this.fromClaims(claims as unknown as ConnectClaims, named, context);
  }

  /**
   * `named` and `context` are what the URL says (the document, the workspace or organization it is looked up in);
   * each part the URL gives must be the token's. The same id names different documents in different workspaces,
   * so a URL naming another context names another document (the token still decides when the URL names none, as
   * the sseUrl of /connect does).
   */
  private async fromClaims(
    claims: ConnectClaims,
    named: { docType: string; docId: string } | undefined,
    context: DocumentScope = {},
  ): Promise<RealtimeIdentity> {
    const tokenWorkspace = claims.via ?? claims.ws;
    const otherContext =
      (context.workspaceId !== undefined &&
        (tokenWorkspace === null || !sameUuid(context.workspaceId, tokenWorkspace))) ||
      (context.organizationId !== undefined &&
        (!sameUuid(context.organizationId, claims.org) ||
          (context.workspaceId === undefined && tokenWorkspace !== null)));
    if ((named && (named.docType !== claims.dt || named.docId !== claims.di)) || otherContext) {
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ reason: 'the connect token is for another document' }],
      });
    }
    const binding = claims.cred;
    if (
      (binding.expiresAt && binding.expiresAt * 1000 <= Date.now()) ||
      !(await this.credentials.isActive(binding))
    ) {
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ reason: 'the credential behind the connect token has ended' }],
      });
    }
    const doc: DocRef = {
      uuid: claims.doc,
      organizationId: claims.org,
      workspaceId: claims.ws,
      docType: claims.dt,
      docId: claims.di,
      viaWorkspaceId: claims.via,
    };
    const identity = await this.identify(principalOf(binding), binding, doc.docType, doc.docId, scopeOf(doc));
    if (identity.doc.uuid !== doc.uuid) {
      throw new AppException(ErrorCode.INVALID_TOKEN, {
        details: [{ reason: 'the connect token is for another document' }],
      });
    }
    return identity;
  }

  private async identify(
    principal: Principal,
    binding: CredentialBinding,
    docType: string,
    docId: string,
    scope: DocumentScope,
  ): Promise<RealtimeIdentity> {
    if (!principal.scopes.includes(READ_SCOPE)) {
      throw AppException.forbidden(`missing scope ${READ_SCOPE}`);
    }
    const ctx = await this.access.open(principal, docType, docId, 'read', scope);
    const doc = docRefOf(ctx);
    const credentialKey =
      binding.sessionId ?? binding.apiKeyId ?? `${binding.clientId ?? ''}:${binding.tokenId ?? ''}`;
    return {
      principal,
      binding,
      doc,
      accessKey: `${binding.userId}|${credentialKey}|${binding.expiresAt ?? ''}|${doc.uuid}`,
      canWrite: await this.writable(ctx),
      canManage: ctx.access.canManage,
    };
  }

  /**
   * Whether a context opened for reading would also open for writing — what open() checks for `write` — and the
   * credential carries doc:write: a Yjs update needs both, so a doc:read token is told it cannot write.
   */
  private async writable(ctx: DocumentContext): Promise<boolean> {
    if (!ctx.principal.scopes.includes(YJS_WRITE_SCOPE)) {
      return false;
    }
    try {
      this.access.check(ctx.access, 'write', ctx.readOnly);
      await this.access.narrowBySettings(ctx, 'write');
      return true;
    } catch (error) {
      if (error instanceof AppException && error.code === ErrorCode.FORBIDDEN) {
        return false;
      }
      throw error;
    }
  }
}
