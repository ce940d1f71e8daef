import type { RetryEvent, RetryPolicy } from './retry.ts';
import type { Page } from './types.ts';

// What the typed client's calls take besides their query: the client's own settings,
// a walk's paging, which release it reads, and the formats it asks for.

export interface ClientOptions {
  /** Where the API is, e.g. `https://data.example.com` (paths start at /v1). */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly retry?: Partial<RetryPolicy>;
  /** Told before every wait, e.g. to show "rate limited: waiting 37 s". */
  readonly onRetry?: (event: RetryEvent) => void;
  /** How the client waits; injected by tests so they do not wait for real. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1); injected by tests. */
  readonly random?: () => number;
  /**
   * An undici Dispatcher (agent, proxy) for Node's fetch; the global one by default.
   * Typed as `object` so the package needs neither undici nor its types.
   */
  readonly dispatcher?: object;
}

export interface WalkOptions<Body = unknown> extends ReleaseChoice {
  /** Rows per page, 1–1000 (default 1000: fewest requests against the rate limit). */
  readonly limit?: number;
  /** Start from this cursor (a page's `nextCursor`, or an error's `resumeCursor`). */
  readonly cursor?: string;
  /** Stop after this many pages (default: every page). */
  readonly maxPages?: number;
  /** Told about each page before its rows are yielded: cursor, rate limit left. */
  readonly onPage?: (page: Page<Body>) => void;
}

/**
 * Which release a call reads: `release`, a published release `YYYY-MM` (`releases()`
 * lists them), or `asOf`, a date `YYYY-MM-DD` (the end of that UTC day) or an RFC 3339
 * instant, read as the release the service was serving then (`meta.as_of` says which).
 * One or the other; by default the current release.
 */
export interface ReleaseChoice {
  readonly release?: string;
  readonly asOf?: string;
}

/** The query parameters of a ReleaseChoice. */
export const releaseParams = (choice: ReleaseChoice) => ({ release: choice.release, as_of: choice.asOf });

/** A page's body in `format`: the JSON envelope, CSV text, or the Arrow stream's bytes. */
export type FormatBody<F extends keyof typeof MEDIA, Json> = F extends 'json' ? Json : F extends 'csv' ? string : Uint8Array;

export const MEDIA = { json: 'application/json', csv: 'text/csv', arrow: 'application/vnd.apache.arrow.stream' } as const;

/** The files /v1/export writes, by `Accept`. */
export const EXPORT_MEDIA = {
  parquet: 'application/vnd.apache.parquet',
  csv: 'text/csv',
  arrow: 'application/vnd.apache.arrow.stream',
  ndjson: 'application/x-ndjson',
} as const;

export interface ExportOptions extends ReleaseChoice {
  /** Parquet by default. */
  readonly format?: keyof typeof EXPORT_MEDIA;
}
