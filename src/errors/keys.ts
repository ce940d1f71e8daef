import { ApiError } from './api-error.ts';

// Keys and the limits charged to them (spec sections 5 and 8).

export class MissingKeyError extends ApiError {
  override readonly code = 'missing_key';

  constructor() {
    super(401, { error: 'Missing x-api-key header' });
  }
}

export class InvalidKeyError extends ApiError {
  override readonly code = 'invalid_key';

  constructor() {
    super(401, { error: 'Invalid or revoked API key' });
  }
}

/** `x-api-key` given more than once: no guessing which one the client meant. */
export class DuplicateKeyHeaderError extends ApiError {
  override readonly code = 'duplicate_key_header';

  constructor() {
    super(401, { error: 'Duplicate x-api-key header: send exactly one' });
  }
}

/** Spec 7.2: one text for every limit; `Retry-After` and `retryAfterSeconds` agree. */
export class TooManyRequestsError extends ApiError {
  override readonly code = 'rate_limited';

  constructor(retryAfterSeconds: number) {
    super(429, { error: 'Too many requests — please try again later', retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** GET /v1/usage and /v1/usage/daily asked more than USAGE_LIMIT_PER_MINUTE times in a rolling minute by one key; its data requests are not affected. */
export class UsageLimitError extends ApiError {
  override readonly code = 'usage_limited';

  constructor(limit: number, retryAfterSeconds: number) {
    super(
      429,
      {
        error: `Too many usage requests: at most ${limit} per key per minute to /v1/usage and /v1/usage/daily (USAGE_LIMIT_PER_MINUTE); this does not limit data requests; try again in ${retryAfterSeconds} seconds`,
        retryAfterSeconds,
      },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

/** GET /v1/usage/daily while Redis (REDIS_URL), where the days are kept, does not answer. */
export class UsageUnavailableError extends ApiError {
  override readonly code = 'usage_unavailable';

  constructor() {
    super(
      503,
      { error: 'Cannot read usage history right now: its store (Redis) is not answering; try again shortly' },
      { 'Retry-After': '5' },
    );
  }
}

/** The shared key store cannot be reached and this replica has never seen the key. */
export class KeysUnavailableError extends ApiError {
  override readonly code = 'keys_unavailable';

  constructor() {
    super(503, { error: 'Cannot verify the API key right now: please try again shortly' }, { 'Retry-After': '1' });
  }
}

/** The admin listener's own credential, separate from API keys (spec 5.5). */
export class AdminUnauthorizedError extends ApiError {
  override readonly code = 'admin_unauthorized';

  constructor() {
    super(401, { error: 'Missing or invalid admin token' });
  }
}

/**
 * Admin only: Redis (REDIS_URL) did not answer, so the change asked for was not made.
 * Refused rather than queued: a revocation held back in one process would be lost
 * with it, and the operator would believe the key revoked.
 */
export class StoreUnavailableError extends ApiError {
  override readonly code = 'store_unavailable';
  constructor() {
    super(
      503,
      {
        error:
          'Redis (REDIS_URL) is not answering, so nothing was changed (a key asked to be revoked still works); try again when it answers',
      },
      { 'Retry-After': '5' },
    );
  }
}
