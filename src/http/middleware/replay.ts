import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { entryBody, noneMatch } from '../respond/cacheable.ts';
import { type Recorded, type ReplayTable, requestText } from './replay-table.ts';

/** What RFC 9110 15.4.5 has a 304 repeat of the 200 it stands for (the limit headers are set before). */
const NOT_MODIFIED_HEADERS = new Set(['etag', 'cache-control', 'vary']);

/**
 * Headers that describe how one request was answered, not the answer: Preference-Applied
 * follows the request's own Prefer, and X-Heavy-Remaining the key's budget when heavy
 * work ran (a replay runs none).
 */
const NOT_RECORDED = new Set(['content-length', 'preference-applied', 'x-heavy-remaining']);

/**
 * Answers a repeated request for a cached body without running its handler (`next`),
 * or runs it and records its answer.
 *
 * A cacheable 200 is fully determined by the raw request (URL, Accept,
 * Accept-Encoding) while the served and retained releases stay the same, so the
 * first answer is recorded: raw request → its response cache key and the headers
 * its handler set. Only requests with a valid key are recorded (and replayed): a
 * keyless URL (/docs, /openapi.json, the claim pages) must not let anyone grow this
 * table by inventing URLs and headers. The table is bounded in bytes
 * (REPLAY_MAX_BYTES). A repeat then costs one lookup here and one in the response
 * cache instead of parsing, validating, canonicalizing and hashing again. It comes
 * after the key check and limiter, so a replayed answer is counted and carries limit
 * headers like any other.
 *
 * Records and their epochs are src/http/middleware/replay-table.ts. A body the
 * response cache has evicted sends the request down the full path.
 */
export async function replayOrRecord(
  ctx: RequestContext,
  services: Pick<Services, 'cache' | 'metrics'>,
  table: ReplayTable,
  next: () => Promise<void>,
): Promise<void> {
  if (ctx.method !== 'GET' || ctx.state.key === undefined) return next();
  const request = requestText(ctx.url, ctx.get('accept'), ctx.get('accept-encoding'));
  const record = table.find(request);
  if (record && replay(ctx, services, record)) return;
  const began = table.epoch;
  const setBefore = new Set(Object.keys(ctx.response.headers));
  await next();
  const answer = ctx.state.cacheable;
  // Nothing to replay from a cache that kept nothing (caching off, or a body over its bound).
  if (answer && ctx.status === 200 && ctx.state.route !== undefined && services.cache.get(answer.cacheKey)) {
    const headers = Object.entries(ctx.response.headers)
      .filter(([name]) => !setBefore.has(name) && !NOT_RECORDED.has(name))
      .map(([name, value]) => [name, value as string | string[]] as const);
    table.record(request, began, {
      answer,
      etag: ctx.response.get('etag'),
      headers,
      route: ctx.state.route,
    });
  }
}

function replay(ctx: RequestContext, services: Pick<Services, 'cache' | 'metrics'>, record: Recorded): boolean {
  if (noneMatch(ctx.get('if-none-match'), record.etag)) {
    for (const [name, value] of record.headers) if (NOT_MODIFIED_HEADERS.has(name)) ctx.set(name, value);
    ctx.status = 304;
    services.metrics.replayed304.inc();
    return true;
  }
  const entry = services.cache.get(record.answer.cacheKey);
  if (entry === undefined) return false;
  services.metrics.cacheHits.inc();
  services.metrics.replayed200.inc();
  const body = entryBody(entry);
  // The route label of the request metrics, which the route would have set.
  ctx.state.route = record.route;
  for (const [name, value] of record.headers) ctx.set(name, value);
  ctx.status = 200;
  ctx.body = body;
  return true;
}
