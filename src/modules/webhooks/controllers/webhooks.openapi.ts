import { ApiConflictResponse, ApiNotFoundResponse } from '@nestjs/swagger';
import { ERROR_ENVELOPE_SCHEMA } from '../../../common/http/api-envelope.decorator.js';

/**
 * The 404 of a webhook route: `what` is not found. Unknown ids and those of organizations the caller is not an
 * active member of answer alike (docs/webhooks.md, "Tenancy and roles").
 */
export function ApiWebhookNotFound(what: string): MethodDecorator & ClassDecorator {
  return ApiNotFoundResponse({
    description: `NOT_FOUND: ${what} (an id of another organization answers the same as an unknown one)`,
    schema: ERROR_ENVELOPE_SCHEMA,
  });
}

/** The 409 of redeliver: a skipped delivery has no body any more. */
export function ApiSkippedDeliveryConflict(): MethodDecorator & ClassDecorator {
  return ApiConflictResponse({
    description:
      "INVALID_STATE: the delivery was skipped (the webhook's creator or its credential scopes may not read its event) and its body dropped",
    schema: ERROR_ENVELOPE_SCHEMA,
  });
}

/** The 409 of create: the organization (or, for an all-organizations webhook, its creator) has as many as allowed. */
export function ApiWebhookLimitConflict(): MethodDecorator & ClassDecorator {
  return ApiConflictResponse({
    description:
      "INVALID_STATE: the organization has 25 webhooks of its own, or the caller 10 all-organizations webhooks; delete one first (payload.limit)",
    schema: ERROR_ENVELOPE_SCHEMA,
  });
}
