import { ApiError } from './api-error.ts';

// Webhooks (docs/api.md "Webhooks"): an endpoint that cannot be created or reached.

/** The URL did not answer the signed `webhook.test` event with a 2xx within 15 s; `answered` says what it did. */
export class EndpointUnreachableError extends ApiError {
  override readonly code = 'endpoint_unreachable';
  constructor(answered: string) {
    super(422, { error: `endpoint_unreachable: the URL did not answer a signed webhook.test event with a 2xx within 15 s: ${answered}` });
  }
}

/** The URL is, or resolves to, an address webhooks may not reach; `why` names the setting that would allow it. */
export class BlockedAddressError extends ApiError {
  override readonly code = 'blocked_address';
  constructor(why: string) {
    super(422, { error: `blocked_address: ${why}` });
  }
}

export class TooManyWebhooksError extends ApiError {
  override readonly code = 'too_many_webhooks';
  constructor(most: number) {
    super(409, { error: `This API key already has ${most} webhooks, the most it may have; delete one first` });
  }
}

/** /v1/webhooks while Redis (REDIS_URL), where endpoints and their deliveries are kept, does not answer. */
export class WebhooksUnavailableError extends ApiError {
  override readonly code = 'webhooks_unavailable';
  constructor() {
    super(
      503,
      {
        error: 'Cannot read or change webhooks right now: their store (Redis) is not answering, so nothing was changed; try again shortly',
      },
      { 'Retry-After': '5' },
    );
  }
}
