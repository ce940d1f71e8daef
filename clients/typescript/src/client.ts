import { Readable } from 'node:stream';
import type { ReadableStream as WebStream } from 'node:stream/web';
import { DataQueryError, DataQueryNetworkError } from './errors.ts';
import {
  type ClientOptions,
  EXPORT_MEDIA,
  type ExportOptions,
  type FormatBody,
  MEDIA,
  type ReleaseChoice,
  releaseParams,
  type WalkOptions,
} from './options.ts';
import { backoffMs, DEFAULT_RETRY, type RetryEvent, type RetryPolicy, retryAfterMs } from './retry.ts';
import type {
  AggregateMeta,
  AggregatePage,
  AggregateQuery,
  AggregateRow,
  CatalogAnswer,
  CatalogEntry,
  ErrorDetails,
  FacetsAnswer,
  Filters,
  FinancialPage,
  FinancialRow,
  HistoryPage,
  HistoryQuery,
  HistoryRow,
  Metric,
  Page,
  RateLimit,
  ReferenceDataset,
  ReferencePage,
  ReferenceRow,
  ReleaseInfo,
  RevisionPage,
  RevisionQuery,
  RevisionRow,
  UsageAnswer,
  UsageDay,
} from './types.ts';
import { Webhooks } from './webhooks.ts';

type Params = Record<string, string | number | boolean | readonly (string | number)[] | undefined>;

interface Answer {
  readonly headers: Headers;
  readonly body: Buffer;
}

/** A 200 whose body is left unread, for the caller to stream. */
interface Streamed {
  readonly headers: Answer['headers'];
  readonly stream: Readable;
}

const header = (headers: Headers, name: string): string | undefined => headers.get(name) ?? undefined;

const intHeader = (headers: Answer['headers'], name: string): number | undefined => {
  const value = header(headers, name);
  return value === undefined || !/^\d+$/.test(value) ? undefined : Number(value);
};

/**
 * A typed client of the data query service (spec section 7's client guidance):
 * checks the status before parsing, raises DataQueryError with the spec's `error`
 * and `details`, waits out 429s for their Retry-After, backs off with jitter on 5xx
 * and network failures, and walks every page, resumable from any cursor.
 */
export class DataQueryClient {
  private readonly base: string;
  private readonly retry: RetryPolicy;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  /** This key's webhooks (docs/api.md "Webhooks"): create, list, get, update, delete, test, rotateSecret, deliveries, redeliver. */
  readonly webhooks: Webhooks;

  constructor(private readonly options: ClientOptions) {
    this.webhooks = new Webhooks(options);
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
  }

  /** Every row of `metric` matching `filters`, across every page. */
  async *financials<M extends Metric>(
    metric: M,
    filters: Filters<M> = {} as Filters<M>,
    options: WalkOptions<FinancialPage<M>> = {},
  ): AsyncGenerator<FinancialRow<M>> {
    for await (const page of this.financialPages(metric, filters, options)) yield* page.body.data;
  }

  /** The pages behind `financials`, with their cursors and rate-limit headers. */
  financialPages<M extends Metric>(
    metric: M,
    filters: Filters<M> = {} as Filters<M>,
    options: WalkOptions<FinancialPage<M>> = {},
  ): AsyncGenerator<Page<FinancialPage<M>>> {
    return this.walk('/v1/financials', { metric, ...filters }, 'json', options);
  }

  /** Every row of a reference dataset, across every page. */
  async *reference<R extends ReferenceDataset>(dataset: R, options: WalkOptions<ReferencePage<R>> = {}): AsyncGenerator<ReferenceRow<R>> {
    for await (const page of this.walk<ReferencePage<R>>('/v1/reference', { dataset }, 'json', options)) yield* page.body.data;
  }

  /**
   * Every group of an aggregate (GET /v1/aggregate), across its pages: e.g.
   * `aggregate('ggr', { group_by: ['region', 'year'], fx: 'USD', measure: ['ggr:sum'] })`,
   * or with derived measures `{ …, compare: 'previous_year', having: ['ggr_sum.gt.1e9'] }`,
   * or as a series `{ group_by: ['region', 'year'], fx: 'USD', index: 2019, shape: 'wide' }` (every option of src/query/options/aggregate.ts).
   * `meta` is the first page's, with `row_count` the number of groups in all.
   */
  async aggregate<M extends Metric>(
    metric: M,
    query: AggregateQuery<M> = {} as AggregateQuery<M>,
    options: WalkOptions<AggregatePage<M>> = {},
  ): Promise<{ meta: AggregateMeta<M>; data: AggregateRow<M>[] }> {
    let meta: AggregateMeta<M> | undefined;
    const data: AggregateRow<M>[] = [];
    for await (const page of this.aggregatePages(metric, query, 'json', options)) {
      meta ??= page.body.meta;
      data.push(...page.body.data);
    }
    return { meta: { ...meta!, row_count: data.length }, data };
  }

  /** The pages behind `aggregate`, in any format: JSON envelopes, CSV text, or Arrow IPC streams. */
  aggregatePages<M extends Metric, F extends keyof typeof MEDIA>(
    metric: M,
    query: AggregateQuery<M>,
    format: F,
    options: WalkOptions<FormatBody<F, AggregatePage<M>>> = {},
  ): AsyncGenerator<Page<FormatBody<F, AggregatePage<M>>>> {
    return this.walk('/v1/aggregate', { metric, ...query } as Params, format, options);
  }

  /**
   * Every row of `metric` that differs between two published releases
   * (GET /v1/revisions): e.g. `revisions('ggr', { from: '2026-10', to: '2026-11', country: 'France' })`.
   */
  async *revisions<M extends Metric>(
    metric: M,
    query: RevisionQuery<M> = {} as RevisionQuery<M>,
    options: WalkOptions<RevisionPage<M>> = {},
  ): AsyncGenerator<RevisionRow<M>> {
    for await (const page of this.revisionPages(metric, query, 'json', options)) yield* page.body.data;
  }

  /** The pages behind `revisions`, in any format: JSON envelopes, CSV text, or Arrow IPC streams. */
  revisionPages<M extends Metric, F extends keyof typeof MEDIA>(
    metric: M,
    query: RevisionQuery<M>,
    format: F,
    options: WalkOptions<FormatBody<F, RevisionPage<M>>> = {},
  ): AsyncGenerator<Page<FormatBody<F, RevisionPage<M>>>> {
    // A revisions walk names its releases with from and to; `release` has no meaning there.
    return this.walk('/v1/revisions', { metric, ...query } as Params, format, { ...options, release: undefined, asOf: undefined });
  }

  /**
   * Each observation of `metric` release after release (GET /v1/history): e.g.
   * `history('ggr', { country: 'France', year: ['2023'], output: 'changes' })`.
   */
  async *history<M extends Metric>(
    metric: M,
    query: HistoryQuery<M> = {} as HistoryQuery<M>,
    options: WalkOptions<HistoryPage<M>> = {},
  ): AsyncGenerator<HistoryRow<M>> {
    for await (const page of this.historyPages(metric, query, 'json', options)) yield* page.body.data;
  }

  /** The pages behind `history`, in any format: JSON envelopes, CSV text, or Arrow IPC streams. */
  historyPages<M extends Metric, F extends keyof typeof MEDIA>(
    metric: M,
    query: HistoryQuery<M>,
    format: F,
    options: WalkOptions<FormatBody<F, HistoryPage<M>>> = {},
  ): AsyncGenerator<Page<FormatBody<F, HistoryPage<M>>>> {
    // A history names its releases with from and to; `release` and `asOf` have no meaning there.
    return this.walk('/v1/history', { metric, ...query } as Params, format, { ...options, release: undefined, asOf: undefined });
  }

  /**
   * Every row of `metric` matching `filters` in one file (GET /v1/export), as a
   * stream of its bytes: e.g. `export('ggr', { country: 'France' }, { format: 'parquet' })`
   * piped to a file. Counts one export against the key's daily export budget.
   */
  async export<M extends Metric>(metric: M, filters: Filters<M> = {} as Filters<M>, options: ExportOptions = {}): Promise<Readable> {
    const format = options.format ?? 'parquet';
    const answer = (await this.send(
      '/v1/export',
      { metric, ...filters, ...releaseParams(options) } as Params,
      EXPORT_MEDIA[format],
      true,
    )) as Streamed;
    return answer.stream;
  }

  /**
   * Each dimension's values with their row counts under `filters`, every filter applied
   * but the dimension's own (GET /v1/facets): e.g. `facets('ggr', { country: 'France' })`
   * still lists every country.
   */
  async facets<M extends Metric>(metric: M, filters: Filters<M> = {} as Filters<M>, options: ReleaseChoice = {}): Promise<FacetsAnswer<M>> {
    return this.json<FacetsAnswer<M>>('/v1/facets', { metric, ...filters, ...releaseParams(options) } as Params);
  }

  /** The published releases, newest first (GET /v1/releases). */
  async releases(): Promise<ReleaseInfo[]> {
    return (await this.json<{ releases: ReleaseInfo[] }>('/v1/releases', {})).releases;
  }

  /** Where the key stands now: every limit that can refuse it (GET /v1/usage); counts against no limit but its own small guard. */
  async usage(): Promise<UsageAnswer> {
    return this.json<UsageAnswer>('/v1/usage', {});
  }

  /** The key's usage per UTC day from `start` to `end` (YYYY-MM-DD; by default the last 7 days) (GET /v1/usage/daily). */
  async usageDaily(range: { start?: string; end?: string } = {}): Promise<UsageDay[]> {
    return (await this.json<{ days: UsageDay[] }>('/v1/usage/daily', { start: range.start, end: range.end })).days;
  }

  async catalog(options: ReleaseChoice = {}): Promise<CatalogEntry[]> {
    return [...(await this.json<CatalogAnswer>('/v1/catalog', releaseParams(options))).datasets];
  }

  /** A JSON answer that is one document, not pages. */
  private async json<T>(path: string, params: Params): Promise<T> {
    return JSON.parse((await this.send(path, params, 'json')).body.toString('utf8')) as T;
  }

  /** Pages as CSV text, each with its own header row; paged by the X-Next-Cursor header. */
  csv<M extends Metric>(
    metric: M,
    filters: Filters<M> = {} as Filters<M>,
    options: WalkOptions<string> = {},
  ): AsyncGenerator<Page<string>> {
    return this.walk('/v1/financials', { metric, ...filters }, 'csv', options);
  }

  /** Pages as Arrow IPC streams (read each with apache-arrow's tableFromIPC); paged by X-Next-Cursor. */
  arrow<M extends Metric>(
    metric: M,
    filters: Filters<M> = {} as Filters<M>,
    options: WalkOptions<Uint8Array> = {},
  ): AsyncGenerator<Page<Uint8Array>> {
    return this.walk('/v1/financials', { metric, ...filters }, 'arrow', options);
  }

  private async *walk<Body>(
    path: string,
    params: Params,
    format: keyof typeof MEDIA,
    options: WalkOptions<Body>,
  ): AsyncGenerator<Page<Body>> {
    let cursor = options.cursor;
    for (let pages = 0; pages < (options.maxPages ?? Infinity); pages++) {
      let answer: Answer;
      try {
        answer = await this.send(path, { ...params, ...releaseParams(options), limit: options.limit ?? 1000, cursor }, format);
      } catch (err) {
        if (err instanceof DataQueryError || err instanceof DataQueryNetworkError) err.resumeCursor = cursor;
        throw err;
      }
      const page = toPage<Body>(answer, format, cursor);
      options.onPage?.(page);
      yield page;
      if (page.nextCursor === undefined) return;
      cursor = page.nextCursor;
    }
  }

  /** One successful answer, after the retries the policy allows. */
  private async send(path: string, params: Params, format: keyof typeof MEDIA): Promise<Answer>;
  private async send(path: string, params: Params, mediaType: string, stream: true): Promise<Streamed>;
  private async send(path: string, params: Params, format: string, stream = false): Promise<Answer | Streamed> {
    const url = `${this.base}${path}?${query(params)}`;
    const mediaType = stream ? format : MEDIA[format as keyof typeof MEDIA];
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(url, mediaType, stream);
      if (!('retry' in outcome)) return outcome;
      const { failure, reason, status, retryAfter } = outcome.retry;
      const waitMs = retryAfter ?? backoffMs(this.retry, attempt, this.random);
      if (attempt > this.retry.maxRetries || waited + waitMs > this.retry.maxWaitMs) throw failure;
      this.options.onRetry?.({ reason, attempt, waitMs, status });
      await this.sleep(waitMs);
      waited += waitMs;
    }
  }

  private async attempt(
    url: string,
    mediaType: string,
    stream: boolean,
  ): Promise<Answer | Streamed | { retry: { failure: Error; reason: RetryEvent['reason']; status?: number; retryAfter?: number } }> {
    let statusCode: number;
    let headers: Answer['headers'];
    let body: Buffer;
    try {
      // Node's own fetch: the package has no runtime dependencies. `dispatcher` is its undici option.
      const res = await fetch(url, {
        headers: { 'x-api-key': this.options.apiKey, accept: mediaType },
        ...(this.options.dispatcher && { dispatcher: this.options.dispatcher }),
      } as RequestInit);
      statusCode = res.status;
      headers = res.headers;
      if (stream && statusCode === 200) return { headers, stream: Readable.fromWeb(res.body as WebStream<Uint8Array>) };
      body = Buffer.from(await res.arrayBuffer());
    } catch (cause) {
      // fetch names only "fetch failed"; its cause says why (ECONNREFUSED, a reset).
      const reason = ((cause as Error).cause as Error | undefined)?.message ?? (cause as Error).message;
      const failure = new DataQueryNetworkError(`Cannot reach ${new URL(url).origin}: ${reason}`, { cause });
      return { retry: { failure, reason: 'network-error' } };
    }
    if (statusCode === 200) {
      const type = header(headers, 'content-type') ?? '';
      if (!type.startsWith(mediaType)) {
        throw new DataQueryError(
          statusCode,
          `Asked for ${mediaType} but the server answered ${type || 'no Content-Type'}: it does not serve this format`,
          undefined,
          undefined,
          header(headers, 'x-request-id'),
        );
      }
      return { headers, body };
    }
    const failure = toError(statusCode, headers, body);
    const retryAfter = retryAfterMs(header(headers, 'retry-after'), Date.now());
    if (statusCode === 429) return { retry: { failure, reason: 'rate-limited', status: statusCode, retryAfter: retryAfter ?? 1000 } };
    if (statusCode >= 500) return { retry: { failure, reason: 'server-error', status: statusCode, retryAfter } };
    throw failure;
  }
}

/** The spec's repeated-parameter form for several values; undefined values are left out. */
function query(params: Params): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(name, String(one));
  }
  return search.toString();
}

function toPage<Body>(answer: Answer, format: keyof typeof MEDIA, cursor: string | undefined): Page<Body> {
  const rateLimit: RateLimit = {
    limit: intHeader(answer.headers, 'x-ratelimit-limit'),
    remaining: intHeader(answer.headers, 'x-ratelimit-remaining'),
    resetSeconds: intHeader(answer.headers, 'x-ratelimit-reset'),
  };
  const requestId = header(answer.headers, 'x-request-id');
  if (format === 'json') {
    const body = JSON.parse(answer.body.toString('utf8')) as { pagination: { cursor: string; has_more: boolean } };
    const nextCursor = body.pagination.has_more ? body.pagination.cursor : undefined;
    return { body: body as Body, nextCursor, cursor, rateLimit, requestId };
  }
  // Non-JSON bodies have no envelope: the next cursor travels in a header, present only while more pages exist.
  const nextCursor = header(answer.headers, 'x-next-cursor') || undefined;
  const body = format === 'csv' ? answer.body.toString('utf8') : new Uint8Array(answer.body);
  const warned = header(answer.headers, 'x-warnings');
  return { body: body as Body, nextCursor, cursor, rateLimit, requestId, ...(warned && { warnings: JSON.parse(warned) as string[] }) };
}

/** The spec's error body when there is one; a proxy's HTML page or an empty body still makes a clear error. */
function toError(status: number, headers: Answer['headers'], body: Buffer): DataQueryError {
  let parsed: { error?: unknown; details?: ErrorDetails; retryAfterSeconds?: number } | undefined;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const text =
    typeof parsed?.error === 'string' ? parsed.error : `HTTP ${status}${body.length ? `: ${body.toString('utf8').slice(0, 200)}` : ''}`;
  return new DataQueryError(status, text, parsed?.details, parsed?.retryAfterSeconds, header(headers, 'x-request-id'));
}
