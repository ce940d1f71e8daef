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
  /**
   * The stable machine name of this error (docs/api.md "Error codes"), used in logs
   * and metrics, never in bodies: the spec fixes those. Each class below names its own,
   * so renaming a class changes no dashboard; the default only covers one that forgets.
   */
  readonly code: string;

  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.error);
    this.name = new.target.name;
    this.code = new.target.name
      .replace(/Error$/, '')
      .replace(/(?<=[a-z])(?=[A-Z])/g, '_')
      .toLowerCase();
  }
}

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

  constructor(dimension: string, metric: string, valid: readonly string[]) {
    super(400, {
      error: `Invalid filter dimension "${dimension}" for metric "${metric}". Valid dimensions: ${valid.join(', ')}`,
    });
  }
}

/** A `group_by` name that is not a dimension of the metric; listed as the filter error lists them. */
export class InvalidGroupByError extends ApiError {
  override readonly code = 'invalid_group_by';

  constructor(dimension: string, metric: string, valid: readonly string[]) {
    super(400, { error: `Invalid group_by dimension "${dimension}" for metric "${metric}". Valid dimensions: ${valid.join(', ')}` });
  }
}

export class InvalidMeasureError extends ApiError {
  override readonly code = 'invalid_measure';

  constructor(measure: string, metric: string, metrics: readonly string[]) {
    super(400, {
      error: `Invalid measure "${measure}" for metric "${metric}": use <metric>:<fn> or <metric> alone, with a metric of ${metrics.join(', ')} and fn one of sum, avg, min, max`,
    });
  }
}

export class InvalidOrderError extends ApiError {
  override readonly code = 'invalid_order';

  constructor(order: string, keys: readonly string[]) {
    super(400, { error: `Invalid order "${order}": use one of ${keys.join(', ')}, with a leading - for descending` });
  }
}

/** An aggregate the registry's guards refuse; the reason names the fix. */
abstract class CombineRefusedError extends ApiError {
  constructor(reason: string) {
    super(400, { error: reason });
  }
}

/** Adding up rows measured in different units (currencies) would give a meaningless total. */
export class MixedUnitsError extends CombineRefusedError {
  override readonly code = 'mixed_units';
}

/** Adding a total to the rows it already totals would count them twice. */
export class MixedTotalsError extends CombineRefusedError {
  override readonly code = 'mixed_totals';
}

/** A sum of rates means nothing. */
export class RateSumError extends CombineRefusedError {
  override readonly code = 'rate_sum';
}

/**
 * A derived measure (`compare`, `share`, `per`, `having` on /v1/aggregate) this
 * request cannot have; the text names the fix.
 */
abstract class DerivedRefusedError extends ApiError {
  constructor(reason: string) {
    super(400, { error: reason });
  }
}

/** `compare=previous_year` pairs each group with its year's predecessor, so it needs `year` among the groups. */
export class CompareNeedsYearError extends DerivedRefusedError {
  override readonly code = 'compare_needs_year';

  constructor() {
    super('Cannot compare with the previous year without year in group_by: add year to group_by');
  }
}

/** `share=` names neither `all` nor a dimension of group_by. */
export class InvalidShareError extends DerivedRefusedError {
  override readonly code = 'invalid_share';

  constructor(share: string, groupBy: readonly string[]) {
    super(
      `Invalid share "${share}": use all, or a group_by dimension${groupBy.length ? ` (${groupBy.join(', ')})` : ': add one to group_by'}`,
    );
  }
}

/** `per=` names a denominator that does not divide this dataset. */
export class InvalidPerError extends DerivedRefusedError {
  override readonly code = 'invalid_per';

  constructor(per: string, metric: string, allowed: readonly string[]) {
    super(
      `Cannot divide ${metric} per ${per}: ${allowed.length ? `use per=${allowed.join(' or per=')}` : `no denominator divides ${metric}`}`,
    );
  }
}

/** A share or ratio of an average, minimum or maximum: only sums have them. */
export class DerivedNeedsSumError extends DerivedRefusedError {
  override readonly code = 'derived_needs_sum';

  constructor(derived: 'share' | 'per', measure: string) {
    const [metric] = measure.split(':');
    super(
      `Cannot take a ${derived === 'share' ? 'share' : 'ratio'} of ${measure}: ${derived} applies to sums; measure ${metric}:sum or leave ${derived} out`,
    );
  }
}

/** `share` or `having` with `rollup=true`. */
export class RollupConflictError extends DerivedRefusedError {
  override readonly code = 'rollup_conflict';

  constructor(parameter: 'share' | 'having') {
    const why =
      parameter === 'share'
        ? "a subtotal is not a share of its own groups' total"
        : 'hiding groups would leave subtotals of groups not shown';
    super(`Cannot combine ${parameter} with rollup=true (${why}): leave out rollup or ${parameter}`);
  }
}

/** A `having` whose key is not a key of the answer. */
export class InvalidHavingError extends DerivedRefusedError {
  override readonly code = 'invalid_having';

  constructor(having: string, keys: readonly string[]) {
    super(`Invalid having "${having}": the key must be one of ${keys.join(', ')}`);
  }
}

export class TooManyGroupsError extends ApiError {
  override readonly code = 'too_many_groups';

  constructor(groups: number, max: number) {
    super(400, {
      error: `The aggregate has ${groups} groups, more than the ${max} one request may return: filter to fewer rows or group by fewer dimensions`,
    });
  }
}

export class InvalidCursorError extends ApiError {
  override readonly code = 'invalid_cursor';

  constructor() {
    super(400, { error: 'Invalid pagination cursor' });
  }
}

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

/** A `Range` past the end of the file. */
export class RangeNotSatisfiableError extends ApiError {
  override readonly code = 'range_not_satisfiable';
  constructor(size: number) {
    super(416, { error: `Range not satisfiable: the file has ${size} bytes` }, { 'Content-Range': `bytes */${size}` });
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

/** A published release that is not loaded took longer than RELEASE_LOAD_WAIT_MS to load; the load goes on. */
export class ReleaseLoadingError extends ApiError {
  override readonly code = 'release_loading';
  constructor(release: string) {
    super(503, { error: `Release '${release}' is loading; try again shortly` }, { 'Retry-After': '5' });
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

export class InternalError extends ApiError {
  override readonly code = 'internal';

  constructor() {
    super(500, { error: 'Internal server error' });
  }
}
