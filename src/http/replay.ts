import type { Context, Middleware } from 'koa';
import { LRUCache } from 'lru-cache';
import type { Services } from '../services.ts';
import { noneMatch, readEntry, type CacheableAnswer } from './cacheable.ts';

/** What RFC 9110 15.4.5 has a 304 repeat of the 200 it stands for (the limit headers are set before). */
const NOT_MODIFIED_HEADERS = new Set(['etag', 'cache-control', 'vary']);

interface Recorded {
  readonly epoch: number;
  readonly answer: CacheableAnswer;
  readonly etag: string;
  /** What the handler set; request ids, limit headers and Content-Length are set anew each time. */
  readonly headers: readonly (readonly [string, string | string[]])[];
}

/** What a record costs beside its request text and headers (the object, the LRU's entry). */
const RECORD_OVERHEAD = 200;

const recordBytes = (request: string, record: Recorded) =>
  RECORD_OVERHEAD + request.length + record.answer.cacheKey.length + record.headers.reduce((sum, [name, value]) => sum + name.length + String(value).length, 0);

/**
 * Answers a repeated request for a cached body without running its handler.
 *
 * A cacheable 200 is fully determined by the raw request (URL, Accept,
 * Accept-Encoding) while the served and retained releases stay the same, so the
 * first answer is recorded: raw request → its response cache key and the headers
 * its handler set. Only requests with a valid key are recorded (and replayed): a
 * keyless URL (/docs, /openapi.json, the claim pages) must not let anyone grow this
 * table by inventing URLs and headers. The table is bounded in bytes (REPLAY_MAX_BYTES). A repeat then costs one lookup here and one in the response
 * cache instead of parsing, validating, canonicalizing and hashing again
 * (docs/performance.md, "Cached hits"). It sits after the key check and limiter,
 * so a replayed answer is counted and carries limit headers like any other.
 *
 * Records belong to an epoch that moves whenever a release is switched in,
 * withdrawn or removed; a request that began in an earlier epoch records nothing, so
 * an answer from a replaced release is never replayed for a URL without `release=`
 * or a cursor. An answer read from a named release (`release=`, a cursor's) is
 * replayed while that release is published, loaded or not. A body the response cache has evicted sends the request down
 * the full path.
 */
export function replayCachedAnswers(services: Pick<Services, 'cache' | 'release' | 'published' | 'metrics'>, maxBytes: number): Middleware {
  const recorded = new LRUCache<string, Recorded>({ maxSize: Math.max(1, maxBytes), sizeCalculation: (record, request) => recordBytes(request, record) });
  let epoch = 0;
  const nextEpoch = () => {
    epoch++;
    recorded.clear();
  };
  services.release.onChange(nextEpoch);
  services.published.onChange(nextEpoch);

  // Bound once: a labelled inc() would look its child up on every hit.
  const counted = { 200: services.metrics.replayed.labels('200'), 304: services.metrics.replayed.labels('304') };

  return async (ctx, next) => {
    if (ctx.method !== 'GET' || ctx.state.key === undefined) return next();
    const request = `${ctx.url}\n${ctx.get('accept')}\n${ctx.get('accept-encoding')}`;
    const record = recorded.get(request);
    if (record?.epoch === epoch && replay(ctx, services, record)) return void counted[ctx.status as 200 | 304].inc();
    const began = epoch;
    const setBefore = new Set(Object.keys(ctx.response.headers));
    await next();
    const answer = ctx.state.cacheable as CacheableAnswer | undefined;
    // Nothing to replay from a cache that kept nothing (caching off, or a body over its bound).
    if (answer && ctx.status === 200 && began === epoch && services.cache.get(answer.cacheKey)) {
      const headers = Object.entries(ctx.response.headers)
        .filter(([name]) => !setBefore.has(name) && name !== 'content-length')
        .map(([name, value]) => [name, value as string | string[]] as const);
      recorded.set(request, { epoch, answer, etag: ctx.response.get('etag'), headers });
    }
  };
}

function replay(ctx: Context, services: Pick<Services, 'cache' | 'release' | 'published' | 'metrics'>, record: Recorded): boolean {
  const { cacheKey, release } = record.answer;
  if (release !== undefined && !services.published.has(release)) return false;
  if (noneMatch(ctx.get('if-none-match'), record.etag)) {
    for (const [name, value] of record.headers) if (NOT_MODIFIED_HEADERS.has(name)) ctx.set(name, value);
    ctx.status = 304;
    return true;
  }
  const entry = services.cache.get(cacheKey);
  if (entry === undefined) return false;
  services.metrics.cacheLookups.inc({ result: 'hit' });
  for (const [name, value] of record.headers) ctx.set(name, value);
  ctx.status = 200;
  ctx.body = readEntry(entry).body;
  return true;
}
