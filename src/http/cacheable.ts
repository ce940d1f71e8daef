import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Services } from '../services.ts';
import { encode, negotiateCoding } from './content-coding.ts';

/**
 * Folded into every ETag. ETags come from the request, not the bytes, so a change
 * to how a body is rendered must change this or clients keep the old bytes on a 304.
 */
const REPRESENTATION = 1;

/**
 * Answers a GET whose 200 body is fully determined by `key` (the release and the
 * normalized request; docs/api.md "HTTP caching"):
 * - a strong ETag from the key and the content-coding, so a 304 needs no body;
 * - 304 when If-None-Match matches, before any query runs;
 * - otherwise the body in the negotiated coding, from the response cache, or made by
 *   `render` and compressed once, then kept there.
 */
export async function respondCacheable(ctx: Context, services: Services, key: string, render: () => Promise<Buffer>): Promise<void> {
  const coding = negotiateCoding(ctx.get('accept-encoding'));
  const tag = createHash('sha256').update(`${REPRESENTATION} ${key}`).digest('base64url').slice(0, 22);
  const etag = coding === 'identity' ? `"${tag}"` : `"${tag}-${coding}"`;
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', services.cacheControl);
  ctx.vary('Accept-Encoding');
  if (noneMatch(ctx.get('if-none-match'), etag)) {
    ctx.status = 304;
    return;
  }
  const cacheKey = `${coding} ${key}`;
  let body = services.cache.get(cacheKey);
  services.metrics.cacheLookups.inc({ result: body === undefined ? 'miss' : 'hit' });
  if (body === undefined) {
    body = await encode(await render(), coding);
    services.cache.set(cacheKey, body);
  }
  ctx.status = 200;
  ctx.type = 'application/json';
  if (coding !== 'identity') ctx.set('Content-Encoding', coding);
  ctx.body = body;
}

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
