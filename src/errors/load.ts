import { ApiError } from './api-error.ts';

// A valid request the server cannot answer now: data still loading, a release that
// is not published or cannot be loaded, heavy work past its wait, a budget spent.

export class NotReadyError extends ApiError {
  override readonly code = 'not_ready';

  constructor() {
    super(503, { error: 'Service is starting: data is still loading' }, { 'Retry-After': '5' });
  }
}

/** `release=` names no published release. */
export class UnknownReleaseError extends ApiError {
  override readonly code = 'unknown_release';
  constructor(release: string) {
    super(404, { error: `Unknown release '${release}'; GET /v1/releases lists the published ones` });
  }
}

/** `as_of=` names an instant before the first release was published. */
export class NoReleaseAsOfError extends ApiError {
  override readonly code = 'no_release_as_of';
  constructor(asked: string, first: string) {
    super(404, { error: `No release was published by ${asked}; the first was published at ${first}` });
  }
}

/** A published release that is not loaded took longer than RELEASE_LOAD_WAIT_MS to load; the load goes on until the request's deadline. */
export class ReleaseLoadingError extends ApiError {
  override readonly code = 'release_loading';
  static readonly retryAfterSeconds = 5;
  constructor(release: string) {
    super(
      503,
      { error: `Release '${release}' is loading; try again shortly` },
      { 'Retry-After': String(ReleaseLoadingError.retryAfterSeconds) },
    );
  }
}

/**
 * A request names a release that is not loaded while another release loads for the
 * same key (one it asked for, or one still stopping after its request left): a key
 * loads one release at a time, as every load takes DuckDB's one turn for memory-heavy work.
 */
export class ReleaseLoadRunningError extends ApiError {
  override readonly code = 'release_load_running';
  constructor(loading: string) {
    super(
      429,
      {
        error: `Release '${loading}' is loading for this key: one release loads per key at a time; try again once it has answered`,
        retryAfterSeconds: 5,
      },
      { 'Retry-After': '5' },
    );
  }
}

/** A published release whose files fail the load's checks; the log has why, and it is tried again after a minute. */
export class ReleaseUnavailableError extends ApiError {
  override readonly code = 'release_unavailable';
  constructor(release: string) {
    super(503, { error: `Release '${release}' cannot be served now; try again later` }, { 'Retry-After': '60' });
  }
}

/** Admin only: the release DATA_DIR's pointer names cannot be loaded; the served one keeps serving. */
export class ReleaseLoadError extends ApiError {
  override readonly code = 'release_load_failed';
  constructor(reason: string) {
    super(409, { error: `Cannot load the release, still serving the previous one: ${reason}` });
  }
}

/** Heavy work queued past ADMISSION_WAIT_MS, or DuckDB out of memory for it: the server is busy, not broken. */
export class BusyError extends ApiError {
  override readonly code = 'busy';
  constructor(retryAfterSeconds: number) {
    super(
      503,
      { error: `Server busy with heavy requests; try again in ${retryAfterSeconds} seconds`, retryAfterSeconds },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

/**
 * Heavy work ran past its deadline (QUERY_TIMEOUT_MS, or a shorter `Prefer: wait`),
 * counted from its turn to the answer's first byte, and was stopped. 504, not 503:
 * the request is too large for the limit rather than the server too busy for it, so a
 * client retrying it unchanged after Retry-After would only spend the same seconds
 * again; the text says how to make it smaller.
 */
export class QueryTimeoutError extends ApiError {
  override readonly code = 'timeout';
  constructor(limitMs: number, preferred: boolean) {
    const limit = `${limitMs / 1000} s ${preferred ? '(Prefer: wait)' : '(QUERY_TIMEOUT_MS)'}`;
    super(504, {
      error: `Query stopped after its limit of ${limit}; narrow it: fewer group_by dimensions, a filter such as country=, or one year=`,
    });
  }
}

/**
 * The client closed its connection before the answer: its work was stopped. Nobody
 * reads this answer; 499 (nginx's "client closed request") marks it in the log and
 * metrics apart from the server's own failures.
 */
export class ClientGoneError extends ApiError {
  override readonly code = 'client_gone';
  constructor() {
    super(499, { error: 'Client closed the connection before the answer' });
  }
}

/** A key spent its heavy seconds (KEY_HEAVY_SECONDS_PER_MINUTE) in the last minute; light requests are still served. */
export class HeavyBudgetError extends ApiError {
  override readonly code = 'heavy_budget';
  constructor(seconds: number, retryAfterSeconds: number) {
    super(
      429,
      {
        error: `Heavy request budget spent: at most ${seconds} s of heavy work per key per minute; try again in ${retryAfterSeconds} seconds, or ask for less (a filter, a year, fewer group_by dimensions)`,
        retryAfterSeconds,
      },
      { 'Retry-After': String(retryAfterSeconds), 'X-Heavy-Remaining': '0' },
    );
  }
}

/** A per-key budget of bulk exports (EXPORT_LIMIT_PER_DAY) is spent until the UTC day ends. */
export class ExportLimitError extends ApiError {
  override readonly code = 'export_limited';
  constructor(limit: number, retryAfterSeconds: number) {
    super(
      429,
      { error: `Export limit reached: at most ${limit} exports per key per UTC day; try again later`, retryAfterSeconds },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}

/** A key with EXPORTS_OPEN_PER_KEY exports still streaming asks for another. */
export class ExportsOpenError extends ApiError {
  override readonly code = 'exports_open';
  constructor(open: number, retryAfterSeconds: number) {
    super(
      429,
      { error: `Too many exports open: at most ${open} per key at once; finish or cancel one, then try again`, retryAfterSeconds },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  }
}
