// The catalog of every error a client can see (spec section 7). Each carries its
// status and body; one middleware renders them, so the texts live only here.

export interface FlatDetails {
  formErrors: string[];
  fieldErrors: Record<string, string[]>;
}

export interface ErrorBody {
  error: string;
  details?: FlatDetails;
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error);
    this.name = new.target.name;
  }
}

export class InvalidParametersError extends ApiError {
  constructor(fieldErrors: Record<string, string[]>, formErrors: string[] = []) {
    super(400, { error: 'Invalid query parameters', details: { formErrors, fieldErrors } });
  }
}

export class UnknownMetricError extends ApiError {
  constructor(metric: string) {
    super(400, { error: `Unknown metric: '${metric}'. Use GET /v1/catalog to list the available metrics.` });
  }
}

export class UnknownDatasetError extends ApiError {
  constructor(dataset: string) {
    super(400, { error: `Unknown dataset: '${dataset}'. Use GET /v1/catalog to list the available datasets.` });
  }
}

export class InvalidFilterDimensionError extends ApiError {
  constructor(dimension: string, metric: string, valid: readonly string[]) {
    super(400, {
      error: `Invalid filter dimension "${dimension}" for metric "${metric}". Valid dimensions: ${valid.join(', ')}`,
    });
  }
}

export class InvalidCursorError extends ApiError {
  constructor() {
    super(400, { error: 'Invalid pagination cursor' });
  }
}

export class MissingKeyError extends ApiError {
  constructor() {
    super(401, { error: 'Missing x-api-key header' });
  }
}

export class InvalidKeyError extends ApiError {
  constructor() {
    super(401, { error: 'Invalid or revoked API key' });
  }
}

/** `x-api-key` given more than once: no guessing which one the client meant. */
export class DuplicateKeyHeaderError extends ApiError {
  constructor() {
    super(401, { error: 'Duplicate x-api-key header: send exactly one' });
  }
}

/** Spec 7.2: one text for every limit; `Retry-After` and `retryAfterSeconds` agree. */
export class TooManyRequestsError extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(429, { error: 'Too many requests — please try again later', retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

/** The shared key store cannot be reached and this replica has never seen the key. */
export class KeysUnavailableError extends ApiError {
  constructor() {
    super(503, { error: 'Cannot verify the API key right now: please try again shortly' }, { 'Retry-After': '1' });
  }
}

/** The admin listener's own credential, separate from API keys (spec 5.5). */
export class AdminUnauthorizedError extends ApiError {
  constructor() {
    super(401, { error: 'Missing or invalid admin token' });
  }
}

export class QueryTooLongError extends ApiError {
  constructor(maxBytes: number) {
    super(414, { error: `Query string too long: at most ${maxBytes} bytes` });
  }
}

// Raised by Node's HTTP parser before Koa sees the request (src/http/node-server.ts).
export class MalformedRequestError extends ApiError {
  constructor() {
    super(400, { error: 'Malformed HTTP request' });
  }
}

export class HeadersTooLargeError extends ApiError {
  constructor() {
    super(431, { error: 'Request headers too large' });
  }
}

export class RequestTimeoutError extends ApiError {
  constructor() {
    super(408, { error: 'Request timed out: the request was not received in time' });
  }
}

export class NotFoundError extends ApiError {
  constructor(what = 'Not found') {
    super(404, { error: what });
  }
}

export class MethodNotAllowedError extends ApiError {
  constructor(allowed: readonly string[]) {
    super(405, { error: 'Method not allowed' }, { Allow: allowed.join(', ') });
  }
}

export class NotReadyError extends ApiError {
  constructor() {
    super(503, { error: 'Service is starting: data is still loading' }, { 'Retry-After': '5' });
  }
}

/** Admin only: the release DATA_DIR's pointer names cannot be loaded; the served one keeps serving. */
export class ReleaseLoadError extends ApiError {
  constructor(reason: string) {
    super(409, { error: `Cannot load the release, still serving the previous one: ${reason}` });
  }
}

export class InternalError extends ApiError {
  constructor() {
    super(500, { error: 'Internal server error' });
  }
}
