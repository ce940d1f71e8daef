import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const MAX_URL = 512;

// Keys belong in the x-api-key header, but a client may paste one into the URL;
// it must not reach the logs in plain or percent-encoded form.
const KEY_IN_URL = /sk(?:_|%5f)live(?:_|%5f)[^&/#;]*/gi;
// Invite tokens travel in claim URLs (/claim/<token>): a log reader must not be able to claim one.
const TOKEN_IN_URL = /\/claim\/(?!assets\/)[^/?#]+/gi;

/** The URL as logged: keys redacted, then cut to a bounded length. */
export function loggableUrl(url: string): string {
  const redacted = url.replace(KEY_IN_URL, 'sk_live_[redacted]').replace(TOKEN_IN_URL, '/claim/[redacted]');
  return redacted.length > MAX_URL ? `${redacted.slice(0, MAX_URL)}…` : redacted;
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
