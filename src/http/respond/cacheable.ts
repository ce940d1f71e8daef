import { createHash } from 'node:crypto';
import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { encode, negotiateCoding } from './content-coding.ts';

/**
 * Folded into every ETag. ETags come from the request, not the bytes, so a change
 * to how a body is rendered must change this or clients keep the old bytes on a 304.
 * 3: JSON pages' cursors name their format, and empty answers carry meta.warnings.
 * 4: `_pct_change` is a fraction, as `_share` and `_per_*` are (it was percent).
 * 5: sums are the decimal sums of the values as written (they were exact sums of doubles).
 * 6: keys are made from each endpoint's option list, and `meta` follows the options' order.
 */
const REPRESENTATION = 6;

/** A response body, and the cursor of the page after it when there is one. */
export interface Rendered {
  readonly body: Buffer;
  readonly next?: string;
}

export interface CacheableResponse {
  /** Everything the 200 body depends on: the release, the normalized request, the format. */
  readonly key: string;
  readonly contentType: string;
  /** Makes the body on a cache miss. */
  readonly render: () => Promise<Rendered>;
  /**
   * The release the body is read from, when it depends on one: an answer read from a
   * release other than the current one is immutable, and is replayed only while that
   * release is published.
   */
  readonly release?: string;
}

/** What respondCacheable leaves in `ctx.state.cacheable` when it answered a 200 (src/http/middleware/replay.ts records it). */
export interface CacheableAnswer {
  /** The response cache's key of the body sent. */
  readonly cacheKey: string;
  readonly release?: string;
}

/**
 * Answers a GET whose 200 body is fully determined by `key` (docs/api.md "HTTP caching"):
 * - a strong ETag from the key and the content-coding, so a 304 needs no body;
 * - 304 when If-None-Match matches, before any query runs;
 * - otherwise the body in the negotiated coding, from the response cache, or made by
 *   `render` and compressed once, then kept there with its next cursor when the cache
 *   would keep it (a body it would not is sent without being copied into an entry).
 * Returns the next cursor of a 200 that has one, for the caller's paging headers.
 */
export async function respondCacheable(
  ctx: RequestContext,
  services: Pick<Services, 'releases' | 'cache' | 'metrics'>,
  { key, contentType, render, release }: CacheableResponse,
): Promise<string | undefined> {
  const coding = negotiateCoding(ctx.get('accept-encoding'));
  const tag = createHash('sha256').update(`${REPRESENTATION} ${key}`).digest('base64url').slice(0, 22);
  const etag = coding === 'identity' ? `"${tag}"` : `"${tag}-${coding}"`;
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', services.releases.cacheControlFor(release));
  ctx.vary('Accept-Encoding');
  if (noneMatch(ctx.get('if-none-match'), etag)) {
    ctx.status = 304;
    return undefined;
  }
  const cacheKey = `${coding} ${key}`;
  const entry = services.cache.get(cacheKey);
  (entry === undefined ? services.metrics.cacheMisses : services.metrics.cacheHits).inc();
  let sent: Rendered;
  if (entry === undefined) {
    const rendered = await render();
    sent = { body: await encode(rendered.body, coding), next: rendered.next };
    if (services.cache.keeps(cacheKey, entryBytes(sent))) services.cache.set(cacheKey, cacheEntry(sent));
  } else {
    sent = readEntry(entry);
  }
  const { body, next } = sent;
  ctx.state.cacheable = { cacheKey, release };
  ctx.status = 200;
  ctx.type = contentType;
  if (coding !== 'identity') ctx.set('Content-Encoding', coding);
  ctx.body = body;
  return next;
}

// A cache entry is one buffer: the next cursor's length (a byte; cursors are ASCII
// and under 50 characters), the cursor, then the body, so a hit costs no parsing.
const entryBytes = ({ body, next = '' }: Rendered) => 1 + next.length + body.length;

function cacheEntry(rendered: Rendered): Buffer {
  const { body, next = '' } = rendered;
  const entry = Buffer.allocUnsafe(entryBytes(rendered));
  entry[0] = next.length;
  entry.write(next, 1, 'latin1');
  body.copy(entry, 1 + next.length);
  return entry;
}

export function readEntry(entry: Buffer): Rendered {
  const end = 1 + entry[0]!;
  return { body: entryBody(entry), next: end > 1 ? entry.toString('latin1', 1, end) : undefined };
}

/** An entry's body alone, for an answer whose Link header was recorded with it. */
export const entryBody = (entry: Buffer): Buffer => entry.subarray(1 + entry[0]!);

const ENTITY_TAG = /(?:W\/)?"([^"]*)"/g;

/**
 * Whether If-None-Match names `etag` (RFC 9110 13.1.2): `*` matches any current
 * representation; a list matches by weak comparison, so W/"x" matches "x".
 * koa's `ctx.fresh` is not used: it ignores If-None-Match on a request carrying
 * `Cache-Control: no-cache`, which RFC 9110 does not allow an origin server to do.
 */
export function noneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.slice(1, -1);
  for (const [, tag] of header.matchAll(ENTITY_TAG)) if (tag === opaque) return true;
  return false;
}
