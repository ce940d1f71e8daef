import { ApiError } from './api-error.ts';

// A request the API cannot take as sent: its parameters, its cursor, its method or
// path, its size, the format it accepts.

export class InvalidParametersError extends ApiError {
  override readonly code = 'invalid_parameters';

  constructor(fieldErrors: Record<string, string[]>, formErrors: string[] = []) {
    super(400, { error: 'Invalid query parameters', details: { formErrors, fieldErrors } });
  }
}

/** Spec 7.2's text and catalog hint, then `hint`: what was probably meant (src/http/params/metric.ts). */
export class UnknownMetricError extends ApiError {
  override readonly code = 'unknown_metric';

  constructor(metric: string, hint?: string) {
    super(400, { error: `Unknown metric: '${metric}'. Use GET /v1/catalog to list the available metrics.${hint ? ` ${hint}` : ''}` });
  }
}

export class UnknownDatasetError extends ApiError {
  override readonly code = 'unknown_dataset';

  constructor(dataset: string, hint?: string) {
    super(400, { error: `Unknown dataset: '${dataset}'. Use GET /v1/catalog to list the available datasets.${hint ? ` ${hint}` : ''}` });
  }
}

export class InvalidFilterDimensionError extends ApiError {
  override readonly code = 'invalid_filter_dimension';

  constructor(dimension: string, metric: string, valid: readonly string[], hint?: string) {
    super(400, {
      error: `Invalid filter dimension "${dimension}" for metric "${metric}". Valid dimensions: ${valid.join(', ')}`,
      ...(hint !== undefined && { hint }),
    });
  }
}

export class InvalidCursorError extends ApiError {
  override readonly code = 'invalid_cursor';

  constructor() {
    super(400, { error: 'Invalid pagination cursor' });
  }
}

export class QueryTooLongError extends ApiError {
  override readonly code = 'query_too_long';

  constructor(maxBytes: number) {
    super(414, { error: `Query string too long: at most ${maxBytes} bytes` });
  }
}

// Raised by Node's HTTP parser before Koa sees the request (src/http/node-server.ts).
export class MalformedRequestError extends ApiError {
  override readonly code = 'malformed_request';

  constructor() {
    super(400, { error: 'Malformed HTTP request' });
  }
}

export class HeadersTooLargeError extends ApiError {
  override readonly code = 'headers_too_large';

  constructor() {
    super(431, { error: 'Request headers too large' });
  }
}

export class RequestTimeoutError extends ApiError {
  override readonly code = 'request_timeout';

  constructor() {
    super(408, { error: 'Request timed out: the request was not received in time' });
  }
}

export class NotFoundError extends ApiError {
  override readonly code = 'not_found';

  constructor(what = 'Not found') {
    super(404, { error: what });
  }
}

/** The request is valid but the thing it names is in a state that refuses it. */
export class ConflictError extends ApiError {
  override readonly code = 'conflict';
  constructor(what: string) {
    super(409, { error: what });
  }
}

export class MethodNotAllowedError extends ApiError {
  override readonly code = 'method_not_allowed';

  constructor(allowed: readonly string[]) {
    super(405, { error: 'Method not allowed' }, { Allow: allowed.join(', ') });
  }
}

/** An `Accept` that rules out every format the endpoint serves (and no `format=` chose one). */
export class NotAcceptableError extends ApiError {
  override readonly code = 'not_acceptable';
  /** `served`: the media types, in order; `names`: the same formats as `format=` names them. */
  constructor(served: readonly string[], names: readonly string[]) {
    super(406, {
      error: `Not acceptable: this endpoint serves ${served.join(', ')} (choose one with the Accept header, or with format=${names.join('|')})`,
    });
  }
}

/** A `Range` past the end of the file. */
export class RangeNotSatisfiableError extends ApiError {
  override readonly code = 'range_not_satisfiable';
  constructor(size: number) {
    super(416, { error: `Range not satisfiable: the file has ${size} bytes` }, { 'Content-Range': `bytes */${size}` });
  }
}
