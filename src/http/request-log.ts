import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { mayBeToken } from '../invites/store.ts';

const MAX_URL = 512;

// Keys belong in the x-api-key header, but a client may paste one into the URL;
// it must not reach the logs in plain or percent-encoded form.
const KEY_IN_URL = /sk(?:_|%5f)live(?:_|%5f)[^&/#;]*/gi;
// Invite tokens travel in claim URLs (/claim/<token>): a log reader must not be able to claim one.
const TOKEN_IN_URL = /\/claim\/(?!assets\/)[^/?#]+/gi;

/** The URL as logged: keys and invite tokens redacted, then cut to a bounded length. */
export function loggableUrl(url: string): string {
  const redacted = redactTokenSegments(url).replace(KEY_IN_URL, 'sk_live_[redacted]').replace(TOKEN_IN_URL, '/claim/[redacted]');
  return redacted.length > MAX_URL ? `${redacted.slice(0, MAX_URL)}…` : redacted;
}

/**
 * A token pasted where an id belongs (`admin invite revoke <token>` puts it in the
 * path), plain or percent-encoded: each path segment that may hold one is replaced.
 */
function redactTokenSegments(url: string): string {
  const end = url.search(/[?#]/);
  const path = end < 0 ? url : url.slice(0, end);
  // Most paths hold neither, and need no splitting.
  if (!/inv|%/.test(path)) return url;
  const segments = path.split('/').map((segment) => (mayBeToken(decoded(segment)) ? '[redacted]' : segment));
  return segments.join('/') + (end < 0 ? '' : url.slice(end));
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** One JSON line per request, written when the response is done; `code` names an error's catalog code. */
export function logRequests(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      log.info({
        reqId: ctx.state.requestId,
        method: ctx.method,
        url: loggableUrl(ctx.url),
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 100) / 100,
        bytes: ctx.length,
        key: ctx.state.key?.id,
        code: ctx.state.errorCode,
      }, 'request');
    }
  };
}
