/** The little of panva's oidc-provider (shipped without types) that the test identity provider uses. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export interface OidcContext {
    oidc: { client: { clientId: string }; session: { accountId: string }; provider: Provider };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    Grant: new (properties: { clientId: string; accountId: string }) => Grant;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }
}
